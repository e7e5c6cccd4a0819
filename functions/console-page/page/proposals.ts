/**
 * Proposals waiting for approval: anyone sees them; an approver approves or rejects another person's (never their
 * own — the server refuses that too), saying why. Approving sends the notice again, once.
 */
import type { MeAnswer, ProposalRow, ProposalsAnswer } from '../../contracts/console-views.ts';
import { call } from './api.ts';
import { announce, el, reasonForm, when } from './dom.ts';

export async function proposalsView(into: HTMLElement, me: MeAnswer, changed: () => void): Promise<void> {
  let answer: ProposalsAnswer;
  try {
    answer = await call<ProposalsAnswer>('proposals', {});
  } catch (error) {
    into.replaceChildren(el('p', { class: 'error' }, (error as Error).message));
    return;
  }
  if (answer.proposals.length === 0) {
    into.replaceChildren();
    return;
  }
  into.replaceChildren(
    el('h2', {}, `Waiting for approval (${answer.proposals.length})`),
    ...answer.proposals.map((p) => proposalArticle(p, me, () => void proposalsView(into, me, changed).then(changed))),
  );
}

function proposalArticle(p: ProposalRow, me: MeAnswer, changed: () => void): HTMLElement {
  const forms = el('div');
  const actions = el('div', { class: 'actions' });
  const decide = (decision: 'APPROVE' | 'REJECT', label: string, done: string) => {
    const button = el('button', { type: 'button', class: decision === 'APPROVE' ? 'primary' : '' }, label);
    button.addEventListener('click', () => {
      actions.hidden = true;
      forms.replaceChildren(
        reasonForm(decision === 'APPROVE' ? 'Why approve it?' : 'Why reject it?', label, async (reason) => {
          await call('decide', { proposalId: p.id, decision, reason });
          announce(done);
          changed();
          return done;
        }),
      );
      forms.querySelector('textarea')?.focus();
    });
    return button;
  };
  if (me.can.includes('decide') && !p.mine) {
    actions.append(
      decide('APPROVE', 'Approve', 'Approved: it is being sent now. This was recorded.'),
      decide('REJECT', 'Reject', 'Rejected. This was recorded.'),
    );
  }
  return el(
    'article',
    { class: 'notice proposal', 'data-proposal': p.id },
    el('h3', {}, p.what),
    el(
      'p',
      { class: 'small' },
      `${p.userId === null ? '' : `Customer ${p.userId} · `}proposed by ${p.proposedBy}, ${when(p.proposedAt)}: “${p.reason}”`,
    ),
    el(
      'p',
      { class: 'note' },
      p.mine ? 'Your proposal: another person approves it.' : `Can be approved until ${when(p.approveBy)}.`,
    ),
    el('p', { class: 'codes ids' }, el('code', {}, p.id), ' ', el('code', {}, p.notificationId)),
    actions,
    forms,
  );
}

/**
 * Proposals waiting for approval: anyone sees them; an approver approves or rejects another person's (never their
 * own — the server refuses that too), saying why; the proposer may withdraw their own. Approving sends the notice
 * again, once.
 */
import type { MeAnswer, ProposalRow, ProposalsAnswer } from '../../contracts/console-views.ts';
import { call } from './api.ts';
import { announce, el, reasonForm, when } from './dom.ts';

export async function proposalsView(
  into: HTMLElement,
  me: MeAnswer,
  changed: () => void,
  open: (eventId: string) => void,
): Promise<void> {
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
    ...answer.proposals.map((p) =>
      proposalArticle(p, me, () => void proposalsView(into, me, changed, open).then(changed), open),
    ),
  );
}

function proposalArticle(
  p: ProposalRow,
  me: MeAnswer,
  changed: () => void,
  open: (eventId: string) => void,
): HTMLElement {
  const forms = el('div');
  const actions = el('div', { class: 'actions' });
  const card = el('button', { type: 'button', class: 'link' }, 'Open its notice');
  card.addEventListener('click', () => open(p.eventId));
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
    // Approve only where the approval would be accepted: an engineer's proposal is approved by an engineer.
    if (p.cannotApprove === null)
      actions.append(decide('APPROVE', 'Approve', 'Approved: it is queued to be sent again. This was recorded.'));
    actions.append(decide('REJECT', 'Reject', 'Rejected. This was recorded.'));
  }
  if (me.can.includes('propose') && p.mine) {
    // The proposer takes their own back (the customer got it after all, it was the wrong notice): recorded as theirs.
    const withdraw = el('button', { type: 'button' }, 'Withdraw');
    withdraw.addEventListener('click', () => {
      actions.hidden = true;
      forms.replaceChildren(
        reasonForm('Why withdraw it?', 'Withdraw', async (reason) => {
          await call('withdraw', { proposalId: p.id, reason });
          const done = 'Withdrawn: it will not be sent. This was recorded.';
          announce(done);
          changed();
          return done;
        }),
      );
      forms.querySelector('textarea')?.focus();
    });
    actions.append(withdraw);
  }
  return el(
    'article',
    { class: 'notice proposal', 'data-proposal': p.id },
    el('h3', {}, p.what),
    el('p', { class: 'shown' }, p.shown),
    el('p', { class: 'small now' }, `The notice now: ${p.now} `, card),
    el(
      'p',
      { class: 'small' },
      `${p.userId === null ? '' : `Customer ${p.userId} · `}proposed by ${p.proposedBy}, ${when(p.proposedAt)}: “${p.reason}”`,
    ),
    el(
      'p',
      { class: 'note' },
      p.mine
        ? 'Your proposal: another person approves it (or you withdraw it).'
        : (p.cannotApprove ?? `Can be approved until ${when(p.approveBy)}.`),
    ),
    el('p', { class: 'codes ids' }, el('code', {}, p.id), ' ', el('code', {}, p.notificationId)),
    actions,
    forms,
  );
}

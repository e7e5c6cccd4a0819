/**
 * A customer's notices as support staff read them: what it was, whether it reached them and why not, the contact
 * point masked (shown in full only with a reason, which is recorded), what was sent as the customer saw it, and a
 * way to ask for it to be sent again — which another person approves.
 */
import type {
  AuditRow,
  MeAnswer,
  NoticeAnswer,
  NoticeCard,
  PreviewAnswer,
  RevealAnswer,
  SentMessage,
} from '../../contracts/console-views.ts';
import { call } from './api.ts';
import { announce, el, freshId, reasonForm, when } from './dom.ts';

export interface Context {
  readonly me: MeAnswer;
  /** Called after something changed (a proposal made): the view reloads. */
  readonly changed: () => void;
}

export function noticeArticle(card: NoticeCard, ctx: Context): HTMLElement {
  const titleId = freshId('notice');
  const contact = el('span', { class: 'contact' }, card.to);
  const forms = el('div');
  const sent = el('div', { class: 'sent', hidden: true });
  const actions = el('div', { class: 'actions' });
  const article = el(
    'article',
    { class: 'notice', 'aria-labelledby': titleId, 'data-notice': card.notificationId },
    el(
      'div',
      { class: 'head' },
      el('h3', { id: titleId }, `${card.notice} · ${card.channelName}`),
      el('span', { class: 'when' }, when(card.occurredAt)),
    ),
    card.reference === '' ? null : el('p', { class: 'small reference' }, card.reference),
    el('p', {}, el('span', { class: `badge ${card.outcome.tone}` }, card.outcome.headline)),
    el('p', { class: 'detail' }, card.outcome.detail),
    el('p', { class: 'small' }, 'To ', contact),
    card.resends.length === 0
      ? null
      : el(
          'ul',
          { class: 'small' },
          ...card.resends.map((r) =>
            el(
              'li',
              {},
              `Queued again ${when(r.at)} — approved by `,
              el('span', { title: r.byId }, r.by),
              `: “${r.reason}”`,
            ),
          ),
        ),
    el(
      'p',
      { class: 'codes ids' },
      `Status ${card.codes.status}${card.codes.reason ? ` · ${card.codes.reason}` : ''}${card.codes.delivery ? ` · report ${card.codes.delivery}` : ''} · `,
      el('code', {}, card.notificationId),
    ),
    actions,
    el('p', { class: 'note' }, card.resend.note),
    forms,
    sent,
  );

  const see = el('button', { type: 'button', 'aria-expanded': 'false' }, 'See what was sent');
  see.addEventListener('click', () => void toggleSent(card, see, sent));
  actions.append(see);

  if (card.to !== '(none)' && card.to !== '(erased)' && ctx.me.can.includes('reveal')) {
    const show = el('button', { type: 'button', class: 'link' }, 'Show in full');
    show.addEventListener('click', () => {
      show.hidden = true;
      forms.replaceChildren(
        reasonForm('Why do you need the full contact details?', 'Show contact details', async (reason) => {
          const r = await call<RevealAnswer>('reveal', { notificationId: card.notificationId, reason });
          contact.textContent = r.contact;
          return 'Shown in full. This was recorded with your name and reason.';
        }),
      );
      forms.querySelector('textarea')?.focus();
    });
    contact.after(' ', show);
  }

  if (card.resend.offer !== 'NONE' && ctx.me.can.includes('propose')) {
    const label = card.resend.offer === 'SECOND_COPY' ? 'Propose a second copy' : 'Propose sending again';
    const propose = el('button', { type: 'button' }, label);
    const request = {
      notificationId: card.notificationId,
      ...(card.resend.despiteAccepted === undefined ? {} : { despiteAccepted: card.resend.despiteAccepted }),
    };
    // Preview first (what the system would do now, or why it would refuse), then the reason, then the proposal.
    propose.addEventListener('click', () => {
      propose.disabled = true;
      call<PreviewAnswer>('preview', request)
        .then((preview) => {
          if (!preview.ok) {
            forms.replaceChildren(el('p', { class: 'error refused', role: 'alert' }, `Refused: ${preview.message}`));
            return;
          }
          forms.replaceChildren(
            reasonForm(
              'Why should it be sent again?',
              'Propose',
              async (reason) => {
                await call('propose', { ...request, reason, fingerprint: preview.fingerprint });
                ctx.changed();
                return 'Proposed. Another person has to approve it before it is sent.';
              },
              el('p', { class: 'note preview' }, preview.what),
            ),
          );
          forms.querySelector('textarea')?.focus();
        })
        .catch((error: Error) => {
          forms.replaceChildren(el('p', { class: 'error', role: 'alert' }, error.message));
          propose.disabled = false;
        });
    });
    actions.append(propose);
  }
  return article;
}

async function toggleSent(card: NoticeCard, button: HTMLButtonElement, into: HTMLElement): Promise<void> {
  if (!into.hidden) {
    into.hidden = true;
    button.setAttribute('aria-expanded', 'false');
    return;
  }
  button.disabled = true;
  try {
    const answer = await call<NoticeAnswer>('notice', { notificationId: card.notificationId });
    into.replaceChildren(...sentView(answer), ...auditView(answer.audit, 'Done by hand on this notice'));
    into.hidden = false;
    button.setAttribute('aria-expanded', 'true');
  } catch (error) {
    announce((error as Error).message);
  } finally {
    button.disabled = false;
  }
}

/** The words for a copy named as sent that cannot be read now. */
const UNREADABLE_WORDS: Readonly<Record<string, string>> = {
  pending: 'it is being written to the store',
  gap: 'it waits to be written to the store',
  lost: 'it is not in the store and nothing is writing it: it may be lost',
  notInBatch: 'its batch holds no record of it: it may be lost',
  damaged: 'the kept copy does not match its fingerprint',
  unknown: 'the store does not hold it',
};

/**
 * What was sent; a copy the records name but the store cannot show now is said to be exactly that, and "nothing was
 * handed over" is said only when the provider never accepted it.
 */
function sentView(answer: Pick<NoticeAnswer, 'sent' | 'unfound' | 'handedOver'>): HTMLElement[] {
  const unreadable = answer.unfound.map((u) =>
    el(
      'div',
      { class: 'unreadable', role: 'note' },
      el(
        'p',
        { class: 'error' },
        `The copy of what was sent is not readable yet (${UNREADABLE_WORDS[u.state] ?? u.state}): ask an engineer; it was handed over for delivery.`,
      ),
      el('p', { class: 'codes ids' }, 'For the engineer: ', el('code', {}, u.says)),
    ),
  );
  if (answer.sent.length === 0 && unreadable.length === 0)
    return [el('p', { class: 'note' }, NO_COPY[answer.handedOver])];
  return [...sentCopies(answer.sent), ...unreadable];
}

const NO_COPY: Readonly<Record<NoticeAnswer['handedOver'], string>> = {
  NO: 'Nothing was handed over for delivery, so there is no copy of what was sent.',
  YES: 'The provider accepted it, but no copy of what was sent is found: ask an engineer.',
  UNKNOWN:
    'Whether it was handed over for delivery is not known, and no copy of what was sent is found: ask an engineer.',
};

function sentCopies(sent: readonly SentMessage[]): HTMLElement[] {
  return sent.map((s, i) =>
    el(
      'section',
      { class: 'message', 'aria-label': `What was sent ${when(s.acceptedAt)}` },
      el('h4', {}, `${sent.length > 1 ? `Send ${i + 1}: ` : ''}handed over ${when(s.acceptedAt)}, to ${s.to}`),
      ...messageView(s),
      s.reports.length === 0
        ? el('p', { class: 'note' }, 'No delivery report.')
        : el('ul', { class: 'reports' }, ...s.reports.map((r) => el('li', {}, `${when(r.at)}: ${r.words}`))),
      ...s.warnings.map((w) => el('p', { class: 'error' }, w)),
      el('p', { class: 'codes ids' }, 'Fingerprint (SHA-256) of the kept copy: ', el('code', {}, s.sha256)),
    ),
  );
}

function messageView(s: SentMessage): HTMLElement[] {
  if (s.email !== undefined) {
    const frame = el('iframe', { sandbox: '', title: `The email: ${s.email.subject}`, referrerpolicy: 'no-referrer' });
    frame.srcdoc = s.email.html;
    return [
      el('p', { class: 'small' }, `From ${s.email.from} · Subject `, el('b', { class: 'subject' }, s.email.subject)),
      frame,
    ];
  }
  if (s.sms !== undefined) {
    return [
      el('div', { class: 'bubble' }, s.sms.text),
      el(
        'p',
        { class: 'note' },
        `${s.sms.segments} text message part${s.sms.segments === 1 ? '' : 's'} (${s.sms.encoding})`,
      ),
    ];
  }
  if (s.push !== undefined) {
    return [el('div', { class: 'card' }, el('div', { class: 'title' }, s.push.title), el('div', {}, s.push.body))];
  }
  return [];
}

export function auditView(rows: readonly AuditRow[], heading: string): HTMLElement[] {
  if (rows.length === 0) return [el('h2', {}, heading), el('p', { class: 'note' }, 'Nothing was done by hand.')];
  return [
    el('h2', {}, heading),
    el(
      'table',
      { class: 'audit' },
      el(
        'thead',
        {},
        el('tr', {}, ...['When', 'What', 'Who', 'Why', 'Result'].map((h) => el('th', { scope: 'col' }, h))),
      ),
      el(
        'tbody',
        {},
        ...rows.map((r) =>
          el(
            'tr',
            (r.warnings ?? []).length > 0 ? { class: 'forged' } : {},
            el('td', {}, when(r.at), ...forgeryWarning(r)),
            el('td', {}, `${ACTION_WORDS[r.action] ?? r.action}${STEP_WORDS[r.step] ?? ''}`),
            el('td', {}, r.by),
            el('td', {}, r.reason),
            el(
              'td',
              {},
              `${RESULT_WORDS[r.outcome] ?? r.outcome}${r.since === undefined ? '' : ` — queued again; the notice now: ${r.since}`}`,
            ),
          ),
        ),
      ),
    ),
  ];
}

/**
 * An audit row the stack's seal does not vouch for (not sealed, changed, moved, another key): said on the row itself,
 * with the engineers' words, never shown as if genuine.
 */
function forgeryWarning(r: AuditRow): HTMLElement[] {
  if ((r.warnings ?? []).length === 0) return [];
  return [
    el('p', { class: 'error', role: 'note' }, 'Not written by notifier: report it to security.'),
    el('p', { class: 'codes ids' }, ...(r.warnings ?? []).map((w) => el('code', {}, w))),
  ];
}

const ACTION_WORDS: Readonly<Record<string, string>> = {
  // A resend puts the notice back in the queue: whether it then went out is the notice's state, shown beside it.
  RESEND: 'Queued again',
  REVEAL: 'Contact details shown',
  SUPPRESSION_LIFT: 'Contact unblocked',
  EXPORT: 'Data exported',
  ERASE: 'Data erased',
  REPLAY: 'Replayed',
  REPAIR: 'Contact corrected',
};

/** A four-eyes action is two rows: who asked, who decided. */
const STEP_WORDS: Readonly<Record<string, string>> = {
  PROPOSE: ' — proposed',
  APPROVE: ' — approved',
  REJECT: ' — rejected',
  WITHDRAW: ' — withdrawn by its proposer',
};

const RESULT_WORDS: Readonly<Record<string, string>> = {
  DONE: 'Done',
  REFUSED: 'Refused',
  FAILED: 'Failed',
  'NOT RECORDED': 'Did not finish',
};

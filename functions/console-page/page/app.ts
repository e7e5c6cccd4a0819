/**
 * The support console's page: sign in, look a customer (or an event) up, read each notice — what was sent or why not
 * — and act: see a contact in full with a reason, propose a resend, approve someone else's proposal. Plain DOM, no
 * framework; esbuild compiles this folder into the one script the page loads (console/app.js).
 */
import type { CustomerAnswer, EventAnswer, MeAnswer } from '../../contracts/console-views.ts';
import { call, whenSignedOut } from './api.ts';
import { announce, byId, el, freshId, when } from './dom.ts';
import { auditView, type Context, noticeArticle } from './notices.ts';
import { proposalsView } from './proposals.ts';
import { currentToken, finishSignIn, type SignIn, signInLocally, signOut, startSignIn } from './session.ts';

const ROLE_WORDS: Readonly<Record<string, string>> = { support: 'Support', approver: 'Approver' };

async function boot(): Promise<void> {
  const main = byId('main');
  const config = (await (await fetch('console/config.json')).json()) as SignIn;
  if (config.kind === 'cognito') await finishSignIn(config);
  whenSignedOut(() => signInView(main, config));
  if (currentToken() === undefined) return signInView(main, config);
  const me = await call<MeAnswer>('me');
  byId('who-name').textContent = `${me.name} · ${me.roles.map((r) => ROLE_WORDS[r] ?? r).join(', ') || 'no role'}`;
  byId('who').hidden = false;
  byId('sign-out').addEventListener('click', () => signOut(config));
  searchView(main, me);
}

function signInView(main: HTMLElement, config: SignIn): void {
  byId('who').hidden = true;
  if (config.kind === 'cognito') {
    const go = el('button', { type: 'button', class: 'primary' }, 'Sign in');
    go.addEventListener('click', () => void startSignIn(config));
    main.replaceChildren(el('h1', {}, 'Sign in'), el('p', {}, 'Sign in with your work account.'), go);
    return;
  }
  const id = freshId('user');
  const select = el(
    'select',
    { id, name: 'user' },
    ...config.users.map((u) =>
      el('option', { value: u.username }, `${u.name} (${u.roles.map((r) => ROLE_WORDS[r] ?? r).join(', ')})`),
    ),
  );
  const form = el(
    'form',
    { class: 'panel' },
    el('label', { for: id }, 'Sign in as'),
    select,
    el('div', { class: 'actions' }, el('button', { type: 'submit', class: 'primary' }, 'Sign in')),
    el(
      'p',
      { class: 'note' },
      'These are the local run’s own users; a deployed console signs in with the bank’s accounts.',
    ),
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    signInLocally(select.value)
      .then(() => location.reload())
      .catch((error: Error) => announce(error.message));
  });
  main.replaceChildren(el('h1', {}, 'Sign in'), form);
}

function searchView(main: HTMLElement, me: MeAnswer): void {
  const inputId = freshId('lookup');
  const input = el('input', { id: inputId, type: 'text', name: 'id', required: true, autocomplete: 'off' });
  const kind = (value: string, label: string, checked: boolean) =>
    el('label', {}, el('input', { type: 'radio', name: 'kind', value, checked }), ` ${label}`);
  const form = el(
    'form',
    { class: 'panel', role: 'search' },
    el(
      'fieldset',
      {},
      el('legend', { class: 'small' }, 'Look up by'),
      kind('customer', 'Customer ID', true),
      kind('event', 'Event ID', false),
    ),
    el(
      'div',
      { class: 'row' },
      el('div', {}, el('label', { for: inputId }, 'ID'), input),
      el('button', { type: 'submit', class: 'primary' }, 'Look up'),
    ),
  );
  const idsId = freshId('ids');
  const ids = el('input', { type: 'checkbox', id: idsId });
  ids.addEventListener('change', () => document.body.classList.toggle('show-ids', ids.checked));
  const results = el('div', { id: 'results' });
  const proposals = el('section', { id: 'proposals', 'aria-label': 'Waiting for approval' });
  const open = (eventId: string) => {
    input.value = eventId;
    (form.querySelector('input[name=kind][value=event]') as HTMLInputElement).checked = true;
    void lookup();
  };
  const refreshProposals = () => void proposalsView(proposals, me, () => void lookup(), open);
  const lookup = async () => {
    const id = input.value.trim();
    const byEvent = (form.querySelector('input[name=kind]:checked') as HTMLInputElement | null)?.value === 'event';
    results.replaceChildren(el('p', {}, 'Looking up…'));
    try {
      const ctx: Context = { me, changed: refreshProposals };
      if (byEvent) eventView(results, await call<EventAnswer>('event', { eventId: id }), ctx);
      else customerView(results, await call<CustomerAnswer>('customer', { userId: id }), ctx);
      results.querySelector('h1')?.focus();
    } catch (error) {
      results.replaceChildren(el('p', { class: 'error', role: 'alert' }, (error as Error).message));
    }
  };
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    void lookup();
  });
  main.replaceChildren(
    form,
    el(
      'p',
      { class: 'small' },
      ids,
      ' ',
      el(
        'label',
        { for: idsId, style: 'display:inline;font-weight:400' },
        'Show ids and codes (for passing a case on)',
      ),
    ),
    proposals,
    results,
  );
  refreshProposals();
  input.focus();
}

function customerView(into: HTMLElement, c: CustomerAnswer, ctx: Context): void {
  into.replaceChildren(
    el('h1', { tabindex: '-1' }, `Customer ${c.userId}`),
    el(
      'p',
      {},
      `${
        c.optedOutOf === null || c.optedOutOf.length === 0
          ? 'No preference switched off in the app.'
          : `The customer turned off in the app: ${c.optedOutOf.join(', ')} (security notices still reach them).`
      }${c.notices.some((n) => n.codes.reason === 'CARRIER_OPT_OUT') ? ' The phone network blocks our texts to them (they replied STOP).' : ''}`,
    ),
    el('h2', {}, c.older === null ? `Notices (${c.notices.length})` : `Newest notices (${c.notices.length})`),
    ...c.notices.map((n) => noticeArticle(n, ctx)),
    ...silentView(c.silent),
    ...quarantinedView(c.quarantined),
    ...olderView(c, ctx),
    ...auditView(c.audit, 'Done by hand for this customer'),
  );
}

/**
 * The customer's older events, a page at a time: a customer with thousands of events is never read at once. Each
 * page comes after the one before, with what was done by hand about its notices.
 */
function olderView(c: CustomerAnswer, ctx: Context): HTMLElement[] {
  if (c.older === null) return [];
  const more = el('button', { type: 'button', class: 'older' }, 'Show older notices');
  const place = el('div', {}, more);
  more.addEventListener('click', () => {
    more.disabled = true;
    call<CustomerAnswer>('customer', { userId: c.userId, older: c.older })
      .then((page) =>
        place.replaceChildren(
          el('h2', {}, `Older notices (${page.notices.length})`),
          ...page.notices.map((n) => noticeArticle(n, ctx)),
          ...silentView(page.silent),
          ...quarantinedView(page.quarantined),
          ...auditView(page.audit, 'Done by hand for these notices'),
          ...olderView(page, ctx),
        ),
      )
      .catch((error: Error) => {
        more.disabled = false;
        announce(error.message);
      });
  });
  return [place];
}

function eventView(into: HTMLElement, e: EventAnswer, ctx: Context): void {
  into.replaceChildren(
    el('h1', { tabindex: '-1' }, `Event ${e.eventId}`),
    el('p', {}, e.userId === null ? 'Its customer is no longer recorded.' : `For customer ${e.userId}.`),
    ...e.notices.map((n) => noticeArticle(n, ctx)),
    ...silentView(e.silent),
    ...quarantinedView(e.quarantined),
  );
}

/** Records meant to be the customer's notices that we received but could not read: why, and where engineers look. */
function quarantinedView(records: CustomerAnswer['quarantined']): HTMLElement[] {
  if (records.length === 0) return [];
  return [
    el('h2', {}, 'Received but not readable'),
    ...records.map((q) =>
      el(
        'article',
        { class: 'notice', 'data-quarantined': q.where },
        el(
          'div',
          { class: 'head' },
          el('h3', {}, 'A notice we could not read'),
          el('span', { class: 'when' }, when(q.receivedAt)),
        ),
        el(
          'p',
          {},
          el(
            'span',
            { class: `badge ${q.replayedAt === null ? 'bad' : 'waiting'}` },
            q.replayedAt === null ? 'Not sent' : 'Fed in again',
          ),
        ),
        el('p', { class: 'detail' }, q.why),
        el('p', { class: 'codes ids' }, `${q.reason} · `, el('code', {}, q.eventId), ' ', el('code', {}, q.where)),
      ),
    ),
  ];
}

function silentView(silent: CustomerAnswer['silent']): HTMLElement[] {
  if (silent.length === 0) return [];
  return [
    el('h2', {}, 'Nothing sent'),
    ...silent.map((s) =>
      el(
        'article',
        { class: 'notice' },
        el('div', { class: 'head' }, el('h3', {}, s.notice), el('span', { class: 'when' }, when(s.occurredAt))),
        el('p', {}, el('span', { class: 'badge bad' }, 'Not sent')),
        el('p', { class: 'detail' }, s.why),
        el('p', { class: 'codes ids' }, el('code', {}, s.eventId)),
      ),
    ),
  ];
}

boot().catch((error: Error) => {
  byId('main').replaceChildren(
    el('p', { class: 'error', role: 'alert' }, `The console could not start: ${error.message}`),
  );
});

/**
 * A proposal's people and refusals in support-desk words: who proposed it (a name, never an ARN or a sign-in's
 * internal user name), who can approve it when the person looking cannot, and why a decision was refused — never the
 * command line's flags, a credential's kind or "the customer has it". Pure.
 */

import { type ApprovalPolicy, fourEyesRefusal, type Proposal, personKindOf } from '../domain/approval.ts';
import type { RecordedIdentity } from '../domain/identity.ts';
import { parseNotificationId } from '../domain/keys.ts';
import type { Refusal, RefusalCode } from '../domain/refusal.ts';
import { refusalWords } from './views.ts';

/** A name people read for who proposed or decided: the e-mail, the Identity Center user, the role's name. */
export function personName(i: RecordedIdentity): string {
  const kind = personKindOf(i);
  if (kind === 'EMAIL_ADDRESS') return i.display ?? i.person ?? i.principal;
  if (kind === 'IDENTITY_CENTER_USER' || kind === 'LOCAL_LOGIN') return i.person ?? i.principal;
  const last = (i.person ?? i.principal).split('/').at(-1) ?? i.principal;
  if (kind === 'SHARED_ROLE') return `the shared role ${last}`;
  if (kind === 'IAM_USER') return last;
  return i.display ?? i.principal;
}

/** Made in the operator tools (the engineers' command line), not in the console. */
const byEngineer = (i: RecordedIdentity) => i.verifiedBy !== 'IDENTITY_PROVIDER';

/**
 * Why `viewer` cannot approve a proposal they did not make, and who can — or null when they may. A proposal made
 * under a shared role can be approved by nobody: it does not say which person proposed it.
 */
export function whoApproves(
  p: Pick<Proposal, 'id' | 'proposedBy'>,
  viewer: RecordedIdentity,
  policy: Pick<ApprovalPolicy, 'identityCenterUserNameIsEmail'>,
): string | null {
  const why = fourEyesRefusal(p, viewer, policy);
  if (why === undefined || why.code === 'OWN_PROPOSAL') return null;
  const who = personName(p.proposedBy);
  if (personKindOf(p.proposedBy) === 'SHARED_ROLE') {
    return `Proposed by an engineer under ${who}, which does not say who they are: nobody can approve it. Ask the engineers to propose it again under their own name, or reject it.`;
  }
  if (byEngineer(p.proposedBy)) {
    return `Proposed by an engineer in the operator tools (${who}): another engineer approves it there, with the operator tool.`;
  }
  return 'You signed in in a way that cannot be told apart from the proposer: another person signed in to this console approves it.';
}

const DECISION_WORDS: Partial<Record<RefusalCode, string>> = {
  OWN_PROPOSAL: 'This is your own proposal: another person approves it.',
  OWN_PROPOSAL_UNKNOWN:
    'This cannot be approved here: it was proposed by an engineer in the operator tools, or under a shared account, and the console cannot prove you are someone else. An engineer with the operator tool approves it.',
  DECIDED: 'Someone decided this proposal already: look at the list again.',
  EXPIRED:
    'This proposal is too old to approve: nothing was sent. Look at the notice again and propose it anew if it is still needed.',
  CHANGED: 'The notice changed since it was proposed: it was not sent. Look at the notice again.',
  TAMPERED:
    'This proposal is not what was proposed (it was changed after it was made): nothing was sent. Report it to the engineers.',
  NOT_FOUND: 'There is no such proposal (any more): look at the list again.',
  ACCEPTED:
    'The provider accepted this notice since it was proposed (there is no delivery report yet): it was not sent again. Look at its delivery first.',
};

/**
 * A refused approval, rejection or withdrawal, in the words of the desk. A proposal approved but then refused at
 * sending is said to be that — approved, not sent, and why — never only "decided already", which reads as sent.
 */
export function decisionRefusalWords(r: Refusal, p?: Pick<Proposal, 'target' | 'state' | 'outcome'>): string {
  const channel = parseNotificationId(p?.target ?? '')?.channel;
  const unsent = p?.state === 'APPROVED' && p.outcome !== undefined && p.outcome.result !== 'DONE';
  if (r.code === 'DECIDED' && unsent) {
    const why = p.outcome?.details as Partial<Refusal> | undefined;
    const words = typeof why?.code === 'string' ? refusalWords(why as Refusal, channel) : 'sending it failed.';
    return `It was approved, but it was not sent: ${words}`;
  }
  return DECISION_WORDS[r.code] ?? refusalWords(r, channel);
}

/**
 * Four eyes (docs/operations.md "Four eyes"): which operator actions one identity proposes and another approves, and
 * the rules a proposal is decided by. A bank's maker-checker: an action that sends to a contact point or content an
 * operator supplies, lifts a suppression or erases a customer is never done by one person alone (the default; the
 * stack's `approvalRequiredFor` setting names the kinds). A proposal keeps what its proposer was shown and a
 * fingerprint of what was read, so the approval applies exactly that — or is refused, because the state changed. Pure.
 */
import { createHash } from 'node:crypto';
import type { AuditRecord, OperatorActionName } from './audit.ts';
import { type RecordedIdentity, sameIdentity, type VerifiedIdentity } from './identity.ts';
import { type Refusal, refusal } from './refusal.ts';

/** The kinds of action an approval may be required for; each action says which kind a request is. */
export const APPROVAL_KINDS = [
  /** Sends to a contact point or content an operator supplied: a repair, a replay with a corrected value. */
  'OPERATOR_CONTENT',
  /** Lets the next notification to a suppressed address be sent. */
  'SUPPRESSION_LIFT',
  /** Removes a customer's personal data. */
  'ERASE',
  /** Sends a FAILED or UNKNOWN notification once more, to the address it has. */
  'RESEND',
  /** Sends a second copy of a notification the provider accepted. */
  'SECOND_COPY',
  /** Feeds stored records through ingest again (quarantined records as they were, parked batches). */
  'REPLAY',
  /** Hands a customer's data out of the system. */
  'EXPORT',
  /** Shows a masked contact point in full to one person (the support console). */
  'REVEAL',
  /** Sends a notice a failover held, which the old region may have sent: on an at-most-once channel, maybe twice. */
  'RELEASE_HELD',
  /** Closes a notice a failover held without sending it here. */
  'SETTLE_HELD',
] as const;
export type ApprovalKind = (typeof APPROVAL_KINDS)[number];

/** The default: what sends what an operator typed, un-suppresses, or erases needs a second identity. */
export const DEFAULT_APPROVAL_REQUIRED: readonly ApprovalKind[] = ['OPERATOR_CONTENT', 'SUPPRESSION_LIFT', 'ERASE'];

/** How long a proposal waits for its approval by default, in hours. */
export const DEFAULT_PROPOSAL_HOURS = 24;
/** The longest a stage may keep a proposal open (settings `proposalHours`). */
export const MAX_PROPOSAL_HOURS = 720;

export interface ApprovalPolicy {
  readonly required: ReadonlySet<ApprovalKind>;
  /** How long a proposal may be approved after it was made. */
  readonly proposalMs: number;
  /**
   * The bank states that its Identity Center user name is the directory's e-mail address, the one the console's
   * identity provider asserts (settings `identityCenterUserNameIsEmail`): only then does an Identity Center user
   * compare with a console person. Unset: they are two kinds of name and never compare.
   */
  readonly identityCenterUserNameIsEmail?: boolean;
}

/** "OPERATOR_CONTENT,ERASE" (an empty text: none) as kinds, or the unknown names. */
export function parseApprovalKinds(text: string): { kinds: ApprovalKind[] } | { unknown: string[] } {
  const names = text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  const unknown = names.filter((n) => !(APPROVAL_KINDS as readonly string[]).includes(n));
  return unknown.length > 0 ? { unknown } : { kinds: [...new Set(names as ApprovalKind[])] };
}

export const formatApprovalKinds = (kinds: readonly ApprovalKind[]) => kinds.join(',');

/** Four eyes from its two settings: the kinds named ("" for none; unset for the default) and the proposal's hours. */
export function approvalPolicyOf(
  kinds: string | undefined,
  hours: number = DEFAULT_PROPOSAL_HOURS,
  identityCenterUserNameIsEmail = false,
): { policy: ApprovalPolicy } | { unknown: string[] } {
  const parsed = kinds === undefined ? { kinds: [...DEFAULT_APPROVAL_REQUIRED] } : parseApprovalKinds(kinds);
  if ('unknown' in parsed) return parsed;
  return { policy: { required: new Set(parsed.kinds), proposalMs: hours * 3_600_000, identityCenterUserNameIsEmail } };
}

export const PROPOSAL_STATES = ['PENDING', 'APPROVED', 'REJECTED'] as const;
export type ProposalState = (typeof PROPOSAL_STATES)[number];

/** An action one identity proposed, as stored until another decides it. */
export interface Proposal {
  readonly id: string;
  readonly action: OperatorActionName;
  /** What the action acts on, as its audit names it. */
  readonly target: string;
  /** The customer it concerns, when known: proposals are listed by customer. */
  readonly userId?: string;
  /** The request, exactly as proposed (JSON): what an approval applies. */
  readonly request: unknown;
  /** What the proposer was shown the action would do. */
  readonly shown: Record<string, unknown>;
  /** The fingerprint of what was read and decided: an approval on a changed state is refused. */
  readonly fingerprint: string;
  readonly reason: string;
  readonly proposedBy: VerifiedIdentity;
  readonly proposedAt: string;
  /** The key of its PROPOSE audit record, written once: an approval checks the proposal against it (proposalTampering). */
  readonly proposeRecord?: string;
  /** After this instant the proposal can no longer be approved (ISO 8601). */
  readonly approveBy: string;
  readonly state: ProposalState;
  readonly decidedBy?: VerifiedIdentity;
  readonly decidedAt?: string;
  readonly decisionReason?: string;
  /** What became of the approved action: done, refused (the state changed) or failed. */
  readonly outcome?: { readonly result: 'DONE' | 'REFUSED' | 'FAILED'; readonly details: Record<string, unknown> };
}

/** A proposal as read now: PENDING past its expiry is EXPIRED. */
export const proposalStatus = (p: Proposal, now: number): ProposalState | 'EXPIRED' =>
  p.state === 'PENDING' && Date.parse(p.approveBy) <= now ? 'EXPIRED' : p.state;

/**
 * Why `decider` may not decide this proposal now, or undefined: it was decided already, it expired, or — to approve —
 * it is the proposer's own (a proposer may withdraw their own by rejecting it), or it was proposed on another surface
 * by someone who cannot be proven to be another person (provablyOthers).
 */
export function decisionRefusal(
  p: Proposal,
  decider: RecordedIdentity,
  decision: 'APPROVE' | 'REJECT',
  now: number,
  policy: Pick<ApprovalPolicy, 'identityCenterUserNameIsEmail'> = {},
): Refusal | undefined {
  if (p.state !== 'PENDING') {
    return refusal(
      'DECIDED',
      `proposal ${p.id} was ${p.state.toLowerCase()} already${p.decidedAt ? ` at ${p.decidedAt}` : ''}`,
    );
  }
  if (Date.parse(p.approveBy) <= now) {
    return refusal('EXPIRED', `proposal ${p.id} expired at ${p.approveBy}: propose it again, on what is there now`);
  }
  return decision === 'APPROVE' ? fourEyesRefusal(p, decider, policy) : undefined;
}

/** Why `decider` may not approve this proposal whatever its state — their own, or not provably another's — or undefined. */
export function fourEyesRefusal(
  p: Pick<Proposal, 'id' | 'proposedBy'>,
  decider: RecordedIdentity,
  policy: Pick<ApprovalPolicy, 'identityCenterUserNameIsEmail'> = {},
): Refusal | undefined {
  if (sameIdentity(p.proposedBy, decider)) {
    return refusal(
      'OWN_PROPOSAL',
      `proposal ${p.id} was proposed by ${p.proposedBy.principal}: another identity approves it (four eyes)`,
    );
  }
  if (!provablyOthers(p.proposedBy, decider, policy)) return refusal('OWN_PROPOSAL_UNKNOWN', unprovenWords(p, decider));
  return undefined;
}

/**
 * The kind of name a person key is. A person compares only with a person of its own kind: an e-mail address (the
 * console's identity provider), an Identity Center user name, an IAM user's ARN, a local login. A role's ARN (a
 * role other than Identity Center's, or the account's root) names whoever holds the role: no person at all.
 */
export type PersonKind = 'EMAIL_ADDRESS' | 'IDENTITY_CENTER_USER' | 'IAM_USER' | 'LOCAL_LOGIN' | 'SHARED_ROLE';

export function personKindOf(i: RecordedIdentity): PersonKind | undefined {
  if (i.person === undefined) return undefined;
  if (i.verifiedBy === 'IDENTITY_PROVIDER') return 'EMAIL_ADDRESS';
  if (i.verifiedBy === 'LOCAL_USER') return 'LOCAL_LOGIN';
  if (i.verifiedBy !== 'AWS_IAM') return undefined;
  if (!i.person.startsWith('arn:')) return 'IDENTITY_CENTER_USER';
  return /^arn:[^:]+:iam::\d{12}:user\//.test(i.person) ? 'IAM_USER' : 'SHARED_ROLE';
}

/** An e-mail address as an identity provider asserts it (one @, a dotted domain, no spaces). */
const EMAIL_SHAPED = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const emailShaped = (person: string | undefined): person is string => person !== undefined && EMAIL_SHAPED.test(person);

/**
 * Whether two identities (not the same person key: sameIdentity) are provably different people: two persons of one
 * kind of name. Names of two kinds prove nothing — one human is `alice@bank.example` in the console and `alice` (or
 * `asmith@bank.example`, a directory's other attribute) in Identity Center — unless the bank states its Identity
 * Center user name is the directory's e-mail address; then those two compare, case-insensitively. A shared role is
 * never provably anyone else: any person may hold it. Identities recorded before people were compared (no person key)
 * compare on one surface only, as they did.
 */
function provablyOthers(
  a: RecordedIdentity,
  b: RecordedIdentity,
  policy: Pick<ApprovalPolicy, 'identityCenterUserNameIsEmail'>,
): boolean {
  if (a.person === undefined || b.person === undefined) return a.verifiedBy === b.verifiedBy;
  const kinds = [personKindOf(a), personKindOf(b)];
  if (kinds.includes(undefined) || kinds.includes('SHARED_ROLE')) return false;
  if (kinds[0] === kinds[1]) return a.person !== b.person;
  const emailAndUserName = kinds.includes('EMAIL_ADDRESS') && kinds.includes('IDENTITY_CENTER_USER');
  return (
    policy.identityCenterUserNameIsEmail === true &&
    emailAndUserName &&
    emailShaped(a.person) &&
    emailShaped(b.person) &&
    a.person.toLowerCase() !== b.person.toLowerCase()
  );
}

const KIND_WORDS: Record<PersonKind, string> = {
  EMAIL_ADDRESS: 'the console (an e-mail address)',
  IDENTITY_CENTER_USER: 'an Identity Center user name',
  IAM_USER: 'an IAM user',
  LOCAL_LOGIN: 'a local login',
  SHARED_ROLE: 'a shared role, which names no one person',
};

function unprovenWords(p: Pick<Proposal, 'id' | 'proposedBy'>, decider: RecordedIdentity): string {
  const [by, you] = [personKindOf(p.proposedBy), personKindOf(decider)];
  const of = (k: PersonKind | undefined) => (k === undefined ? 'an unrecorded kind of name' : KIND_WORDS[k]);
  const proposed = `proposal ${p.id} was proposed under ${of(by)}, you approve under ${of(you)}`;
  if (by === 'SHARED_ROLE')
    return `${proposed}: nobody can be proven to be another person; propose it again as a person (four eyes)`;
  if (you === 'SHARED_ROLE') return `${proposed}: approve it as a person, not a role (four eyes)`;
  return `${proposed}: two kinds of name cannot be proven to be two people; a person of the proposer's kind approves it (four eyes)`;
}

/** A stable digest of a JSON value (object keys sorted): what an approval compares what it reads now with. */
export function fingerprintOf(value: unknown): string {
  return createHash('sha256').update(canonicalJson(value)).digest('hex');
}

function canonicalJson(value: unknown): string {
  if (value instanceof Set) return canonicalJson([...value].sort());
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/**
 * What a PROPOSE audit record keeps of the proposal (in its details, `proposed`): digests of the request, of what was
 * shown and the fingerprint. The table's item can be written by whoever the table lets; the audit record cannot be
 * changed once written — so an approval compares the two.
 */
export const proposedDigests = (p: Pick<Proposal, 'request' | 'shown' | 'fingerprint'>) => ({
  request: fingerprintOf(p.request),
  shown: fingerprintOf(p.shown),
  fingerprint: p.fingerprint,
});

/**
 * Whether the table's expiry is the one proposed: the PROPOSE record's own. A record written before records kept it
 * has it in its DONE outcome (written once the proposal was stored, with the exact expiry): compared with that. Only
 * with neither is it bounded: no stage keeps a proposal open longer than MAX_PROPOSAL_HOURS after its record (the
 * expiry was computed after the record was stamped, so a minute's slack for the audit write).
 */
function sameExpiry(p: Proposal, record: AuditRecord): boolean {
  const recorded = record.details.approveBy;
  if (typeof recorded === 'string') return recorded === p.approveBy;
  const outcome = record.outcome?.result === 'DONE' ? record.outcome.details.approveBy : undefined;
  if (typeof outcome === 'string') return outcome === p.approveBy;
  const latest = Date.parse(record.at) + MAX_PROPOSAL_HOURS * 3_600_000 + 60_000;
  return Date.parse(p.approveBy) <= latest;
}

/**
 * Why a proposal read from the table is not what its PROPOSE audit record says was proposed — or undefined when
 * they agree: the same proposal, action, target, proposer (the same credential and person), reason, request, shown,
 * fingerprint and expiry.
 */
export function proposalTampering(p: Proposal, record: AuditRecord | undefined): Refusal | undefined {
  const tampered = (what: string) =>
    refusal('TAMPERED', `proposal ${p.id} is not what was proposed (${what}): nothing was done; report it`);
  if (record === undefined) return tampered('no PROPOSE audit record of it');
  const by = record.by;
  const checks: [boolean, string][] = [
    [record.step === 'PROPOSE' && record.proposal === p.id, 'its audit record is of another proposal'],
    [record.action === p.action && record.target === p.target, 'another action or target'],
    [
      by.principal === p.proposedBy.principal &&
        by.verifiedBy === p.proposedBy.verifiedBy &&
        by.person === p.proposedBy.person,
      'another proposer',
    ],
    [record.reason === p.reason, 'another reason'],
    [canonicalJson(record.details.proposed) === canonicalJson(proposedDigests(p)), 'another request or preview'],
    [sameExpiry(p, record), 'another expiry'],
  ];
  const failed = checks.find(([holds]) => !holds);
  return failed === undefined ? undefined : tampered(failed[1]);
}

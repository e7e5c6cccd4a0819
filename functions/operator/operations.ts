/**
 * The operations API: what every operator surface — the command line, the operator API behind IAM, the support
 * console — calls to act on the system (docs/operations.md "The operator CLI", "Four eyes"). Every action that changes
 * what a customer receives or what is held about them is named here, and reached only through these steps:
 *
 *   preview  read + decide: what it would do (shown), its fingerprint, and whether it needs another's approval — or
 *            the refusal with its true reason. Writes nothing.
 *   confirm  one identity does it at once, with a reason: refused (and audited) when the policy wants four eyes for
 *            this kind of action, or when what was read no longer matches the fingerprint the caller was shown.
 *   propose  one identity asks for it: the request, what was shown and the fingerprint are kept, audited.
 *   approve  another identity applies exactly that — refused (and audited) when it expired, is the approver's own, was
 *            decided already, or the state changed since it was proposed.
 *   reject   another identity (or the proposer, withdrawing it) closes it, audited.
 *
 * The caller's identity is the transport's to verify (domain/identity.ts): the operations take it as given.
 */
import { randomBytes } from 'node:crypto';
import {
  type ApprovalKind,
  type ApprovalPolicy,
  decisionRefusal,
  type Proposal,
  type ProposalState,
  proposalStatus,
  proposalTampering,
  proposedDigests,
} from '../domain/approval.ts';
import type { OperatorActionName } from '../domain/audit.ts';
import type { VerifiedIdentity } from '../domain/identity.ts';
import { proposalIdOf } from '../domain/keys.ts';
import { type Refusal, refusal } from '../domain/refusal.ts';
import type { AuditEntry } from '../stores/audit-log.ts';
import {
  type Actor,
  apply,
  type OperatorAction,
  OperatorError,
  performedOutcome,
  planFingerprint,
  preview,
  recordAction,
  requireReason,
} from './action.ts';
import { eraseCustomer } from './erase.ts';
import { exportCustomer } from './export.ts';
import { releaseHeld, settleHeld } from './held.ts';
import { liftSuppression } from './lift-suppression.ts';
import type { OperatorPorts } from './ports.ts';
import { repair } from './repair.ts';
import { replayQuarantine } from './replay.ts';
import { replayFailedBatches } from './replay-batches.ts';
import { resend } from './resend.ts';
import { reveal } from './reveal.ts';

/** Every audited action, by the name its audit records carry. A new action is a compile error until it is here. */
export const ACTIONS = {
  RESEND: resend,
  REPAIR: repair,
  REPLAY: replayQuarantine,
  REPLAY_BATCHES: replayFailedBatches,
  SUPPRESSION_LIFT: liftSuppression,
  EXPORT: exportCustomer,
  ERASE: eraseCustomer,
  REVEAL: reveal,
  RELEASE_HELD: releaseHeld,
  SETTLE_HELD: settleHeld,
  // biome-ignore lint/suspicious/noExplicitAny: each action has its own request, state, plan and outcome
} as const satisfies Record<OperatorActionName, OperatorAction<any, any, any, any>>;

type Actions = typeof ACTIONS;
type Name = OperatorActionName;
// biome-ignore lint/suspicious/noExplicitAny: inferred from each action
export type RequestOf<N extends Name> = Actions[N] extends OperatorAction<infer Q, any, any, any> ? Q : never;
// biome-ignore lint/suspicious/noExplicitAny: inferred from each action
export type OutcomeOf<N extends Name> = Actions[N] extends OperatorAction<any, any, any, infer O> ? O : never;

/** What an action would do — or why not. */
export type PreviewAnswer =
  | {
      readonly ok: true;
      readonly action: OperatorActionName;
      readonly target: string;
      /** What it would do, as its audit record will say. */
      readonly shown: Record<string, unknown>;
      /** Pass it back to confirm or propose: refused if what is read then differs from what was shown now. */
      readonly fingerprint: string;
      /** The kind of action this request is (domain/approval.ts). */
      readonly kind: ApprovalKind;
      /** Whether it must be proposed and approved by another identity rather than confirmed. */
      readonly approvalRequired: boolean;
      readonly userId: string | null;
    }
  | { readonly ok: false; readonly action: OperatorActionName; readonly target: string; readonly refusal: Refusal };

/** A proposal as read now: its stored state, or EXPIRED when it is pending past its expiry. */
export interface ProposalView extends Proposal {
  readonly status: ProposalState | 'EXPIRED';
}

export interface ProposalQuery {
  /** PENDING: awaiting a decision and not expired; EXPIRED: pending past its expiry; APPROVED, REJECTED. */
  readonly status?: ProposalState | 'EXPIRED';
  readonly userId?: string;
}

export interface Operations {
  readonly policy: ApprovalPolicy;
  preview<N extends OperatorActionName>(action: N, request: RequestOf<N>): Promise<PreviewAnswer>;
  confirm<N extends OperatorActionName>(
    action: N,
    request: RequestOf<N>,
    actor: Actor,
    fingerprint?: string,
  ): Promise<OutcomeOf<N>>;
  propose<N extends OperatorActionName>(
    action: N,
    request: RequestOf<N>,
    actor: Actor,
    fingerprint?: string,
  ): Promise<ProposalView>;
  approve(id: string, actor: Actor): Promise<{ readonly proposal: ProposalView; readonly outcome: unknown }>;
  reject(id: string, actor: Actor): Promise<ProposalView>;
  proposals(query?: ProposalQuery): Promise<ProposalView[]>;
}

/**
 * The operations as one caller reaches them, once its transport verified who it is: each call says why, never who.
 * The operator API and the console bind the identity they verified (asCaller); the command line holds either that
 * (locally) or a client of the operator API, where AWS verifies the caller (tools/ops/operator-client.ts).
 */
export interface CallerOperations {
  preview<N extends OperatorActionName>(action: N, request: RequestOf<N>): Promise<PreviewAnswer>;
  confirm<N extends OperatorActionName>(
    action: N,
    request: RequestOf<N>,
    reason: string,
    fingerprint?: string,
  ): Promise<OutcomeOf<N>>;
  propose<N extends OperatorActionName>(
    action: N,
    request: RequestOf<N>,
    reason: string,
    fingerprint?: string,
  ): Promise<ProposalView>;
  approve(id: string, reason: string): Promise<{ readonly proposal: ProposalView; readonly outcome: unknown }>;
  reject(id: string, reason: string): Promise<ProposalView>;
  proposals(query?: ProposalQuery): Promise<ProposalView[]>;
}

/** The operations bound to one verified caller. */
export function asCaller(ops: Operations, identity: VerifiedIdentity): CallerOperations {
  const actor = (reason: string): Actor => ({ identity, reason });
  return {
    preview: (action, request) => ops.preview(action, request),
    confirm: (action, request, reason, fingerprint) => ops.confirm(action, request, actor(reason), fingerprint),
    propose: (action, request, reason, fingerprint) => ops.propose(action, request, actor(reason), fingerprint),
    approve: (id, reason) => ops.approve(id, actor(reason)),
    reject: (id, reason) => ops.reject(id, actor(reason)),
    proposals: (query) => ops.proposals(query),
  };
}

// biome-ignore lint/suspicious/noExplicitAny: the table above types each action; here they are handled alike
type AnyAction = OperatorAction<any, any, any, any>;
const actionOf = (name: OperatorActionName): AnyAction => ACTIONS[name];

const changed = (what: string) =>
  refusal('CHANGED', `${what} changed since it was shown: look again (nothing was done)`);

export function operations(ports: OperatorPorts, policy: ApprovalPolicy): Operations {
  return {
    policy,
    preview: (name, request) => previewAction(ports, policy, name, request),
    confirm: (name, request, actor, fingerprint) => confirmAction(ports, policy, name, request, actor, fingerprint),
    propose: (name, request, actor, fingerprint) => proposeAction(ports, policy, name, request, actor, fingerprint),
    approve: (id, actor) => approveProposal(ports, policy, id, actor),
    reject: (id, actor) => rejectProposal(ports, policy, id, actor),
    proposals: (query) => listProposals(ports, query),
  };
}

const viewOf = (ports: OperatorPorts, p: Proposal): ProposalView => ({ ...p, status: proposalStatus(p, ports.now()) });
const isoNow = (ports: OperatorPorts) => new Date(ports.now()).toISOString();

async function found(ports: OperatorPorts, id: string): Promise<Proposal> {
  const p = await ports.proposals.get(id);
  if (p === undefined) throw new OperatorError(refusal('NOT_FOUND', `no proposal ${id}`));
  return p;
}

async function previewAction(
  ports: OperatorPorts,
  policy: ApprovalPolicy,
  name: OperatorActionName,
  request: unknown,
): Promise<PreviewAnswer> {
  const action = actionOf(name);
  const target = action.target(request);
  const decided = await preview(action, ports, request);
  if (!decided.ok) return { ok: false, action: name, target, refusal: decided.refusal };
  const kind = action.kind(request);
  return {
    ok: true,
    action: name,
    target,
    shown: action.shown(decided.value),
    fingerprint: planFingerprint(action, decided.value),
    kind,
    approvalRequired: policy.required.has(kind),
    userId: action.customer?.(decided.value, request) ?? null,
  };
}

/** Done at once by one identity: refused when the policy wants four eyes, or what was shown is not what is there. */
function confirmAction<N extends OperatorActionName>(
  ports: OperatorPorts,
  policy: ApprovalPolicy,
  name: N,
  request: RequestOf<N>,
  actor: Actor,
  fingerprint: string | undefined,
): Promise<OutcomeOf<N>> {
  const action = actionOf(name);
  return apply(action, ports, request, actor, {
    step: 'CONFIRM',
    gate: (plan) => {
      const kind = action.kind(request);
      if (policy.required.has(kind)) {
        return refusal(
          'APPROVAL_REQUIRED',
          `${name} (${kind}) is proposed by one identity and approved by another (four eyes): propose it, and ask a colleague to approve it`,
        );
      }
      const stale = fingerprint !== undefined && planFingerprint(action, plan) !== fingerprint;
      return stale ? changed(action.target(request)) : undefined;
    },
  });
}

/** Kept for another identity's approval: the request, what it was shown, the fingerprint of what was read. */
async function proposeAction(
  ports: OperatorPorts,
  policy: ApprovalPolicy,
  name: OperatorActionName,
  request: unknown,
  actor: Actor,
  fingerprint: string | undefined,
): Promise<ProposalView> {
  requireReason(actor.reason);
  const action = actionOf(name);
  const decided = await preview(action, ports, request);
  const at = isoNow(ports);
  const id = proposalIdOf(at, randomBytes(3).toString('hex'));
  const shown = decided.ok ? action.shown(decided.value) : {};
  const fingerprinted = decided.ok ? planFingerprint(action, decided.value) : undefined;
  // What an approval checks the table's proposal against: this record is written once, the table's item is not.
  const proposed =
    fingerprinted === undefined ? {} : { proposed: proposedDigests({ request, shown, fingerprint: fingerprinted }) };
  // Its expiry is in the record too: an approval compares the table's with it (an expiry edited there is TAMPERED).
  const approveBy = new Date(ports.now() + policy.proposalMs).toISOString();
  const entry = await recordAction(
    ports,
    action,
    request,
    actor,
    { step: 'PROPOSE', proposal: id },
    {
      ...shown,
      ...proposed,
      approveBy,
    },
  );
  const stop = !decided.ok
    ? decided.refusal
    : fingerprint !== undefined && fingerprinted !== fingerprint
      ? changed(action.target(request))
      : undefined;
  if (stop !== undefined || !decided.ok) {
    const why = stop ?? refusal('INVALID', 'refused');
    await ports.audit.recordOutcome(entry.key, { result: 'REFUSED', details: { ...why } }, ports.now());
    throw new OperatorError(why);
  }
  const userId = action.customer?.(decided.value, request);
  const proposal: Proposal = {
    id,
    action: name,
    target: action.target(request),
    ...(userId === undefined ? {} : { userId }),
    request,
    shown,
    fingerprint: fingerprinted as string,
    reason: actor.reason,
    proposedBy: actor.identity,
    proposedAt: at,
    proposeRecord: entry.key,
    approveBy,
    state: 'PENDING',
  };
  await audited(ports, entry.key, () => ports.proposals.create(proposal));
  const done = { proposal: id, approveBy: proposal.approveBy };
  await ports.audit.recordOutcome(entry.key, { result: 'DONE', details: done }, ports.now());
  return viewOf(ports, proposal);
}

/**
 * Another identity applies a proposal. Its APPROVE audit record is written first — an approval whose record cannot be
 * written does not happen —, then the proposal is checked against its PROPOSE record (TAMPERED when the table's item
 * was edited) and decided (of two approvers racing, one applies it); a refusal is that record's REFUSED outcome. Then
 * it is applied as it was proposed — refused if what is read now is not what the proposer was shown.
 */
async function approveProposal(ports: OperatorPorts, policy: ApprovalPolicy, id: string, actor: Actor) {
  requireReason(actor.reason);
  const p = await found(ports, id);
  const action = actionOf(p.action);
  const about = { proposedBy: p.proposedBy, proposedAt: p.proposedAt, proposalReason: p.reason };
  // What the approval applies, as its proposer was shown it (the gate refuses it if the plan read now differs): the
  // record keeps the before and after an auditor reads, though it is written before the plan is read again.
  const details = { ...p.shown, ...about, shownToProposer: p.shown };
  const entry = await decided(ports, policy, action, p, actor, 'APPROVE', details, async () => {
    const record = p.proposeRecord === undefined ? undefined : await ports.audit.read(p.proposeRecord);
    return proposalTampering(p, record);
  });
  let outcome: unknown;
  try {
    outcome = await apply(action, ports, p.request, actor, {
      step: 'APPROVE',
      proposal: id,
      entry,
      gate: (plan) => (planFingerprint(action, plan) === p.fingerprint ? undefined : changed(p.target)),
    });
  } catch (error) {
    await ports.proposals.recordOutcome(
      id,
      error instanceof OperatorError
        ? { result: 'REFUSED', details: { ...error.refusal } }
        : { result: 'FAILED', details: { error: (error as Error).name, message: (error as Error).message } },
    );
    throw error;
  }
  await ports.proposals.recordOutcome(id, performedOutcome(action, outcome));
  return { proposal: viewOf(ports, await found(ports, id)), outcome };
}

/** Another identity — or the proposer, withdrawing it — closes a proposal, audited (its record first, as an approval). */
async function rejectProposal(
  ports: OperatorPorts,
  policy: ApprovalPolicy,
  id: string,
  actor: Actor,
): Promise<ProposalView> {
  requireReason(actor.reason);
  const p = await found(ports, id);
  const action = actionOf(p.action);
  const about = { proposedBy: p.proposedBy, proposedAt: p.proposedAt, proposalReason: p.reason, shown: p.shown };
  const entry = await decided(ports, policy, action, p, actor, 'REJECT', about);
  await ports.audit.recordOutcome(entry.key, { result: 'DONE', details: { state: 'REJECTED' } }, ports.now());
  return viewOf(ports, await found(ports, id));
}

/**
 * A decision, audited first: the decision's record, then the checks (the rules, and `check` for an approval), then
 * the conditional write. A refusal — a check's, or the write's condition — is the record's REFUSED outcome, thrown.
 * Answers the record, whose outcome the caller writes once the decision's effect is known.
 */
async function decided(
  ports: OperatorPorts,
  policy: ApprovalPolicy,
  action: AnyAction,
  p: Proposal,
  actor: Actor,
  step: 'APPROVE' | 'REJECT',
  details: Record<string, unknown>,
  check: () => Promise<Refusal | undefined> = async () => undefined,
): Promise<AuditEntry> {
  const entry = await recordAction(ports, action, p.request, actor, { step, proposal: p.id }, details);
  const decision = {
    state: step === 'APPROVE' ? ('APPROVED' as const) : ('REJECTED' as const),
    by: actor.identity,
    at: isoNow(ports),
    reason: actor.reason,
  };
  const why =
    decisionRefusal(p, actor.identity, step, ports.now(), policy) ??
    (await check()) ??
    ((await ports.proposals.decide(p.id, decision, ports.now()))
      ? undefined
      : await lateRefusal(ports, policy, p.id, actor, step));
  if (why !== undefined) {
    await ports.audit.recordOutcome(entry.key, { result: 'REFUSED', details: { ...why } }, ports.now());
    throw new OperatorError(why);
  }
  return entry;
}

async function listProposals(ports: OperatorPorts, query: ProposalQuery = {}): Promise<ProposalView[]> {
  const stored = query.status === 'EXPIRED' ? 'PENDING' : query.status;
  const listed = await ports.proposals.list({
    ...(stored === undefined ? {} : { state: stored }),
    ...(query.userId === undefined ? {} : { userId: query.userId }),
  });
  return listed.map((p) => viewOf(ports, p)).filter((p) => query.status === undefined || p.status === query.status);
}

/** Why a decision's conditional write did not land: what the proposal says now. */
async function lateRefusal(
  ports: OperatorPorts,
  policy: ApprovalPolicy,
  id: string,
  actor: Actor,
  decision: 'APPROVE' | 'REJECT',
): Promise<Refusal> {
  const again = await found(ports, id);
  return (
    decisionRefusal(again, actor.identity, decision, ports.now(), policy) ??
    refusal('DECIDED', `proposal ${id} was decided by someone else meanwhile`)
  );
}

/** A write after the action's audit record: its failure is audited (FAILED) and thrown. */
async function audited(ports: OperatorPorts, recordKey: string, write: () => Promise<void>): Promise<void> {
  try {
    await write();
  } catch (error) {
    const failure = { error: (error as Error).name, message: (error as Error).message };
    await ports.audit.recordOutcome(recordKey, { result: 'FAILED', details: failure }, ports.now());
    throw error;
  }
}

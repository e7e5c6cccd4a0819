/**
 * The shape of every operator action that changes what a customer receives or what is held about them, and the one
 * place that runs one (docs/operations.md "The operator CLI"). An action is a use case in four steps:
 *
 *   read    what the decision needs, from the stores;
 *   decide  pure: what it would do (the plan), or a typed refusal with the true reason;
 *   perform the plan, with conditional writes: a write whose condition failed is a refusal (CHANGED), never a guess;
 *   and, around perform, the audit: the action's record (who — a verified identity —, why, on what, what it was about
 *   to do) before anything is written — an action whose record cannot be written does not happen — and its outcome
 *   after.
 *
 * `preview` is read + decide and writes nothing; `apply` is read + decide again (the same rule, on what is there now)
 * + perform. A caller shows the preview, asks for a reason and a confirmation (or another identity's approval:
 * operations.ts) and then applies. Asked to apply, a refusal is audited too — the record and its REFUSED outcome —
 * whether the rule, a gate (four eyes, a changed state) or a write's condition refused it.
 */
import type { ApprovalKind } from '../domain/approval.ts';
import { fingerprintOf } from '../domain/approval.ts';
import type { AuditStep, OperatorActionName } from '../domain/audit.ts';
import type { VerifiedIdentity } from '../domain/identity.ts';
import { type Refusal, type RefusalCode, refusal } from '../domain/refusal.ts';
import type { AuditEntry } from '../stores/audit-log.ts';
import { OperatorError } from './operator-error.ts';
import type { OperatorPorts } from './ports.ts';

/** Who asks for an action, and why: an identity its transport verified (never a name the caller typed). */
export interface Actor {
  readonly identity: VerifiedIdentity;
  readonly reason: string;
}

/** A plan or an outcome — or the refusal that stands in its place. */
export type Result<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly refusal: Refusal };

export const ok = <T>(value: T): Result<T> => ({ ok: true, value });
export const refused = (code: RefusalCode, message: string): { ok: false; refusal: Refusal } => ({
  ok: false,
  refusal: refusal(code, message),
});

export interface OperatorAction<Request, State, Plan, Outcome> {
  /** What its audit record is filed as. */
  readonly audit: OperatorActionName;
  /** What the audit record names as the action's target. */
  target(request: Request): string;
  /** Which kind of action this request is (domain/approval.ts): whether it needs a second identity's approval. */
  kind(request: Request): ApprovalKind;
  /** The customer the action concerns, when it is known from the plan: proposals are listed by customer. */
  customer?(plan: Plan, request: Request): string | undefined;
  read(ports: OperatorPorts, request: Request): Promise<State>;
  /** Pure. The preview and the write ask this same rule, so what is shown is what is done — or refused, and why. */
  decide(state: State, request: Request): Result<Plan>;
  /** What the audit record says the action was about to do: the state it found (before) and what it would change. */
  shown(plan: Plan): Record<string, unknown>;
  /** What an approval compares with what it reads then (default: the plan); leave out what differs every read. */
  fingerprint?(plan: Plan): unknown;
  perform(ports: OperatorPorts, plan: Plan, request: Request, actor: Actor): Promise<Result<Outcome>>;
  /** What the audit's outcome records of the action once done. */
  done(outcome: Outcome): Record<string, unknown>;
  /**
   * Performed, but not done as asked (a replayed record quarantined again): the outcome is audited REFUSED with
   * this refusal beside what `done` records, and still answered to the caller.
   */
  shortfall?(outcome: Outcome): Refusal | undefined;
}

/** The audit outcome of a performed action: DONE, or REFUSED with its shortfall. */
export function performedOutcome<Q, S, P, O>(action: OperatorAction<Q, S, P, O>, outcome: O) {
  const short = action.shortfall?.(outcome);
  return short === undefined
    ? { result: 'DONE' as const, details: action.done(outcome) }
    : { result: 'REFUSED' as const, details: { ...short, ...action.done(outcome) } };
}

/** What the action would do, or why not: reads, decides, writes nothing. */
export async function preview<Q, S, P, O>(
  action: OperatorAction<Q, S, P, O>,
  ports: OperatorPorts,
  request: Q,
): Promise<Result<P>> {
  return action.decide(await action.read(ports, request), request);
}

/** The fingerprint of a plan (domain/approval.ts): what a proposal keeps and its approval compares. */
export const planFingerprint = <Q, S, P, O>(action: OperatorAction<Q, S, P, O>, plan: P): string =>
  fingerprintOf(action.fingerprint === undefined ? plan : action.fingerprint(plan));

/** How an action is being applied: by whom in which step, and what must still hold for it to go ahead. */
export interface ApplyContext<P> {
  /** CONFIRM (one identity, at once) or APPROVE (another identity's approval of a proposal). */
  readonly step: 'CONFIRM' | 'APPROVE';
  /** The proposal an approval applies. */
  readonly proposal?: string;
  /** What else the audit record keeps (the proposal's proposer and reason, for an approval). */
  readonly details?: Record<string, unknown>;
  /** Checked on the plan after the rule allowed it: four eyes, a changed fingerprint. A refusal here is audited. */
  readonly gate?: (plan: P) => Refusal | undefined;
  /** The action's record, when it was written already (an approval's, before its decision landed): not written again. */
  readonly entry?: AuditEntry;
}

/** A request without a reason is refused before anything is read: every action says why. */
export function requireReason(reason: string): void {
  if (reason.trim() === '') throw new OperatorError(refusal('INVALID', 'say why: every action needs a reason'));
}

/**
 * Does the action: reads and decides again, asks the gate, records it in the audit, performs it, records its
 * outcome (done, refused, failed) and answers the outcome — or throws the refusal (OperatorError, its record and
 * REFUSED outcome written) or the failure (its FAILED outcome written).
 */
export async function apply<Q, S, P, O>(
  action: OperatorAction<Q, S, P, O>,
  ports: OperatorPorts,
  request: Q,
  actor: Actor,
  context: ApplyContext<P> = { step: 'CONFIRM' },
): Promise<O> {
  requireReason(actor.reason);
  const decided = await preview(action, ports, request);
  const stop = decided.ok ? context.gate?.(decided.value) : decided.refusal;
  const details = { ...(decided.ok ? action.shown(decided.value) : {}), ...context.details };
  const entry = context.entry ?? (await recordAction(ports, action, request, actor, context, details));
  if (stop !== undefined || !decided.ok) {
    const why = stop ?? refusal('INVALID', 'refused');
    await ports.audit.recordOutcome(entry.key, { result: 'REFUSED', details: { ...why } }, ports.now());
    throw new OperatorError(why);
  }
  let result: Result<O>;
  try {
    result = await action.perform(ports, decided.value, request, actor);
  } catch (error) {
    const failure = { error: (error as Error).name, message: (error as Error).message };
    await outcomeOr(error, () =>
      ports.audit.recordOutcome(entry.key, { result: 'FAILED', details: failure }, ports.now()),
    );
    throw error;
  }
  const outcome = result.ok
    ? performedOutcome(action, result.value)
    : { result: 'REFUSED' as const, details: { ...result.refusal } };
  await ports.audit.recordOutcome(entry.key, outcome, ports.now());
  if (!result.ok) throw new OperatorError(result.refusal);
  return result.value;
}

/** The action's audit record, written before anything else: an action whose record cannot be written does not happen. */
export function recordAction<Q, S, P, O>(
  ports: OperatorPorts,
  action: OperatorAction<Q, S, P, O>,
  request: Q,
  actor: Actor,
  context: { readonly step: AuditStep; readonly proposal?: string },
  details: Record<string, unknown>,
): Promise<AuditEntry> {
  return ports.audit.record(
    {
      action: action.audit,
      step: context.step,
      by: actor.identity,
      reason: actor.reason,
      target: action.target(request),
      ...(context.proposal === undefined ? {} : { proposal: context.proposal }),
      details,
    },
    ports.now(),
  );
}

/** Records a failure's outcome; when that write fails too, the failure is thrown with both causes. */
async function outcomeOr(failure: unknown, record: () => Promise<unknown>): Promise<void> {
  try {
    await record();
  } catch (auditError) {
    throw new AggregateError(
      [failure, auditError],
      `${(failure as Error).message} — and its outcome could not be written to the audit: ${(auditError as Error).message}`,
    );
  }
}

export { OperatorError };

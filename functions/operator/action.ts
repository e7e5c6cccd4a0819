/**
 * The shape of every operator action that changes what a customer receives or what is held about them, and the one
 * place that runs one (docs/operations.md "The operator CLI"). An action is a use case in four steps:
 *
 *   read    what the decision needs, from the stores;
 *   decide  pure: what it would do (the plan), or a typed refusal with the true reason;
 *   perform the plan, with conditional writes: a write whose condition failed is a refusal (CHANGED), never a guess;
 *   and, around perform, the audit: the action's record (who, why, on what, what it was about to do) before anything
 *   is written — an action whose record cannot be written does not happen — and its outcome after.
 *
 * `preview` is read + decide and writes nothing; `apply` is read + decide again (the same rule, on what is there now)
 * + perform. A caller may show the preview, ask for a confirmation (or another person's approval) and then apply.
 */
import type { AuditAction } from '../domain/audit.ts';
import { type Refusal, type RefusalCode, refusal } from '../domain/refusal.ts';
import type { OperatorPorts } from './ports.ts';

/** Who asks for an action, and why: the name is the caller's own word for itself. */
export interface Actor {
  readonly by: string;
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
  /** What its audit record is filed as; undefined for an action that is not audited (it asks for no reason). */
  readonly audit: AuditAction | undefined;
  /** What the audit record names as the action's target. */
  target(request: Request): string;
  read(ports: OperatorPorts, request: Request): Promise<State>;
  /** Pure. The preview and the write ask this same rule, so what is shown is what is done — or refused, and why. */
  decide(state: State, request: Request): Result<Plan>;
  /** What the audit record says the action was about to do. */
  shown(plan: Plan): Record<string, unknown>;
  perform(ports: OperatorPorts, plan: Plan, request: Request, actor: Actor): Promise<Result<Outcome>>;
  /** What the audit's outcome records of the action once done. */
  done(outcome: Outcome): Record<string, unknown>;
}

/** An operator's request the system refuses: the typed refusal, with the words to show. */
export class OperatorError extends Error {
  override name = 'OperatorError';
  constructor(readonly refusal: Refusal) {
    super(refusal.message);
  }

  /** A mistake in the request (exit 2 for a command line), or a refusal of what it asks (exit 3). */
  get kind(): 'INVALID' | 'REFUSED' {
    return this.refusal.code === 'INVALID' ? 'INVALID' : 'REFUSED';
  }
}

/** What the action would do, or why not: reads, decides, writes nothing. */
export async function preview<Q, S, P, O>(
  action: OperatorAction<Q, S, P, O>,
  ports: OperatorPorts,
  request: Q,
): Promise<Result<P>> {
  return action.decide(await action.read(ports, request), request);
}

/**
 * Does the action: reads and decides again — a refusal is thrown before anything is written or audited —, records
 * it in the audit, performs it, records its outcome (done, refused, failed) and answers the outcome or throws the
 * refusal (OperatorError) or the failure.
 */
export async function apply<Q, S, P, O>(
  action: OperatorAction<Q, S, P, O>,
  ports: OperatorPorts,
  request: Q,
  actor: Actor,
): Promise<O> {
  const decided = await preview(action, ports, request);
  if (!decided.ok) throw new OperatorError(decided.refusal);
  const entry =
    action.audit === undefined
      ? undefined
      : await ports.audit.record(
          {
            action: action.audit,
            by: actor.by,
            reason: actor.reason,
            target: action.target(request),
            details: action.shown(decided.value),
          },
          ports.now(),
        );
  let result: Result<O>;
  try {
    result = await action.perform(ports, decided.value, request, actor);
  } catch (error) {
    if (entry !== undefined) {
      const failure = { error: (error as Error).name, message: (error as Error).message };
      await outcomeOr(error, () =>
        ports.audit.recordOutcome(entry.key, { result: 'FAILED', details: failure }, ports.now()),
      );
    }
    throw error;
  }
  if (entry !== undefined) {
    const outcome = result.ok
      ? { result: 'DONE' as const, details: action.done(result.value) }
      : { result: 'REFUSED' as const, details: { ...result.refusal } };
    await ports.audit.recordOutcome(entry.key, outcome, ports.now());
  }
  if (!result.ok) throw new OperatorError(result.refusal);
  return result.value;
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

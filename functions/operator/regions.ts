/**
 * The operator's commands for two regions (docs/regions.md "Promotion and demotion, step by step"): each changes who
 * sends every customer's notices, so each is audited as every deliberate action is — its record (who, why, on what,
 * what it was about to do) written before anything moves, an action whose record cannot be written does not happen,
 * and its outcome (done, with the report; refused, with its code and reason; or failed) after.
 */
import type { AuditAction } from '../domain/audit.ts';
import type { VerifiedIdentity } from '../domain/identity.ts';
import type { AuditLog } from '../stores/audit-log.ts';
import { RegionRefused } from './region-refusal.ts';

export {
  type Clock,
  type DemoteRequest,
  type DemotionReport,
  demote,
  type FailoverRequest,
  type IntakeReport,
  type PromotionReport,
  promoteFailover,
  type RegionSide,
} from './promote.ts';
export { type ReconcileReport, type ReconcileRequest, reconcile } from './reconcile.ts';
export {
  demoteRefusal,
  promoteRefusal,
  type RegionRefusalCode,
  RegionRefused,
  reconcileRefusal,
} from './region-refusal.ts';

export interface AuditedStep<T> {
  readonly action: Extract<AuditAction, 'PROMOTE' | 'DEMOTE' | 'RECONCILE'>;
  /** Who acts, as the transport verified it (docs/operations.md "Who acts: verified identities"). */
  readonly by: VerifiedIdentity;
  readonly reason: string;
  readonly target: string;
  /** What the command was about to do, as it was shown. */
  readonly plan: Record<string, unknown>;
  readonly perform: () => Promise<T>;
}

export async function audited<T extends object>(audit: AuditLog, now: () => number, step: AuditedStep<T>): Promise<T> {
  const entry = await audit.record(
    { action: step.action, by: step.by, reason: step.reason, target: step.target, details: step.plan },
    now(),
  );
  let report: T;
  try {
    report = await step.perform();
  } catch (error) {
    // A refusal is the record's REFUSED outcome, with its code and reason; anything else, FAILED.
    if (error instanceof RegionRefused) {
      const details = { code: error.code, message: error.message };
      await audit.recordOutcome(entry.key, { result: 'REFUSED', details }, now());
      throw error;
    }
    await audit.recordOutcome(
      entry.key,
      { result: 'FAILED', details: { error: (error as Error).name, message: (error as Error).message } },
      now(),
    );
    throw error;
  }
  await audit.recordOutcome(entry.key, { result: 'DONE', details: { ...(report as Record<string, unknown>) } }, now());
  return report;
}

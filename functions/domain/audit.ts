/**
 * The audit of deliberate operator actions (docs/evidence-and-privacy.md "Audited operator actions"): one record of
 * the action — who, when, why, on what, with what it was shown — written before anything is done, and one record of
 * its outcome (done, refused and why, or failed) written after. Both are written once to the evidence store and kept
 * as long as the evidence; the outcome is a second object beside the first, because a written object is never
 * changed. Pure: the keys and the shapes; functions/stores/audit-log.ts stores them.
 */

export const AUDIT_ACTIONS = [
  'RESEND',
  'REPLAY',
  'SUPPRESSION_LIFT',
  'EXPORT',
  'ERASE',
  'PROMOTE',
  'DEMOTE',
  'RECONCILE',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/** What became of an audited action: done, refused (the true reason), or failed (an error AWS or the code raised). */
export interface AuditOutcome {
  readonly kind: 'AUDIT_OUTCOME';
  readonly at: string;
  readonly result: 'DONE' | 'REFUSED' | 'FAILED';
  readonly details: Record<string, unknown>;
}

export interface AuditRecord {
  readonly kind: 'AUDIT';
  readonly action: AuditAction;
  /** Who acted, as the caller named itself. */
  readonly by: string;
  readonly at: string;
  readonly reason: string;
  readonly target: string;
  /** What the action was about to do, as it was shown. */
  readonly details: Record<string, unknown>;
  /** Its outcome, once written; absent when the action never finished (the process died, or the write failed). */
  readonly outcome?: AuditOutcome;
}

export const AUDIT_PREFIX = 'audit/';
const OUTCOME_SUFFIX = '.outcome.json';

/** The key of an action's record: time first, so a listing is in time order and `--since` is a key comparison. */
export const auditKey = (at: string, id: string) => `${AUDIT_PREFIX}${at}-${id}.json`;

/** The key of the outcome of the action recorded under `recordKey`. */
export const auditOutcomeKey = (recordKey: string) => `${recordKey.slice(0, -'.json'.length)}${OUTCOME_SUFFIX}`;

/** The record key an outcome key belongs to, or undefined for a record's own key. */
export const recordKeyOfOutcome = (key: string): string | undefined =>
  key.endsWith(OUTCOME_SUFFIX) ? `${key.slice(0, -OUTCOME_SUFFIX.length)}.json` : undefined;

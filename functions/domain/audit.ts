/**
 * The audit of deliberate operator actions (docs/evidence-and-privacy.md "Audited operator actions"): one record of
 * the action — who (a verified identity), when, why, on what, with what it was shown — written before anything is
 * done, and one record of its outcome (done, refused and why, or failed) written after. A refusal is audited too when
 * the operator asked for the action (confirmed, proposed, approved): the record and its REFUSED outcome. Both are
 * written once to the evidence store and kept as long as the evidence; the outcome is a second object beside the
 * first, because a written object is never changed. Pure: the keys and the shapes; functions/stores/audit-log.ts
 * stores them.
 */
import type { RecordedIdentity } from './identity.ts';

/**
 * Every action that changes what a customer receives or what is held about them, and showing what is held, as the
 * operator's operations run them (functions/operator/operations.ts).
 */
export const OPERATOR_ACTIONS = [
  'RESEND',
  'REPAIR',
  'REPLAY',
  'REPLAY_BATCHES',
  'SUPPRESSION_LIFT',
  'EXPORT',
  'ERASE',
  // A contact point shown in full to support staff, who said why (the support console masks it otherwise).
  'REVEAL',
  // A notice a failover held, sent now (late) or closed unsent on an operator's decision (docs/regions.md).
  'RELEASE_HELD',
  'SETTLE_HELD',
] as const;
export type OperatorActionName = (typeof OPERATOR_ACTIONS)[number];

/** The regions' fence moved, and what a failover left decided (docs/regions.md): run against both regions at once. */
export const REGION_ACTIONS = ['PROMOTE', 'DEMOTE', 'RECONCILE'] as const;

export const AUDIT_ACTIONS = [...OPERATOR_ACTIONS, ...REGION_ACTIONS] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/**
 * Which half of the action a record is: done by one identity at once (CONFIRM), or proposed by one and approved (or
 * rejected) by another (docs/operations.md "Four eyes").
 */
export const AUDIT_STEPS = ['CONFIRM', 'PROPOSE', 'APPROVE', 'REJECT'] as const;
export type AuditStep = (typeof AUDIT_STEPS)[number];

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
  /** CONFIRM, PROPOSE, APPROVE or REJECT; absent on records written before four eyes (a CONFIRM). */
  readonly step?: AuditStep;
  /** Who acted, as the transport verified it (a record from before that says UNVERIFIED). */
  readonly by: RecordedIdentity;
  /** The proposal an APPROVE, REJECT or PROPOSE record belongs to. */
  readonly proposal?: string;
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

/**
 * The audit by subject: beside each record, a small object under `audit/by-subject/<hash>/` named after the record,
 * so the records about one customer's events are listed without reading the whole log. The subject is the event a
 * notification id names, else the target itself (a customer, a quarantined record, a suppression's hash). Under
 * `audit/`: written by the same writers, kept as long, guarded alike.
 */
export const AUDIT_SUBJECT_PREFIX = `${AUDIT_PREFIX}by-subject/`;
export const auditSubjectOf = (target: string, eventOf: (id: string) => string | undefined) =>
  eventOf(target) ?? target;
/** The index key of a record (`audit/<at>-<id>.json`) under a subject's hash. */
export const auditSubjectKey = (subjectHash: string, recordKey: string) =>
  `${AUDIT_SUBJECT_PREFIX}${subjectHash}/${recordKey.slice(AUDIT_PREFIX.length)}`;
/** The record key an index key names. */
export const recordKeyOfSubjectKey = (indexKey: string) =>
  `${AUDIT_PREFIX}${indexKey.slice(indexKey.lastIndexOf('/') + 1)}`;

/** The record key an outcome key belongs to, or undefined for a record's own key. */
export const recordKeyOfOutcome = (key: string): string | undefined =>
  key.endsWith(OUTCOME_SUFFIX) ? `${key.slice(0, -OUTCOME_SUFFIX.length)}.json` : undefined;

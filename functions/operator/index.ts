/**
 * The operator's entry: every use case an operator surface (the ops command line today) calls, and the ports it
 * builds them on. The actions that change what a customer receives or what is held about them run through one
 * runner (action.ts): preview, then apply — decided by the same rule, audited with who, why and the outcome.
 */
export type { AuditAction, AuditOutcome, AuditRecord } from '../domain/audit.ts';
export type { Refusal, RefusalCode } from '../domain/refusal.ts';
export type { ListedAuditRecord } from '../stores/audit-log.ts';
export { type Actor, apply, type OperatorAction, OperatorError, preview, type Result } from './action.ts';
export { type CustomerView, customerView, inspectEvent } from './customer.ts';
export { type ErasureResult, eraseCustomer, erasurePlan } from './erase.ts';
export { evidenceOf, readEvidence, type SendProof, userEvidence } from './evidence.ts';
export { type CustomerExport, exportCustomer } from './export.ts';
export { type LiftOutcome, liftSuppression } from './lift-suppression.ts';
export {
  listAudit,
  listQuarantine,
  listRefused,
  listSuppressions,
  type QuarantineView,
  type RefusedView,
  type SuppressionView,
} from './lists.ts';
export { CLUSTER_ARN, type KafkaRecordSpec, mskEvent, mskRecord, valueBytes } from './msk-event.ts';
export { parkedEvent, S3ParkedBatches } from './parked-batches.ts';
export { type IngestInvoker, type OperatorPorts, operatorPorts } from './ports.ts';
export * as regions from './regions.ts';
export { REPAIR_TOPIC, type RepairResult, repair } from './repair.ts';
export { type ReplayResult, replayQuarantine } from './replay.ts';
export { type ParkedBatch, replayFailedBatches } from './replay-batches.ts';
export { type ResendOutcome, type ResendPlan, resend } from './resend.ts';
export { type CorrectionReview, jsonDiff, reviewCorrection, type ValueChange } from './review.ts';
export { type NoticeView, whyOf } from './why.ts';

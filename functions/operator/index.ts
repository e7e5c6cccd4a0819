/**
 * The operator's entry: every use case an operator surface (the ops command line, the operator API, the support
 * console) calls, and the ports it builds them on. The actions that change what a customer receives or what is held
 * about them are reached through the operations (operations.ts): preview, then confirm — or propose and another
 * identity's approval — each decided by the same rule (action.ts), audited with the verified caller, why and the
 * outcome; routes.ts carries them over HTTP.
 */
// The card brands' ranges and the IBAN registry with the operator's use cases (replay and repair decode events).
import '../domain/card-rules.ts';

export {
  APPROVAL_KINDS,
  type ApprovalKind,
  type ApprovalPolicy,
  approvalPolicyOf,
  DEFAULT_APPROVAL_REQUIRED,
  DEFAULT_PROPOSAL_HOURS,
  PROPOSAL_STATES,
  type Proposal,
  type ProposalState,
} from '../domain/approval.ts';
export type { AuditAction, AuditOutcome, AuditRecord, AuditStep, OperatorActionName } from '../domain/audit.ts';
export {
  IDENTITY_SOURCES,
  type IdentitySource,
  identityText,
  personKey,
  type RecordedIdentity,
  sameIdentity,
  type VerifiedIdentity,
} from '../domain/identity.ts';
export type { Refusal, RefusalCode } from '../domain/refusal.ts';
export type { ListedAuditRecord } from '../stores/audit-log.ts';
export {
  type Actor,
  apply,
  type OperatorAction,
  OperatorError,
  planFingerprint,
  preview,
  type Result,
} from './action.ts';
export { type CustomerView, customerView, inspectEvent } from './customer.ts';
export { type ErasureResult, eraseCustomer, erasurePlan } from './erase.ts';
export {
  evidenceFound,
  evidenceOf,
  readEvidence,
  type SendProof,
  type UnfoundSend,
  userEvidence,
} from './evidence.ts';
export { type CustomerExport, exportCustomer } from './export.ts';
export {
  HELD_PAGE_SIZE,
  type HeldListing,
  type HeldOutcome,
  type HeldView,
  listHeld,
  releaseHeld,
  settleHeld,
} from './held.ts';
export { type LiftOutcome, liftSuppression } from './lift-suppression.ts';
export {
  countBy,
  type IncidentLookup,
  listAudit,
  listQuarantine,
  listRefused,
  listSuppressions,
  producerText,
  type QuarantineView,
  type RefusedView,
  type SuppressionView,
} from './lists.ts';
export { CLUSTER_ARN, type KafkaRecordSpec, mskEvent, mskRecord, valueBytes } from './msk-event.ts';
export {
  ACTIONS,
  asCaller,
  type CallerOperations,
  type Operations,
  type OutcomeOf,
  operations,
  type PreviewAnswer,
  type ProposalQuery,
  type ProposalView,
  type RequestOf,
} from './operations.ts';
export { parkedEvent, S3ParkedBatches } from './parked-batches.ts';
export { type IngestInvoker, type OperatorPorts, operatorPorts, PROPOSAL_KEEP_DAYS } from './ports.ts';
// The region commands' request, preview and confirm, shared by the operator function and the command line.
export {
  isRegionCommand,
  namedRegion,
  parseRegionRequest,
  REGION_COMMANDS,
  type RegionCommand,
  type RegionCommandSettings,
  type RegionRequest,
  regionConfirm,
  regionPreview,
  scopeProblem,
} from './region-commands.ts';
export * as regions from './regions.ts';
export { REPAIR_TOPIC, type RepairPlan, type RepairResult, repair } from './repair.ts';
export { type ReplayResult, replayQuarantine } from './replay.ts';
export { type ParkedBatch, type ReplayBatchesRequest, replayFailedBatches } from './replay-batches.ts';
export { parseRequest, REQUEST_SCHEMAS } from './requests.ts';
export { type ResendOutcome, type ResendPlan, resend } from './resend.ts';
export { type CorrectionReview, jsonDiff, reviewCorrection, type ValueChange } from './review.ts';
export { answer, type HttpAnswer, type HttpRequest, refusalAnswer } from './routes.ts';
export { type NoticeView, whyOf } from './why.ts';

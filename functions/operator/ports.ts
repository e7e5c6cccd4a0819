/**
 * What the operator's use cases read and write through: the table's stores, the evidence store (read, and the audit
 * log kept in it), the ingest function (replays and repairs go through it, as the MSK mapping would deliver them) and
 * the bucket of parked batches. A command line, and any other operator surface, builds these once and passes them.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { MSKEvent } from 'aws-lambda';
import { type ChannelPolicies, DEFAULT_CHANNEL_POLICIES } from '../domain/delivery-policy.ts';
import type { OldRegionLook } from '../domain/held.ts';
import { DEFAULT_SWEEP_PLACEMENT } from '../domain/sweep-index.ts';
import { type AudienceStore, DynamoAudienceStore } from '../stores/audience-store.ts';
import { type AuditLog, EvidenceAuditLog } from '../stores/audit-log.ts';
import type { AuditSeal } from '../stores/audit-seal.ts';
import { DynamoEventStore, type EventStore } from '../stores/event-store.ts';
import { DynamoEvidenceIndex } from '../stores/evidence-index.ts';
import { DynamoEvidenceLocator, type EvidenceLocator } from '../stores/evidence-reader.ts';
import type { EvidenceStore } from '../stores/evidence-store.ts';
import { DynamoHeldStore, type HeldStore } from '../stores/held-store.ts';
import { DynamoProposalStore, type ProposalStore } from '../stores/proposal-store.ts';
import { DynamoQuarantineStore, type QuarantineStore } from '../stores/quarantine-store.ts';
import type { ParkedBatches } from './parked-batches.ts';

/** Feeds one MSK event to the ingest function: the deployed function (Lambda Invoke) or the local handler. */
export type IngestInvoker = (event: MSKEvent) => Promise<void>;

export interface OperatorPorts {
  readonly events: EventStore;
  readonly quarantine: QuarantineStore;
  readonly audience: AudienceStore;
  /** What was sent, byte for byte (read only: the functions write it); the audit log is kept in it too. */
  readonly evidence: EvidenceStore;
  /** Where the table and the customers' evidence index name a send's batch (the bucket is never listed). */
  readonly evidenceLocator: EvidenceLocator;
  readonly audit: AuditLog;
  /** Actions one identity proposed, waiting for another's approval (four eyes). */
  readonly proposals: ProposalStore;
  readonly invokeIngest: IngestInvoker;
  /** The failed MSK batches the mapping parked: a deployed stack's bucket; none locally. */
  readonly parked: ParkedBatches | undefined;
  readonly now: () => number;
  /** The notices a failover held, waiting for the old region's record or an operator's decision. */
  readonly held: HeldStore;
  /** Each channel's delivery policy: whether a possible second copy is within what the bank chose (release-held). */
  readonly policies: ChannelPolicies;
  /** A stage in two regions: the old region as a held notice's decision finds it (its fence, asked once, briefly). */
  readonly oldRegion?: () => Promise<OldRegionLook>;
}

/** The default time a proposal stays in the table after its expiry: as long as the inbox's default retention. */
export const PROPOSAL_KEEP_DAYS = 35;

/** The ports on one table and one evidence store. */
export function operatorPorts(deps: {
  readonly doc: DynamoDBDocumentClient;
  readonly tableName: string;
  /** The evidence index's table (the main table's index items, from before it had one, are read too). */
  readonly evidenceIndexTableName: string;
  /** The evidence spool's own table (absent: the main table). */
  readonly evidenceSpoolTableName?: string | undefined;
  readonly evidence: EvidenceStore;
  readonly invokeIngest: IngestInvoker;
  readonly parked?: ParkedBatches;
  readonly now?: () => number;
  /** How long a decided or expired proposal stays in the table (its TTL); the audit keeps it for good. */
  readonly proposalKeepDays?: number;
  /** How audit records are sealed and checked (stores/audit-seal.ts): the stack's KMS key; absent, the local run's. */
  readonly auditSeal?: AuditSeal;
  /** Where audit records are written when not as the evidence is read (the console writes as its own role). */
  readonly auditWrites?: EvidenceStore;
  /** The stage's channel policies; absent, every channel at-most-once (the default, and the cautious reading). */
  readonly policies?: ChannelPolicies;
}): OperatorPorts {
  return {
    events: new DynamoEventStore(deps.doc, deps.tableName),
    quarantine: new DynamoQuarantineStore(deps.doc, deps.tableName),
    audience: new DynamoAudienceStore(deps.doc, deps.tableName),
    evidence: deps.evidence,
    evidenceLocator: new DynamoEvidenceLocator(
      deps.doc,
      deps.tableName,
      new DynamoEvidenceIndex(deps.doc, deps.evidenceIndexTableName, { formerTable: deps.tableName }),
      deps.evidenceSpoolTableName,
    ),
    audit: new EvidenceAuditLog(deps.evidence, deps.auditSeal, deps.auditWrites),
    proposals: new DynamoProposalStore(deps.doc, deps.tableName, deps.proposalKeepDays ?? PROPOSAL_KEEP_DAYS),
    invokeIngest: deps.invokeIngest,
    parked: deps.parked,
    now: deps.now ?? Date.now,
    // Placed as a resend places what it puts back to PENDING (event-store.ts): the default sweep shards.
    held: new DynamoHeldStore(deps.doc, deps.tableName, DEFAULT_SWEEP_PLACEMENT.sweepShards),
    policies: deps.policies ?? DEFAULT_CHANNEL_POLICIES,
  };
}

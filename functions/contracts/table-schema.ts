/**
 * The one table's shape, as plain data. The CDK stack builds the real table from it; the local run and the
 * integration tests create their DynamoDB Local table from it. One definition, never written twice.
 * No aws-cdk-lib import here: the local run must not load the CDK.
 */
import type { CreateTableCommandInput } from '@aws-sdk/client-dynamodb';

export const TABLE_SCHEMA = {
  partitionKey: 'pk',
  sortKey: 'sk',
  timeToLiveAttribute: 'expiresAt',
  streamViewType: 'NEW_AND_OLD_IMAGES',
  /**
   * Sparse: only PENDING and SENDING notifications carry sweepKey/sweepAt, so the sweeper never scans. It is also the
   * delay queue: sweepAt is when an item is next due (functions/domain/notification.ts). The projection carries what
   * the sweeper decides on: the budget (attempt, deferrals), the age (createdAt), and whether a wake-up is routine
   * (retryAt) or a stuck item.
   */
  sweepIndex: {
    indexName: 'sweep',
    partitionKey: 'sweepKey',
    sortKey: 'sweepAt',
    nonKeyAttributes: [
      'status',
      'attempt',
      'channel',
      'notificationId',
      'leaseUntil',
      'createdAt',
      'deferrals',
      'retryAt',
    ],
  },
  /**
   * Sparse: only a push or an SMS that records a send carries providerMessageId, and the earlier send an operator's
   * resend took off it (an EARLIER_SEND item beside it). SNS's delivery status logs name the message, never the
   * notification (nothing of ours travels with an SMS), so the feedback function finds the notification here. Keys
   * only: it reads the item itself, consistently, before it writes. An email's id is kept in sesMessageId, off the
   * index: SES reports carry the notification's tag (domain/message-id.ts); emails written before keep theirs here.
   */
  messageIndex: {
    indexName: 'providerMessage',
    partitionKey: 'providerMessageId',
  },
  /**
   * Sparse: only inbox items of notices (not preferences) carry userKey = USER#<userId>, sorted by occurredAt. One
   * customer's events without a scan: `ops customer`, `ops export`, `ops erase`. Keys only: the event's own partition
   * (one Query) has everything else. One index write per event (docs/table.md "The byUser index").
   */
  userIndex: {
    indexName: 'byUser',
    partitionKey: 'userKey',
    sortKey: 'occurredAt',
  },
  /**
   * Sparse: only quarantined records and REFUSED notifications carry incidentKey = <kind>#<day>#<shard>
   * (domain/keys.ts incidentKeyOf), sorted by incidentAt (when it happened). An incident's look-up — `ops quarantine
   * --since 1h`, `ops refused` — reads a few keys, never the table (docs/table.md "The incidents index"). All
   * attributes: the lists show each item whole, and the items are few (each raised an alarm).
   */
  incidentIndex: {
    indexName: 'incidents',
    partitionKey: 'incidentKey',
    sortKey: 'incidentAt',
  },
} as const;

export function createTableInput(tableName: string): CreateTableCommandInput {
  const s = TABLE_SCHEMA;
  return {
    TableName: tableName,
    BillingMode: 'PAY_PER_REQUEST',
    AttributeDefinitions: [
      { AttributeName: s.partitionKey, AttributeType: 'S' },
      { AttributeName: s.sortKey, AttributeType: 'S' },
      { AttributeName: s.sweepIndex.partitionKey, AttributeType: 'S' },
      { AttributeName: s.sweepIndex.sortKey, AttributeType: 'N' },
      { AttributeName: s.messageIndex.partitionKey, AttributeType: 'S' },
      { AttributeName: s.userIndex.partitionKey, AttributeType: 'S' },
      { AttributeName: s.userIndex.sortKey, AttributeType: 'S' },
      { AttributeName: s.incidentIndex.partitionKey, AttributeType: 'S' },
      { AttributeName: s.incidentIndex.sortKey, AttributeType: 'S' },
    ],
    KeySchema: [
      { AttributeName: s.partitionKey, KeyType: 'HASH' },
      { AttributeName: s.sortKey, KeyType: 'RANGE' },
    ],
    GlobalSecondaryIndexes: [
      {
        IndexName: s.sweepIndex.indexName,
        KeySchema: [
          { AttributeName: s.sweepIndex.partitionKey, KeyType: 'HASH' },
          { AttributeName: s.sweepIndex.sortKey, KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: 'INCLUDE', NonKeyAttributes: [...s.sweepIndex.nonKeyAttributes] },
      },
      {
        IndexName: s.messageIndex.indexName,
        KeySchema: [{ AttributeName: s.messageIndex.partitionKey, KeyType: 'HASH' }],
        Projection: { ProjectionType: 'KEYS_ONLY' },
      },
      {
        IndexName: s.userIndex.indexName,
        KeySchema: [
          { AttributeName: s.userIndex.partitionKey, KeyType: 'HASH' },
          { AttributeName: s.userIndex.sortKey, KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: 'KEYS_ONLY' },
      },
      {
        IndexName: s.incidentIndex.indexName,
        KeySchema: [
          { AttributeName: s.incidentIndex.partitionKey, KeyType: 'HASH' },
          { AttributeName: s.incidentIndex.sortKey, KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: 'ALL' },
      },
    ],
    StreamSpecification: { StreamEnabled: true, StreamViewType: s.streamViewType },
  };
}

/**
 * What a region's operator may touch when it writes the other region's replica (reconcile settling the old region's
 * notification items there: DynamoSuccessorStore.move): the key, the attributes its condition reads (status, epoch,
 * sweepKey) and those it sets or removes. The stack grants UpdateItem on exactly these (IAM `dynamodb:Attributes`),
 * on event partitions only; a move that needs another attribute there fails as AccessDenied until it is listed here.
 */
export const PEER_SETTLE_ATTRIBUTES = [
  'pk',
  'sk',
  'status',
  'epoch',
  'updatedAt',
  'lastError',
  'handedOverTo',
  'sweepKey',
  'sweepAt',
  'leaseUntil',
  'retryAt',
] as const;

/**
 * The one table (functions/contracts/table-schema.ts is its one definition; the local run builds it from there too):
 * on demand, its stream the dispatch triggers read, TTL, point-in-time recovery, deletion protection, retained.
 */
import { RemovalPolicy, type Stack } from 'aws-cdk-lib';
import {
  AttributeType,
  BillingMode,
  type GlobalSecondaryIndexProps,
  type GlobalSecondaryIndexPropsV2,
  ProjectionType,
  StreamViewType,
  Table,
  TableEncryption,
} from 'aws-cdk-lib/aws-dynamodb';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import { TABLE_SCHEMA } from '../functions/contracts/table-schema.ts';

export function createTable(stack: Stack, key: IKey | undefined): Table {
  const schema = TABLE_SCHEMA;
  const table = new Table(stack, 'Table', {
    partitionKey: { name: schema.partitionKey, type: AttributeType.STRING },
    sortKey: { name: schema.sortKey, type: AttributeType.STRING },
    billingMode: BillingMode.PAY_PER_REQUEST,
    stream: StreamViewType.NEW_AND_OLD_IMAGES,
    timeToLiveAttribute: schema.timeToLiveAttribute,
    pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
    deletionProtection: true,
    removalPolicy: RemovalPolicy.RETAIN,
    ...(key === undefined ? {} : { encryption: TableEncryption.CUSTOMER_MANAGED, encryptionKey: key }),
  });
  for (const index of tableIndexes()) table.addGlobalSecondaryIndex(index);
  return table;
}

/** The table's indexes, one list for the table of a stage in one region and the global table of a stage in two. */
export function tableIndexes(): (GlobalSecondaryIndexProps & GlobalSecondaryIndexPropsV2)[] {
  const schema = TABLE_SCHEMA;
  return [
    {
      indexName: schema.sweepIndex.indexName,
      partitionKey: { name: schema.sweepIndex.partitionKey, type: AttributeType.STRING },
      sortKey: { name: schema.sweepIndex.sortKey, type: AttributeType.NUMBER },
      projectionType: ProjectionType.INCLUDE,
      nonKeyAttributes: [...schema.sweepIndex.nonKeyAttributes],
    },
    // SNS's delivery status names the message, not the notification: the feedback function finds it here.
    {
      indexName: schema.messageIndex.indexName,
      partitionKey: { name: schema.messageIndex.partitionKey, type: AttributeType.STRING },
      projectionType: ProjectionType.KEYS_ONLY,
    },
    // One customer's events without a scan (ops customer / export / erase): a sparse keys-only index on inbox items.
    {
      indexName: schema.userIndex.indexName,
      partitionKey: { name: schema.userIndex.partitionKey, type: AttributeType.STRING },
      sortKey: { name: schema.userIndex.sortKey, type: AttributeType.STRING },
      projectionType: ProjectionType.KEYS_ONLY,
    },
    {
      indexName: schema.incidentIndex.indexName,
      partitionKey: { name: schema.incidentIndex.partitionKey, type: AttributeType.STRING },
      sortKey: { name: schema.incidentIndex.sortKey, type: AttributeType.STRING },
      projectionType: ProjectionType.ALL,
    },
  ];
}

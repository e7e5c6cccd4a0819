/**
 * The fence table's shape (docs/regions.md "The fence"): one per region, regional, never replicated, no stream. The
 * CDK stack builds it from this; the drill and the integration tests create it on DynamoDB Local from it.
 */
import type { CreateTableCommandInput } from '@aws-sdk/client-dynamodb';

export const FENCE_TABLE_SCHEMA = { partitionKey: 'pk' } as const;

export const createFenceTableInput = (tableName: string): CreateTableCommandInput => ({
  TableName: tableName,
  BillingMode: 'PAY_PER_REQUEST',
  AttributeDefinitions: [{ AttributeName: FENCE_TABLE_SCHEMA.partitionKey, AttributeType: 'S' }],
  KeySchema: [{ AttributeName: FENCE_TABLE_SCHEMA.partitionKey, KeyType: 'HASH' }],
});

/**
 * The evidence index's own table (docs/table.md "The evidence index"), as plain data: the stack builds it
 * (lib/evidence-index-table.ts), the local run and the integration tests create it on DynamoDB Local from here. Its
 * items are the compact `u#<userId>` and `e#<eventId>` (stores/evidence-index.ts), beside those of the layout before,
 * keyed as they were in the main table (`EVIDENCE_INDEX#<userId>` / `EVIDENCE_EVENT#<eventId>`) and read alike until
 * their TTL. No aws-cdk-lib import: the local run must not load the CDK.
 */
import type { CreateTableCommandInput } from '@aws-sdk/client-dynamodb';

export const EVIDENCE_INDEX_TABLE_SCHEMA = {
  partitionKey: 'pk',
  sortKey: 'sk',
  timeToLiveAttribute: 'expiresAt',
} as const;

/** The index table beside a table of a run without the stack (the local run, a test, a bench). */
export const localEvidenceIndexTableName = (tableName: string) => `${tableName}-evidence-index`;

export function createEvidenceIndexTableInput(tableName: string): CreateTableCommandInput {
  const s = EVIDENCE_INDEX_TABLE_SCHEMA;
  return {
    TableName: tableName,
    BillingMode: 'PAY_PER_REQUEST',
    TableClass: 'STANDARD_INFREQUENT_ACCESS',
    AttributeDefinitions: [
      { AttributeName: s.partitionKey, AttributeType: 'S' },
      { AttributeName: s.sortKey, AttributeType: 'S' },
    ],
    KeySchema: [
      { AttributeName: s.partitionKey, KeyType: 'HASH' },
      { AttributeName: s.sortKey, KeyType: 'RANGE' },
    ],
  };
}

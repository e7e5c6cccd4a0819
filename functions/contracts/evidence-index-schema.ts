/**
 * The evidence index's own table (docs/table.md "The evidence index"), as plain data: the stack builds it
 * (lib/evidence-index-table.ts), the local run and the integration tests create it on DynamoDB Local from here. Its
 * items keep the keys they had in the main table (`EVIDENCE_INDEX#<userId>` / `EVIDENCE_EVENT#<eventId>`), so a reader
 * reads either table the same way. No aws-cdk-lib import: the local run must not load the CDK.
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

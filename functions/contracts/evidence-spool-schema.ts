/**
 * The evidence spool's own table (domain/evidence-spool.ts, stores/evidence-spool.ts), as plain data: the stack builds
 * it (lib/evidence-spool-table.ts), the local run and the integration tests create it on DynamoDB Local from here. Its
 * items keep the keys they had in the main table (`EVIDENCE_SPOOL#<shard>`), so the spool reads either table the same
 * way. No aws-cdk-lib import: the local run must not load the CDK.
 */
import type { CreateTableCommandInput } from '@aws-sdk/client-dynamodb';
import { createEvidenceIndexTableInput } from './evidence-index-schema.ts';

export const EVIDENCE_SPOOL_TABLE_SCHEMA = {
  partitionKey: 'pk',
  sortKey: 'sk',
  timeToLiveAttribute: 'expiresAt',
} as const;

/** The spool table beside a table of a run without the stack (the local run, a test, a bench). */
export const localEvidenceSpoolTableName = (tableName: string) => `${tableName}-evidence-spool`;

/** The same keys as the index's table (pk, sk: strings), on the Standard class: items written and read once. */
export function createEvidenceSpoolTableInput(tableName: string): CreateTableCommandInput {
  const { TableClass: _infrequentAccess, ...input } = createEvidenceIndexTableInput(tableName);
  return input;
}

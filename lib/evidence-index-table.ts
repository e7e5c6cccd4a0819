/**
 * The evidence index's own table (docs/table.md "The evidence index"): where a send's record is, by customer and by
 * event, for as long as the evidence is kept — written once, read rarely, kept seven years. In the main table it was
 * the largest cost: on its Standard class, and copied whole into every daily AWS Backup recovery point
 * (docs/measurements.md). Here it is:
 * - Standard-IA: storage at 40% of Standard's price, writes and reads about 25% dearer — an item written once and read
 *   by an export or a dispute;
 * - outside the AWS Backup plan (the plan selects the main table by its ARN): point-in-time recovery (35 days) is its
 *   backup — a restore names a second — and every item can be rebuilt from the evidence objects themselves, whose
 *   records name their customer, notification and digest (docs/evidence-and-privacy.md "Rebuilding the index");
 * - encrypted, deletion-protected and retained like the main table, its items written only by the functions granted
 *   to (dispatch and the sweeper), whatever an IAM policy says (the main table's guard, lib/table.ts);
 * - one per region in a stage of two: not a global table. Each region's index names the batches of that region's
 *   evidence bucket (a bucket per region: docs/regions.md), and the operator tools read both regions' evidence; a
 *   replica would name objects its region's bucket does not hold, and double the index's cost.
 */
import { CfnOutput, type Stack } from 'aws-cdk-lib';
import { type ITable, Table, TableClass } from 'aws-cdk-lib/aws-dynamodb';
import { type IRole, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import type { EvidenceIndexEnvironment } from '../functions/contracts/environment.ts';
import { EVIDENCE_INDEX_TABLE_SCHEMA } from '../functions/contracts/evidence-index-schema.ts';
import type { EvidenceStore } from './evidence-store.ts';
import { acknowledgeTableOutsideBackup } from './nag-acknowledgements.ts';
import type { NotifierFunction } from './notifier-function.ts';
import { OPTIONAL_STACK_OUTPUTS } from './stack-outputs.ts';
import { guardTableWrites, keptTableProps } from './table.ts';

/** The table, read by the evidence reader, its name a stack output (the operator tools read it from there). */
export function createEvidenceIndex(stack: Stack, key: IKey | undefined, evidence: EvidenceStore): Table {
  const table = createEvidenceIndexTable(stack, key, [evidence.breakGlassRole.roleArn]);
  grantIndexReadsToRole(evidence.readerRole, table);
  new CfnOutput(stack, 'EvidenceIndexTableName', {
    description: OPTIONAL_STACK_OUTPUTS.EvidenceIndexTableName,
    value: table.tableName,
  });
  return table;
}

function createEvidenceIndexTable(stack: Stack, key: IKey | undefined, breakGlass: readonly string[]): Table {
  const table = new Table(stack, 'EvidenceIndexTable', {
    ...keptTableProps(key, EVIDENCE_INDEX_TABLE_SCHEMA),
    tableClass: TableClass.STANDARD_INFREQUENT_ACCESS,
  });
  guardTableWrites(table, breakGlass);
  acknowledgeTableOutsideBackup(
    table,
    key !== undefined,
    'The evidence index is kept out of AWS Backup on purpose (a daily full copy of a seven-year index cost more than the index): point-in-time recovery (35 days) and deletion protection are on, and every item can be rebuilt from the evidence objects, which are under Object Lock (docs/evidence-and-privacy.md "Rebuilding the index").',
  );
  return table;
}

/** The variable that tells a function the index's table. */
export const evidenceIndexEnvironment = (table: ITable): EvidenceIndexEnvironment => ({
  EVIDENCE_INDEX_TABLE_NAME: table.tableName,
});

/**
 * A writer of the index (dispatch, the sweeper): a batch written now is put whole (BatchWriteItem), a part of one
 * indexed before added to (UpdateItem). No read, no delete: items leave by their TTL.
 */
export function grantIndexWrites(fn: NotifierFunction, table: ITable): void {
  fn.useTable(table, ['dynamodb:BatchWriteItem', 'dynamodb:UpdateItem']);
}

/** A reader of the index (the operator function, the console's API): a Query per customer, two per event. */
export function grantIndexReads(fn: NotifierFunction, table: ITable): void {
  fn.useTable(table, ['dynamodb:Query']);
}

/** The evidence-reader role (those who answer disputes): it finds a customer's evidence through the index. */
export function grantIndexReadsToRole(role: IRole, table: ITable): void {
  role.addToPrincipalPolicy(new PolicyStatement({ actions: ['dynamodb:Query'], resources: [table.tableArn] }));
  if (table.encryptionKey !== undefined) {
    role.addToPrincipalPolicy(
      new PolicyStatement({ actions: ['kms:Decrypt'], resources: [table.encryptionKey.keyArn] }),
    );
  }
}

/**
 * The evidence spool's own table (docs/evidence-and-privacy.md "Batches"): a low-rate minute's records, each put once
 * by dispatch or feedback and read once by the sweeper's roll-up, then left to expire by TTL (a delete nobody pays
 * for). Not in the main table, because there every spooled byte would be paid again:
 * - outside the AWS Backup plan (the plan selects the main table by its ARN): items that live minutes to days, each
 *   of them in the store once rolled, would be copied whole into every daily recovery point for 35 days. Point-in-time
 *   recovery is on (cdk-nag's rule, and a restore names a second);
 * - regional, not a global table: in a stage of two regions a global table writes every put again in the other
 *   region, and every TTL delete too (a replicated delete is billed where it lands). A region's spool is rolled into
 *   that region's evidence bucket by that region's sweeper, fenced or not (a fenced one rolls it and touches no
 *   notification), so a switchover's or a failover's last minutes are rolled when the old region's sweeper runs. If
 *   a region is lost, what its spool held and had not rolled — at most its last four or so minutes' low-rate records
 *   — waits there until the region is back, fenced; a region not back within SPOOL_KEEP_DAYS of a minute (the items'
 *   TTL) loses that minute's records for good, uncounted (docs/regions.md "Windows that remain"). A record whose
 *   writer's put was refused or unanswered is rebuilt from its intent, which the global table carries to the other
 *   region;
 * - no stream: nothing reads one;
 * - encrypted, deletion-protected and retained like the main table, its items written only by the functions granted
 *   to (dispatch, feedback, the sweeper), whatever an IAM policy says (the main table's guard, lib/table.ts).
 */
import { CfnOutput, type Stack } from 'aws-cdk-lib';
import { type ITable, Table } from 'aws-cdk-lib/aws-dynamodb';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import { EVIDENCE_SPOOL_TABLE_SCHEMA } from '../functions/contracts/evidence-spool-schema.ts';
import { SPOOL_PARTITION_KEYS } from '../functions/domain/evidence-spool.ts';
import type { EvidenceStore } from './evidence-store.ts';
import { acknowledgeTableOutsideBackup } from './nag-acknowledgements.ts';
import type { NotifierFunction } from './notifier-function.ts';
import { OPTIONAL_STACK_OUTPUTS } from './stack-outputs.ts';
import { guardTableWrites, keptTableProps } from './table.ts';

/** The table, named to every function that writes or reads evidence (the store's environment), its name an output. */
export function createEvidenceSpool(stack: Stack, key: IKey | undefined, evidence: EvidenceStore): Table {
  const table = new Table(stack, 'EvidenceSpoolTable', keptTableProps(key, EVIDENCE_SPOOL_TABLE_SCHEMA));
  guardTableWrites(table, [evidence.breakGlassRole.roleArn]);
  acknowledgeTableOutsideBackup(
    table,
    key !== undefined,
    'The evidence spool is kept out of AWS Backup on purpose (its items expire within days, each rolled into the evidence store under Object Lock first; a daily full copy kept 35 days cost more than the spool): point-in-time recovery and deletion protection are on (lib/evidence-spool-table.ts).',
  );
  evidence.spoolIn(table);
  new CfnOutput(stack, 'EvidenceSpoolTableName', {
    description: OPTIONAL_STACK_OUTPUTS.EvidenceSpoolTableName,
    value: table.tableName,
  });
  return table;
}

/**
 * A writer of the spool (dispatch, feedback): each record put once, never read, updated or deleted; and only in the
 * spool's partitions (`EVIDENCE_SPOOL#0` … `#7`), never the roll-up's cursor (`EVIDENCE_SPOOL#ROLLED`): a cursor put
 * far ahead by a writer would have every later record skipped by the roll-up and expire unlocked.
 */
export function grantSpoolPuts(fn: NotifierFunction, table: ITable): void {
  fn.useTable(table, ['dynamodb:PutItem'], { leadingKeys: SPOOL_PARTITION_KEYS });
}

/**
 * The sweeper: each closed minute read, rolled into one object, its cursor written (the cursor's only writer); a dead
 * invocation's records put; a bad item set apart.
 */
export function grantSpoolRollUp(fn: NotifierFunction, table: ITable): void {
  fn.useTable(table, ['dynamodb:Query', 'dynamodb:PutItem']);
}

/** A reader of a minute not rolled yet (the operator function, the console's API). */
export function grantSpoolReads(fn: NotifierFunction, table: ITable): void {
  fn.useTable(table, ['dynamodb:Query']);
}

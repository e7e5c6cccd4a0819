/**
 * The sweeper's part of the stack: nothing silently lost. The function with its environment, the sweep index it
 * queries, its schedule — the delay queue's clock — and the evidence gaps it fills.
 */
import { Duration, Validations } from 'aws-cdk-lib';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import type { SweeperEnvironment } from '../functions/contracts/environment.ts';
import { TABLE_SCHEMA } from '../functions/contracts/table-schema.ts';
import { brandEnvValue } from '../functions/domain/brand.ts';
import { evidenceIndexEnvironment, grantIndexWrites } from './evidence-index-table.ts';
import { grantSpoolRollUp } from './evidence-spool-table.ts';
import type { FunctionPartProps } from './function-parts.ts';
import { NotifierFunction } from './notifier-function.ts';

export function createSweeper(p: FunctionPartProps): NotifierFunction {
  const { stack, timing, table } = p;
  const environment: SweeperEnvironment = {
    TABLE_NAME: table.tableName,
    ...evidenceIndexEnvironment(p.evidenceIndexTable),
    SWEEP_INTERVAL_SECONDS: String(timing.sweeperIntervalSeconds),
    // Dispatch's rendering values: the sweeper rebuilds the evidence of an invocation that died before its batch.
    SENDER_EMAIL: p.settings.senderEmail,
    BRAND: brandEnvValue(p.settings.brand),
    SES_CONFIGURATION_SET: p.settings.sesConfigurationSet ?? p.prefix,
    ...p.sendingEnv,
    ...p.placementEnv,
    ...p.evidence.environment,
  };
  const fn = new NotifierFunction(stack, 'Sweeper', {
    entry: 'sweeper/index.ts',
    description: 'notifier: wakes deferred and stuck notifications, expires old ones, resolves expired leases',
    metricNamespace: p.metricNamespace,
    timeout: Duration.seconds(timing.sweeperTimeoutSeconds),
    // No reservation (see dispatch): an overlapping run is safe, every transition is a conditional write; the
    // timeout fits the one-minute schedule anyway (dispatch-timing.ts, SWEEPER_FITS_INTERVAL).
    environment,
  });
  fn.useTable(table, ['dynamodb:Query'], { index: TABLE_SCHEMA.sweepIndex.indexName });
  // GetItem: the re-read after a failed condition, so a write whose reply was lost is not counted as a lost race.
  fn.useTable(table, ['dynamodb:GetItem', 'dynamodb:UpdateItem']);
  // Every minute (EventBridge's smallest rate): the sweep index is the delay queue, and this is its clock.
  const schedule = new Rule(stack, 'SweeperSchedule', {
    schedule: Schedule.rate(Duration.seconds(timing.sweeperIntervalSeconds)),
    targets: [new LambdaFunction(fn, { retryAttempts: 2 })],
  });
  Validations.of(schedule).acknowledge({
    id: 'Serverless-EventBusDLQ',
    reason: 'A missed sweeper run is redone by the next one a minute later; there is nothing to dead-letter.',
  });
  // The sweeper fills evidence gaps — a batch, or from before batches a send record or a customer's pointer — and
  // finishes the batches of invocations that ended before theirs was written (their intents), then closes them.
  p.evidence.grantWrite(fn, ['batches', 'sends', 'users']);
  grantIndexWrites(fn, p.evidenceIndexTable);
  fn.useTable(table, ['dynamodb:Query', 'dynamodb:DeleteItem'], {
    leadingKeys: ['EVIDENCE_GAP#*', 'EVIDENCE_BATCH#*'],
  });
  // A batch left in the table when the store failed again: kept as a gap.
  fn.useTable(table, ['dynamodb:PutItem'], { leadingKeys: ['EVIDENCE_GAP#*'] });
  // The evidence spool: each closed minute read and rolled into one object, the cursor moved past it (the items
  // expire by TTL); a dead invocation's records rebuilt into it.
  grantSpoolRollUp(fn, p.evidenceSpoolTable);
  // The main table's spool, where an earlier version put its items: drained (they have no TTL: deleted once rolled).
  fn.useTable(table, ['dynamodb:Query', 'dynamodb:PutItem', 'dynamodb:BatchWriteItem'], {
    leadingKeys: ['EVIDENCE_SPOOL#*'],
  });
  return fn;
}

/**
 * Dispatch's two readers of the table's stream, and where each parks what it gives up:
 * - the routine trigger, every PENDING notification, with the on-failure queue whose alarm means a record no trigger
 *   will deliver (the sweeper re-drives its notification);
 * - the urgent trigger, critical types only, a fast lane (small batches, no window, LATEST, a minute's age, two
 *   retries). What it gives up the routine trigger still delivers, so it has a queue of its own — a trace of every
 *   critical batch that fell back to the routine pace — with its own alarm, and its own event-count metrics.
 */
import { Duration, type Stack } from 'aws-cdk-lib';
import { MathExpression, Metric } from 'aws-cdk-lib/aws-cloudwatch';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import {
  Alias,
  FilterCriteria,
  type IEventSourceDlq,
  type IFunction,
  MetricType,
  StartingPosition,
} from 'aws-cdk-lib/aws-lambda';
import { DynamoEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import type { DispatchTiming } from '../functions/contracts/dispatch-timing.ts';
import {
  DISPATCH_FILTER_PATTERN,
  ownedBy,
  URGENT_BATCH_SIZE,
  URGENT_MAX_RECORD_AGE_SECONDS,
  URGENT_RETRIES,
  urgentFilterPattern,
} from '../functions/contracts/stream-filter.ts';
import { CRITICAL_TYPES } from '../functions/domain/catalogue.ts';
import type { NotifierFunction } from './notifier-function.ts';
import type { Observability } from './observability.ts';

export interface DispatchTriggers {
  /** Stream records the routine trigger gave up on: no trigger will deliver them. */
  readonly routineFailures: Queue;
  /** Critical records the urgent trigger gave up on (the routine trigger still delivers them); none without critical types. */
  readonly urgentFailures: Queue | undefined;
  /** The urgent mapping's UUID: its own metrics carry it as the EventSourceMappingUUID dimension. */
  readonly urgentMappingId: string | undefined;
}

export function createDispatchTriggers(
  stack: Stack,
  dispatch: NotifierFunction,
  table: ITable,
  key: IKey | undefined,
  timing: DispatchTiming,
  warmEnvironments = 0,
  /** Two regions: this region, so the triggers take only its own writes, never replicated ones. */
  owner?: string,
): DispatchTriggers {
  const queue = (id: string) =>
    new Queue(stack, id, {
      ...(key === undefined
        ? { encryption: QueueEncryption.SQS_MANAGED }
        : { encryption: QueueEncryption.KMS, encryptionMasterKey: key }),
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
  const routineFailures = queue('DispatchOnFailure');
  dispatch.addEventSource(
    new DynamoEventSource(table, {
      startingPosition: StartingPosition.TRIM_HORIZON,
      bisectBatchOnError: true,
      retryAttempts: 5,
      maxRecordAge: Duration.hours(6),
      reportBatchItemFailures: true,
      onFailure: sendOnlyQueueDestination(routineFailures),
      batchSize: timing.batchSize,
      maxBatchingWindow: Duration.seconds(1),
      parallelizationFactor: 2,
      filters: [FilterCriteria.filter(ownedBy(DISPATCH_FILTER_PATTERN, owner) as unknown as Record<string, unknown>)],
    }),
  );
  // Critical notices first in the stream path too: a second reader of the stream (DynamoDB Streams allows two per
  // shard) that takes only the critical types, in small batches with no batching window, so a critical notice is
  // dispatched at once instead of when the routine mapping, paced at the provider's quota, reaches it.
  // (A second DynamoEventSource on the same table would reuse its construct id: the mapping is added directly; the
  // stream read permission is the routine trigger's.) It is a fast lane, never the only one: it starts at LATEST
  // (its first deploy onto a running stack does not replay the stream's 24 hours) and gives up on a record after a
  // minute and two retries — into its own queue, never silently.
  if (CRITICAL_TYPES.length === 0) return { routineFailures, urgentFailures: undefined, urgentMappingId: undefined };
  const urgentFailures = queue('UrgentDispatchOnFailure');
  const urgent = urgentTarget(stack, dispatch, warmEnvironments).addEventSourceMapping('UrgentDispatchTrigger', {
    eventSourceArn: table.tableStreamArn as string,
    startingPosition: StartingPosition.LATEST,
    batchSize: URGENT_BATCH_SIZE,
    parallelizationFactor: 2,
    bisectBatchOnError: true,
    retryAttempts: URGENT_RETRIES,
    maxRecordAge: Duration.seconds(URGENT_MAX_RECORD_AGE_SECONDS),
    reportBatchItemFailures: true,
    onFailure: sendOnlyQueueDestination(urgentFailures),
    // EventCount: polled, filtered, invoked, failed, dropped and parked records (ErrorCount is Kafka's only).
    metricsConfig: { metrics: [MetricType.EVENT_COUNT] },
    filters: [
      FilterCriteria.filter(ownedBy(urgentFilterPattern(CRITICAL_TYPES), owner) as unknown as Record<string, unknown>),
    ],
  });
  return { routineFailures, urgentFailures, urgentMappingId: urgent.eventSourceMappingId };
}

/**
 * What the urgent trigger invokes: the function itself, or — with `urgentWarmEnvironments` — an alias of its current
 * version with that many environments kept initialised (provisioned concurrency). Only the urgent trigger invokes the
 * alias, so the warm environments serve critical notices alone; the routine trigger invokes the unqualified function.
 * A deploy that changes the code publishes a version and moves the alias, and Lambda initialises the new
 * environments before it shifts the alias's traffic.
 */
function urgentTarget(stack: Stack, dispatch: NotifierFunction, warmEnvironments: number): IFunction {
  if (warmEnvironments === 0) return dispatch;
  return new Alias(stack, 'DispatchUrgentLane', {
    aliasName: 'urgent',
    version: dispatch.currentVersion,
    provisionedConcurrentExecutions: warmEnvironments,
    description: 'notifier: the urgent trigger alone invokes this alias; its environments are kept warm',
  });
}

/**
 * The SQS on-failure destination with only sqs:SendMessage (what Lambda documents for stream destinations), instead
 * of SqsDlq's grant, which adds wildcard KMS actions when the queue has a customer key.
 */
function sendOnlyQueueDestination(queue: Queue): IEventSourceDlq {
  return {
    bind: (_mapping, fn: IFunction) => {
      fn.addToRolePolicy(new PolicyStatement({ actions: ['sqs:SendMessage'], resources: [queue.queueArn] }));
      return { destination: queue.queueArn };
    },
  };
}

/**
 * The urgent trigger's trace: critical records it gave up on (parked in its own queue) or dropped. The routine
 * trigger still delivers them, at the routine pace: the alarm says a critical notice was late, not lost.
 */
export function alarmOnUrgentTrigger(observability: Observability, t: DispatchTriggers): void {
  if (t.urgentFailures === undefined || t.urgentMappingId === undefined) return;
  const period = Duration.minutes(1);
  observability.alarm(
    'UrgentTriggerGaveUp',
    new MathExpression({
      expression: 'q + d',
      usingMetrics: {
        q: t.urgentFailures.metricApproximateNumberOfMessagesVisible({ period, statistic: 'Maximum' }),
        d: new Metric({
          namespace: 'AWS/Lambda',
          metricName: 'DroppedEventCount',
          dimensionsMap: { EventSourceMappingUUID: t.urgentMappingId },
          statistic: 'Sum',
          period,
        }),
      },
      label: 'critical records the urgent trigger gave up',
      period,
    }),
    'The urgent trigger gave up critical stream records (they wait in its own on-failure queue, the trace of each). The routine trigger still sends them, at the routine pace: critical notices were late. Check DispatchErrors and the urgent mapping (docs/operations.md "The urgent trigger").',
  );
}

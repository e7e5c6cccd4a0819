/**
 * The AWS side of the pipeline, emulated around the real, unmodified handlers:
 * - KafkaMapping: MSK event batches into the ingest handler; when the handler throws, the whole batch again.
 * - StreamMapping: DynamoDB Local's stream, the trigger's own filter, batches into the dispatch handler, honouring
 *   batchItemFailures (resume at the lowest failed record), bisecting a failed batch, bounded retries ending in an
 *   on-failure list.
 * Both take an Invoker, so the chaos suite (tools/chaos/world.ts) drives the same emulators with its crash points, drops and
 * an unfiltered trigger.
 * - converge(): pump the stream and run the sweeper until no notification is PENDING or SENDING.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type AttributeValue, ScanCommand } from '@aws-sdk/client-dynamodb';
import type { Context, DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent, MSKEvent } from 'aws-lambda';
import type { PipelineRunEnvironment } from '../../functions/contracts/environment.ts';
import { localEvidenceIndexTableName } from '../../functions/contracts/evidence-index-schema.ts';
import { localEvidenceSpoolTableName } from '../../functions/contracts/evidence-spool-schema.ts';
import {
  DISPATCH_FILTER_PATTERN,
  matchesFilter,
  SES_EVENTS_BATCH_SIZE,
  URGENT_BATCH_SIZE,
  URGENT_MAX_RECORD_AGE_SECONDS,
  URGENT_RETRIES,
  urgentFilterPattern,
} from '../../functions/contracts/stream-filter.ts';
import { TABLE_SCHEMA } from '../../functions/contracts/table-schema.ts';
import { metricNamespaceOf, SERVICE_NAME, type TelemetryEnvironment } from '../../functions/contracts/telemetry.ts';
import { brandEnvValue } from '../../functions/domain/brand.ts';
import { CRITICAL_TYPES } from '../../functions/domain/catalogue.ts';
import { localClient, scanAll } from './dynamodb-local.ts';
import { EXAMPLE_BRAND } from './example-brand.ts';
import type { StreamReader } from './stream-reader.ts';

export interface Handlers {
  ingest: (event: MSKEvent, context: Context) => Promise<void>;
  dispatch: (event: DynamoDBStreamEvent, context: Context) => Promise<DynamoDBBatchResponse>;
  sweeper: (
    event: unknown,
    context: Context,
  ) => Promise<{ redriven: number; woken: number; expired: number; resolvedUnknown: number; resolvedRetry: number }>;
  /** Delivery feedback, as the EventBridge rule (SES) and the log subscriptions (SNS) invoke it. */
  feedback: (event: unknown, context: Context) => Promise<unknown>;
}

/** What Lambda and the AWS SDK read in a run outside AWS: the region, credentials, the emulators' endpoints. */
export interface SdkEnvironment {
  readonly AWS_REGION: string;
  readonly AWS_ACCESS_KEY_ID: string;
  readonly AWS_SECRET_ACCESS_KEY: string;
  readonly AWS_ENDPOINT_URL_DYNAMODB?: string;
  readonly AWS_ENDPOINT_URL_SES?: string;
  readonly AWS_ENDPOINT_URL_SNS?: string;
}

/**
 * The environment of the four functions in one process, as their contracts type it (functions/contracts/
 * environment.ts): a renamed or unknown variable here, in the chaos world or in a test's `extra` fails to compile.
 */
export type LocalFunctionsEnvironment = PipelineRunEnvironment & TelemetryEnvironment & SdkEnvironment;

export interface LocalEnvironment {
  readonly dynamoEndpoint: string;
  readonly sesEndpoint: string;
  readonly snsEndpoint: string;
  readonly tableName: string;
  /** Variables this run sets over the local defaults below. */
  readonly extra?: Partial<LocalFunctionsEnvironment>;
}

/**
 * A file holding a fresh random HMAC key (hex), in `dir` when it has none yet (the local run keeps one in .local/ so
 * its evidence's MACs stay verifiable across runs), else in a new temporary folder. Never a secret's value.
 */
export function localSecretKeyFile(dir?: string): string {
  const folder = dir ?? mkdtempSync(join(tmpdir(), 'notifier-key-'));
  const path = join(folder, 'secret-mac.key');
  if (!existsSync(path)) {
    mkdirSync(folder, { recursive: true });
    writeFileSync(path, `${randomBytes(32).toString('hex')}\n`, { mode: 0o600 });
  }
  return path;
}

/** Configures the environment as the stack does in AWS (with the local run's shorter times), then loads the handlers. */
export async function loadHandlers(env: LocalEnvironment): Promise<Handlers> {
  const environment: LocalFunctionsEnvironment = {
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
    AWS_ENDPOINT_URL_DYNAMODB: env.dynamoEndpoint,
    AWS_ENDPOINT_URL_SES: env.sesEndpoint,
    AWS_ENDPOINT_URL_SNS: env.snsEndpoint,
    TABLE_NAME: env.tableName,
    EVIDENCE_INDEX_TABLE_NAME: localEvidenceIndexTableName(env.tableName),
    EVIDENCE_SPOOL_TABLE_NAME: localEvidenceSpoolTableName(env.tableName),
    SENDER_EMAIL: 'notifications@bank.example',
    // The neutral brand of examples/settings.example.json, as the stack passes a deploy's `brand`.
    BRAND: brandEnvValue(EXAMPLE_BRAND),
    POWERTOOLS_SERVICE_NAME: SERVICE_NAME,
    POWERTOOLS_METRICS_NAMESPACE: metricNamespaceOf('local'),
    LEASE_SECONDS: '10',
    SEND_TIMEOUT_MS: '2000',
    // A holder's pacing wait and send fit in its lease (loadDispatchConfig checks it): 5 + 2 s within 10 s.
    MAX_PACING_WAIT_MS: '5000',
    // The account lambdaContext names: push endpoints of another account are refused for themselves alone.
    ACCOUNT_ID: '123456789012',
    PENDING_THRESHOLD_SECONDS: '2',
    RETRY_BASE_MS: '20',
    // The stand-in for the stack's HMAC key of secret fields (functions/stores/secret-mac.ts): a key of this run.
    SECRET_MAC_KEY_FILE: env.extra?.SECRET_MAC_KEY_FILE ?? localSecretKeyFile(),
    // The local pipeline replays files of dated events at any hour: validity and send windows are not judged unless
    // a run asks (npm start's own sample does, with events dated from now).
    NOTICE_TIMING: 'REPLAY',
    ...env.extra,
  };
  Object.assign(process.env, environment);
  const [ingest, dispatch, sweeper, feedback] = await Promise.all([
    import('../../functions/ingest/index.ts'),
    import('../../functions/dispatch/index.ts'),
    import('../../functions/sweeper/index.ts'),
    import('../../functions/feedback/index.ts'),
  ]);
  return { ingest: ingest.handler, dispatch: dispatch.handler, sweeper: sweeper.handler, feedback: feedback.handler };
}

/**
 * A Lambda context whose remaining time runs down in real time from `timeoutMs` (performance.now, so the chaos
 * suite's fake clock does not eat it), as Lambda's does.
 */
export const lambdaContext = (name: string, timeoutMs = 60_000): Context => {
  const started = performance.now();
  return {
    functionName: name,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:us-east-1:123456789012:function:${name}`,
    memoryLimitInMB: '512',
    awsRequestId: crypto.randomUUID(),
    logGroupName: `/aws/lambda/${name}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, Math.round(timeoutMs - (performance.now() - started))),
    callbackWaitsForEmptyEventLoop: false,
  } as Context;
};

/** One handler invocation as an event source mapping sees it: the handler's answer, or a function error. */
export interface Invocation<R> {
  readonly response?: R;
  /** The invocation failed: the handler threw (or, in the chaos suite, the environment "crashed"). */
  readonly functionError: boolean;
  readonly error?: unknown;
}
/**
 * Runs one invocation. `label`, when given, names it in the run's schedule ("kafka 0:0-20 copy 1 try 2"): the chaos
 * suite runs each invocation in a crash context and keys its fault decisions by the label; the local run calls the
 * handler directly.
 */
export type Invoker = <R>(run: () => Promise<R>, label?: string) => Promise<Invocation<R>>;
export const invokeDirectly: Invoker = async (run) => {
  try {
    return { response: await run(), functionError: false };
  } catch (error) {
    return { functionError: true, error };
  }
};

/** The MSK event source mapping: a batch is delivered until the handler succeeds, the whole batch every time. */
export class KafkaMapping {
  /** Records handed to the handler, every try counted. */
  deliveries = 0;
  failedInvocations = 0;

  constructor(
    private readonly handler: Handlers['ingest'],
    private readonly options: { readonly maxAttempts?: number; readonly invoke?: Invoker } = {},
  ) {}

  async deliver(event: MSKEvent, label?: string): Promise<void> {
    const maxAttempts = this.options.maxAttempts ?? 10;
    const invoke = this.options.invoke ?? invokeDirectly;
    for (let attempt = 1; ; attempt++) {
      this.deliveries += Object.values(event.records).flat().length;
      const outcome = await invoke(
        () => this.handler(event, lambdaContext('notifier-ingest')),
        label === undefined ? undefined : `kafka ${label} try ${attempt}`,
      );
      if (!outcome.functionError) return;
      this.failedInvocations++;
      if (attempt >= maxAttempts) {
        throw outcome.error ?? new Error(`Kafka batch still failing after ${maxAttempts} attempts`);
      }
    }
  }
}

export interface StreamMappingOptions {
  readonly batchSize?: number;
  /** The mapping's filter: the routine one (every PENDING notification) unless given (the urgent one's). */
  readonly filter?: object;
  /** Retries of a failing batch (MaximumRetryAttempts) before the batch goes to the on-failure list. */
  readonly maxRetries?: number;
  /**
   * MaximumRecordAgeInSeconds, in ms: a record older than this is not retried any more but discarded to the
   * on-failure list. Its age is counted from when the mapping read it (on `now`), which is when DynamoDB Local wrote
   * it to within a pump. Undefined: no bound (the stream's own retention).
   */
  readonly maxRecordAgeMs?: number;
  readonly now?: () => number;
  readonly invoke?: Invoker;
  /** Every record read from the stream, before the filter (the chaos suite checks each transition). */
  readonly onRead?: (records: DynamoDBRecord[]) => void;
  /** Whether a record the filter passed is lost before delivery (the chaos suite's dropped records). */
  readonly drop?: (record: DynamoDBRecord) => boolean;
  /** Whether to also hand dispatch what the filter stopped, as a drifted filter would (the chaos suite). */
  readonly unfiltered?: () => boolean;
}

/**
 * The DynamoDB Streams event source mapping as the stack configures it: the trigger's filter, batches of 100,
 * ReportBatchItemFailures (resume at the lowest failed record), a batch whose invocation failed bisected
 * (BisectBatchOnFunctionError), bounded retries, then the on-failure list — as AWS does it: "splitting a batch does
 * not consume the retry quota", and when the retries are spent "Lambda discards the records and continues processing
 * batches from the stream": the whole failing batch, not one record of it; a record past MaximumRecordAgeInSeconds is
 * discarded likewise (https://docs.aws.amazon.com/lambda/latest/dg/services-dynamodb-errors.html). What is discarded
 * is the sweeper's to find.
 */
export class StreamMapping {
  readonly onFailure: DynamoDBRecord[] = [];
  invocations = 0;
  dropped = 0;
  bisections = 0;
  unfilteredDeliveries = 0;
  private readonly buffer: DynamoDBRecord[] = [];
  /** When the mapping first read each buffered record (for MaximumRecordAgeInSeconds). */
  private readonly readAt = new WeakMap<DynamoDBRecord, number>();

  constructor(
    private readonly reader: StreamReader,
    private readonly handler: Handlers['dispatch'],
    private readonly options: StreamMappingOptions = {},
  ) {}

  /** Reads what is new on the stream, filters it as the trigger does, and invokes dispatch. Returns records read. */
  async pump(): Promise<number> {
    const fresh = await this.reader.poll();
    this.options.onRead?.(fresh);
    if (fresh.length > 0 && this.options.unfiltered?.() === true) {
      this.unfilteredDeliveries++;
      const raw = fresh.filter((r) => !matchesFilter(this.filter, r)).slice(0, this.batchSize);
      if (raw.length > 0) await this.invoke(raw);
    }
    const now = this.options.now ?? Date.now;
    for (const r of fresh) {
      if (!matchesFilter(this.filter, r)) continue;
      if (this.options.drop?.(r) === true) {
        this.dropped++;
        continue;
      }
      this.buffer.push(r);
      this.readAt.set(r, now());
    }
    let retries = 0;
    let size = this.batchSize;
    while (this.buffer.length > 0) {
      this.discardTooOld(now());
      if (this.buffer.length === 0) break;
      const batch = this.buffer.slice(0, size);
      const { failedAt, functionError } = await this.invoke(batch);
      if (failedAt === -1) {
        this.buffer.splice(0, batch.length);
        retries = 0;
        size = this.batchSize;
        continue;
      }
      // Checkpoint at the lowest failed record: everything before it is done, it and the rest come again.
      this.buffer.splice(0, failedAt);
      if (functionError && batch.length > 1) {
        // Bisected: each half is tried on its own; splitting does not consume the retry quota.
        size = Math.ceil(batch.length / 2);
        this.bisections++;
        continue;
      }
      if (++retries > (this.options.maxRetries ?? 5)) {
        // Retries spent: the failing batch (from the checkpoint) is discarded whole.
        this.onFailure.push(...this.buffer.splice(0, batch.length - failedAt));
        retries = 0;
        size = this.batchSize;
      }
    }
    return fresh.length;
  }

  /** Records at the head of the buffer past MaximumRecordAgeInSeconds go to the on-failure list, unprocessed. */
  private discardTooOld(now: number): void {
    const max = this.options.maxRecordAgeMs;
    if (max === undefined) return;
    while (this.buffer.length > 0 && now - (this.readAt.get(this.buffer[0] as DynamoDBRecord) ?? now) > max) {
      this.onFailure.push(this.buffer.shift() as DynamoDBRecord);
    }
  }

  /** One dispatch invocation: the index of the lowest failed record (-1: all succeeded), and whether it failed whole. */
  async invoke(batch: DynamoDBRecord[]): Promise<{ failedAt: number; functionError: boolean }> {
    this.invocations++;
    const invoke = this.options.invoke ?? invokeDirectly;
    const outcome = await invoke(() => this.handler({ Records: batch }, lambdaContext('notifier-dispatch')));
    if (outcome.functionError) return { failedAt: 0, functionError: true };
    const failed = new Set((outcome.response?.batchItemFailures ?? []).map((f) => f.itemIdentifier));
    return { failedAt: batch.findIndex((r) => failed.has(r.dynamodb?.SequenceNumber ?? '')), functionError: false };
  }

  private get batchSize(): number {
    return this.options.batchSize ?? 100;
  }

  private get filter(): object {
    return this.options.filter ?? DISPATCH_FILTER_PATTERN;
  }
}

/**
 * Dispatch's two triggers as the stack configures them, each reading the stream on its own: the urgent one (critical
 * types only, batches of URGENT_BATCH_SIZE) and the routine one (every PENDING notification, the critical ones too,
 * later). A pump runs the urgent one first. The routine mapping's redelivery of a critical notice finds it claimed or
 * finished, as in AWS.
 */
export class DispatchMappings {
  readonly urgent: StreamMapping;
  readonly routine: StreamMapping;

  constructor(
    readers: { readonly urgent: StreamReader; readonly routine: StreamReader },
    handler: Handlers['dispatch'],
    options: Omit<StreamMappingOptions, 'filter' | 'batchSize'> = {},
  ) {
    // A fast lane, as the stack configures it: gives up on a record after two retries or a minute; what it gives up
    // is not the on-failure queue's (the routine trigger delivers it).
    this.urgent = new StreamMapping(readers.urgent, handler, {
      ...options,
      filter: urgentFilterPattern(CRITICAL_TYPES),
      batchSize: URGENT_BATCH_SIZE,
      maxRetries: URGENT_RETRIES,
      maxRecordAgeMs: URGENT_MAX_RECORD_AGE_SECONDS * 1000,
    });
    this.routine = new StreamMapping(readers.routine, handler, options);
  }

  /** Records the routine mapping read (it reads every record): what converge() waits on. */
  async pump(): Promise<number> {
    await this.urgent.pump();
    return this.routine.pump();
  }

  /** What the routine trigger discarded to the on-failure destination (the urgent one has none). */
  get onFailure(): DynamoDBRecord[] {
    return this.routine.onFailure;
  }
}

/**
 * What hands provider feedback to the feedback function, as AWS would: the EventBridge rule's target (SES events,
 * one per invocation) or a CloudWatch Logs subscription (SNS delivery status logs, a batch per invocation). `take`
 * drains the events waiting; an invocation that throws is retried, as Lambda's async invocation retries it.
 */
export class FeedbackMapping {
  delivered = 0;
  constructor(
    private readonly take: () => Record<string, unknown>[],
    private readonly handler: Handlers['feedback'],
    private readonly maxAttempts = 3,
  ) {}

  /** Hands every waiting event over; after `signal` aborts, the rest is left undelivered (the run is stopping). */
  async deliverAll(signal?: AbortSignal): Promise<number> {
    const events = this.take();
    for (const event of events) {
      if (signal?.aborted) break;
      let pending = event;
      for (let attempt = 1; ; attempt++) {
        try {
          // A queue's batch: the messages the function reported failed are delivered again, as SQS would.
          const failed = failedMessages(pending, await this.handler(pending, lambdaContext('notifier-feedback')));
          if (failed === undefined) break;
          if (attempt >= this.maxAttempts) throw new Error(`feedback messages failed ${attempt} times`);
          pending = failed;
        } catch (error) {
          if (attempt >= this.maxAttempts) throw error;
        }
      }
      // Events, not invocations: a queue's batch counts its messages.
      this.delivered += isQueueBatch(event) ? event.Records.length : 1;
    }
    return events.length;
  }
}

type QueueBatch = { Records: { messageId: string; eventSource: string }[] };
const isQueueBatch = (event: unknown): event is QueueBatch =>
  Array.isArray((event as { Records?: unknown }).Records) &&
  (event as QueueBatch).Records.every((r) => r.eventSource === 'aws:sqs');

/** A queue's batch of the messages the function reported failed (batchItemFailures), or undefined when none. */
function failedMessages(event: Record<string, unknown>, result: unknown): Record<string, unknown> | undefined {
  const failures = (result as { batchItemFailures?: { itemIdentifier: string }[] } | undefined)?.batchItemFailures;
  if (!isQueueBatch(event) || failures === undefined || failures.length === 0) return undefined;
  const ids = new Set(failures.map((f) => f.itemIdentifier));
  return { Records: event.Records.filter((r) => ids.has(r.messageId)) };
}

/**
 * SES's events as the queue's mapping hands them to the feedback function (lib/delivery-feedback.ts): SQS batches of up
 * to SES_EVENTS_BATCH_SIZE messages, each message's body one event as EventBridge delivered it to the queue.
 */
export function sqsBatches(events: readonly Record<string, unknown>[]): Record<string, unknown>[] {
  const batches: Record<string, unknown>[] = [];
  for (let i = 0; i < events.length; i += SES_EVENTS_BATCH_SIZE) {
    const Records = events.slice(i, i + SES_EVENTS_BATCH_SIZE).map((event, j) => ({
      messageId: `local-${i + j}`,
      receiptHandle: `local-${i + j}`,
      eventSource: 'aws:sqs',
      body: JSON.stringify(event),
    }));
    batches.push({ Records });
  }
  return batches;
}

export interface TableCounts {
  inbox: number;
  byStatus: Record<string, number>;
  notifications: Record<string, unknown>[];
  quarantine: Record<string, unknown>[];
}

export async function readTable(endpoint: string, tableName: string): Promise<TableCounts> {
  const items = await scanAll(endpoint, tableName);
  const notifications = items.filter((i) => i.kind === 'NOTIFICATION');
  const quarantine = items.filter((i) => i.kind === 'QUARANTINE');
  const byStatus: Record<string, number> = {};
  for (const n of notifications) byStatus[String(n.status)] = (byStatus[String(n.status)] ?? 0) + 1;
  return {
    inbox: items.filter((i) => i.kind === 'INBOX').length,
    byStatus,
    notifications,
    quarantine,
  };
}

export class NotConvergedError extends Error {
  override name = 'NotConvergedError';
}

/**
 * Notifications still PENDING or SENDING: the sweep index is sparse and holds exactly those and the HELD ones
 * (table-schema.ts), so counting them costs what is in flight, not what the table holds — converge asks after every
 * idle pump. A HELD notification waits for its send window on purpose (hours): it is not in flight, and a run
 * converges with it listed as waiting. (In AWS an index is eventually consistent; DynamoDB Local updates it with the
 * item, so the count is exact here.)
 */
export async function countInFlight(endpoint: string, tableName: string): Promise<number> {
  const client = localClient(endpoint);
  let count = 0;
  try {
    let start: Record<string, AttributeValue> | undefined;
    do {
      const page = await client.send(
        new ScanCommand({
          TableName: tableName,
          IndexName: TABLE_SCHEMA.sweepIndex.indexName,
          Select: 'COUNT',
          // Not in flight: what waits for its send window (HELD), and what a failover held for the old region's
          // record or an operator (its sweep key HELD#<channel>#<shard>).
          FilterExpression: '#status <> :held AND NOT begins_with(sweepKey, :waiting)',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: { ':held': { S: 'HELD' }, ':waiting': { S: 'HELD#' } },
          ExclusiveStartKey: start,
        }),
      );
      count += page.Count ?? 0;
      start = page.LastEvaluatedKey;
    } while (start);
  } finally {
    client.destroy();
  }
  return count;
}

/**
 * Pumps the stream and runs the sweeper until no notification is PENDING or SENDING (or the timeout passes).
 * `onIdle` runs whenever the stream has nothing new (the local run hands SES feedback over and trims its ledgers).
 */
export async function converge(
  stream: Pick<StreamMapping, 'pump'>,
  handlers: Handlers,
  env: Pick<LocalEnvironment, 'dynamoEndpoint' | 'tableName'>,
  options: { timeoutMs?: number; onIdle?: () => Promise<void> | void; signal?: AbortSignal } = {},
): Promise<void> {
  const deadline = Date.now() + (options.timeoutMs ?? 120_000);
  for (;;) {
    if (options.signal?.aborted) return;
    const read = await stream.pump();
    if (read > 0) continue;
    await options.onIdle?.();
    const inFlight = await countInFlight(env.dynamoEndpoint, env.tableName);
    if (inFlight === 0) return;
    if (Date.now() > deadline) {
      throw new NotConvergedError(`not converged: ${inFlight} notifications still PENDING or SENDING`);
    }
    const swept = await handlers.sweeper({}, lambdaContext('notifier-sweeper', 55_000));
    if (swept.redriven + swept.woken + swept.expired + swept.resolvedRetry + swept.resolvedUnknown === 0)
      await new Promise((r) => setTimeout(r, 250));
  }
}

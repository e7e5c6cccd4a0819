/**
 * The AWS side of the pipeline, emulated around the real, unmodified handlers:
 * - KafkaMapping: MSK event batches into the ingest handler; when the handler throws, the whole batch again.
 * - StreamMapping: DynamoDB Local's stream, the trigger's own filter, batches into the dispatch handler, honouring
 *   batchItemFailures (resume at the lowest failed record), bounded retries ending in an on-failure list.
 * - converge(): pump the stream and run the sweeper until no notification is PENDING or SENDING.
 */
import type { Context, DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent, MSKEvent } from 'aws-lambda';
import { DISPATCH_FILTER_PATTERN, matchesFilter } from '../functions/commons/stream-filter.ts';
import { metricNamespaceOf, SERVICE_NAME } from '../functions/commons/telemetry.ts';
import { brandEnvValue } from '../functions/domain/brand.ts';
import { scanAll } from './dynamodb-local.ts';
import { EXAMPLE_BRAND } from './example-brand.ts';
import type { StreamReader } from './stream-reader.ts';

export interface Handlers {
  ingest: (event: MSKEvent, context: Context) => Promise<void>;
  dispatch: (event: DynamoDBStreamEvent, context: Context) => Promise<DynamoDBBatchResponse>;
  sweeper: (
    event: unknown,
    context: Context,
  ) => Promise<{ redriven: number; woken: number; expired: number; resolvedUnknown: number; resolvedRetry: number }>;
  /** SES delivery feedback, as the EventBridge rule invokes it (issue 16). */
  feedback: (event: unknown, context: Context) => Promise<unknown>;
}

export interface LocalEnvironment {
  readonly dynamoEndpoint: string;
  readonly sesEndpoint: string;
  readonly snsEndpoint: string;
  readonly tableName: string;
  readonly extra?: Record<string, string>;
}

/** Configures the environment exactly as the stack does in AWS, then loads the handlers' modules. */
export async function loadHandlers(env: LocalEnvironment): Promise<Handlers> {
  Object.assign(process.env, {
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
    AWS_ENDPOINT_URL_DYNAMODB: env.dynamoEndpoint,
    AWS_ENDPOINT_URL_SES: env.sesEndpoint,
    AWS_ENDPOINT_URL_SNS: env.snsEndpoint,
    TABLE_NAME: env.tableName,
    SENDER_EMAIL: 'notifications@bank.example',
    // The neutral brand of examples/settings.example.json, as the stack passes a deploy's `brand`.
    BRAND: brandEnvValue(EXAMPLE_BRAND),
    POWERTOOLS_SERVICE_NAME: SERVICE_NAME,
    POWERTOOLS_METRICS_NAMESPACE: metricNamespaceOf('local'),
    LEASE_SECONDS: '10',
    SEND_TIMEOUT_MS: '2000',
    PENDING_THRESHOLD_SECONDS: '2',
    RETRY_BASE_MS: '20',
    ...env.extra,
  });
  const [ingest, dispatch, sweeper, feedback] = await Promise.all([
    import('../functions/ingest/index.ts'),
    import('../functions/dispatch/index.ts'),
    import('../functions/sweeper/index.ts'),
    import('../functions/feedback/index.ts'),
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

export class KafkaMapping {
  deliveries = 0;
  failedInvocations = 0;
  constructor(
    private readonly handler: Handlers['ingest'],
    private readonly maxAttempts = 10,
  ) {}

  /** Delivers one batch until the handler succeeds, as the MSK event source mapping does. */
  async deliver(event: MSKEvent): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      this.deliveries += Object.values(event.records).flat().length;
      try {
        await this.handler(event, lambdaContext('notifier-ingest'));
        return;
      } catch (error) {
        this.failedInvocations++;
        if (attempt >= this.maxAttempts) throw error;
      }
    }
  }
}

export class StreamMapping {
  readonly onFailure: DynamoDBRecord[] = [];
  invocations = 0;
  private readonly buffer: DynamoDBRecord[] = [];

  constructor(
    private readonly reader: StreamReader,
    private readonly handler: Handlers['dispatch'],
    private readonly batchSize = 100,
    private readonly maxRetries = 5,
  ) {}

  /** Reads what is new on the stream, filters it as the trigger does, and invokes dispatch. Returns records read. */
  async pump(): Promise<number> {
    const fresh = await this.reader.poll();
    this.buffer.push(...fresh.filter((r) => matchesFilter(DISPATCH_FILTER_PATTERN, r)));
    let retries = 0;
    while (this.buffer.length > 0) {
      const batch = this.buffer.slice(0, this.batchSize);
      let failedAt: number;
      try {
        this.invocations++;
        const response = await this.handler({ Records: batch }, lambdaContext('notifier-dispatch'));
        const failed = new Set((response?.batchItemFailures ?? []).map((f) => f.itemIdentifier));
        failedAt = batch.findIndex((r) => failed.has(r.dynamodb?.SequenceNumber ?? ''));
      } catch {
        failedAt = 0;
      }
      if (failedAt === -1) {
        this.buffer.splice(0, batch.length);
        retries = 0;
        continue;
      }
      // Checkpoint at the lowest failed record: everything before it is done, it and the rest come again.
      this.buffer.splice(0, failedAt);
      if (++retries > this.maxRetries) {
        const dropped = this.buffer.shift();
        if (dropped) this.onFailure.push(dropped);
        retries = 0;
      }
    }
    return fresh.length;
  }
}

/**
 * The EventBridge rule's side: hands the SES feedback events waiting in `queue` to the feedback function, as the
 * rule's target invokes it (one event per invocation); an invocation that throws is retried, as Lambda's async
 * invocation retries it.
 */
export class FeedbackMapping {
  delivered = 0;
  constructor(
    private readonly queue: Record<string, unknown>[],
    private readonly handler: Handlers['feedback'],
    private readonly maxAttempts = 3,
  ) {}

  async deliverAll(): Promise<number> {
    const events = this.queue.splice(0);
    for (const event of events) {
      for (let attempt = 1; ; attempt++) {
        try {
          await this.handler(event, lambdaContext('notifier-feedback'));
          break;
        } catch (error) {
          if (attempt >= this.maxAttempts) throw error;
        }
      }
      this.delivered++;
    }
    return events.length;
  }
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

/** Pumps the stream and runs the sweeper until nothing is PENDING or SENDING (or the timeout passes). */
export async function converge(
  stream: StreamMapping,
  handlers: Handlers,
  env: Pick<LocalEnvironment, 'dynamoEndpoint' | 'tableName'>,
  options: { timeoutMs?: number; onProgress?: (counts: TableCounts) => void } = {},
): Promise<TableCounts> {
  const deadline = Date.now() + (options.timeoutMs ?? 120_000);
  for (;;) {
    const read = await stream.pump();
    if (read > 0) continue;
    const counts = await readTable(env.dynamoEndpoint, env.tableName);
    options.onProgress?.(counts);
    if ((counts.byStatus.PENDING ?? 0) + (counts.byStatus.SENDING ?? 0) === 0) return counts;
    if (Date.now() > deadline) {
      throw new NotConvergedError(`not converged: ${JSON.stringify(counts.byStatus)}`);
    }
    const swept = await handlers.sweeper({}, lambdaContext('notifier-sweeper', 55_000));
    if (swept.redriven + swept.woken + swept.expired + swept.resolvedRetry + swept.resolvedUnknown === 0)
      await new Promise((r) => setTimeout(r, 250));
  }
}

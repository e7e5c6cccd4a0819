/**
 * Powertools instances, created once per execution environment and shared by the handlers' modules. The namespace
 * comes from POWERTOOLS_METRICS_NAMESPACE, which the stack sets per stage (telemetry.ts metricNamespaceOf); metrics
 * are added only through `count`, `countNow` and `countBy`, which accept the registered names alone, and flushed by
 * `publishMetrics` (the summed ones; the alarmed ones are written as they are counted).
 */
import { isRequestXRaySampled } from '@aws-lambda-powertools/commons/utils/env';
import { LogFormatter, Logger, LogItem } from '@aws-lambda-powertools/logger';
import type { LogAttributes, UnformattedAttributes } from '@aws-lambda-powertools/logger/types';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { LOG_LISTINGS, type LogListing, type MetricName, SERVICE_NAME } from '../contracts/telemetry.ts';

/**
 * Powertools' line without what the log group and the invocation's REPORT line already say. A notification is logged
 * a few times at INFO (accepted, sent, its delivery feedback), and Powertools' own keys were half of each line's bytes
 * — CloudWatch Logs bills every byte, at ingest and for the year it is kept. Kept: the level, the message, the time,
 * the function and the invocation (its request id ties a line to its REPORT line and to the batch's other lines), the
 * X-Ray trace id when the invocation is traced (sampled: an unsampled trace is recorded nowhere, and Lambda gives
 * every invocation an id, tracing on or off). Left out: the service (one for every function), the function's ARN and
 * memory (its log group and REPORT line say them), the sampling rate, and cold_start (REPORT's `Init Duration` says
 * it once per cold start). No query in docs/operations.md reads them.
 */
export class NotifierLogFormatter extends LogFormatter {
  formatAttributes(attributes: UnformattedAttributes, additional: LogAttributes): LogItem {
    return new LogItem({
      attributes: {
        level: attributes.logLevel,
        message: attributes.message,
        timestamp: this.formatTimestamp(attributes.timestamp),
        function_name: attributes.lambdaContext?.functionName,
        function_request_id: attributes.lambdaContext?.awsRequestId,
        xray_trace_id: isRequestXRaySampled() ? attributes.xRayTraceId : undefined,
      },
    }).addAttributes(additional);
  }
}

export const logger = new Logger({ serviceName: SERVICE_NAME, logFormatter: new NotifierLogFormatter() });
export const metrics = new Metrics({ serviceName: SERVICE_NAME });

/**
 * Whether the Tracer can trace here: in a Lambda runtime (AWS_EXECUTION_ENV is AWS_Lambda_<runtime>) unless
 * POWERTOOLS_TRACE_ENABLED is "false". The Tracer itself only asks that AWS_EXECUTION_ENV be set, which CloudShell,
 * ECS and CodeBuild also do; SAM local and the Amplify mock it turns off itself.
 */
export function tracingPossible(env: NodeJS.ProcessEnv): boolean {
  return (
    (env.AWS_EXECUTION_ENV ?? '').startsWith('AWS_Lambda_') && env.POWERTOOLS_TRACE_ENABLED?.toLowerCase() !== 'false'
  );
}

/**
 * The Tracer is loaded only where it can trace. Importing it loads the X-Ray SDK, whose context tracking
 * (cls-hooked) puts an async hook with destroy tracking on every promise of the process — whether tracing is on or
 * not. Outside Lambda (the local run, the tests, the bench) tracing is always off, and that hook cost the local
 * pipeline 17% of its time (`npm start -- --events` of 2,000 events: 45.5 s with it, 37.9 s without).
 */
const tracer = tracingPossible(process.env)
  ? new (await import('@aws-lambda-powertools/tracer')).Tracer({ serviceName: SERVICE_NAME })
  : undefined;

/** An AWS SDK client with X-Ray subsegments per call when traced; the client itself otherwise. */
export function traced<T>(client: T): T {
  return tracer === undefined ? client : tracer.captureAWSv3Client(client);
}

/** Adds to the invocation's metrics (flushed with publishMetrics). */
export function count(
  name: MetricName,
  value = 1,
  unit: (typeof MetricUnit)[keyof typeof MetricUnit] = MetricUnit.Count,
): void {
  metrics.addMetric(name, unit, value);
}

/**
 * A plain count written the moment it is counted, in a document of its own: what an alarm reads and an invocation
 * counts before it is done (an acceptance not recorded, a late one, an evidence intent not written, a send the fence
 * stopped). An invocation that then times out, runs out of memory or crashes has still told CloudWatch.
 */
export function countNow(name: MetricName, value = 1): void {
  const single = metrics.singleMetric();
  single.addMetric(name, MetricUnit.Count, value);
}

/**
 * The counts an invocation sums (one EMF document per dimension set at its end): what went as it should, counted once
 * a record — a send, a delivery, a notification created, a preference applied. Each had been a document of its own,
 * about 250 bytes of CloudWatch Logs a record. No alarm fires on them; the rate alarms divide by them, and a count an
 * invocation that died never wrote makes a rate higher, never lower. Every other count with dimensions — what an alarm
 * fires on or an on-call reads when things go wrong (UnknownOutcomes, SendFailures, ProviderBlocked, DeliveryFeedback
 * FAILED…) — is written the moment it is counted, as it is rare. CloudWatch's Sum is the same either way.
 */
const SUMMED: ReadonlySet<MetricName> = new Set([
  'NotificationsSent',
  'NotificationsCreated',
  'PreferencesUpdates',
  'DeliveryFeedback',
]);
/** Whether `countBy` sums this count until the invocation's end (else it is written at once). */
export function summedPerInvocation(name: MetricName, dimensions: Record<string, string>): boolean {
  if (!SUMMED.has(name)) return false;
  // DeliveryFeedback is summed when DELIVERED only: a failure, a bounce, a complaint, a delay is written at once.
  return name !== 'DeliveryFeedback' || dimensions.status === 'DELIVERED';
}

const byDimensions = new Map<string, { dimensions: Record<string, string>; counts: Map<MetricName, number> }>();

/**
 * A count with its own dimensions (channel, reason), never mixed with another dimension set in one document: summed
 * until `publishMetrics` when it is one of the high-volume successes (`summedPerInvocation`), else written at once.
 */
export function countBy(name: MetricName, dimensions: Record<string, string>, value = 1): void {
  if (value === 0) return;
  if (!summedPerInvocation(name, dimensions)) {
    const single = metrics.singleMetric();
    for (const [k, v] of Object.entries(dimensions)) single.addDimension(k, v);
    single.addMetric(name, MetricUnit.Count, value);
    return;
  }
  const key = JSON.stringify(Object.entries(dimensions).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  let set = byDimensions.get(key);
  if (set === undefined) {
    set = { dimensions, counts: new Map() };
    byDimensions.set(key, set);
  }
  set.counts.set(name, (set.counts.get(name) ?? 0) + value);
}

/**
 * Flushes the invocation's metrics (a handler's `finally`): the plain counts in one EMF document when there are any
 * (no empty-flush warning), then one document per summed dimension set.
 */
export function publishMetrics(): void {
  if (metrics.hasStoredMetrics()) metrics.publishStoredMetrics();
  for (const { dimensions, counts } of byDimensions.values()) {
    for (const [k, v] of Object.entries(dimensions)) metrics.addDimension(k, v);
    for (const [name, n] of counts) metrics.addMetric(name, MetricUnit.Count, n);
    metrics.publishStoredMetrics();
  }
  byDimensions.clear();
}

/** Runs an invocation's last step (dispatch's evidence close) and flushes its metrics whether or not the step throws. */
export async function thenPublishMetrics(step: () => Promise<void>): Promise<void> {
  try {
    await step();
  } finally {
    publishMetrics();
  }
}

/** At most this many entries a listing line: Logs Insights extracts 200 fields of a JSON line, and a line stays small. */
export const ENTRIES_PER_LINE = 100;

/**
 * One INFO line for what an invocation did the same way to many records (sent, delivered, accepted), listing their
 * entries — each begins with the notification's or the event's id — instead of a line each: every line repeats its
 * level, message, time, function and request id (about 190 bytes), so a batch of 100 sends wrote that 100 times.
 * The message names its list's key (contracts/telemetry.ts LOG_LISTINGS). Above ENTRIES_PER_LINE entries the rest
 * follow in lines of their own, numbered by `part`. Nothing listed and no attributes: no line. What goes wrong (a
 * warning, an error) stays a line of its own per record.
 */
export function infoListing(message: LogListing, entries: readonly string[], attributes: LogAttributes = {}): void {
  if (entries.length === 0 && Object.keys(attributes).length === 0) return;
  const key = LOG_LISTINGS[message];
  logger.info(message, {
    ...attributes,
    ...(entries.length === 0 ? {} : { [key]: entries.slice(0, ENTRIES_PER_LINE) }),
  });
  for (let i = ENTRIES_PER_LINE; i < entries.length; i += ENTRIES_PER_LINE)
    logger.info(message, { part: i / ENTRIES_PER_LINE + 1, [key]: entries.slice(i, i + ENTRIES_PER_LINE) });
}

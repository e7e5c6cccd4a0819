/**
 * Powertools instances, created once per execution environment and shared by the handlers' modules. The namespace
 * comes from POWERTOOLS_METRICS_NAMESPACE, which the stack sets per stage (telemetry.ts metricNamespaceOf); metrics
 * are added only through `count` and `countBy`, which accept the registered names alone, and flushed by `publishMetrics`.
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
 * The invocation's counts with their own dimensions (channel, reason), summed until `publishMetrics`. Each had been an
 * EMF document of its own the moment it was counted — about 250 bytes of CloudWatch Logs per send and per delivery
 * report, a record's worth of log bytes again; summed, an invocation writes one document per dimension set (a batch of
 * 100 sends on one channel: one). CloudWatch's Sum, which every alarm and the dashboard read, is the same.
 */
const byDimensions = new Map<string, { dimensions: Record<string, string>; counts: Map<MetricName, number> }>();

/** A count with its own dimensions, kept apart from every other dimension set (never mixing them in one document). */
export function countBy(name: MetricName, dimensions: Record<string, string>, value = 1): void {
  if (value === 0) return;
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
 * (no empty-flush warning), then one document per dimension set with its summed counts.
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

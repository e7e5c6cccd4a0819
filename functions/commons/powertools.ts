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
import type { EmfOutput } from '@aws-lambda-powertools/metrics/types';
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

/** Powertools' Logger, keeping the invocation's request id for the metric document that closes it (publishMetrics). */
class NotifierLogger extends Logger {
  requestId: string | undefined;
  override addContext(context: Parameters<Logger['addContext']>[0]): void {
    super.addContext(context);
    this.requestId = context.awsRequestId;
  }
}

export const logger = new NotifierLogger({ serviceName: SERVICE_NAME, logFormatter: new NotifierLogFormatter() });
/** Powertools' Metrics, saying whether it writes (`isDisabled` is protected): the closing document is written by us. */
class NotifierMetrics extends Metrics {
  /** False under POWERTOOLS_METRICS_DISABLED (the tests) or POWERTOOLS_DEV: then nothing is written. */
  get writing(): boolean {
    return !this.isDisabled();
  }
}
export const metrics = new NotifierMetrics({ serviceName: SERVICE_NAME });

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

interface DimensionSet {
  readonly dimensions: Record<string, string>;
  readonly counts: Map<MetricName, number>;
}
const byDimensions = new Map<string, DimensionSet>();

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

/** A listing held for the invocation's closing document (`infoListing`, when metrics are written). */
interface Listing {
  readonly message: LogListing;
  readonly entries: readonly string[];
  readonly attributes: LogAttributes;
}
let held: Listing | undefined;

/**
 * The stored metrics as Powertools serializes them (namespace, timestamp, `service`, units), with `set`'s dimensions
 * and counts added first, then cleared: one EMF directive and its values. Undefined when there is nothing to write.
 */
function serialized(set?: DimensionSet): EmfOutput | undefined {
  try {
    if (set !== undefined) {
      for (const [k, v] of Object.entries(set.dimensions)) metrics.addDimension(k, v);
      for (const [name, n] of set.counts) metrics.addMetric(name, MetricUnit.Count, n);
    }
    return metrics.hasStoredMetrics() ? metrics.serializeMetrics() : undefined;
  } finally {
    // Whatever was stored goes with this document, even if serialising threw: nothing leaks into the next one.
    metrics.clearMetrics();
    metrics.clearDimensions();
  }
}

/**
 * Flushes the invocation's metrics (a handler's `finally`) in ONE document where it can: the plain counts, the first
 * summed dimension set and the listing `infoListing` held (its message and entries, as the document's metadata).
 * An EMF document may hold several directives, each with its own dimensions and metrics, but one value a dimension:
 * the plain counts' directive (`service` alone) and one set's (`service`, `channel`…) share it; a further set (an
 * event's second channel) is a document of its own. Every line repeats a namespace, time and `service`, a listing
 * line its level, time, function and request id: at a million a month an invocation is about one record, and its
 * three lines (plain counts, a channel's, the listing) had been most of what it wrote. Nothing counted and nothing
 * listed: nothing (no empty-flush warning).
 */
export function publishMetrics(): void {
  const [first, ...rest] = byDimensions.values();
  byDimensions.clear();
  const listing = held;
  held = undefined;
  const plain = serialized();
  const set = serialized(first);
  const base = plain ?? set;
  if (base === undefined || !metrics.writing) {
    if (listing !== undefined) writeListing(listing);
  } else {
    const { _aws: _p, ...plainValues } = plain ?? { _aws: undefined };
    const { _aws: _s, ...setValues } = set ?? { _aws: undefined };
    const directives = [plain, set].flatMap((d) => d?._aws.CloudWatchMetrics ?? []);
    // The request id, as on every line: it ties the document to its invocation's REPORT line and other lines.
    const metadata = {
      ...(logger.requestId === undefined ? {} : { function_request_id: logger.requestId }),
      ...(listing === undefined ? {} : listed(listing)),
    };
    // The metadata before the values, as Powertools spreads it: a colliding key is a metric's or a dimension's.
    const doc = { _aws: { ...base._aws, CloudWatchMetrics: directives }, ...metadata, ...plainValues, ...setValues };
    process.stdout.write(`${JSON.stringify(doc)}\n`);
    if (listing !== undefined) writeListingParts(listing);
  }
  for (const { dimensions, counts } of rest) {
    for (const [k, v] of Object.entries(dimensions)) metrics.addDimension(k, v);
    for (const [name, n] of counts) metrics.addMetric(name, MetricUnit.Count, n);
    metrics.publishStoredMetrics();
  }
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

/** The log levels at which an INFO line is written. */
const INFO_OR_FINER: ReadonlySet<string> = new Set(['TRACE', 'DEBUG', 'INFO']);

/** A listing's first line's keys: its message, its attributes, its first ENTRIES_PER_LINE entries under its key. */
function listed({ message, entries, attributes }: Listing): LogAttributes {
  return {
    message,
    ...attributes,
    ...(entries.length === 0 ? {} : { [LOG_LISTINGS[message]]: entries.slice(0, ENTRIES_PER_LINE) }),
  };
}

/** A listing as log lines of its own: its first line, then its further parts. */
function writeListing(l: Listing): void {
  const { message: _, ...first } = listed(l);
  logger.info(l.message, first);
  writeListingParts(l);
}

/** The entries after the first ENTRIES_PER_LINE, in log lines of their own numbered by `part`. */
function writeListingParts({ message, entries }: Listing): void {
  const key = LOG_LISTINGS[message];
  for (let i = ENTRIES_PER_LINE; i < entries.length; i += ENTRIES_PER_LINE)
    logger.info(message, { part: i / ENTRIES_PER_LINE + 1, [key]: entries.slice(i, i + ENTRIES_PER_LINE) });
}

/**
 * What an invocation did the same way to many records (sent, delivered, accepted), listed — each entry begins with
 * the notification's or the event's id — instead of a line each: every line repeats its level, message, time,
 * function and request id (about 190 bytes), so a batch of 100 sends wrote that 100 times. The message names its
 * list's key (contracts/telemetry.ts LOG_LISTINGS). Held, and written with the invocation's metrics as their
 * document's metadata (`publishMetrics`): one line for both, which the runbook's trace finds like any other (its
 * `message`, its ids in @message). Above ENTRIES_PER_LINE entries the rest follow in log lines of their own, numbered
 * by `part`. With metrics off (POWERTOOLS_METRICS_DISABLED) it is a log line of its own, written at once. Nothing
 * listed and no attributes: nothing. What goes wrong (a warning, an error) stays a line of its own per record.
 */
export function infoListing(message: LogListing, entries: readonly string[], attributes: LogAttributes = {}): void {
  if (entries.length === 0 && Object.keys(attributes).length === 0) return;
  // An INFO line: nothing where the level is above it (POWERTOOLS_LOG_LEVEL=WARN), in the document or not.
  if (!INFO_OR_FINER.has(logger.getLevelName())) return;
  // None of the handlers lists twice an invocation; if one did, the first is written as it was, not lost.
  if (held !== undefined) writeListing(held);
  held = undefined;
  if (metrics.writing) held = { message, entries, attributes };
  else writeListing({ message, entries, attributes });
}

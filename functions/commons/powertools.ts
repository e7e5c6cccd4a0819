/**
 * Powertools instances, created once per execution environment and shared by the handlers' modules. The namespace
 * comes from POWERTOOLS_METRICS_NAMESPACE, which the stack sets per stage (telemetry.ts metricNamespaceOf); metrics
 * are added only through `count` and `countBy`, which accept the registered names alone.
 */
import { isRequestXRaySampled } from '@aws-lambda-powertools/commons/utils/env';
import { LogFormatter, Logger, LogItem } from '@aws-lambda-powertools/logger';
import type { LogAttributes, UnformattedAttributes } from '@aws-lambda-powertools/logger/types';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { type MetricName, SERVICE_NAME } from '../contracts/telemetry.ts';

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

/** Adds to the invocation's metrics (flushed with publishStoredMetrics). */
export function count(
  name: MetricName,
  value = 1,
  unit: (typeof MetricUnit)[keyof typeof MetricUnit] = MetricUnit.Count,
): void {
  metrics.addMetric(name, unit, value);
}

/** A count with its own dimensions (channel, reason), flushed as its own EMF line so it never mixes dimension sets. */
export function countBy(name: MetricName, dimensions: Record<string, string>, value = 1): void {
  if (value === 0) return;
  const single = metrics.singleMetric();
  for (const [k, v] of Object.entries(dimensions)) single.addDimension(k, v);
  single.addMetric(name, MetricUnit.Count, value);
}

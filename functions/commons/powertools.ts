/**
 * Powertools instances, created once per execution environment and shared by the handlers' modules. The namespace
 * comes from POWERTOOLS_METRICS_NAMESPACE, which the stack sets per stage (telemetry.ts metricNamespaceOf); metrics
 * are added only through `count` and `countBy`, which accept the registered names alone.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { Tracer } from '@aws-lambda-powertools/tracer';
import { type MetricName, SERVICE_NAME } from './telemetry.ts';

export const logger = new Logger({ serviceName: SERVICE_NAME });
export const metrics = new Metrics({ serviceName: SERVICE_NAME });
export const tracer = new Tracer({ serviceName: SERVICE_NAME });

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

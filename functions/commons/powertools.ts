/** Powertools instances, created once per execution environment and shared by the handlers' modules. */
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { Tracer } from '@aws-lambda-powertools/tracer';

const namespace = process.env.POWERTOOLS_METRICS_NAMESPACE ?? 'notifier';

export const logger = new Logger();
export const metrics = new Metrics({ namespace });
export const tracer = new Tracer();

/** A count with its own dimensions (channel, reason), flushed as its own EMF line so it never mixes dimension sets. */
export function countBy(name: string, dimensions: Record<string, string>, value = 1): void {
  if (value === 0) return;
  const single = metrics.singleMetric();
  for (const [k, v] of Object.entries(dimensions)) single.addDimension(k, v);
  single.addMetric(name, 'Count', value);
}

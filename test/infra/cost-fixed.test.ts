/**
 * The complete cost's fixed monthly part (tools/bench/cost-at-rate.ts RATE_ASSUMPTIONS.fixed: its alarms and its
 * customer-managed keys, priced per million at each rate under "what the settings add") is what the production-like
 * settings synthesize: an alarm added to the stack moves the cost model with it, never silently.
 */
import { describe, expect, it } from 'vitest';
import { RATE_ASSUMPTIONS } from '../../tools/bench/cost-at-rate.ts';
import { PRODUCTION_LIKE, synthTemplate } from '../support/synth.ts';

type Resource = { Type: string; Properties?: { Metrics?: { MetricStat?: unknown }[] } };

describe('the cost model counts the stack it prices', () => {
  const resources = Object.values(synthTemplate(PRODUCTION_LIKE).template.Resources) as Resource[];
  const count = (type: string) => resources.filter((r) => r.Type === type).length;
  /**
   * CloudWatch bills an alarm by the metrics it reads ("alarm metrics"): one for an alarm on a metric, one for each
   * metric a metric-math alarm's expression reads (its MetricStat queries; the expressions are not billed).
   */
  const alarmMetrics = resources
    .filter((r) => r.Type === 'AWS::CloudWatch::Alarm')
    .reduce((n, r) => n + (r.Properties?.Metrics?.filter((m) => m.MetricStat !== undefined).length ?? 1), 0);

  it('its alarm metrics and its customer-managed keys are those of the production-like settings', () => {
    expect({ alarms: alarmMetrics, kmsKeys: count('AWS::KMS::Key') }).toEqual({
      alarms: RATE_ASSUMPTIONS.fixed.alarms,
      kmsKeys: RATE_ASSUMPTIONS.fixed.kmsKeys,
    });
  });
});

/**
 * What an alarm reads is written when it is counted, not at the end of the invocation that counted it: an invocation
 * that times out, runs out of memory or crashes after an UNKNOWN outcome must still page or ticket. Every metric of
 * our namespace that an alarm of the synthesized stack reads is checked against what the functions sum per invocation
 * (commons/powertools.ts summedPerInvocation): a summed count may only be the denominator of a rate alarm (its `t…`
 * ids), where a count an invocation never wrote makes the share higher, never lower.
 */
import { describe, expect, it } from 'vitest';
import { summedPerInvocation } from '../../functions/commons/powertools.ts';
import { METRIC_NAMES, type MetricName } from '../../functions/contracts/telemetry.ts';
import { PRODUCTION_TWO_REGIONS, synthTemplate } from '../support/synth.ts';

interface Read {
  readonly alarm: string;
  readonly id: string;
  readonly name: MetricName;
  readonly dimensions: Record<string, string>;
}

interface MetricStatProps {
  Metric: { MetricName: string; Namespace: string; Dimensions?: { Name: string; Value: unknown }[] };
}

const dims = (d: { Name: string; Value: unknown }[] | undefined) =>
  Object.fromEntries((d ?? []).map((x) => [x.Name, String(x.Value)]));
const ours = (n: string): n is MetricName => (METRIC_NAMES as readonly string[]).includes(n);

describe('the metrics the alarms read', () => {
  it('are written as they are counted; a count summed per invocation is only ever a rate’s denominator', () => {
    const { template } = synthTemplate(PRODUCTION_TWO_REGIONS);
    const reads: Read[] = [];
    for (const r of Object.values(template.Resources).filter((r) => r.Type === 'AWS::CloudWatch::Alarm')) {
      const p = r.Properties as {
        AlarmName: unknown;
        MetricName?: string;
        Namespace?: unknown;
        Dimensions?: { Name: string; Value: unknown }[];
        Metrics?: { Id: string; MetricStat?: MetricStatProps }[];
      };
      const alarm = JSON.stringify(p.AlarmName);
      if (p.MetricName !== undefined && ours(p.MetricName) && JSON.stringify(p.Namespace).includes('notifier'))
        reads.push({ alarm, id: '', name: p.MetricName, dimensions: dims(p.Dimensions) });
      for (const m of p.Metrics ?? []) {
        const stat = m.MetricStat?.Metric;
        if (stat !== undefined && ours(stat.MetricName) && !stat.Namespace.startsWith('AWS/'))
          reads.push({ alarm, id: m.Id, name: stat.MetricName, dimensions: dims(stat.Dimensions) });
      }
    }
    // The check reaches them: the alarms of the stage read a failure, an unknown outcome, a refusal, a delivery.
    for (const n of [
      'UnknownOutcomes',
      'SendFailures',
      'ProviderBlocked',
      'AcceptancesNotRecorded',
      'DeliveryFeedback',
    ])
      expect(reads.map((r) => r.name)).toContain(n);
    const summed = reads.filter((r) => summedPerInvocation(r.name, r.dimensions));
    expect(summed.length).toBeGreaterThan(0);
    for (const r of summed) expect(r.id, `${r.alarm} reads ${r.name} ${JSON.stringify(r.dimensions)}`).toMatch(/^t/);
    // And a rate's numerator is never summed.
    for (const r of reads.filter((x) => /^f/.test(x.id)))
      expect(summedPerInvocation(r.name, r.dimensions), `${r.alarm} ${r.name}`).toBe(false);
  });
});

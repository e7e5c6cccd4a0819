/**
 * What an alarm reads is written when it is counted, not at the end of the invocation that counted it: an invocation
 * that times out, runs out of memory or crashes after an UNKNOWN outcome must still page or ticket. Every metric of
 * our namespace that an alarm of the synthesized stack reads is checked against what the functions sum per invocation
 * (commons/powertools.ts summedPerInvocation): a summed count may only be the denominator of a rate alarm (its `t…`
 * ids), where a count an invocation never wrote makes the share higher, never lower. And each is extracted by CloudWatch
 * from what the functions write — an invocation's one closing document holds several directives — with exactly the
 * dimensions the alarm reads.
 */
import { describe, expect, it, vi } from 'vitest';
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

/** What the stage's alarms read of our namespace: each metric, its dimensions, the alarm and its id in the alarm. */
function alarmReads(): Read[] {
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
  return reads;
}

describe('the metrics the alarms read', () => {
  it('are written as they are counted; a count summed per invocation is only ever a rate’s denominator', () => {
    const reads = alarmReads();
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

interface Directive {
  Dimensions: string[][];
  Metrics: { Name: string }[];
}

/** The metrics CloudWatch extracts from an EMF line: each directive's metrics under each of its dimension sets. */
const extracted = (line: string) => {
  const doc = JSON.parse(line) as Record<string, unknown> & { _aws: { CloudWatchMetrics: Directive[] } };
  return doc._aws.CloudWatchMetrics.flatMap((d) =>
    d.Dimensions.flatMap((set) =>
      d.Metrics.map((m) => ({ name: m.Name, dimensions: Object.fromEntries(set.map((k) => [k, String(doc[k])])) })),
    ),
  );
};

describe('what the functions write', () => {
  it('holds every metric an alarm reads with exactly its dimensions, in the closing document or beside it', async () => {
    const reads = alarmReads();
    vi.stubEnv('POWERTOOLS_METRICS_DISABLED', 'false');
    // At INFO, as deployed: the closing document then carries the listing too.
    vi.stubEnv('POWERTOOLS_LOG_LEVEL', 'INFO');
    vi.resetModules();
    const write = process.stdout.write;
    try {
      const p = await import('../../functions/commons/powertools.ts');
      for (const r of reads) {
        const { service: _, ...own } = r.dimensions;
        const counted = () =>
          Object.keys(own).length === 0 ? p.count(r.name) : p.countBy(r.name, own as Record<string, string>);
        // The alarm's metric as an invocation's first dimension set, then as a further one after another channel's.
        for (const first of [true, false]) {
          const lines: string[] = [];
          process.stdout.write = ((c: string | Uint8Array) => lines.push(String(c)) > 0) as typeof process.stdout.write;
          p.count('EventsReceived');
          if (first) counted();
          p.countBy('NotificationsSent', { channel: 'OTHER' });
          if (!first) counted();
          p.infoListing('notifications sent', ['e-1#EMAIL 1 m-1']);
          p.publishMetrics();
          process.stdout.write = write;
          const all = lines
            .flatMap((l) => l.split('\n'))
            .filter((l) => l.startsWith('{"_aws"'))
            .flatMap(extracted);
          expect(all, `${r.alarm} reads ${r.name} ${JSON.stringify(r.dimensions)}`).toContainEqual({
            name: r.name,
            dimensions: r.dimensions,
          });
        }
      }
    } finally {
      process.stdout.write = write;
      vi.unstubAllEnvs();
      vi.resetModules();
    }
  });
});

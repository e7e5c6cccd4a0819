/**
 * The complete cost's fixed monthly part (tools/bench/cost-at-rate.ts RATE_ASSUMPTIONS.fixed: its alarms and its
 * customer-managed keys, priced per million at each rate under "what the settings add") is what the production-like
 * settings synthesize: an alarm added to the stack moves the cost model with it, never silently. So is what a second
 * region adds (RATE_ASSUMPTIONS.regions.fixed): the recovery stack's own, and what two regions add to the primary's.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { App } from 'aws-cdk-lib';
import { describe, expect, it } from 'vitest';
import { createNotifierStacks } from '../../lib/notifier-app.ts';
import { RATE_ASSUMPTIONS } from '../../tools/bench/cost-at-rate.ts';
import { PRODUCTION_LIKE, PRODUCTION_TWO_REGIONS, type SynthesizedTemplate, synthTemplate } from '../support/synth.ts';

type Resource = { Type: string; Properties?: { Metrics?: { MetricStat?: unknown }[] } };

/**
 * What a template costs every month whatever the volume: CloudWatch bills an alarm by the metrics it reads ("alarm metrics"): one for an
 * alarm on a metric, one for each metric a metric-math alarm's expression reads (its MetricStat queries; the
 * expressions are not billed); each customer-managed key it creates (keys it imports are the bank's); each dashboard.
 */
function fixedOf(template: SynthesizedTemplate) {
  const resources = Object.values(template.Resources) as Resource[];
  const alarms = resources
    .filter((r) => r.Type === 'AWS::CloudWatch::Alarm')
    .reduce((n, r) => n + (r.Properties?.Metrics?.filter((m) => m.MetricStat !== undefined).length ?? 1), 0);
  const count = (type: string) => resources.filter((r) => r.Type === type).length;
  return { alarms, kmsKeys: count('AWS::KMS::Key'), dashboards: count('AWS::CloudWatch::Dashboard') };
}

describe('the cost model counts the stack it prices', () => {
  it('its alarm metrics and its customer-managed keys are those of the production-like settings', () => {
    expect(fixedOf(synthTemplate(PRODUCTION_LIKE).template)).toEqual({
      alarms: RATE_ASSUMPTIONS.fixed.alarms,
      kmsKeys: RATE_ASSUMPTIONS.fixed.kmsKeys,
      dashboards: RATE_ASSUMPTIONS.fixed.dashboards,
    });
  });

  it("a second region adds the recovery stack's alarms and keys and the alarms two regions add to the primary", () => {
    const app = new App({ context: { settingsFile: PRODUCTION_TWO_REGIONS, 'aws:cdk:bundling-stacks': [] } });
    const { primary, recovery } = createNotifierStacks(app);
    const assembly = app.synth();
    const of = (name: string) => fixedOf(assembly.getStackByName(name).template as SynthesizedTemplate);
    if (recovery === undefined) throw new Error('the two-region settings built no recovery stack');
    // The same settings in one region: what the primary would have without a second region.
    const {
      regions: _r,
      recovery: _v,
      globalTable: _g,
      regionCommandPrincipals: _c,
      ...one
    } = JSON.parse(readFileSync(PRODUCTION_TWO_REGIONS, 'utf8'));
    const oneRegion = `${PRODUCTION_TWO_REGIONS}.one-region.json`;
    writeFileSync(oneRegion, JSON.stringify(one));
    const alone = fixedOf(synthTemplate(oneRegion).template);
    const added = of(primary.stackName);
    const theirs = of(recovery.stackName);
    expect({
      alarms: added.alarms - alone.alarms + theirs.alarms,
      kmsKeys: added.kmsKeys - alone.kmsKeys + theirs.kmsKeys,
      dashboards: added.dashboards - alone.dashboards + theirs.dashboards,
    }).toEqual(RATE_ASSUMPTIONS.regions.fixed);
  });
});

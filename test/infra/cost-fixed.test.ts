/**
 * The complete cost's fixed monthly part (tools/bench/cost-at-rate.ts RATE_ASSUMPTIONS.fixed: its alarms and its
 * customer-managed keys, priced per million at each rate under "what the settings add") is what the production-like
 * settings synthesize: an alarm added to the stack moves the cost model with it, never silently.
 */
import { describe, expect, it } from 'vitest';
import { RATE_ASSUMPTIONS } from '../../tools/bench/cost-at-rate.ts';
import { PRODUCTION_LIKE, synthTemplate } from '../support/synth.ts';

describe('the cost model counts the stack it prices', () => {
  const resources = Object.values(synthTemplate(PRODUCTION_LIKE).template.Resources) as { Type: string }[];
  const count = (type: string) => resources.filter((r) => r.Type === type).length;

  it('its alarms and its customer-managed keys are those of the production-like settings', () => {
    expect({ alarms: count('AWS::CloudWatch::Alarm'), kmsKeys: count('AWS::KMS::Key') }).toEqual({
      alarms: RATE_ASSUMPTIONS.fixed.alarms,
      kmsKeys: RATE_ASSUMPTIONS.fixed.kmsKeys,
    });
  });
});

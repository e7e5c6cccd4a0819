/**
 * The cost model prices X-Ray by the settings' `tracing` (lib/tracing.ts): in the totals when a stage traces by
 * default, in what the settings add when it does not — never in both, never in neither.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_TRACING } from '../../lib/tracing.ts';
import { costAtRate, xrayByTracing } from '../../tools/bench/cost-at-rate.ts';
import { US_EAST_1_PRICES } from '../../tools/bench/prices.ts';
import { SMALL_RUN as RUN } from '../support/run-density.ts';

const MEASURED = { dynamodbWrites: 5, lambda: 0.4, cloudWatchLogs: 1.5 };
const ONE_MILLION_A_MONTH = 1e6 / (30.44 * 86_400);
const at = (tracing?: 'active' | 'off') =>
  costAtRate(MEASURED, RUN, ONE_MILLION_A_MONTH, 1, US_EAST_1_PRICES, undefined, tracing);

describe('X-Ray in the cost, by the tracing setting', () => {
  it('prices a trace at X-Ray’s list price: 1.8 traces a notification are $9 a million', () => {
    expect(xrayByTracing(1.8, US_EAST_1_PRICES, 'active')).toEqual({ inTotal: 9, withSetting: 0 });
    expect(xrayByTracing(1.8, US_EAST_1_PRICES, 'off')).toEqual({ inTotal: 0, withSetting: 9 });
  });

  it('traced by default: X-Ray is in the totals, and turning it on adds nothing', () => {
    const active = at('active');
    expect(active.perMillion.xray).toBeGreaterThan(0);
    expect(active.perMillion.xray).toBeCloseTo(active.perNotification.traces * US_EAST_1_PRICES.xrayTracePerMillion, 1);
    expect(active.withSettings.xrayTracing).toBe(0);
  });

  it('off by default: X-Ray leaves the totals for what the settings add, at the same price; the sum with settings is unchanged', () => {
    const active = at('active');
    const off = at('off');
    expect(off.perMillion.xray).toBe(0);
    expect(off.withSettings.xrayTracing).toBe(active.perMillion.xray);
    expect(off.perMillion.total).toBeCloseTo(active.perMillion.total - active.perMillion.xray, 1);
    expect(off.withSettings.total).toBeCloseTo(active.withSettings.total, 1);
  });

  it("the model's default is the settings' default", () => {
    expect(at()).toEqual(at(DEFAULT_TRACING));
    expect(at()).not.toEqual(at(DEFAULT_TRACING === 'off' ? 'active' : 'off'));
  });
});

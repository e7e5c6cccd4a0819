/**
 * The cost model prices X-Ray by the settings' `tracing` (lib/tracing.ts): in the totals when a stage traces by
 * default, in what the settings add when it does not — never in both, never in neither.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_TRACING } from '../../lib/tracing.ts';
import { costAtRate, type RunDensity, xrayByTracing } from '../../tools/bench/cost-at-rate.ts';
import { US_EAST_1_PRICES } from '../../tools/bench/prices.ts';

/** A small run in the bench's mix: 600 notifications of 300 events, every batch full. */
const RUN: RunDensity = {
  notifications: 600,
  events: 300,
  emails: 300,
  sesEvents: 300,
  snsDeliveryLogs: 300,
  criticalNotifications: 60,
  otpEvents: 30,
  invocations: { ingest: 3, dispatch: 6, feedback: 2, sweeper: 1 },
  emfLineBytes: 400,
  emfBytesPerNotification: 800,
  evidence: { puts: 8, gets: 0, lists: 0, records: 600, bytes: 600 * 1_000, bytesAlone: 600 * 1_500 },
  intentWru: 12,
  indexWru: 900,
  indexGbMonths: 0.001,
  tableGbMonths: 0.001,
};
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

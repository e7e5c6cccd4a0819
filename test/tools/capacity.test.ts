/**
 * The capacity model is a pure function of the peak, the code's own key functions and item sizes, and the
 * bench's measurements. These tests pin what it must say, not the bench's figures.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { MAX_PEAK_NOTIFICATIONS_PER_SECOND, sweepShardsFor } from '../../functions/domain/sweep-index.ts';
import { recordsPerInvocation, reportsObjectsPerReportBySendBatch, stackBatching } from '../../tools/bench/batching.ts';
import { capacityModel, DEFAULT_LIMITS, hottestShardShare } from '../../tools/bench/capacity.ts';
import { tracedPerSecond } from '../../tools/bench/cost-at-rate.ts';

const MEASURED = {
  ingestWruPerEvent: 7,
  ingestRruPerEvent: 1,
  ingestWruPerDuplicate: 0,
  ingestRruPerDuplicate: 1,
  ingestSecondsPerRecord: 0.0015,
  dispatchSecondsPerSend: 0.008,
  pacerWritesPerSend: 0.2,
};
const SIZES = { inboxBytes: 420, notificationBytes: 900, eventBytes: 700 };
const model = (notificationsPerSec: number, over: Partial<Parameters<typeof capacityModel>[0]> = {}) =>
  capacityModel({
    notificationsPerSec,
    channelsPerEvent: 2,
    channelMix: { EMAIL: 0.5, PUSH: 1 / 3, SMS: 1 / 6 },
    duplicateShare: 0.1,
    measured: MEASURED,
    sizes: SIZES,
    ...over,
  });

describe('the capacity model', () => {
  it('at 10,000 notifications per second the hottest sweep-index key stays under 1,000 writes per second', () => {
    const c = model(10_000);
    expect(c.sweepShards).toBe(sweepShardsFor(10_000));
    expect(c.hottestKeyWritesPerSec).toBeLessThan(DEFAULT_LIMITS.keyWritesPerSec / 2);
    // Even with every notification on one channel (what the shard count is sized for).
    expect(c.hottestKeyWritesPerSecAllOneChannel).toBeLessThan(DEFAULT_LIMITS.keyWritesPerSec);
    expect(c.rateKeyWritesPerSec).toBeLessThanOrEqual(500);
  });

  it('computes the hottest key from the real key function: 3 writes per notification × its busiest shard', () => {
    const c = model(10_000);
    const expected = 3 * 10_000 * 0.5 * hottestShardShare(c.sweepShards);
    expect(c.hottestKeyWritesPerSec).toBeCloseTo(expected, 1);
    expect(hottestShardShare(64)).toBeGreaterThan(1 / 64);
    expect(hottestShardShare(64)).toBeLessThan(1.3 / 64);
  });

  it('turns the measured units into table and index writes: ingest as measured, dispatch from the item size', () => {
    const c = model(1_000, { duplicateShare: 0 });
    // Ingest: 500 events/s × 7 WRU, less the 1,000 index puts; dispatch: claim + finish (1 KB each) + pacer writes.
    expect(c.tableWcuPerSec).toBeCloseTo(500 * 7 - 1_000 + 1_000 * (1 + 2 + 0.2), 1);
    // One index put per notification at ingest, two at dispatch (the claim updates it in place, finish removes it).
    expect(c.indexWcuPerSec).toBe(3_000);
    expect(c.recordsPerSec).toBe(500);
  });

  it('names the first limit each load meets: SES at 100/s, DynamoDB per-table throughput at 10,000/s', () => {
    expect(model(100).firstLimit).toMatch(/SES/);
    const big = model(10_000, { limits: { ...DEFAULT_LIMITS, sesEmailsPerSec: 100_000, snsSmsPerSec: 100_000 } });
    expect(big.firstLimit).toMatch(/WRU/);
    for (const l of big.limits) expect(l.utilisation).toBe(Math.round((l.needed / l.max) * 100) / 100);
  });

  it('sizes MSK partitions and Lambda from the measured time per record and per send', () => {
    const c = model(10_000, { duplicateShare: 0 });
    // 5,000 records/s × 1.5 ms per record = 7.5 busy partitions, at 50% utilisation → 15.
    expect(c.mskPartitions).toBe(15);
    expect(c.lambdaConcurrency.ingest).toBe(15);
    expect(c.lambdaConcurrency.dispatch).toBe(80);
  });

  it('is a pure function: the same input, the same answer', () => {
    expect(model(2_500)).toEqual(model(2_500));
  });

  it("at 10,000 notifications per second the evidence store takes its PUTs within S3's 3,500 per second on the day's prefix", () => {
    const c = model(10_000, { criticalShare: 0.1 });
    // 57 stream shards × 2 lanes: about 88 records reach a lane in its one-second window.
    expect(c.evidence.recordsPerDispatchInvocation).toBeGreaterThan(70);
    expect(c.evidence.busiestPrefixPutsPerSec).toBeLessThan(DEFAULT_LIMITS.s3PutsPerPrefixPerSec / 2);
    // One reports object per distinct send batch would have been most of the limit on its own.
    expect(c.evidence.reportsPutsPerSecOnePerSendBatch).toBeGreaterThan(10 * c.evidence.reportsPutsPerSec);
    expect(c.limits.find((l) => l.limit.startsWith('evidence PUTs'))?.utilisation).toBeLessThan(0.5);
  });

  it("counts every writer's PUTs on the day's prefix: send batches, SES and SNS delivery reports, the gap filler", () => {
    const e = model(10_000).evidence;
    // Push and SMS delivery status logs reach feedback batched over a second: about one reports object a second.
    expect(e.deliveryLogReportsPutsPerSec).toBeGreaterThan(0);
    expect(e.deliveryLogReportsPutsPerSec).toBeLessThan(2);
    expect(e.busiestPrefixPutsPerSec).toBeCloseTo(
      e.sendBatchPutsPerSec + e.reportsPutsPerSec + e.deliveryLogReportsPutsPerSec + e.gapPutsPerSecAtMost,
      0,
    );
  });
});

describe('records per invocation', () => {
  const b = stackBatching(1);
  it('is one record at a million notifications a month, and as many as a lane’s window gathers at 10,000 per second', () => {
    expect(recordsPerInvocation(0.38, b.dispatch)).toBeLessThan(1.15);
    expect(recordsPerInvocation(0.38, b.dispatch)).toBeGreaterThanOrEqual(1);
    expect(recordsPerInvocation(10_000, stackBatching(57).dispatch)).toBeCloseTo(10_000 / 114, 0);
    expect(recordsPerInvocation(10_000, stackBatching(8).dispatch)).toBe(100);
    expect(recordsPerInvocation(0, b.feedback)).toBe(1);
  });

  it('grows with the rate and never passes the batch size', () => {
    let last = 0;
    for (const rate of [0.01, 0.1, 1, 10, 100, 1_000, 100_000]) {
      const r = recordsPerInvocation(rate, b.feedback);
      expect(r).toBeGreaterThanOrEqual(last);
      expect(r).toBeLessThanOrEqual(b.feedback.batchSize);
      last = r;
    }
  });

  it('one object per distinct send batch approaches one per report when reports span many send batches', () => {
    expect(reportsObjectsPerReportBySendBatch(500, 50_000, 100)).toBeGreaterThan(0.6);
    expect(reportsObjectsPerReportBySendBatch(500, 500, 500)).toBeLessThan(0.01);
  });
});

describe('traces as Lambda samples them', () => {
  it('traces every invocation under one a second, then one a second and 5% of the rest — never one per invocation at volume', () => {
    expect(tracedPerSecond(0.4)).toBeCloseTo(0.4);
    expect(tracedPerSecond(1)).toBeCloseTo(1);
    expect(tracedPerSecond(101)).toBeCloseTo(6);
    expect(tracedPerSecond(0)).toBe(0);
  });
});

describe("docs/scaling.md's sweep-index figures", () => {
  const doc = readFileSync(new URL('../../docs/scaling.md', import.meta.url), 'utf8');
  const row = (title: string) =>
    (doc.split('\n').find((l) => l.startsWith(`| ${title}`)) ?? '')
      .split('|')
      .slice(2, 5)
      .map((c) => c.trim());
  it('are the model’s for 3 writes a notification on a key: the hottest key and the index’s write units', () => {
    const peaks = [100, 1_000, 10_000];
    expect(row('hottest sweep-index key, writes/s (all on one channel)')).toEqual(
      peaks.map((n) => `${model(n).hottestKeyWritesPerSec} (${model(n).hottestKeyWritesPerSecAllOneChannel})`),
    );
    expect(row('sweep index WRU/s').map((c) => Number(c.replace(/,/g, '')))).toEqual(
      peaks.map((n) => model(n).indexWcuPerSec),
    );
  });

  it('the hottest key stays under 700 writes a second at the largest peak the settings take (lib/settings.ts says so)', () => {
    const c = model(MAX_PEAK_NOTIFICATIONS_PER_SECOND);
    expect(c.hottestKeyWritesPerSecAllOneChannel).toBeGreaterThan(500);
    expect(c.hottestKeyWritesPerSecAllOneChannel).toBeLessThan(700);
    expect(doc).toContain(`${Math.round(c.hottestKeyWritesPerSecAllOneChannel)} at 42,666/s`);
  });
});

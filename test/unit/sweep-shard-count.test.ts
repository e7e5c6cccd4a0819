/**
 * Issue 18: the sweep index has no hot key at the stack's peak. The shard count follows the peak, the real key function
 * spreads notifications evenly over the shards, and the sweeper visits as many shards as it is told (the shard mark's
 * count), so a change of the count between deploys leaves no item behind.
 */
import { describe, expect, it } from 'vitest';
import { CHANNELS } from '../../functions/domain/channels.ts';
import { type SweepPartition, sweepKey, sweepPartition } from '../../functions/domain/keys.ts';
import {
  MAX_PEAK_NOTIFICATIONS_PER_SECOND,
  SWEEP_KEY_WRITES_TARGET,
  SWEEP_WRITES_PER_KEY_PER_NOTIFICATION,
  sweepShardsFor,
} from '../../functions/domain/sweep-index.ts';
import type { SweepStore } from '../../functions/stores/notification-store.ts';
import { onceRaised, type SweepShardMark } from '../../functions/stores/sweep-shard-mark.ts';
import { sweepWith } from '../support/sweep-deps.ts';

describe('sweepShardsFor', () => {
  it('keeps 8 shards up to 1,333 per second (3 writes a notification on its key), then doubles: 64 at 10,000, 256 at the maximum', () => {
    expect(sweepShardsFor(100)).toBe(8);
    expect(sweepShardsFor(1_000)).toBe(8);
    expect(sweepShardsFor(1_333)).toBe(8);
    expect(sweepShardsFor(1_334)).toBe(16);
    expect(sweepShardsFor(2_000)).toBe(16);
    expect(sweepShardsFor(10_000)).toBe(64);
    expect(sweepShardsFor(MAX_PEAK_NOTIFICATIONS_PER_SECOND)).toBe(256);
    expect(() => sweepShardsFor(MAX_PEAK_NOTIFICATIONS_PER_SECOND + 1)).toThrow(RangeError);
  });
});

describe('the spread over index keys, through the real key function', () => {
  it('5,000 notifications at 10,000 per second, all on one channel: the hottest key stays far under 1,000 writes/s', () => {
    const peak = 10_000;
    const shards = sweepShardsFor(peak);
    const perKey = new Map<string, number>();
    const n = 5_000;
    for (let i = 0; i < n; i++) {
      const key = sweepKey('PENDING', 'EMAIL', `trf-2026-${String(i).padStart(6, '0')}#EMAIL`, shards);
      perKey.set(key, (perKey.get(key) ?? 0) + 1);
    }
    expect(perKey.size).toBe(shards);
    const hottestShare = Math.max(...perKey.values()) / n;
    // Even within sampling noise: no key gets more than 1.4× its fair share of 1/64.
    expect(hottestShare).toBeLessThan(1.4 / shards);
    const hottestWritesPerSecond = SWEEP_WRITES_PER_KEY_PER_NOTIFICATION * peak * hottestShare;
    expect(hottestWritesPerSecond).toBeLessThan(1.4 * SWEEP_KEY_WRITES_TARGET);
    expect(hottestWritesPerSecond).toBeLessThan(1_000);
  });

  it('a notification keeps its shard when the count grows by a power of two only if it is in the lower shards', () => {
    // Why the sweeper visits max(mark, own) shards: the same id lands elsewhere under another count.
    const moved = Array.from({ length: 200 }, (_, i) => `m-${i}#SMS`).filter(
      (id) => sweepKey('PENDING', 'SMS', id, 64) !== sweepKey('PENDING', 'SMS', id, 8),
    );
    expect(moved.length).toBeGreaterThan(0);
  });
});

describe('the sweeper visits the shards it is given', () => {
  it('64 shards: one Query per partition (SENDING, and PENDING by class) × channel × shard, every shard', async () => {
    const pages: string[] = [];
    const store = {
      findDue: async (partition: SweepPartition) => {
        pages.push(sweepPartition(partition));
        return { entries: [] };
      },
    } as unknown as SweepStore;
    const NOW = 1_800_000_000_000;
    await sweepWith(store, NOW, { sendRates: { EMAIL: 14, PUSH: 100, SMS: 20 }, shards: 64 });
    expect(pages).toHaveLength(4 * CHANNELS.length * 64);
    expect(new Set(pages).size).toBe(pages.length);
    expect(pages).toEqual(expect.arrayContaining(['SENDING#SMS#63', 'PENDING#SMS#63', 'PENDING#SMS#critical#63']));
    expect(pages).toContain('PENDING#SMS#bulk#63');
  });
});

describe('onceRaised', () => {
  it('raises the mark once per environment, and again after a failure', async () => {
    const raised: number[] = [];
    let fail = true;
    const mark: SweepShardMark = {
      raise: async (shards) => {
        if (fail) {
          fail = false;
          throw new Error('ThrottlingException');
        }
        raised.push(shards);
        return shards;
      },
    };
    const raise = onceRaised(mark, 64, () => 0);
    await expect(raise()).rejects.toThrow('ThrottlingException');
    await raise();
    await raise();
    expect(raised).toEqual([64]);
  });
});

import { describe, expect, it } from 'vitest';
import { type SweepPartition, sweepPartition } from '../../functions/domain/keys.ts';
import type { SweepEntry, SweepStore, SweepWindow } from '../../functions/stores/notification-store.ts';
import { sweep } from '../../functions/sweeper/sweep.ts';
import { sweepDeps } from '../support/sweep-deps.ts';

const NOW = 1_800_000_000_000;
let seq = 0;
const entry = (over: Partial<SweepEntry> = {}): SweepEntry => {
  const id = `e${seq++}`;
  const channel = over.channel ?? 'EMAIL';
  return {
    pk: `EVENT#${id}`,
    sk: `NOTIFICATION#${channel}`,
    notificationId: `${id}#${channel}`,
    channel,
    status: 'PENDING',
    attempt: 0,
    createdAt: new Date(NOW - 3_600_000).toISOString(),
    sweepAt: NOW - 60_000,
    ...over,
  };
};

describe("the due round's item budget", () => {
  it('is spent only on what is due: a stuck bulk SMS item is re-driven while 128 partitions hold near retries not yet due', async () => {
    const shards = 64;
    const parts = new Map<string, SweepEntry[]>();
    // Near retries waiting at retryAt + T, 5 minutes ahead: inside the lease horizon the Query reads to, not due.
    for (const channel of ['EMAIL', 'PUSH'] as const)
      for (let s = 0; s < shards; s++)
        parts.set(
          sweepPartition({ state: 'PENDING', channel, shard: s, noticeClass: 'normal' }),
          Array.from({ length: 100 }, () => entry({ channel, sweepAt: NOW + 300_000, retryAt: NOW - 600_000 })),
        );
    const stuck = entry({ channel: 'SMS', sweepAt: NOW - 120_000 });
    parts.set(sweepPartition({ state: 'PENDING', channel: 'SMS', shard: 5, noticeClass: 'bulk' }), [stuck]);
    const redriven: SweepEntry[] = [];
    const page = (key: string, until: number, limit: number, start?: { i: number }) => {
      const all = (parts.get(key) ?? []).filter((e) => e.sweepAt <= until).sort((a, b) => a.sweepAt - b.sweepAt);
      const from = start?.i ?? 0;
      const read = all.slice(from, from + limit);
      const last = read.at(-1);
      return { read, next: from + limit < all.length && last ? { i: from + limit, sweepAt: last.sweepAt } : undefined };
    };
    const store = {
      findDue: async (p: SweepPartition, w: SweepWindow, limit: number, start?: { i: number }) => {
        const { read, next } = page(sweepPartition(p), w.until, limit, start);
        return { entries: read, next };
      },
      findExpiredLeases: async (p: SweepPartition, now: number, until: number, start?: { i: number }) => {
        const { read, next } = page(sweepPartition(p), until, 1_000, start);
        return {
          entries: read.filter((e) => e.status === 'SENDING' && (e.leaseUntil ?? Number.POSITIVE_INFINITY) < now),
          next,
        };
      },
      redrive: async (e: SweepEntry) => {
        redriven.push(e);
        return 'applied';
      },
    } as unknown as SweepStore;
    const r = await sweep(sweepDeps(store, NOW, { shards }));
    expect(redriven).toEqual([stuck]);
    // Only the due item counts as examined; the 12,800 not yet due neither spend the budget nor count.
    expect(r.examined).toBe(1);
    expect(r.unfinished).toBe(0);
  });
});

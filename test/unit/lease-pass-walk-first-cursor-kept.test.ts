/**
 * The cursors item keeps only the first 350 KB of cursors (withinItem). The partitions kept to walk first next run — one
 * for a lease the due round left, one kept first whose Query was throttled — must keep their cursors there even when
 * thousands of unfinished partitions come before them in rotation order: without its cursor the next walk would start
 * at the round's stop, past the lease, and the lease would wait for the rotation (review 52-sweeper-recheck2, NIT 1).
 */
import { expect, it } from 'vitest';
import { sweepPartition } from '../../functions/domain/keys.ts';
import { withinItem } from '../../functions/stores/lease-cursors.ts';
import type { SweepStore } from '../../functions/stores/notification-store.ts';
import { type LeaseWork, leasePass } from '../../functions/sweeper/lease-pass.ts';

const NOW = 1_800_000_000_000;
const startOf = (key: string, i: number) => ({ sweepKey: key, sweepAt: NOW - 600_000 + i, pk: `EVENT#p${i}`, sk: 'N' });

it('keeps the cursors of the partitions walked first next run ahead of the other unfinished ones', async () => {
  // 4,000 bulk partitions, each with a saved cursor and cut by the deadline: far more than the item keeps.
  const cut: LeaseWork[] = Array.from({ length: 4_000 }, (_, shard) => ({
    state: 'PENDING',
    channel: 'EMAIL',
    noticeClass: 'bulk',
    shard,
  }));
  const saved = Object.fromEntries(cut.map((w) => [sweepPartition(w), startOf(sweepPartition(w), 3)]));
  // Q, critical, read to its horizon by the due round, which left a lease on the page from `at`.
  const at = startOf(sweepPartition({ state: 'PENDING', channel: 'EMAIL', noticeClass: 'critical', shard: 0 }), 5);
  const q: LeaseWork = {
    state: 'PENDING',
    channel: 'EMAIL',
    noticeClass: 'critical',
    shard: 0,
    leftAt: { at },
    leasesDone: true,
  };
  // P, normal, kept first for an earlier run's cut look-up and not walked (its Query throttled): it leads the list.
  const p: LeaseWork = { state: 'PENDING', channel: 'EMAIL', noticeClass: 'normal', shard: 0 };
  const pAt = startOf(sweepPartition(p), 2);
  const clock = { t: NOW };
  const store = {
    findExpiredLeases: async () => {
      clock.t = NOW + 1; // the deadline: every partition after P is cut before its first page
      throw Object.assign(new Error('Rate exceeded'), {
        name: 'ThrottlingException',
        $metadata: { httpStatusCode: 400 },
      });
    },
  } as unknown as SweepStore;
  const r = await leasePass([q, p, ...cut], {
    store,
    now: () => clock.t,
    at: NOW,
    horizon: NOW + 960_000,
    deadline: NOW + 1,
    concurrency: 1,
    saved: { ...saved, [sweepPartition(p)]: pAt },
    walkFirst: [sweepPartition(p)],
    handle: async () => undefined,
  });
  expect(r.failed.map((f) => f.partition)).toEqual([sweepPartition(p)]);
  expect(r.walkFirst).toEqual([sweepPartition(p), sweepPartition(q)]);
  const kept = withinItem(r.cursors);
  expect(Object.keys(kept).length).toBeLessThan(4_000);
  expect(kept[sweepPartition(q)]).toEqual(at);
  expect(kept[sweepPartition(p)]).toEqual(pAt);
  // Where the rotation resumes is the first cursor kept: cut, the rotation would start that partition over every run.
  expect(r.resumeAt).toBeDefined();
  const resumed = sweepPartition({ state: 'PENDING', ...(r.resumeAt as NonNullable<typeof r.resumeAt>) });
  expect(Object.keys(kept)[0]).toBe(resumed);
  expect(kept[resumed]).toEqual(saved[resumed]);
});

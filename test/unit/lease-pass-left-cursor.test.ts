/**
 * A partition holding a lease left for the next run is kept from the start of the first page that held one, whichever
 * way the walk ends after it: cut by the deadline, stopped by a throttled Query, or read to its end past a second left
 * lease. A cursor saved past that page would hide the lease from the next run's pass.
 */
import { describe, expect, it } from 'vitest';
import { type SweepPartition, sweepPartition } from '../../functions/domain/keys.ts';
import type { SweepEntry, SweepStore } from '../../functions/stores/notification-store.ts';
import { type LeaseWork, leasePass } from '../../functions/sweeper/lease-pass.ts';
import { expiredLease, NOW, startOf as startOfPage } from '../support/lease-walk.ts';

const w: LeaseWork = { state: 'PENDING', channel: 'EMAIL', shard: 2, noticeClass: 'normal' };
const key = sweepPartition(w);
const PAGES = 5;
/** Page i's start: page i-1's LastEvaluatedKey. */
const startOf = (i: number) => startOfPage(key, i);
/** Page i's one dead claim, named after its page. */
const claim = (i: number): SweepEntry => expiredLease(`c${i}`, key, i);

/** One partition of PAGES pages, a second of the clock a page; `throttleAt` throws a throttle on that page. */
function pass(left: readonly number[], opts: { deadlineAfterPages?: number; throttleAt?: number } = {}) {
  const clock = { t: NOW };
  const store = {
    findExpiredLeases: async (_p: SweepPartition, _now: number, _until: number, start?: { i: number }) => {
      const i = start?.i ?? 0;
      if (i === opts.throttleAt) {
        throw Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException', $metadata: {} });
      }
      clock.t += 1_000;
      return { entries: [claim(i)], next: i + 1 < PAGES ? startOf(i + 1) : undefined };
    },
  } as unknown as SweepStore;
  return leasePass([w], {
    store,
    now: () => clock.t,
    at: NOW,
    horizon: NOW + 960_000,
    deadline: NOW + (opts.deadlineAfterPages ?? 100) * 1_000,
    concurrency: 1,
    saved: {},
    handle: async (e) => (left.some((i) => e.notificationId === `c${i}#EMAIL`) ? 'left' : undefined),
  });
}

describe('a partition with a lease left for the next run on page 1 (of 5)', () => {
  it('cut by the deadline after page 2: kept from page 1’s start, not from where the walk stopped', async () => {
    const r = await pass([1], { deadlineAfterPages: 3 });
    expect(r).toMatchObject({ pages: 3, unfinished: 1, deferred: 0 });
    expect(r.cursors).toEqual({ [key]: startOf(1) });
  });

  it('whose Query is throttled on page 3: kept from page 1’s start, not from the throttled page', async () => {
    const r = await pass([1], { throttleAt: 3 });
    expect(r.failed).toEqual([{ partition: key, error: 'ThrottlingException: Rate exceeded' }]);
    expect(r.cursors).toEqual({ [key]: startOf(1) });
  });

  it('and a second on page 3, read to its end: kept from page 1’s start, the first, not the second’s', async () => {
    const r = await pass([1, 3]);
    expect(r).toMatchObject({ pages: PAGES, unfinished: 0, deferred: 1 });
    expect(r.cursors).toEqual({ [key]: startOf(1) });
  });
});

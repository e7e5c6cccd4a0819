/**
 * Two partitions kept to walk first: P (critical, a long rest) held X, Q (normal) holds Y, a look-up cut every time.
 * One walk at a time, four pages a run. P walked first must not hold Q back run after run, whether X is resolved (P
 * goes back to the rotation) or left every run (its SENT write keeps failing): Q, not walked in a run, leads the next
 * run's list, so Y is looked up within ⌈2 ÷ 1⌉ = 2 runs every time (docs/guarantees.md, window 5).
 */
import { describe, expect, it } from 'vitest';
import { sweepPartition } from '../../functions/domain/keys.ts';
import type { SweepStore } from '../../functions/stores/notification-store.ts';
import type { LeaseWork } from '../../functions/sweeper/lease-pass.ts';
import { expiredLease, NOW, passRuns, Q, startOf } from '../support/lease-walk.ts';

const P: LeaseWork = { state: 'PENDING', channel: 'EMAIL', noticeClass: 'critical', shard: 0 };
const R: LeaseWork[] = [1, 2, 3].map((shard) => ({ state: 'PENDING', channel: 'EMAIL', noticeClass: 'normal', shard }));
const work = [P, Q, ...R];
const pages = (key: string) => (key === sweepPartition(P) ? 30 : 3);
const X = expiredLease('x', sweepPartition(P), 1);
const Y = expiredLease('y', sweepPartition(Q), 1);

/** Twelve runs a minute apart from both partitions kept from the page holding their lease; the runs Y is looked up. */
async function runs(xLeft: boolean) {
  const clock = { t: NOW };
  const store = {
    findExpiredLeases: async (p: LeaseWork, _n: number, _h: number, start?: { i: number }) => {
      const key = sweepPartition(p);
      clock.t += 1_000;
      const i = start?.i ?? 0;
      const entries = i === 1 && key === X.sweepKey ? [X] : i === 1 && key === Y.sweepKey ? [Y] : [];
      return { entries, next: i + 1 < pages(key) ? startOf(key, i + 1) : undefined };
    },
  } as unknown as SweepStore;
  const yLookedUp: number[] = [];
  const results = await passRuns(
    12,
    clock,
    (run, start) => ({
      work,
      store,
      deadline: start + 4_000,
      handle: async (e) => {
        if (e === Y) {
          yLookedUp.push(run);
          return 'left';
        }
        return e === X && xLeft ? 'left' : undefined;
      },
    }),
    {
      saved: {
        [sweepPartition(P)]: startOf(sweepPartition(P), 1),
        [sweepPartition(Q)]: startOf(sweepPartition(Q), 1),
      },
      walkFirst: [sweepPartition(P), sweepPartition(Q)],
    },
  );
  const kept = results.map((r) => r.walkFirst);
  return { yLookedUp, kept };
}

describe('partitions kept to walk first, one of them with a long rest', () => {
  it('X resolved: P goes back to the rotation after its walk, and Q is walked first by the next run', async () => {
    const { yLookedUp, kept } = await runs(false);
    expect(kept[0]).toEqual([sweepPartition(Q)]);
    expect(yLookedUp).toEqual([2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
  });

  it('X left every run: P and Q take turns at the front, Y looked up every other run at least', async () => {
    const { yLookedUp, kept } = await runs(true);
    expect(kept[0]).toEqual([sweepPartition(Q), sweepPartition(P)]);
    expect(yLookedUp[0]).toBe(2);
    for (const [i, run] of yLookedUp.entries()) expect(run - (yLookedUp[i - 1] ?? 0)).toBeLessThanOrEqual(2);
    expect(yLookedUp.length).toBeGreaterThanOrEqual(6);
  });
});

/**
 * A lease the due round left for the next run (its spool look-up cut) in a partition the round stopped in: the round
 * hands the pass the start of the page that held it and the lease's place (`leftAt`, sweep.ts keepLeft); the pass walks
 * on from the round's stop, past the lease, never looking it up again that run, and keeps the partition first with that
 * place (`leaseAt`, in the cursors item). Items written since with a sweepAt before the lease then push it off its kept
 * page and the next walk is cut after that first page: the partition stays first, so the run after looks the lease up,
 * not the rotation a cycle later (review 53-lease NIT 2: before this test only the handler's integration test,
 * sweeper-walk-first.test.ts, failed when the round's place was dropped). Q (normal#0) has ten pages; the round read
 * Q's page 5, which holds Y, and stopped there; after run 1, Y is on the page from 5.5; one walk at a time.
 */
import { expect, it } from 'vitest';
import { sweepPartition } from '../../functions/domain/keys.ts';
import type { SweepStore } from '../../functions/stores/notification-store.ts';
import type { LeaseWork } from '../../functions/sweeper/lease-pass.ts';
import { leaseOnPage, NOW, passRuns, Q, QK, R, startOf } from '../support/lease-walk.ts';

const Y = leaseOnPage(5.7);

it("keeps the due round's lease place: its partition stays first until a walk reads past the lease", async () => {
  const clock = { t: NOW };
  let run = 0;
  const store = {
    findExpiredLeases: async (p: LeaseWork, _at: number, _h: number, start?: { i: number }) => {
      const key = sweepPartition(p);
      const i = start?.i ?? 0;
      clock.t += 1_000;
      if (key === QK && run >= 2 && i === 5) return { entries: [], next: startOf(key, 5.5) }; // items written since
      if (key === QK && run >= 2 && i === 5.5) return { entries: [Y], next: startOf(key, 6) };
      const next = Math.floor(i) + 1;
      return { entries: key === QK && i === 5 ? [Y] : [], next: next < 10 ? startOf(key, next) : undefined };
    },
  } as unknown as SweepStore;
  const lookedUp: number[] = [];
  const results = await passRuns(4, clock, (n, start) => {
    run = n;
    // Run 1: the round read Q to the end of page 5, where it left Y; its lease pass starts at page 6.
    const q: LeaseWork = n === 1 ? { ...Q, next: startOf(QK, 6), leftAt: { at: startOf(QK, 5), lease: Y.sweepAt } } : Q;
    return {
      work: [q, ...R],
      store,
      // Run 2's walk is cut after its first page.
      deadline: start + (n === 2 ? 1 : 4) * 1_000,
      handle: async (e) => {
        if (e === Y) lookedUp.push(n);
        return undefined;
      },
    };
  });
  const after = results.map((r) => ({
    walkFirst: r.walkFirst,
    cursor: (r.cursors[QK] as { i?: number } | undefined)?.i,
    leaseAt: r.leaseAt,
  }));
  // Run 1 walks Q's rest from the round's stop (Y is not looked up twice) and keeps Q from Y's page, with Y's place.
  expect(after[0]).toEqual({ walkFirst: [QK], cursor: 5, leaseAt: { [QK]: Y.sweepAt } });
  // Run 2 reads only the page from 5, now before Y: Q stays first, its cursor moved to the page that holds Y.
  expect(after[1]).toEqual({ walkFirst: [QK], cursor: 5.5, leaseAt: { [QK]: Y.sweepAt } });
  // Run 3 looks Y up and lets Q go back to the rotation.
  expect(lookedUp).toEqual([3]);
  expect(after[2]?.walkFirst).toEqual([]);
  expect(after[2]?.leaseAt).toEqual({});
});

/**
 * A partition kept for a cut look-up, its cursor at the start of the page that held the lease: items written since
 * with a sweepAt before the lease (retries due sooner) push the lease to the next page, and the next walk ends after
 * that first page (the deadline, or its next Query throttled). The partition must stay first, its cursor moved on, so
 * the run after looks the lease up, not the rotation a cycle later (docs/guarantees.md, window 5). Q (normal#0) has ten
 * pages, Y on page 5 in run 1, on the page from 5.5 afterwards; six other partitions of ten pages; one walk at a time.
 */
import { describe, expect, it } from 'vitest';
import { sweepPartition } from '../../functions/domain/keys.ts';
import type { SweepStore } from '../../functions/stores/notification-store.ts';
import { type LeaseWork, leasePass } from '../../functions/sweeper/lease-pass.ts';
import { leaseOnPage, NOW, passRuns, Q, QK, R, startOf } from '../support/lease-walk.ts';

const Y = leaseOnPage(5.7);

type Cut = 'deadline' | 'throttled';

/** Five runs a minute apart; Y's look-up is cut in run 1 only. Returns the runs that looked Y up, and run 2's result. */
async function runs(cut: Cut, keepLeaseAt = true, pushedTo = 5.5) {
  const clock = { t: NOW };
  let run = 0;
  const store = {
    findExpiredLeases: async (p: LeaseWork, _at: number, _h: number, start?: { i: number }) => {
      const key = sweepPartition(p);
      const i = start?.i ?? 0;
      if (key === QK && run === 2 && cut === 'throttled' && i === pushedTo)
        throw Object.assign(new Error('Rate exceeded'), {
          name: 'ThrottlingException',
          $metadata: { httpStatusCode: 400 },
        });
      clock.t += 1_000;
      if (key === QK && run >= 2 && i === 5) return { entries: [], next: startOf(key, pushedTo) }; // items written since
      if (key === QK && run >= 2 && i === pushedTo) return { entries: [Y], next: startOf(key, 6) };
      const next = Math.floor(i) + 1;
      return { entries: key === QK && i === 5 ? [Y] : [], next: next < 10 ? startOf(key, next) : undefined };
    },
  } as unknown as SweepStore;
  const lookedUp: number[] = [];
  const results = await passRuns(
    5,
    clock,
    (n, start) => {
      run = n;
      return {
        work: [run === 1 ? { ...Q, next: startOf(QK, 5) } : Q, ...R],
        store,
        deadline: start + (run === 2 && cut === 'deadline' ? 1 : 4) * 1_000,
        handle: async (e) => {
          if (e !== Y) return undefined;
          lookedUp.push(n);
          return n === 1 ? 'left' : undefined;
        },
      };
    },
    {},
    keepLeaseAt,
  );
  const after = results.map((r) => ({
    walkFirst: r.walkFirst,
    cursor: (r.cursors[QK] as { i?: number } | undefined)?.i,
    leaseAt: r.leaseAt,
  }));
  return { lookedUp, after };
}

describe('a partition kept first whose lease items written since pushed off its kept page', () => {
  // Y at 5.7: the page pushed to starts at Y's own sweepAt (a tie: DynamoDB does not order equal sort keys, so a page
  // ending there may not have read Y).
  it.each<[Cut, number]>([
    ['deadline', 5.5],
    ['throttled', 5.5],
    ['deadline', 5.7],
  ])(
    'stays first until a walk reads past the lease (walk cut: %s; pushed to the page from %s)',
    async (cut, pushedTo) => {
      const { lookedUp, after } = await runs(cut, true, pushedTo);
      // Run 1 keeps Q from Y's page, with Y's place.
      expect(after[0]).toEqual({ walkFirst: [QK], cursor: 5, leaseAt: { [QK]: Y.sweepAt } });
      // Run 2 reads only the page from 5, now before Y: Q stays first, its cursor moved to the page that holds Y.
      expect(after[1]).toEqual({ walkFirst: [QK], cursor: pushedTo, leaseAt: { [QK]: Y.sweepAt } });
      // Run 3 looks Y up and lets Q go back to the rotation.
      expect(lookedUp).toEqual([1, 3]);
      expect(after[2]?.walkFirst).toEqual([]);
      expect(after[2]?.leaseAt).toEqual({});
    },
  );

  it("without the lease's place (an item saved before it was kept), behaves as before: back to the rotation", async () => {
    const { lookedUp, after } = await runs('deadline', false);
    expect(after[1]?.walkFirst).toEqual([]);
    expect(after[1]?.cursor).toBe(5.5);
    expect(lookedUp).toEqual([1]);
  });

  it('ignores a lease place beyond the horizon (a hand-edited item): walked from its saved cursor, back to the rotation', async () => {
    const start = NOW + 60_000;
    const clock = { t: start };
    const store = {
      findExpiredLeases: async (p: LeaseWork, _at: number, _h: number, from?: { i: number }) => {
        clock.t += 1_000;
        const i = from?.i ?? 0;
        return { entries: [], next: i + 1 < 10 ? startOf(sweepPartition(p), Math.floor(i) + 1) : undefined };
      },
    } as unknown as SweepStore;
    const r = await leasePass([Q], {
      store,
      now: () => clock.t,
      at: start,
      horizon: start + 960_000,
      deadline: start + 1_000,
      concurrency: 1,
      saved: { [QK]: startOf(QK, 5) },
      walkFirst: [QK],
      leaseAt: { [QK]: start + 86_400_000 },
      handle: async () => undefined,
    });
    expect(r.walkFirst).toEqual([]);
    expect(r.leaseAt).toEqual({});
  });
});

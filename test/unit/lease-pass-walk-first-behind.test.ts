/**
 * A partition kept for a cut look-up whose lease lies further in than the next run's due round reads (the round held
 * behind a critical burst, its budget spent): the next run's pass must still meet the lease, not walk the partition's
 * front and drop it from the list (docs/guarantees.md, window 5). Q (normal#0) has ten pages, Y on page 5; six other
 * partitions of ten pages; one walk at a time, four pages a run.
 */
import { describe, expect, it } from 'vitest';
import { sweepPartition } from '../../functions/domain/keys.ts';
import type { LeaseCursors } from '../../functions/stores/lease-cursors.ts';
import type { SweepStore } from '../../functions/stores/notification-store.ts';
import type { LeaseWork } from '../../functions/sweeper/lease-pass.ts';
import { leaseOnPage, NOW, passRuns, Q, QK, R, startOf } from '../support/lease-walk.ts';

const Y = leaseOnPage(5);

interface Run {
  /** Where the due round stopped in Q (undefined: it did not reach Q). */
  qNext?: number;
  /** Y's look-up is cut short. */
  cut: boolean;
  /** DynamoDB refuses page 5's start in Q (a saved cursor it cannot take) as a start key. */
  refuse?: boolean;
  /** Pages the run reads (4 unless told). */
  pages?: number;
}

/** Runs a minute apart, each given what the last kept; the runs Y is looked up in, and what each run kept. */
async function runs(plan: readonly Run[], from: { saved?: LeaseCursors; walkFirst?: string[] } = {}) {
  const clock = { t: NOW };
  let refuse = false;
  const store = {
    findExpiredLeases: async (p: LeaseWork, _n: number, _h: number, start?: { i: number }) => {
      const key = sweepPartition(p);
      if (refuse && key === QK && start?.i === 5)
        throw Object.assign(new Error('The provided starting key is invalid'), { name: 'ValidationException' });
      clock.t += 1_000;
      const i = start?.i ?? 0;
      return { entries: i === 5 && key === QK ? [Y] : [], next: i + 1 < 10 ? startOf(key, i + 1) : undefined };
    },
  } as unknown as SweepStore;
  const lookedUp: number[] = [];
  const results = await passRuns(
    plan.length,
    clock,
    (n, start) => {
      const run = plan[n - 1] as Run;
      refuse = run.refuse ?? false;
      return {
        work: [run.qNext === undefined ? Q : { ...Q, next: startOf(QK, run.qNext) }, ...R],
        store,
        deadline: start + (run.pages ?? 4) * 1_000,
        handle: async (e) => {
          if (e !== Y) return undefined;
          lookedUp.push(n);
          return run.cut ? 'left' : undefined;
        },
      };
    },
    from,
  );
  const kept = results.map((r) => ({ cursors: r.cursors, walkFirst: r.walkFirst, dropped: r.dropped.length }));
  return { lookedUp, kept };
}

describe('a cut look-up in a partition the due round stopped in', () => {
  it('is kept from its page even there: the next run, whose round does not reach it, looks it up first', async () => {
    const { lookedUp, kept } = await runs([{ qNext: 5, cut: true }, { cut: false }, { cut: false }]);
    // Run 1's pass read Q from where the round stopped, page 5, which held Y: Q is kept from there, not from nowhere.
    expect(kept[0]?.cursors[QK]).toEqual(startOf(QK, 5));
    expect(kept[0]?.walkFirst).toEqual([QK]);
    // Run 2's round does not reach Q; its pass reads Q from page 5, not from its front (Y five pages in).
    expect(lookedUp).toEqual([1, 2]);
    // Resolved: Q goes back to the rotation.
    expect(kept[1]?.walkFirst).toEqual([]);
  });

  it('met and resolved on the walk’s first page, the run cut right after: back to the rotation', async () => {
    const { lookedUp, kept } = await runs([
      { qNext: 5, cut: true },
      { cut: false, pages: 1 },
    ]);
    expect(lookedUp).toEqual([1, 2]);
    expect(kept[1]).toEqual({ cursors: { [QK]: startOf(QK, 6) }, walkFirst: [], dropped: 0 });
  });

  it('stays first while its look-up is cut again, run after run', async () => {
    const { lookedUp, kept } = await runs([
      { qNext: 5, cut: true },
      ...Array.from({ length: 5 }, () => ({ cut: true })),
    ]);
    expect(lookedUp).toEqual([1, 2, 3, 4, 5, 6]);
    for (const k of kept) expect(k).toMatchObject({ walkFirst: [QK], cursors: { [QK]: startOf(QK, 5) } });
  });
});

describe('a partition kept first whose walk ends before its saved lease cursor', () => {
  it('stays in the list, behind those not walked, and is read on from where it stopped', async () => {
    const other = sweepPartition(R[0] as LeaseWork);
    // DynamoDB refuses Q's cursor (page 5's start): Q is read from its front and cut at page 4, before Y.
    const { lookedUp, kept } = await runs([{ cut: false, refuse: true }, { cut: false }, { cut: false }], {
      saved: { [QK]: startOf(QK, 5) },
      walkFirst: [QK, other],
    });
    expect(kept[0]).toEqual({ cursors: { [QK]: startOf(QK, 4) }, walkFirst: [other, QK], dropped: 1 });
    // Run 2 walks the partition not walked first (its four pages take the run); run 3 walks Q from page 4 and meets Y
    // on its second page: the second of the list within ⌈2 ÷ 1⌉ runs.
    expect(kept[1]?.walkFirst).toEqual([QK]);
    expect(lookedUp).toEqual([3]);
    expect(kept[2]?.walkFirst).toEqual([]);
  });
});

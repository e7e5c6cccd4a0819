/**
 * A partition kept for a lease left for the next run (its spool look-up cut short) is walked first by the next run's
 * pass, ahead of the rotation and never where the rotation resumes: under a backlog larger than a run reads, the lease
 * is looked up again by the next run, not when the rotation comes round a cycle later (docs/guarantees.md, window 5).
 */
import { describe, expect, it } from 'vitest';
import { type SweepPartition, sweepPartition } from '../../functions/domain/keys.ts';
import type { SweepStore } from '../../functions/stores/notification-store.ts';
import { type LeaseWork, leasePass } from '../../functions/sweeper/lease-pass.ts';
import { expiredLease, NOW, passRuns, startOf } from '../support/lease-walk.ts';

const PAGES = 3;
/** Eight partitions of three pages: a run (4 s, a second of the clock a page, one walk at a time) reads four pages. */
const work: LeaseWork[] = Array.from({ length: 8 }, (_, shard) => ({
  state: 'PENDING',
  channel: 'EMAIL',
  noticeClass: 'normal',
  shard,
}));
const keyOf = (shard: number) => sweepPartition(work[shard] as LeaseWork);
/** The dead claim X, on page 1 of shard 0. */
const x = expiredLease('x', keyOf(0), 1);

/** The fake store's lease Query; `throttled` partitions answer as a throttled table does. */
function storeOf(clock: { t: number }, throttled: readonly string[] = []) {
  return {
    findExpiredLeases: async (p: SweepPartition, _now: number, _until: number, start?: { i: number }) => {
      const key = sweepPartition(p);
      if (throttled.includes(key))
        throw Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException', $metadata: {} });
      clock.t += 1_000;
      const i = start?.i ?? 0;
      return {
        entries: key === x.sweepKey && i === 1 ? [x] : [],
        next: i + 1 < PAGES ? startOf(key, i + 1) : undefined,
      };
    },
  } as unknown as SweepStore;
}

/**
 * Runs a minute apart, each given what the last kept. X's look-up is cut (left) in the runs `cutIn` names; a run
 * that reads it otherwise resolves it.
 */
async function runs(n: number, opts: { cutIn: (run: number) => boolean; throttled?: (run: number) => string[] }) {
  const clock = { t: NOW };
  const lookedUp: number[] = [];
  const results = await passRuns(n, clock, (run, start) => ({
    work,
    store: storeOf(clock, opts.throttled?.(run)),
    deadline: start + 4_000,
    handle: async (e) => {
      if (e !== x) return undefined;
      lookedUp.push(run);
      return opts.cutIn(run) ? 'left' : undefined;
    },
  }));
  const kept = results.map((r) => ({ resumeAt: r.resumeAt, cursors: r.cursors, walkFirst: r.walkFirst }));
  return { lookedUp, kept };
}

describe('a lease left for the next run under a backlog larger than a run reads', () => {
  it('is looked up again by the next run: its partition is walked first, and the rotation still moves on', async () => {
    const { lookedUp, kept } = await runs(3, { cutIn: (run) => run === 1 });
    // Run 1 read shard 0 to its end (X cut) and shard 1's first page: the rotation resumes at shard 1.
    expect(kept[0]).toEqual({
      resumeAt: { noticeClass: 'normal', channel: 'EMAIL', shard: 1 },
      cursors: { [keyOf(1)]: startOf(keyOf(1), 1), [keyOf(0)]: startOf(keyOf(0), 1) },
      walkFirst: [keyOf(0)],
    });
    // Run 2 walked shard 0 from X's page first (2 pages), then the rotation from shard 1 (2 pages): not a cycle later.
    expect(lookedUp).toEqual([1, 2]);
    expect(kept[1]).toEqual({
      resumeAt: { noticeClass: 'normal', channel: 'EMAIL', shard: 2 },
      cursors: {},
      walkFirst: [],
    });
    // Resolved: no longer walked first, and the rotation goes on from where it stopped.
    expect(kept[2]?.walkFirst).toEqual([]);
    expect(kept[2]?.resumeAt).toEqual({ noticeClass: 'normal', channel: 'EMAIL', shard: 3 });
  });

  it('stays first while its look-up is cut again, and the rotation moves on beside it', async () => {
    const { lookedUp, kept } = await runs(4, { cutIn: () => true });
    expect(lookedUp).toEqual([1, 2, 3, 4]);
    for (const k of kept) {
      expect(k.walkFirst).toEqual([keyOf(0)]);
      expect(k.cursors[keyOf(0)]).toEqual(startOf(keyOf(0), 1));
      expect(k.resumeAt?.shard).not.toBe(0);
    }
    // Two pages a run for shard 0, two for the rotation: it resumes in shard 1, 2, 2 (cut inside it), then 3.
    expect(kept.map((k) => k.resumeAt?.shard)).toEqual([1, 2, 2, 3]);
  });

  it('stays first while its Query fails, its cursor kept, and is looked up once the Query succeeds', async () => {
    const { lookedUp, kept } = await runs(3, {
      cutIn: (run) => run === 1,
      throttled: (run) => (run === 2 ? [keyOf(0)] : []),
    });
    expect(kept[1]?.walkFirst).toEqual([keyOf(0)]);
    expect(kept[1]?.cursors[keyOf(0)]).toEqual(startOf(keyOf(0), 1));
    expect(lookedUp).toEqual([1, 3]);
    expect(kept[2]?.walkFirst).toEqual([]);
  });
});

describe('a partition walked first that the deadline cuts', () => {
  it('goes back to the rotation with its progress once walked; one kept first that was not walked stays first', async () => {
    const clock = { t: NOW };
    const r = await leasePass(work, {
      store: storeOf(clock),
      now: () => clock.t,
      at: NOW,
      horizon: NOW + 960_000,
      // One page a run: shard 5, walked first, is cut after its first page; shard 6 is not walked at all.
      deadline: NOW + 1_000,
      concurrency: 1,
      saved: {},
      resumeAt: { noticeClass: 'normal', channel: 'EMAIL', shard: 2 },
      walkFirst: [keyOf(5), keyOf(6)],
      handle: async () => undefined,
    });
    // Shard 5 holds no lease left for the next run: the rotation reads its rest. Shard 6 still waits for its walk.
    expect(r.walkFirst).toEqual([keyOf(6)]);
    expect(r.resumeAt).toEqual({ noticeClass: 'normal', channel: 'EMAIL', shard: 2 });
    // The cut partition keeps its progress; where the rotation resumes was not reached, so it has no cursor.
    expect(Object.keys(r.cursors)).toEqual([keyOf(5)]);
    expect(r.cursors[keyOf(5)]).toEqual(startOf(keyOf(5), 1));
    expect(r.unfinished).toBe(8);
  });
});

import { describe, expect, it } from 'vitest';
import { NOTICE_CLASSES } from '../../functions/domain/catalogue.ts';
import { CHANNELS } from '../../functions/domain/channels.ts';
import { type SweepPartition, sweepPartition } from '../../functions/domain/keys.ts';
import { type LeaseCursors, type LeasePosition, withinItem } from '../../functions/stores/lease-cursors.ts';
import type { SweepEntry, SweepStore } from '../../functions/stores/notification-store.ts';
import { type LeaseWork, leasePass } from '../../functions/sweeper/lease-pass.ts';

const NOW = 1_800_000_000_000;
const entry = (key: string, i: number, over: Partial<SweepEntry> = {}): SweepEntry => ({
  pk: `EVENT#${key}-${i}`,
  sk: 'NOTIFICATION#EMAIL',
  channel: 'EMAIL',
  notificationId: `${key}-${i}`,
  status: 'PENDING',
  attempt: 0,
  createdAt: new Date(NOW).toISOString(),
  sweepAt: NOW - 600_000 + i,
  sweepKey: key,
  ...over,
});
const dead = (key: string, i: number) => entry(key, i, { status: 'SENDING', attempt: 1, leaseUntil: NOW - 1 });

/**
 * A fake store's lease Query: `pages(key)` pages of 1,000 entries a partition, `tick` ms of the clock a page, the
 * `deadPage` (default: the last) of a partition holding its dead claims; the next key is a LastEvaluatedKey's shape with a long event id.
 */
function leaseStore(
  pages: (key: string) => number,
  deadIn: (key: string) => SweepEntry[],
  clock: { t: number },
  tick = 1_000,
  deadPage = (key: string) => pages(key) - 1,
) {
  return {
    findExpiredLeases: async (p: SweepPartition, now: number, _until: number, start?: { i: number }) => {
      clock.t += tick;
      const key = sweepPartition(p);
      const i = start?.i ?? 0;
      const last = i + 1 >= pages(key);
      const pk = `EVENT#${'e'.repeat(120)}${i}`;
      const next = last ? undefined : { i: i + 1, sweepKey: key, sweepAt: NOW - 600_000 + i, pk, sk: 'N' };
      const entries =
        i === deadPage(key) ? deadIn(key).filter((e) => (e.leaseUntil ?? Number.POSITIVE_INFINITY) < now) : [];
      return { entries, next };
    },
  } as unknown as SweepStore;
}

/** Runs a minute apart, each carrying what the last saved (through the item's limit) to the next. */
async function runs(
  n: number,
  work: readonly LeaseWork[],
  store: SweepStore,
  clock: { t: number },
  concurrency: number,
  saved: LeaseCursors = {},
) {
  const resolved: { run: number; e: SweepEntry }[] = [];
  const kept: { resumeAt?: LeasePosition | undefined; cursors: LeaseCursors }[] = [];
  let resumeAt: LeasePosition | undefined;
  for (let run = 1; run <= n; run++) {
    const start = NOW + run * 60_000;
    clock.t = start;
    const r = await leasePass(work, {
      store,
      now: () => clock.t,
      at: start,
      horizon: start + 960_000,
      deadline: start + 15_000,
      concurrency,
      saved,
      resumeAt,
      handle: async (e) => {
        resolved.push({ run, e });
        return undefined;
      },
    });
    saved = withinItem(r.cursors);
    resumeAt = r.resumeAt;
    kept.push({ resumeAt, cursors: saved });
  }
  return { resolved, kept };
}

describe("the lease pass's rotation over runs", () => {
  it('a backlog of about one run in a critical partition no longer hides a bulk partition’s dead claim: found in the second run', async () => {
    const crit: LeaseWork = { state: 'PENDING', channel: 'EMAIL', shard: 0, noticeClass: 'critical' };
    const bulk: LeaseWork = { state: 'PENDING', channel: 'EMAIL', shard: 0, noticeClass: 'bulk' };
    const ck = sweepPartition(crit);
    const bk = sweepPartition(bulk);
    const clock = { t: NOW };
    // 15 pages in the critical partition: a run (15 s, a second a page) reads exactly it, whatever it saved.
    const store = leaseStore(
      (key) => (key === ck ? 15 : 1),
      (key) => (key === bk ? [dead(bk, 11)] : []),
      clock,
    );
    const { resolved, kept } = await runs(5, [crit, bulk], store, clock, 1);
    // (The fake store leaves the claim as it was, so later cycles find it again.)
    expect(resolved[0]?.run).toBe(2);
    // Run 1 stopped at the bulk partition and left it to run 2, which started there.
    expect(kept[0]?.resumeAt).toEqual({ noticeClass: 'bulk', channel: 'EMAIL', shard: 0 });
  });

  it('reaches every partition of the most shards within a bounded number of runs, even those whose cursors the item dropped', async () => {
    const work: LeaseWork[] = NOTICE_CLASSES.flatMap((noticeClass) =>
      CHANNELS.flatMap((channel) =>
        Array.from({ length: 256 }, (_, shard): LeaseWork => ({ state: 'PENDING', noticeClass, channel, shard })),
      ),
    );
    const lastKey = sweepPartition(work.at(-1) as LeaseWork);
    const firstKey = sweepPartition(work[0] as LeaseWork);
    const clock = { t: NOW };
    const store = leaseStore(
      () => 2,
      (key) => (key === lastKey || key === firstKey ? [dead(key, 1)] : []),
      clock,
      60,
    );
    // An earlier run left a cursor in every partition: more than the item keeps, so the bulk ones are dropped.
    const all = Object.fromEntries(
      work.map((w) => {
        const key = sweepPartition(w);
        return [key, { i: 1, sweepKey: key, sweepAt: NOW - 600_000, pk: `EVENT#${'e'.repeat(120)}`, sk: 'N' }];
      }),
    );
    const saved = withinItem(all);
    expect(saved[lastKey]).toBeUndefined();
    // 16 partitions at once, 15 s, 60 ms of the shared clock a page: 250 pages a run over 2,304 partitions' 1 or 2 pages.
    const { resolved, kept } = await runs(30, work, store, clock, 16, saved);
    const runOf = (key: string) => resolved.find((x) => x.e.sweepKey === key)?.run;
    expect(runOf(firstKey)).toBe(1);
    // A cycle: 2,304 pages, plus a page more for each of the ~900 partitions whose cursor was dropped, at 250 a run.
    expect(runOf(lastKey)).toBeLessThanOrEqual(14);
    // Each run kept the cursor of the partition its rotation stopped in: the rotation never restarts a partition.
    for (const k of kept) {
      if (k.resumeAt === undefined) continue;
      const key = sweepPartition({ state: 'PENDING', ...k.resumeAt });
      if (Object.keys(k.cursors).length > 0) expect(Object.keys(k.cursors)[0]).toBe(key);
    }
    // The cycle ended and a new one began: the first partition's claim would be found again from the front.
    expect(kept.some((k) => k.resumeAt === undefined || k.resumeAt.noticeClass === 'critical')).toBe(true);
  });

  it("sets aside only a saved cursor DynamoDB refuses: a refusal of the round's own position fails the run, a throttle leaves the partition where it stood", async () => {
    const w: LeaseWork = { state: 'PENDING', channel: 'SMS', shard: 3, noticeClass: 'normal' };
    const key = sweepPartition(w);
    const refused = Object.assign(new Error('The provided starting key is invalid'), {
      name: 'ValidationException',
      $metadata: {},
    });
    const starts: unknown[] = [];
    const failing = (error: Error) =>
      ({
        findExpiredLeases: async (_p: SweepPartition, _n: number, _u: number, start?: { mark?: string }) => {
          starts.push(start?.mark);
          if (start?.mark === 'saved' || start?.mark === 'round') throw error;
          return { entries: [], next: undefined };
        },
      }) as unknown as SweepStore;
    const saved = { [key]: { mark: 'saved', sweepKey: key, sweepAt: NOW, pk: 'EVENT#x', sk: 'N' } };
    const input = (store: SweepStore, s: LeaseCursors) => ({
      store,
      now: () => NOW,
      at: NOW,
      horizon: NOW + 960_000,
      deadline: NOW + 15_000,
      concurrency: 1,
      saved: s,
      handle: async () => undefined,
    });
    const r = await leasePass([{ ...w, next: { mark: 'early', sweepAt: NOW - 1 } }], input(failing(refused), saved));
    expect(starts).toEqual(['saved', 'early']);
    expect(r.dropped).toEqual([
      { partition: key, reason: 'refused by DynamoDB: The provided starting key is invalid' },
    ]);
    // Not set aside, nor kept as a failed partition: a request DynamoDB will never take fails the run (SweeperErrors).
    const round = leasePass([{ ...w, next: { mark: 'round', sweepAt: NOW } }], input(failing(refused), {}));
    await expect(round).rejects.toBe(refused);
    const denied = Object.assign(new Error('not authorized'), { name: 'AccessDeniedException', $metadata: {} });
    await expect(leasePass([w], input(failing(denied), saved))).rejects.toBe(denied);
    const bug = new TypeError("Cannot read properties of undefined (reading 'sweepAt')");
    await expect(leasePass([w], input(failing(bug), saved))).rejects.toBe(bug);
    const throttle = Object.assign(new Error('throttled'), { name: 'ThrottlingException', $metadata: {} });
    const throttled = await leasePass([w], input(failing(throttle), saved));
    expect(throttled).toMatchObject({
      failed: [{ partition: key, error: 'ThrottlingException: throttled' }],
      cursors: saved,
      unfinished: 0,
    });
    expect(throttled.resumeAt).toBeUndefined();
  });
});

/** A fake store whose Query of `failing` partitions always throws as a throttled table does; the rest as `inner`. */
function failingIn(inner: SweepStore, failing: readonly string[]): SweepStore {
  return {
    findExpiredLeases: async (p: SweepPartition, ...rest: [number, number, never]) => {
      if (failing.includes(sweepPartition(p)))
        throw Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException', $metadata: {} });
      return inner.findExpiredLeases(p, ...rest);
    },
  } as unknown as SweepStore;
}

describe('a lease-pass partition whose Query fails', () => {
  const crit: LeaseWork = { state: 'PENDING', channel: 'EMAIL', shard: 0, noticeClass: 'critical' };
  const normal: LeaseWork = { state: 'PENDING', channel: 'EMAIL', shard: 0, noticeClass: 'normal' };
  const bulk: LeaseWork = { state: 'PENDING', channel: 'EMAIL', shard: 0, noticeClass: 'bulk' };
  const [ck, nk, bk] = [crit, normal, bulk].map(sweepPartition) as [string, string, string];

  it('keeps its cursor, fails neither the run nor the rotation, and the partitions after it are read', async () => {
    const clock = { t: NOW };
    // The critical partition fails every run; a backlog of about a run in the normal one; the dead claim in bulk.
    const store = failingIn(
      leaseStore(
        (key) => (key === nk ? 15 : 1),
        (key) => (key === bk ? [dead(bk, 11)] : []),
        clock,
      ),
      [ck],
    );
    const mark = { i: 3, sweepKey: ck, sweepAt: NOW - 600_000, pk: 'EVENT#c', sk: 'N' };
    const { resolved, kept } = await runs(3, [crit, normal, bulk], store, clock, 1, { [ck]: mark });
    // Run 1 read the normal backlog to its deadline; run 2 resumed at bulk, not at the failing critical partition
    // (which would have spent run 2 on the normal backlog again, and every run after it).
    expect(kept[0]?.resumeAt).toEqual({ noticeClass: 'bulk', channel: 'EMAIL', shard: 0 });
    expect(resolved[0]?.run).toBe(2);
    // The failing partition's cursor is kept run after run, after the cursor of the partition the rotation resumes at.
    for (const k of kept) expect(k.cursors[ck]).toEqual(mark);
    expect(Object.keys(kept[1]?.cursors ?? {})).toEqual([nk, ck]);
  });

  it('is counted each run, by its error', async () => {
    const clock = { t: NOW };
    const store = failingIn(
      leaseStore(
        () => 1,
        () => [],
        clock,
      ),
      [ck, bk],
    );
    const r = await leasePass([bulk, normal, crit], {
      store,
      now: () => clock.t,
      at: NOW,
      horizon: NOW + 960_000,
      deadline: NOW + 15_000,
      concurrency: 2,
      saved: {},
      handle: async () => undefined,
    });
    expect(r.failed).toEqual([
      { partition: ck, error: 'ThrottlingException: Rate exceeded' },
      { partition: bk, error: 'ThrottlingException: Rate exceeded' },
    ]);
    expect(r).toMatchObject({ pages: 1, unfinished: 0, cursors: {} });
    expect(r.resumeAt).toBeUndefined();
  });
});

describe('a lease left for the next run (its spool look-up cut short)', () => {
  it('keeps its partition from the start of the page that held it, and the next run resolves it first', async () => {
    const w: LeaseWork = { state: 'PENDING', channel: 'SMS', shard: 2, noticeClass: 'normal' };
    const key = sweepPartition(w);
    const clock = { t: NOW };
    // Three pages from the saved cursor; the dead claim in the last. Run 1's look-up is cut; run 2's is not.
    const store = leaseStore(
      () => 3,
      (k) => [dead(k, 7)],
      clock,
    );
    const saved = { [key]: { i: 1, sweepKey: key, sweepAt: NOW - 600_000, pk: 'EVENT#s', sk: 'N' } };
    const pass = (run: number, from: LeaseCursors, resumeAt?: LeasePosition) =>
      leasePass([w], {
        store,
        now: () => clock.t,
        at: NOW + run * 60_000,
        horizon: NOW + run * 60_000 + 960_000,
        deadline: NOW + run * 60_000 + 15_000,
        concurrency: 1,
        saved: from,
        resumeAt,
        handle: async () => (run === 1 ? 'left' : undefined),
      });
    clock.t = NOW + 60_000;
    const first = await pass(1, saved);
    expect(first.found).toBe(1);
    // Before the page that held it (the one after i = 1), not past it.
    expect(first.cursors).toEqual({
      [key]: { i: 2, sweepKey: key, sweepAt: NOW - 600_000 + 1, pk: expect.any(String), sk: 'N' },
    });
    // Read to its end: kept for the lease, not a backlog, and not where the rotation resumes.
    expect(first).toMatchObject({ unfinished: 0, deferred: 1 });
    expect(first.resumeAt).toBeUndefined();
    clock.t = NOW + 120_000;
    const second = await pass(2, first.cursors, first.resumeAt);
    expect(second).toMatchObject({ found: 1, pages: 1, unfinished: 0, cursors: {} });
  });
});

describe('a lease left for the next run on a page with a next page', () => {
  it('keeps its partition from that page start, before it, and the next run resolves it from there', async () => {
    const w: LeaseWork = { state: 'PENDING', channel: 'PUSH', shard: 1, noticeClass: 'bulk' };
    const key = sweepPartition(w);
    const clock = { t: NOW };
    // Three pages; the dead claim on the middle one (i = 1). Run 1's look-up is cut; run 2's is not.
    const store = leaseStore(
      () => 3,
      (k) => [dead(k, 5)],
      clock,
      1_000,
      () => 1,
    );
    const resolved: number[] = [];
    const pass = (run: number, saved: LeaseCursors) =>
      leasePass([w], {
        store,
        now: () => clock.t,
        at: NOW + run * 60_000,
        horizon: NOW + run * 60_000 + 960_000,
        deadline: NOW + run * 60_000 + 15_000,
        concurrency: 1,
        saved,
        handle: async () => {
          if (run === 1) return 'left';
          resolved.push(run);
          return undefined;
        },
      });
    clock.t = NOW + 60_000;
    const first = await pass(1, {});
    // The start of page i = 1 (page 0's LastEvaluatedKey), not page 2's: a cursor past the claim would hide it.
    expect(first.cursors).toEqual({ [key]: expect.objectContaining({ i: 1, sweepAt: NOW - 600_000 }) });
    clock.t = NOW + 120_000;
    const second = await pass(2, first.cursors);
    expect(resolved).toEqual([2]);
    expect(second).toMatchObject({ found: 1, cursors: {} });
  });
});

describe('a lease left for the next run run after run (its SENT write keeps failing)', () => {
  it('does not stop its partition: a dead claim on a later page is resolved in the first run', async () => {
    const w: LeaseWork = { state: 'PENDING', channel: 'EMAIL', shard: 3, noticeClass: 'normal' };
    const key = sweepPartition(w);
    const x = dead(key, 1);
    const y = dead(key, 2);
    const page1 = { i: 1, sweepKey: key, sweepAt: x.sweepAt, pk: x.pk, sk: 'N' };
    const store = {
      findExpiredLeases: async (_p: SweepPartition, _now: number, _until: number, start?: { i: number }) =>
        start === undefined ? { entries: [x], next: page1 } : { entries: [y], next: undefined },
    } as unknown as SweepStore;
    const seen: string[][] = [];
    let saved: LeaseCursors = {};
    let resumeAt: LeasePosition | undefined;
    for (let run = 0; run < 3; run++) {
      const handled: string[] = [];
      const r = await leasePass([w], {
        store,
        now: () => NOW,
        at: NOW,
        horizon: NOW + 960_000,
        deadline: NOW + 15_000,
        concurrency: 1,
        saved,
        resumeAt,
        handle: async (e) => {
          handled.push(e.notificationId);
          return e === x ? 'left' : undefined;
        },
      });
      seen.push(handled);
      saved = r.cursors;
      resumeAt = r.resumeAt;
    }
    // Every run reads x's page and walks on to y's: x waits, y is not held behind it.
    for (const run of seen) expect(run).toEqual([x.notificationId, y.notificationId]);
    // Kept from the partition's start, before x (the round's stop needs no cursor).
    expect(saved).toEqual({});
  });
});

import { describe, expect, it } from 'vitest';
import type { NoticeClass } from '../../functions/domain/catalogue.ts';
import { CHANNELS, type Channel } from '../../functions/domain/channels.ts';
import { SPOOL_WRITE_BY_MS, sliceStartOf } from '../../functions/domain/evidence-spool.ts';
import { type SweepPartition, type SweepState, sweepPartition } from '../../functions/domain/keys.ts';
import { SWEEP_SHARDS } from '../../functions/domain/sweep-index.ts';
import type { SweepEntry, SweepStore, SweepWindow, Transition } from '../../functions/stores/notification-store.ts';
import { holderMinutes, spooledSends } from '../../functions/sweeper/spooled-send.ts';
import { type SweepDeps, sweep } from '../../functions/sweeper/sweep.ts';
import { sweepDeps } from '../support/sweep-deps.ts';

const NOW = 1_800_000_000_000;
let seq = 0;
const entry = (over: Partial<SweepEntry> = {}): SweepEntry => {
  const id = `e${seq++}`;
  return {
    pk: `EVENT#${id}`,
    sk: `NOTIFICATION#${over.channel ?? 'EMAIL'}`,
    notificationId: `${id}#${over.channel ?? 'EMAIL'}`,
    channel: 'EMAIL',
    status: 'PENDING',
    attempt: 0,
    createdAt: new Date(NOW - 3_600_000).toISOString(),
    sweepAt: NOW - 60_000,
    ...over,
  };
};

type Place = { state: SweepState; channel: Channel; shard: number; noticeClass?: NoticeClass };
const keyOf = (p: Place) => sweepPartition({ noticeClass: 'normal', ...p });
/**
 * A fake store through the port: partitions of entries sorted by sweepAt, paged by offset (the next key carries the
 * last sweepAt read, as LastEvaluatedKey does), filtered as the Queries filter, answering every write with `answer`.
 */
function fakeStore(due: [Place, SweepEntry[]][], answer: Transition = 'applied') {
  const parts = new Map(due.map(([p, es]) => [keyOf(p), es]));
  const calls = {
    pages: [] as string[],
    redrive: [] as SweepEntry[],
    resolve: [] as [SweepEntry, string][],
    expire: [] as SweepEntry[],
    leasePages: [] as string[],
  };
  const live = (e: SweepEntry, now: number) => e.status === 'SENDING' && (e.leaseUntil ?? -1) >= now;
  const page = (key: string, until: number, limit: number, start: { i: number } | undefined) => {
    const all = (parts.get(key) ?? []).filter((e) => e.sweepAt <= until).sort((a, b) => a.sweepAt - b.sweepAt);
    const from = start?.i ?? 0;
    const read = all.slice(from, from + limit);
    const last = read.at(-1);
    const next =
      from + limit < all.length && last !== undefined ? { i: from + limit, sweepAt: last.sweepAt } : undefined;
    return { read, next };
  };
  const store = {
    findDue: async (partition: SweepPartition, w: SweepWindow, limit: number, start?: { i: number }) => {
      const key = sweepPartition(partition);
      calls.pages.push(key);
      const { read, next } = page(key, w.until, limit, start);
      return { entries: read.filter((e) => !live(e, w.now)), next };
    },
    // Pages of 1,000 items read (1 MB at the index's ~250 bytes an entry would be about 4,000).
    findExpiredLeases: async (partition: SweepPartition, now: number, until: number, start?: { i: number }) => {
      const key = sweepPartition(partition);
      calls.leasePages.push(key);
      const { read, next } = page(key, until, 1_000, start);
      return { entries: read.filter((e) => e.status === 'SENDING' && (e.leaseUntil ?? Infinity) < now), next };
    },
    redrive: async (e: SweepEntry) => {
      calls.redrive.push(e);
      return answer;
    },
    resolveExpired: async (e: SweepEntry, to: string) => {
      calls.resolve.push([e, to]);
      return answer;
    },
    expire: async (e: SweepEntry) => {
      calls.expire.push(e);
      return answer;
    },
  } as unknown as SweepStore;
  return { store, calls };
}

const deps = (store: SweepStore, over: Partial<SweepDeps> = {}): SweepDeps =>
  sweepDeps(store, NOW, { policies: { EMAIL: 'AT_MOST_ONCE', PUSH: 'AT_MOST_ONCE', SMS: 'AT_LEAST_ONCE' }, ...over });

describe('sweeper', () => {
  it('visits every partition of the sparse index once — SENDING, then PENDING critical, normal, bulk', async () => {
    const { store, calls } = fakeStore([]);
    await sweep(deps(store));
    const group = CHANNELS.length * SWEEP_SHARDS;
    expect(calls.pages).toHaveLength(4 * group);
    expect(new Set(calls.pages).size).toBe(calls.pages.length);
    expect(calls.pages[0]).toBe('SENDING#EMAIL#0');
    expect(calls.pages.indexOf('PENDING#EMAIL#critical#0')).toBe(group);
    expect(calls.pages.indexOf('PENDING#EMAIL#0')).toBe(2 * group);
    expect(calls.pages.indexOf('PENDING#EMAIL#bulk#0')).toBe(3 * group);
    expect(calls.pages.some((p) => /^SENDING#[A-Z]+#[a-z]/.test(p))).toBe(false);
  });

  it('resolves an expired lease by the channel policy and the attempt budget (deferrals do not count)', async () => {
    const email = entry({ status: 'SENDING', attempt: 1 });
    const sms = entry({ channel: 'SMS', status: 'SENDING', attempt: 9, deferrals: 7 });
    const smsSpent = entry({ channel: 'SMS', status: 'SENDING', attempt: 5 });
    const { store, calls } = fakeStore([
      [{ state: 'SENDING', channel: 'EMAIL', shard: 2 }, [email]],
      [{ state: 'SENDING', channel: 'SMS', shard: 0 }, [sms, smsSpent]],
    ]);
    const r = await sweep(deps(store));
    expect(calls.resolve.map(([e, to]) => `${e.channel}/${e.attempt}→${to}`)).toEqual([
      'EMAIL/1→UNKNOWN',
      'SMS/9→PENDING',
      'SMS/5→UNKNOWN',
    ]);
    expect(r.resolvedUnknown).toHaveLength(2);
    expect(r.resolvedRetry).toHaveLength(1);
  });

  it("an expired lease whose holder spooled its send's record is SENT from it; one without a record, or whose look-up fails, is decided by policy", async () => {
    const spooled = entry({ channel: 'SMS', status: 'SENDING', attempt: 1 });
    const none = entry({ channel: 'SMS', status: 'SENDING', attempt: 1 });
    const unreadable = entry({ channel: 'EMAIL', status: 'SENDING', attempt: 1 });
    const { store, calls } = fakeStore([
      [{ state: 'SENDING', channel: 'SMS', shard: 0 }, [spooled, none]],
      [{ state: 'SENDING', channel: 'EMAIL', shard: 0 }, [unreadable]],
    ]);
    const r = await sweep(
      deps(store, {
        spooled: {
          resolve: async (e) => {
            if (e === unreadable) throw Object.assign(new Error('spool unreadable'), { name: 'InternalServerError' });
            return e === spooled ? 'accepted' : undefined;
          },
        },
      }),
    );
    expect(r.resolvedSent).toEqual([spooled]);
    expect(calls.resolve.map(([e, to]) => [e.notificationId, to])).toEqual([
      [unreadable.notificationId, 'UNKNOWN'],
      [none.notificationId, 'PENDING'],
    ]);
  });

  it('an expired lease whose spooled record was found but whose SENT write failed is left for the next run, never decided by policy', async () => {
    const proven = entry({ channel: 'SMS', status: 'SENDING', attempt: 1 });
    const { store, calls } = fakeStore([[{ state: 'SENDING', channel: 'SMS', shard: 0 }, [proven]]]);
    const r = await sweep(deps(store, { spooled: { resolve: async () => 'later' } }));
    expect(calls.resolve).toEqual([]);
    expect(r).toMatchObject({ resolvedSent: [], resolvedRetry: [], resolvedUnknown: [], lostRaces: 0 });
  });

  it('a lease the due round left for the next run keeps its partition from before it, not past it, and is not looked up again that run', async () => {
    const cut = entry({ status: 'SENDING', attempt: 1, leaseUntil: NOW - 1 });
    const place = { state: 'PENDING', channel: 'EMAIL', shard: 3 } as const;
    const key = keyOf(place);
    // Pages of 2: the cut lease opens the round's second page, which has a next page.
    const { store, calls } = fakeStore([[place, [entry(), entry(), cut, entry(), entry(), entry()]]]);
    const past = { i: 5, sweepAt: NOW - 60_000, sweepKey: key, pk: 'EVENT#x', sk: 'N' };
    const looked: SweepEntry[] = [];
    const spooled = (left: boolean) => ({
      resolve: async (e: SweepEntry) => {
        looked.push(e);
        return e === cut && left ? ('later' as const) : e === cut ? ('accepted' as const) : undefined;
      },
    });
    const first = await sweep(
      deps(store, { pageSize: 2, limit: 4, spooled: spooled(true), leaseCursors: { [key]: past } }),
    );
    expect(looked).toEqual([cut]);
    // Kept from the start of the page that held it (the round's first page's end), whatever was saved past it; the
    // partition's walk ended, so it is no backlog and not where the rotation resumes.
    expect(first.leasePass.cursors).toEqual({ [key]: { i: 2, sweepAt: NOW - 60_000 } });
    expect(first.leasePass).toMatchObject({ unfinished: 0, deferred: 1 });
    expect(first.leasePass.resumeAt).toBeUndefined();
    // Kept first with the lease's place, which the round handed the pass (keepLeft): first until a walk passes it.
    expect(first.leasePass).toMatchObject({ walkFirst: [key], leaseAt: { [key]: cut.sweepAt } });
    // The next run's round reads less of it (its budget spent elsewhere): its lease pass reads from before the lease.
    looked.length = 0;
    const second = await sweep(
      deps(store, { pageSize: 2, limit: 2, spooled: spooled(false), leaseCursors: first.leasePass.cursors }),
    );
    expect(looked).toEqual([cut]);
    expect(second.resolvedSent).toEqual([cut]);
    expect(calls.resolve).toEqual([]);
  });

  it('a lease the due round left in a partition it read to its horizon is kept for the next run, whose lease pass walks that partition first', async () => {
    const cut = entry({ status: 'SENDING', attempt: 1, leaseUntil: NOW - 1 });
    const place = { state: 'PENDING', channel: 'EMAIL', shard: 3 } as const;
    const key = keyOf(place);
    const { store, calls } = fakeStore([[place, [entry(), cut]]]);
    const spooled = (left: boolean) => ({
      resolve: async (e: SweepEntry) => (e !== cut ? undefined : left ? ('later' as const) : ('accepted' as const)),
    });
    const first = await sweep(deps(store, { spooled: spooled(true) }));
    // Not walked (the round read it all), but kept for the lease: no backlog, no cursor (the lease was on page one).
    expect(calls.leasePages).not.toContain(key);
    expect(first.leasePass).toMatchObject({ deferred: 1, unfinished: 0, walkFirst: [key], cursors: {} });
    expect(first.leasePass.leaseAt).toEqual({ [key]: cut.sweepAt });
    // The next run's round reads nothing (its budget spent): its pass walks that partition before any other.
    calls.leasePages.length = 0;
    const second = await sweep(
      deps(store, { limit: 0, spooled: spooled(false), leaseWalkFirst: first.leasePass.walkFirst }),
    );
    expect(calls.leasePages[0]).toBe(key);
    expect(second.resolvedSent).toEqual([cut]);
    expect(second.leasePass.walkFirst).toEqual([]);
  });

  it("a look-up the run's cap cut in the due round is made and counted once that run, not again by the lease pass", async () => {
    const cut = entry({ status: 'SENDING', attempt: 1, leaseUntil: NOW - 1_000 });
    const place = { state: 'PENDING', channel: 'EMAIL', shard: 3 } as const;
    // The round's page holding the lease has a next page: the pass walks the partition's rest.
    const { store, calls } = fakeStore([[place, [cut, entry(), entry(), entry()]]]);
    let gets = 0;
    const run = spooledSends({
      notifications: {
        get: async () => {
          gets++;
          return { status: 'SENDING', attempt: 1, updatedAt: new Date(NOW - 130_000).toISOString() } as never;
        },
        acceptSpooled: async () => 'accepted',
      },
      spool: { async *minuteOf() {}, recordAt: async () => undefined },
      outlets: { index: { index: {} as never, retentionDays: 1 } } as never,
      now: () => NOW,
      deadline: NOW + 50_000,
      maxRecords: 0,
    });
    const r = await sweep(deps(store, { pageSize: 2, limit: 2, spooled: run }));
    expect(gets).toBe(1);
    expect(run.lookups).toMatchObject({ deferred: 1, skipped: 0 });
    expect(calls.resolve).toEqual([]);
    // The pass read the partition's rest from the round's stop, past the lease, in one page.
    expect(calls.leasePages.filter((k) => k === keyOf(place))).toHaveLength(1);
    expect(r.leasePass).toMatchObject({ found: 0, unfinished: 0, deferred: 1 });
  });

  it("the spool look-up reads every minute a holder's invocation may have spooled to: its last write's and 2.5 minutes back", () => {
    const write = Date.parse('2026-12-06T10:03:20Z');
    // An invocation spools only if it ends by 2.5 minutes after its minute's start, and the write was inside it.
    expect(holderMinutes(write).map((m) => new Date(m).toISOString().slice(11, 16))).toEqual([
      '10:00',
      '10:01',
      '10:02',
      '10:03',
    ]);
    const latest = Date.parse('2026-12-06T10:02:29.999Z');
    const start = sliceStartOf(latest - SPOOL_WRITE_BY_MS + 1);
    expect(holderMinutes(latest)).toContain(start);
  });

  it('a PENDING backlog cannot starve expired leases: every partition gets its turn each round', async () => {
    const backlog = Array.from({ length: 2_000 }, () => entry());
    const lease = entry({ channel: 'SMS', status: 'SENDING', attempt: 1 });
    const late = entry({ channel: 'PUSH' });
    const { store, calls } = fakeStore([
      [{ state: 'PENDING', channel: 'EMAIL', shard: 0 }, backlog],
      [{ state: 'SENDING', channel: 'SMS', shard: 7 }, [lease]],
      [{ state: 'PENDING', channel: 'PUSH', shard: 7 }, [late]],
    ]);
    const r = await sweep(deps(store, { limit: 150 }));
    expect(calls.resolve.map(([e]) => e)).toEqual([lease]);
    expect(r.redriven.map((e) => e.channel)).toContain('PUSH');
    expect(r.examined).toBe(150);
    // EMAIL's normal shard 0, and its bulk partitions, held behind it and never read.
    expect(r.unfinished).toBe(1 + SWEEP_SHARDS);
  });

  it('pages through a partition with LastEvaluatedKey until it is done', async () => {
    const many = Array.from({ length: 250 }, () => entry());
    const { store, calls } = fakeStore([[{ state: 'PENDING', channel: 'EMAIL', shard: 3 }, many]]);
    const r = await sweep(deps(store));
    expect(calls.pages.filter((p) => p === 'PENDING#EMAIL#3')).toHaveLength(3);
    expect(r.redriven).toHaveLength(250);
    expect(r.unfinished).toBe(0);
  });

  it("re-drives at most a channel's rate × the schedule's period per run; other channels are not held back", async () => {
    const emails = Array.from({ length: 500 }, () => entry());
    const pushes = Array.from({ length: 30 }, () => entry({ channel: 'PUSH' }));
    const { store } = fakeStore([
      [{ state: 'PENDING', channel: 'EMAIL', shard: 1 }, emails],
      [{ state: 'PENDING', channel: 'PUSH', shard: 1 }, pushes],
    ]);
    const r = await sweep(deps(store, { sendRates: { EMAIL: 2, PUSH: 100, SMS: 20 } }));
    expect(r.redriven.filter((e) => e.channel === 'EMAIL')).toHaveLength(120);
    expect(r.redriven.filter((e) => e.channel === 'PUSH')).toHaveLength(30);
  });

  it('expires PENDING notifications past the maximum age instead of re-driving them (not capped)', async () => {
    const old = entry({ createdAt: new Date(NOW - 86_400_001).toISOString() });
    const young = entry();
    const { store, calls } = fakeStore([[{ state: 'PENDING', channel: 'EMAIL', shard: 0 }, [old, young]]]);
    const r = await sweep(deps(store, { sendRates: { EMAIL: 1, PUSH: 1, SMS: 1 }, intervalMs: 1_000 }));
    expect(calls.expire).toEqual([old]);
    expect(r.expired).toEqual([old]);
    expect(r.redriven).toEqual([young]);
  });

  it('tells a routine wake-up (a deferral whose retryAt came) from a stuck item (its stream record never came)', async () => {
    const deferred = entry({ retryAt: NOW - 20_000, sweepAt: NOW - 20_000 });
    const stuck = entry({ sweepAt: NOW - 1_000 });
    const nearRetryLost = entry({ retryAt: NOW - 901_000, sweepAt: NOW - 1_000 });
    const { store } = fakeStore([[{ state: 'PENDING', channel: 'EMAIL', shard: 0 }, [deferred, stuck, nearRetryLost]]]);
    const r = await sweep(deps(store));
    expect(r.woken).toEqual([deferred]);
    expect(r.redriven).toEqual([stuck, nearRetryLost]);
  });

  it('counts races lost to an overlapping run or a dispatcher instead of acting twice', async () => {
    const { store } = fakeStore(
      [
        [{ state: 'PENDING', channel: 'EMAIL', shard: 0 }, [entry()]],
        [{ state: 'SENDING', channel: 'EMAIL', shard: 0 }, [entry({ status: 'SENDING', attempt: 1 })]],
      ],
      'lost',
    );
    const r = await sweep(deps(store));
    expect(r).toMatchObject({ redriven: [], resolvedUnknown: [], resolvedRetry: [], lostRaces: 2 });
  });

  describe('a claimed item waits at its PENDING sweepAt (the claim leaves the sweep key as it was)', () => {
    // A claimed item's sweepAt is at most the pending threshold (15 minutes here) ahead of the run.
    const dead = (over: Partial<SweepEntry> = {}) =>
      entry({ status: 'SENDING', attempt: 1, leaseUntil: NOW - 1, sweepAt: NOW + 840_000, ...over });

    it('a dead claim whose sweepAt is 14 minutes ahead is resolved now; a live one and a PENDING one not yet due are left alone', async () => {
      const gone = dead();
      const running = dead({ leaseUntil: NOW + 60_000 });
      const waiting = entry({ sweepAt: NOW + 120_000 });
      const { store, calls } = fakeStore([
        [{ state: 'PENDING', channel: 'EMAIL', shard: 0 }, [gone, running, waiting]],
      ]);
      const r = await sweep(deps(store));
      expect(calls.resolve).toEqual([[gone, 'UNKNOWN']]);
      expect(r.resolvedUnknown).toEqual([gone]);
      expect(calls.redrive).toEqual([]);
      expect(calls.expire).toEqual([]);
      // One Query read the partition's due items and its leases: no lease pass was needed.
      expect(calls.pages.filter((p) => p === 'PENDING#EMAIL#0')).toHaveLength(1);
      expect(calls.leasePages).toEqual([]);
    });

    it('live leases spend neither a page nor the cap: with a cap of one, the one stuck item behind them is re-driven', async () => {
      const running = Array.from({ length: 5 }, () => dead({ leaseUntil: NOW + 60_000, sweepAt: NOW - 120_000 }));
      const stuck = entry({ sweepAt: NOW - 1_000 });
      const { store, calls } = fakeStore([[{ state: 'PENDING', channel: 'EMAIL', shard: 0 }, [...running, stuck]]]);
      const r = await sweep(deps(store, { sendRates: { EMAIL: 1, PUSH: 1, SMS: 1 }, intervalMs: 1_000 }));
      expect(calls.redrive).toEqual([stuck]);
      expect(r.redriven).toEqual([stuck]);
      expect(calls.resolve).toEqual([]);
    });

    it('a dead claim behind a capped backlog is resolved in the same run, outside the cap', async () => {
      const backlog = Array.from({ length: 500 }, (_, i) => entry({ sweepAt: NOW - 600_000 + i }));
      const gone = dead({ channel: 'SMS', sk: 'NOTIFICATION#SMS' });
      const { store, calls } = fakeStore([
        [
          { state: 'PENDING', channel: 'SMS', shard: 2 },
          [...backlog.map((e) => ({ ...e, channel: 'SMS' as const })), gone],
        ],
      ]);
      const r = await sweep(deps(store, { sendRates: { EMAIL: 1_000, PUSH: 1_000, SMS: 1 } }));
      expect(r.redriven).toHaveLength(60);
      expect(calls.resolve).toEqual([[gone, 'PENDING']]);
      expect(r.resolvedRetry).toEqual([gone]);
      // The rest of the partition the cap left, in one lease page (SMS's partitions the cap kept the round from, too).
      expect(calls.leasePages.filter((p) => p === 'PENDING#SMS#2')).toHaveLength(1);
      expect(r.leasePass).toMatchObject({ unfinished: 0, cursors: {} });
    });

    it('a dead claim in a bulk partition held behind due critical notices is resolved in the same run', async () => {
      const critical = Array.from({ length: 200 }, () => entry());
      const gone = dead({ sweepAt: NOW - 5_000 });
      const { store, calls } = fakeStore([
        [{ state: 'PENDING', channel: 'EMAIL', shard: 0, noticeClass: 'critical' }, critical],
        [{ state: 'PENDING', channel: 'EMAIL', shard: 6, noticeClass: 'bulk' }, [gone]],
      ]);
      const r = await sweep(deps(store, { sendRates: { EMAIL: 1, PUSH: 1_000, SMS: 1_000 } }));
      expect(r.redriven).toHaveLength(60);
      expect(calls.pages).not.toContain('PENDING#EMAIL#bulk#6');
      expect(calls.resolve).toEqual([[gone, 'UNKNOWN']]);
    });

    it('the lease pass reads critical partitions first, stops at its deadline, and hands back where it stopped', async () => {
      let t = NOW;
      const backlog = (channel: Channel) =>
        Array.from({ length: 2_500 }, (_, i) => entry({ channel, sweepAt: NOW - 600_000 + i }));
      const { store, calls } = fakeStore([
        [{ state: 'PENDING', channel: 'EMAIL', shard: 1, noticeClass: 'bulk' }, backlog('EMAIL')],
        [{ state: 'PENDING', channel: 'PUSH', shard: 1, noticeClass: 'critical' }, backlog('PUSH')],
      ]);
      // A second a lease page. A cap of one a run: the round leaves PUSH's partitions and EMAIL's bulk ones.
      const ticking = {
        ...store,
        findExpiredLeases: (...a: Parameters<SweepStore['findExpiredLeases']>) => {
          t += 1_000;
          return store.findExpiredLeases(...a);
        },
      } as SweepStore;
      const r = await sweep(
        deps(ticking, {
          now: () => t,
          deadline: NOW + 18_000,
          concurrency: 1,
          sendRates: { EMAIL: 1, PUSH: 1, SMS: 1 },
          intervalMs: 1_000,
        }),
      );
      // PUSH's critical #1 to its end (3 pages) and the critical ones the cap kept the round from, PUSH's 8 normal
      // ones, then the first page of EMAIL's bulk #1 when the deadline comes.
      expect(calls.leasePages.slice(0, 3)).toEqual(Array(3).fill('PENDING#PUSH#critical#1'));
      expect(calls.leasePages.slice(3, 9)).toEqual(
        Array.from({ length: 6 }, (_, i) => `PENDING#PUSH#critical#${i + 2}`),
      );
      expect(calls.leasePages.slice(9, 17)).toEqual(Array.from({ length: 8 }, (_, i) => `PENDING#PUSH#${i}`));
      expect(calls.leasePages.slice(17)).toEqual(['PENDING#EMAIL#bulk#1']);
      // EMAIL's bulk #1 to #7 and PUSH's 8 bulk partitions unfinished; only the one it was reading has a cursor.
      expect(r.leasePass.unfinished).toBe(15);
      expect(Object.keys(r.leasePass.cursors)).toEqual(['PENDING#EMAIL#bulk#1']);
      // The next run's rotation starts there, not at the critical partitions it read to their end.
      expect(r.leasePass.resumeAt).toEqual({ noticeClass: 'bulk', channel: 'EMAIL', shard: 1 });
    });

    it('resumes a partition where an earlier run stopped it, not at its start', async () => {
      const backlog = Array.from({ length: 2_500 }, (_, i) => entry({ sweepAt: NOW - 600_000 + i }));
      const { store, calls } = fakeStore([
        [{ state: 'PENDING', channel: 'EMAIL', shard: 4, noticeClass: 'bulk' }, backlog],
      ]);
      const saved = { i: 2_000, sweepAt: NOW - 598_001, sweepKey: 'PENDING#EMAIL#bulk#4', pk: 'EVENT#x', sk: 'N' };
      const resumed = await sweep(
        deps(store, {
          sendRates: { EMAIL: 1, PUSH: 1, SMS: 1 },
          intervalMs: 1_000,
          leaseCursors: { 'PENDING#EMAIL#bulk#4': saved },
        }),
      );
      // The due round's page of one, then one lease page from the saved cursor to the end.
      const read = () => calls.leasePages.filter((p) => p === 'PENDING#EMAIL#bulk#4').length;
      expect(read()).toBe(1);
      expect(resumed.leasePass).toMatchObject({ unfinished: 0, cursors: {} });
      // A cursor that names another partition (a hand-edited item) is ignored: read from the round's position.
      calls.leasePages.length = 0;
      const other = await sweep(
        deps(store, {
          sendRates: { EMAIL: 1, PUSH: 1, SMS: 1 },
          intervalMs: 1_000,
          leaseCursors: { 'PENDING#EMAIL#bulk#4': { ...saved, sweepKey: 'PENDING#SMS#0' } },
        }),
      );
      expect(read()).toBe(3);
      expect(other.leasePass.unfinished).toBe(0);
    });
  });

  it('starts no page after its deadline', async () => {
    let t = NOW;
    const { store, calls } = fakeStore([]);
    await sweep(deps(store, { now: () => (t += 1_000), deadline: NOW + 5_500 }));
    expect(calls.pages.length).toBeLessThan(10);
  });

  describe('critical first', () => {
    // 14 emails a second × a 60 s period: 840 re-drives per run on EMAIL.
    const slowEmail = { sendRates: { EMAIL: 14, PUSH: 1_000, SMS: 1_000 } };

    it('a critical item due now is woken in the first run, ahead of a backlog of normal ones due long before it', async () => {
      // 10,000 deferred normal emails, every one due before the critical notice, spread over the shards.
      const backlog = Array.from({ length: 10_000 }, (_, i) =>
        entry({ retryAt: NOW - 600_000 + i, sweepAt: NOW - 600_000 + i }),
      );
      const critical = entry({ retryAt: NOW - 1_000, sweepAt: NOW - 1_000 });
      const { store, calls } = fakeStore([
        ...Array.from({ length: SWEEP_SHARDS }, (_, shard): [Place, SweepEntry[]] => [
          { state: 'PENDING', channel: 'EMAIL', shard },
          backlog.filter((_, i) => i % SWEEP_SHARDS === shard),
        ]),
        [{ state: 'PENDING', channel: 'EMAIL', shard: 5, noticeClass: 'critical' }, [critical]],
      ]);
      const r = await sweep(deps(store, slowEmail));
      expect(calls.redrive[0]).toBe(critical);
      expect(r.woken).toContain(critical);
      // The cap holds: the critical one and 839 of the backlog.
      expect(r.woken).toHaveLength(840);
    });

    it("spends a channel's cap on critical, then normal, then bulk — strictly, across pages and rounds", async () => {
      const due = (n: number) => Array.from({ length: n }, () => entry({ retryAt: NOW - 5_000, sweepAt: NOW - 5_000 }));
      const critical = due(250);
      const normal = due(300);
      const bulk = due(300);
      const { store } = fakeStore([
        [{ state: 'PENDING', channel: 'EMAIL', shard: 0, noticeClass: 'bulk' }, bulk],
        [{ state: 'PENDING', channel: 'EMAIL', shard: 1 }, normal],
        [{ state: 'PENDING', channel: 'EMAIL', shard: 2, noticeClass: 'critical' }, critical],
      ]);
      // Cap 500 and pages of 100: critical takes three pages over three rounds, normal the rest; bulk none.
      const r = await sweep(deps(store, { sendRates: { EMAIL: 5, PUSH: 1_000, SMS: 1_000 }, intervalMs: 100_000 }));
      expect(r.woken).toHaveLength(500);
      expect(r.woken.filter((e) => critical.includes(e))).toHaveLength(250);
      expect(r.woken.filter((e) => normal.includes(e))).toHaveLength(250);
      expect(r.woken.filter((e) => bulk.includes(e))).toHaveLength(0);
      // The normal partition left with due items, and the bulk partitions held behind it and never read.
      expect(r.unfinished).toBe(1 + SWEEP_SHARDS);
    });

    it("one channel's critical backlog holds back only that channel's others", async () => {
      const critical = Array.from({ length: 200 }, () => entry());
      const push = entry({ channel: 'PUSH' });
      const { store } = fakeStore([
        [{ state: 'PENDING', channel: 'EMAIL', shard: 0, noticeClass: 'critical' }, critical],
        [{ state: 'PENDING', channel: 'PUSH', shard: 3, noticeClass: 'bulk' }, [push]],
      ]);
      const r = await sweep(deps(store, { sendRates: { EMAIL: 1, PUSH: 1_000, SMS: 1_000 } }));
      expect(r.redriven.filter((e) => e.channel === 'EMAIL')).toHaveLength(60);
      expect(r.redriven).toContain(push);
    });

    it('expired leases still come first in every round, and are never held by a class', async () => {
      const critical = Array.from({ length: 500 }, () => entry());
      const lease = entry({ status: 'SENDING', attempt: 1 });
      const { store, calls } = fakeStore([
        [{ state: 'PENDING', channel: 'EMAIL', shard: 0, noticeClass: 'critical' }, critical],
        [{ state: 'SENDING', channel: 'EMAIL', shard: 4 }, [lease]],
      ]);
      await sweep(deps(store, slowEmail));
      expect(calls.resolve.map(([e]) => e)).toEqual([lease]);
    });
  });
});

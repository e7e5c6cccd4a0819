import { describe, expect, it } from 'vitest';
import type { NoticeClass } from '../../functions/domain/catalogue.ts';
import { CHANNELS, type Channel } from '../../functions/domain/channels.ts';
import { SPOOL_WRITE_BY_MS, sliceStartOf } from '../../functions/domain/evidence-spool.ts';
import { type SweepPartition, type SweepState, sweepPartition } from '../../functions/domain/keys.ts';
import { SWEEP_SHARDS } from '../../functions/domain/sweep-index.ts';
import type { NotificationStore, SweepEntry, Transition } from '../../functions/stores/notification-store.ts';
import { holderMinutes } from '../../functions/sweeper/spooled-send.ts';
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
/** A fake store through the port: partitions of due entries, paged by offset, answering every write with `answer`. */
function fakeStore(due: [Place, SweepEntry[]][], answer: Transition = 'applied') {
  const parts = new Map(due.map(([p, es]) => [keyOf(p), es]));
  const calls = {
    pages: [] as string[],
    redrive: [] as SweepEntry[],
    resolve: [] as [SweepEntry, string][],
    expire: [] as SweepEntry[],
  };
  const store = {
    findDue: async (partition: SweepPartition, before: number, limit: number, start?: { i: number }) => {
      const key = sweepPartition(partition);
      calls.pages.push(key);
      const all = (parts.get(key) ?? []).filter((e) => e.sweepAt <= before);
      const from = start?.i ?? 0;
      const entries = all.slice(from, from + limit);
      return { entries, next: from + limit < all.length ? { i: from + limit } : undefined };
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
  } as unknown as NotificationStore;
  return { store, calls };
}

const deps = (store: NotificationStore, over: Partial<SweepDeps> = {}): SweepDeps =>
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

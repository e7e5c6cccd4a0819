import { describe, expect, it } from 'vitest';
import type { NotificationStore, SweepEntry, Transition } from '../../functions/commons/notification-store.ts';
import { CHANNELS, type Channel } from '../../functions/domain/channels.ts';
import type { SweepState } from '../../functions/domain/keys.ts';
import { SWEEP_SHARDS } from '../../functions/domain/sweep-index.ts';
import { type SweepDeps, sweep } from '../../functions/sweeper/sweep.ts';

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

type Place = { state: SweepState; channel: Channel; shard: number };
/** A fake store through the port: partitions of due entries, paged by offset, answering every write with `answer`. */
function fakeStore(due: [Place, SweepEntry[]][], answer: Transition = 'applied') {
  const parts = new Map(due.map(([p, es]) => [`${p.state}#${p.channel}#${p.shard}`, es]));
  const calls = {
    pages: [] as string[],
    redrive: [] as SweepEntry[],
    resolve: [] as [SweepEntry, string][],
    expire: [] as SweepEntry[],
  };
  const store = {
    findDue: async (
      state: SweepState,
      channel: Channel,
      shard: number,
      before: number,
      limit: number,
      start?: { i: number },
    ) => {
      const key = `${state}#${channel}#${shard}`;
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

const deps = (store: NotificationStore, over: Partial<SweepDeps> = {}): SweepDeps => ({
  store,
  now: () => NOW,
  policies: { EMAIL: 'AT_MOST_ONCE', PUSH: 'AT_MOST_ONCE', SMS: 'AT_LEAST_ONCE' },
  pendingThresholdMs: 900_000,
  maxSendAttempts: 5,
  maxAgeMs: 86_400_000,
  sendRates: { EMAIL: 1_000, PUSH: 1_000, SMS: 1_000 },
  intervalMs: 60_000,
  limit: 10_000,
  pageSize: 100,
  concurrency: 4,
  deadline: NOW + 50_000,
  ...over,
});

describe('sweeper', () => {
  it('visits every partition of the sparse index — state × channel × shard — SENDING before PENDING', async () => {
    const { store, calls } = fakeStore([]);
    await sweep(deps(store));
    expect(calls.pages).toHaveLength(2 * CHANNELS.length * SWEEP_SHARDS);
    expect(calls.pages[0]).toBe('SENDING#EMAIL#0');
    expect(calls.pages.indexOf('PENDING#EMAIL#0')).toBe(CHANNELS.length * SWEEP_SHARDS);
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
    expect(r.unfinished).toBe(1);
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
});

import { describe, expect, it } from 'vitest';
import type { NotificationStore, SweepEntry, Transition } from '../../functions/commons/notification-store.ts';
import { SWEEP_SHARDS } from '../../functions/domain/notification.ts';
import { type SweepDeps, sweep } from '../../functions/sweeper/sweep.ts';

const NOW = 1_800_000_000_000;
const entry = (over: Partial<SweepEntry>): SweepEntry => ({
  pk: 'EVENT#e',
  sk: 'NOTIFICATION#EMAIL',
  notificationId: 'e#EMAIL',
  channel: 'EMAIL',
  status: 'PENDING',
  attempt: 0,
  sweepAt: NOW - 3_600_000,
  ...over,
});

/** A fake store through the port: records the queries and answers from fixed lists. */
function fakeStore(due: { PENDING: SweepEntry[]; SENDING: SweepEntry[] }, answer: Transition = 'applied') {
  const calls = {
    findDue: [] as [string, number, number, number][],
    redrive: [] as SweepEntry[],
    resolve: [] as [SweepEntry, string][],
  };
  const store = {
    findDue: async (state: 'PENDING' | 'SENDING', shard: number, before: number, limit: number) => {
      calls.findDue.push([state, shard, before, limit]);
      return shard === 0 ? due[state].slice(0, limit) : [];
    },
    redrive: async (e: SweepEntry) => {
      calls.redrive.push(e);
      return answer;
    },
    resolveExpired: async (e: SweepEntry, to: string) => {
      calls.resolve.push([e, to]);
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
  limit: 100,
  ...over,
});

describe('sweeper', () => {
  it('queries every shard of the sparse index: PENDING older than the threshold, SENDING with an expired lease', async () => {
    const { store, calls } = fakeStore({ PENDING: [], SENDING: [] });
    await sweep(deps(store));
    expect(calls.findDue).toHaveLength(2 * SWEEP_SHARDS);
    expect(calls.findDue[0]).toEqual(['PENDING', 0, NOW - 900_000, 100]);
    expect(calls.findDue[1]).toEqual(['SENDING', 0, NOW, 100]);
  });

  it('re-drives stuck PENDING items', async () => {
    const { store, calls } = fakeStore({ PENDING: [entry({})], SENDING: [] });
    const r = await sweep(deps(store));
    expect(r.redriven).toHaveLength(1);
    expect(calls.redrive).toHaveLength(1);
  });

  it('resolves an expired lease by the channel policy: UNKNOWN at most once, PENDING at least once', async () => {
    const email = entry({ status: 'SENDING', attempt: 1 });
    const sms = entry({
      sk: 'NOTIFICATION#SMS',
      notificationId: 'e#SMS',
      channel: 'SMS',
      status: 'SENDING',
      attempt: 1,
    });
    const smsSpent = { ...sms, attempt: 5 };
    const { store, calls } = fakeStore({ PENDING: [], SENDING: [email, sms, smsSpent] });
    const r = await sweep(deps(store));
    expect(calls.resolve.map(([e, to]) => `${e.channel}/${e.attempt}→${to}`)).toEqual([
      'EMAIL/1→UNKNOWN',
      'SMS/1→PENDING',
      'SMS/5→UNKNOWN',
    ]);
    expect(r.resolvedUnknown).toHaveLength(2);
    expect(r.resolvedRetry).toHaveLength(1);
  });

  it('bounds the work of one run', async () => {
    const many = Array.from({ length: 50 }, (_, i) => entry({ notificationId: `e${i}#EMAIL` }));
    const { store, calls } = fakeStore({ PENDING: many, SENDING: many });
    await sweep(deps(store, { limit: 10 }));
    expect(calls.redrive).toHaveLength(10);
    expect(calls.resolve).toHaveLength(0);
  });

  it('counts races lost to an overlapping run or a dispatcher instead of acting twice', async () => {
    const { store } = fakeStore({ PENDING: [entry({})], SENDING: [entry({ status: 'SENDING', attempt: 1 })] }, 'lost');
    const r = await sweep(deps(store));
    expect(r).toMatchObject({ redriven: [], resolvedUnknown: [], resolvedRetry: [], lostRaces: 2 });
  });
});

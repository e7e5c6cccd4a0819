/**
 * The sweeper's dependencies as the tests build them: the store and the clock are the test's, everything else the
 * values the tests share (fast channels, a minute's period, a day's maximum age), each overridable.
 */
import type { SweepStore } from '../../functions/stores/notification-store.ts';
import { type SweepDeps, sweep } from '../../functions/sweeper/sweep.ts';

export const sweepDeps = (store: SweepStore, now: number, over: Partial<SweepDeps> = {}): SweepDeps => ({
  store,
  now: () => now,
  policies: { EMAIL: 'AT_MOST_ONCE', PUSH: 'AT_MOST_ONCE', SMS: 'AT_MOST_ONCE' },
  pendingThresholdMs: 900_000,
  maxSendAttempts: 5,
  maxAgeMs: 86_400_000,
  sendRates: { EMAIL: 1_000, PUSH: 1_000, SMS: 1_000 },
  intervalMs: 60_000,
  limit: 10_000,
  pageSize: 100,
  concurrency: 4,
  deadline: now + 50_000,
  ...over,
});

/** One sweeper run with those dependencies. */
export const sweepWith = (store: SweepStore, now: number, over: Partial<SweepDeps> = {}) =>
  sweep(sweepDeps(store, now, over));

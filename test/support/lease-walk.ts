/**
 * The walk-first tests' world: partitions of numbered pages (each page's start carries its number `i`, so a fake Query
 * answers by it), dead holders' expired leases on those pages, and lease passes a minute apart that carry between runs
 * what the sweeper's cursors item carries (stores/lease-cursors.ts). Q (normal#0, ten pages) and its six neighbours are
 * the usual partitions.
 */
import { sweepPartition } from '../../functions/domain/keys.ts';
import type { LeaseCursors, LeasePosition } from '../../functions/stores/lease-cursors.ts';
import type { SweepEntry } from '../../functions/stores/notification-store.ts';
import {
  type LeasePassInput,
  type LeasePassResult,
  type LeaseWork,
  leasePass,
} from '../../functions/sweeper/lease-pass.ts';

export const NOW = 1_800_000_000_000;
export const Q: LeaseWork = { state: 'PENDING', channel: 'EMAIL', noticeClass: 'normal', shard: 0 };
export const R: LeaseWork[] = [1, 2, 3, 4, 5, 6].map((shard) => ({
  state: 'PENDING',
  channel: 'EMAIL',
  noticeClass: 'normal',
  shard,
}));
export const QK = sweepPartition(Q);
/** The start of page `i` of a partition: its sweepAt orders the pages. */
export const startOf = (key: string, i: number) => ({
  i,
  sweepKey: key,
  sweepAt: NOW - 600_000 + i,
  pk: `EVENT#p${i}`,
  sk: 'N',
});
/** A dead holder's expired lease `id` in partition `key`, at the place of page `i`. */
export const expiredLease = (id: string, key: string, i: number) =>
  ({
    pk: `EVENT#${id}`,
    sk: 'NOTIFICATION#EMAIL',
    channel: 'EMAIL',
    notificationId: `${id}#EMAIL`,
    status: 'SENDING',
    attempt: 1,
    createdAt: new Date(NOW).toISOString(),
    sweepAt: NOW - 600_000 + i,
    sweepKey: key,
    leaseUntil: NOW - 1,
  }) as SweepEntry;
/** Q's expired lease Y, at the place of page `i`. */
export const leaseOnPage = (i: number) => expiredLease('y', QK, i);

/** What a run's lease pass hands the next: what the sweeper's cursors item keeps. */
export interface Carried {
  readonly saved: LeaseCursors;
  readonly resumeAt?: LeasePosition | undefined;
  readonly walkFirst: readonly string[];
  readonly leaseAt?: Readonly<Record<string, number>> | undefined;
}

/** What differs from one run to the next: the partitions, the store, when the pass must stop, the handling. */
export type RunInput = Pick<LeasePassInput, 'store' | 'deadline' | 'handle'> & { readonly work: readonly LeaseWork[] };

/**
 * `n` lease passes a minute apart, one walk at a time, each given what the last kept as the sweeper's handler carries
 * it (without `leaseAt` when `carryLeaseAt` is false: an item an earlier version saved). `clock.t` is set to each run's
 * start; the fake store moves it on. `run` is told the run's number (from 1) and start. Each run's result, in order.
 */
export async function passRuns(
  n: number,
  clock: { t: number },
  run: (n: number, start: number) => RunInput,
  from: Partial<Carried> = {},
  carryLeaseAt = true,
): Promise<LeasePassResult[]> {
  let carried: Carried = { saved: {}, walkFirst: [], ...from };
  const results: LeasePassResult[] = [];
  for (let i = 1; i <= n; i++) {
    const start = NOW + i * 60_000;
    clock.t = start;
    const { work, ...input } = run(i, start);
    const r = await leasePass(work, {
      ...input,
      now: () => clock.t,
      at: start,
      horizon: start + 960_000,
      concurrency: 1,
      ...carried,
      leaseAt: carryLeaseAt ? carried.leaseAt : undefined,
    });
    carried = { saved: r.cursors, resumeAt: r.resumeAt, walkFirst: r.walkFirst, leaseAt: r.leaseAt };
    results.push(r);
  }
  return results;
}

/**
 * The sweeper's lease pass: a dead holder's claim, found wherever it sits (docs/dispatch.md "The sweeper").
 *
 * A claim leaves the item at its PENDING sweepAt in its PENDING partition (one index write in place instead of a new
 * key). Every write that puts an item (back) to PENDING sets sweepAt at most the pending threshold after the later of
 * its time and its retryAt, and the claim needs retryAt passed: so a claimed item's sweepAt is at most
 * `now + pendingThreshold` (leaseHorizon, functions/domain/sweep-index.ts). The sweeper's due round already reads each
 * partition up to that horizon; this pass finishes, for expired leases only, the partitions the round left — held
 * behind a higher class, capped by their channel's rate, or cut by the run's budget or deadline. It is subject to none
 * of those: a dead claim is resolved in the first run after its lease, whatever waits in its partition.
 *
 * Critical partitions first, then normal, then bulk. Under a backlog larger than a run reads, a partition's
 * LastEvaluatedKey is kept (stores/lease-cursors.ts) and the next run resumes there.
 */
import type { NativeAttributeValue } from '@aws-sdk/lib-dynamodb';
import pLimit from 'p-limit';
import { NOTICE_CLASSES } from '../domain/catalogue.ts';
import { type SweepPartition, sweepPartition } from '../domain/keys.ts';
import type { NotificationStore, SweepEntry } from '../stores/notification-store.ts';

type StartKey = Record<string, NativeAttributeValue>;

export interface LeasePassInput {
  readonly store: NotificationStore;
  readonly now: () => number;
  /** The run's clock reading: a lease before it has expired. */
  readonly at: number;
  /** sweepAt up to which claimed items can sit (leaseHorizon, functions/domain/sweep-index.ts). */
  readonly horizon: number;
  readonly deadline: number;
  /** Partitions read at once. */
  readonly concurrency: number;
  /** Where an earlier run stopped, by partition key. */
  readonly saved: Readonly<Record<string, StartKey>>;
  /** Resolves one expired lease (the sweeper's own handling). */
  readonly handle: (e: SweepEntry) => Promise<void>;
}

/** A partition the due round did not read to the horizon, and where it stopped (undefined: not read at all). */
export interface LeaseWork extends SweepPartition {
  readonly next?: StartKey | undefined;
}

export interface LeasePassResult {
  pages: number;
  found: number;
  /** Partitions left unfinished at the deadline, with where the next run resumes. */
  cursors: Record<string, StartKey>;
  unfinished: number;
}

/** A saved cursor names its own partition and a numeric sweepAt: anything else (a hand-edited item) is ignored. */
function savedFor(key: string, saved: Readonly<Record<string, StartKey>>): StartKey | undefined {
  const s = saved[key];
  if (s === undefined || s.sweepKey !== key || typeof s.sweepAt !== 'number') return undefined;
  if (typeof s.pk !== 'string' || typeof s.sk !== 'string') return undefined;
  return s;
}

/** The later of two positions in a partition (by sweepAt); undefined is the partition's start. */
function later(a: StartKey | undefined, b: StartKey | undefined): StartKey | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return Number(b.sweepAt) > Number(a.sweepAt) ? b : a;
}

export async function leasePass(work: readonly LeaseWork[], input: LeasePassInput): Promise<LeasePassResult> {
  const result: LeasePassResult = { pages: 0, found: 0, cursors: {}, unfinished: 0 };
  const partitions = pLimit(Math.max(1, input.concurrency));
  const walk = async (w: LeaseWork): Promise<void> => {
    const key = sweepPartition(w);
    let start = later(w.next, savedFor(key, input.saved));
    for (;;) {
      if (input.now() >= input.deadline) {
        result.unfinished++;
        if (start !== undefined) result.cursors[key] = start;
        return;
      }
      const page = await input.store.findExpiredLeases(w, input.at, input.horizon, start);
      result.pages++;
      result.found += page.entries.length;
      await Promise.all(page.entries.map(input.handle));
      if (page.next === undefined) return;
      start = page.next;
    }
  };
  for (const k of NOTICE_CLASSES) {
    await Promise.all(work.filter((w) => w.noticeClass === k).map((w) => partitions(() => walk(w))));
  }
  return result;
}

/**
 * A failover's successor pass (docs/regions.md "Promotion and demotion, step by step"): after the fence moved, a
 * successor for every unfinished item of an older epoch in the promoted region's replica, page by page — each page's
 * reads in parallel, its successors written in parallel —, the place it reached noted on the fence after each page.
 * A run stops starting pages when its time is up and answers that it is not done; the next run goes on from the note.
 * A page an interrupted run did not note is done again: a successor is created once (a conditional put), so the
 * counts say `alreadyThere` for it and nothing is written twice.
 */
import type { Channel } from '../domain/channels.ts';
import { buildSuccessor, failoverSuccessor } from '../domain/failover.ts';
import { epochOf, type FenceControl, type SuccessorPass } from '../domain/fence.ts';
import type { DynamoFenceStore } from '../stores/fence-store.ts';
import type { DynamoSuccessorStore, OwnedNotification, UnfinishedCursor } from '../stores/successor-store.ts';
import { IdTally } from './id-tally.ts';

/** The promoted region as the pass reaches it: its fence (to note progress) and its replica. */
export interface PassSide {
  readonly region: string;
  readonly fence: Pick<DynamoFenceStore, 'note'>;
  readonly store: Pick<DynamoSuccessorStore, 'unfinishedPage' | 'create' | 'family'>;
}

type Clock = { now(): number };

/** Entries a page lists and reads at once: one Query, then this many GetItems and puts in parallel. */
export const PASS_PAGE_SIZE = 100;

export interface PassCounts {
  held: number;
  unknown: number;
  secondCopies: number;
  /** Successors a previous run (or page) of this promotion already wrote. */
  alreadyThere: number;
  /** Items of the old region at or above the promoted epoch: not taken over, to be looked at (see the runbook). */
  aheadOfEpoch: number;
  /** Items a later epoch's successor already carries on (released, sent or settled there): not taken over again. */
  carriedOn: number;
}

/** The notification ids behind each count of a run, the first IDS_LISTED of each (an audit record holds them). */
export type PassIds = Record<keyof PassCounts, string[]>;

/** A run's counts and the ids behind them, in the order the report lists them. */
const passTally = () =>
  new IdTally<keyof PassCounts>(['held', 'unknown', 'secondCopies', 'alreadyThere', 'aheadOfEpoch', 'carriedOn']);
type PassTally = ReturnType<typeof passTally>;

export interface PassOptions {
  readonly from: string;
  readonly secondCopy: readonly Channel[];
  readonly placement: { readonly sweepShards: number; readonly pendingThresholdMs: number };
  /** No page is started after this instant (epoch ms); undefined: the pass runs to its end. */
  readonly until?: number;
}

/**
 * Goes on with the pass from where `control` says it stands; returns this run's counts, the ids behind them (the first
 * IDS_LISTED of each, `idsTruncated` past that) and where it stands now.
 */
export async function successorPass(
  to: PassSide,
  control: FenceControl,
  options: PassOptions,
  clock: Clock,
): Promise<{ counts: PassCounts; ids: PassIds; idsTruncated?: true; pass: SuccessorPass }> {
  const tally = passTally();
  let pass: SuccessorPass = control.successorPass ?? { partition: 0 };
  while (pass.doneAt === undefined) {
    if (options.until !== undefined && clock.now() >= options.until) break;
    const cursor: UnfinishedCursor =
      pass.after === undefined ? { partition: pass.partition } : { partition: pass.partition, after: pass.after };
    const page = await to.store.unfinishedPage(cursor, PASS_PAGE_SIZE);
    // Every write of the page ends before the run goes on or fails: none outlives the run that started it.
    const written = await Promise.allSettled(
      page.items.map((item) => takeOver(to, item, control.epoch, options, clock, tally)),
    );
    const failed = written.find((w): w is PromiseRejectedResult => w.status === 'rejected');
    if (failed !== undefined) throw failed.reason;
    pass =
      page.next === undefined
        ? { partition: pass.partition, doneAt: clock.now() }
        : { partition: page.next.partition, ...(page.next.after === undefined ? {} : { after: page.next.after }) };
    await to.fence.note({ successorPass: pass }, control.epoch);
  }
  return { counts: tally.counts, ids: tally.ids, ...(tally.truncated ? { idsTruncated: true as const } : {}), pass };
}

async function takeOver(
  to: PassSide,
  item: OwnedNotification,
  epoch: number,
  options: PassOptions,
  clock: Clock,
  tally: PassTally,
): Promise<void> {
  if (epochOf(item) >= epoch) {
    // The promoted region's own items carry the new epoch; the old region's should never.
    if (item.owner === options.from) tally.count('aheadOfEpoch', item.notificationId);
    return;
  }
  const start = failoverSuccessor(item, options.secondCopy);
  if (start === undefined) return;
  // A successor of a later epoch than the item's, not this promotion's, carries the notice on already (an earlier
  // failover's, released or sent there, its original never handed over — the old region was lost): the notice is that
  // successor's now, and a second successor of the item would send it again after a failback.
  const family = await to.store.family(item.eventId, item.channel);
  if (family.some((other) => epochOf(other) > epochOf(item) && epochOf(other) < epoch)) {
    tally.count('carriedOn', item.notificationId);
    return;
  }
  const successor = buildSuccessor(item, start, { owner: to.region, epoch }, clock.now(), options.placement);
  const kind = !(await to.store.create(successor))
    ? 'alreadyThere'
    : start.secondCopy === true
      ? 'secondCopies'
      : start.status === 'UNKNOWN'
        ? 'unknown'
        : 'held';
  tally.count(kind, item.notificationId);
}

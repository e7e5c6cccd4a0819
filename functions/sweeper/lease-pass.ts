/**
 * The sweeper's lease pass: a dead holder's claim, found wherever it sits (docs/dispatch.md "The sweeper").
 *
 * A claim leaves the item at its PENDING sweepAt in its PENDING partition (one index write in place instead of a new
 * key). Every write that puts an item (back) to PENDING sets sweepAt at most the pending threshold after the later of
 * its time and its retryAt, and the claim needs retryAt passed: so a claimed item's sweepAt is at most
 * `now + pendingThreshold` (leaseHorizon, functions/domain/sweep-index.ts). The sweeper's due round already reads each
 * partition up to that horizon; this pass finishes, for expired leases only, the partitions the round left — held
 * behind a higher class, capped by their channel's rate, or cut by the run's budget or deadline. It is subject to none
 * of those: a dead claim is resolved in the first run after its lease while the backlog is under what a run reads.
 *
 * Fair over runs: the pass walks the partitions as one rotation — critical, then normal, then bulk, channel by channel,
 * shard by shard — and under a backlog larger than a run reads it keeps where the rotation stopped (the first
 * partition it did not finish) and each unfinished partition's LastEvaluatedKey (stores/lease-cursors.ts). The next run
 * resumes the rotation there, not at its front: a partition finished this cycle is read again only once the rotation
 * wraps, so a backlog in early partitions can no longer hide a later one's dead claim run after run. Critical first
 * within each cycle; a cycle takes about the backlog ÷ what a run reads (docs/guarantees.md, window 5).
 *
 * A lease left for the next run (its spool look-up cut short by the run's cap or deadline, or its SENT write failed:
 * spooled-send.ts) does not stop its partition's walk; the partition's cursor is kept from the start of the page that
 * held it, before it, so no cursor saved past it hides it — even where the due round stopped, which the next run's
 * round may not reach. A later run looks it up again, backlog or not: its due round when it reaches the lease, or its
 * pass, which walks the partitions kept for such a lease first (`walkFirst`, saved in the cursors item with each one's
 * lease's place, `leaseAt`), ahead of the rotation and never where it resumes — one read to its end is no backlog,
 * counted apart (`deferred`). A lease the due round left in a partition it read to its horizon is kept the same way,
 * without a walk this run. Only a partition still holding such a lease stays in `walkFirst` (left again, or its walk
 * ended before reading past the lease's place: items written since before the lease, retries due sooner, may have
 * pushed it to a later page, or DynamoDB refused its cursor), its cursor moved on as far as it read, with those kept
 * first that this run did not walk (they lead the next run's list); one walked past it goes back to the rotation with
 * its cursor, its lease handled (one saved without the lease's place, by an earlier release: once walked from the page
 * it was kept from). So the k-th partition of the list is walked within
 * ⌈k ÷ concurrency⌉ runs whose pass reads a page: the next run while no more such partitions than the concurrency wait.
 * A cut look-up still cut SPOOL_LOOKUP_WAIT_MS after the lease's end is decided by policy.
 *
 * Not solved (docs/guarantees.md, window 5): a lease left run after run (a found record whose SENT write keeps failing,
 * unbounded by design) keeps its partition's cursor before it, so the pass does not read that partition's claims that
 * die between the round's stop and the lease's page while it fails. And when the partition's rest is more than a run
 * reads, every run walks it first (behind those kept that the run before did not walk) and the deadline cuts it at the
 * same place, saved from before the lease again: its tail is not read until the write succeeds, and the rotation moves
 * on only in the partitions read beside it (none at concurrency 1). The SpoolSendsLeftForNextRun alarm (5 of 5 runs)
 * pages for it.
 *
 * A partition whose lease-pass Query fails for a reason worth retrying (throttling, a 5xx, a timeout:
 * commons/retry.ts isWorthRetrying) fails neither the run nor the rotation: its cursor is kept where it stood, the
 * pass goes on with the others, and the failure is counted (`failed`); it never sets where the rotation resumes, so a
 * partition failing run after run does not hold back every partition after it. Any other error (AccessDenied, a
 * ValidationException, a bug) fails the run, as it always did. The due round's Query is guarded the same way (sweep.ts).
 */
import pLimit from 'p-limit';
import { isWorthRetrying } from '../commons/retry.ts';
import { NOTICE_CLASSES } from '../domain/catalogue.ts';
import { CHANNELS } from '../domain/channels.ts';
import { type SweepPartition, sweepPartition } from '../domain/keys.ts';
import type { LeasePosition } from '../stores/lease-cursors.ts';
import type { SweepStartKey } from '../stores/notification-port.ts';
import type { SweepEntry, SweepStore } from '../stores/notification-store.ts';

export interface LeasePassInput {
  /** The lease pass only reads the sweep index. */
  readonly store: Pick<SweepStore, 'findExpiredLeases'>;
  readonly now: () => number;
  /** The run's clock reading: a lease before it has expired. */
  readonly at: number;
  /** sweepAt up to which claimed items can sit (leaseHorizon, functions/domain/sweep-index.ts). */
  readonly horizon: number;
  readonly deadline: number;
  /** Partitions read at once. */
  readonly concurrency: number;
  /** Where an earlier run stopped, by partition key. */
  readonly saved: Readonly<Record<string, SweepStartKey>>;
  /** Where an earlier run's rotation stopped: this run starts there (undefined: at the front, critical first). */
  readonly resumeAt?: LeasePosition | undefined;
  /** Partitions an earlier run kept for a lease left for the next run, by key: walked first, ahead of the rotation. */
  readonly walkFirst?: readonly string[] | undefined;
  /** Where the lease each of those holds sits (its sweepAt), by key: one stays first until a walk reads past it. */
  readonly leaseAt?: Readonly<Record<string, number>> | undefined;
  /** Resolves one expired lease (the sweeper's own handling): 'left' when it left the lease for the next run. */
  readonly handle: (e: SweepEntry) => Promise<'left' | undefined>;
}

/** A partition the due round did not read to the horizon, and where it stopped (undefined: not read at all). */
export interface LeaseWork extends SweepPartition {
  readonly next?: SweepStartKey | undefined;
  /**
   * Where the due round left a lease for the next run (the start of its page): the partition is kept from there
   * whatever the walk does, which starts at `next`, past it (the round handled that lease: it is not looked up twice).
   */
  readonly leftAt?: { readonly at: SweepStartKey | undefined; readonly lease?: number | undefined } | undefined;
  /** The due round read it to the horizon: not walked, only kept for the lease it left (`leftAt`). */
  readonly leasesDone?: boolean;
}

export interface LeasePassResult {
  pages: number;
  found: number;
  /** Partitions left unfinished at the deadline, with where the next run resumes, in rotation order from resumeAt. */
  cursors: Record<string, SweepStartKey>;
  unfinished: number;
  /**
   * Partitions read to the end but kept from before a lease left for the next run (a spool look-up cut short, a SENT
   * write failed): not a backlog, never where the rotation resumes.
   */
  deferred: number;
  /**
   * Partitions still holding a lease left for the next run, and those walked first this run that it did not finish
   * (cut, or their Query failed), by key in rotation order: the next run walks them first.
   */
  walkFirst: string[];
  /** Where the lease each of those holds sits (its sweepAt), by key, where known: kept first until a walk passes it. */
  leaseAt: Record<string, number>;
  /** The first partition of the rotation left unfinished: where the next run starts (undefined: the cycle ended). */
  resumeAt?: LeasePosition | undefined;
  /** Saved cursors set aside, and why: each such partition was read from the round's stop instead. */
  dropped: { partition: string; reason: string }[];
  /**
   * Partitions whose Query failed this run for a reason worth retrying, and the error's name and message: each kept
   * where it stood, the pass went on.
   */
  failed: { partition: string; error: string }[];
}

/**
 * A saved cursor the Query can take: it names its own partition, a numeric sweepAt no later than the horizon (a
 * release that lowers the threshold or the skew moves the horizon back), and string keys. Anything else (a hand-edited
 * item) is a reason to set it aside.
 */
function badCursor(key: string, s: SweepStartKey, horizon: number): string | undefined {
  if (s.sweepKey !== key) return 'names another partition';
  if (typeof s.sweepAt !== 'number') return 'has no numeric sweepAt';
  if (s.sweepAt > horizon) return 'lies beyond the horizon';
  if (typeof s.pk !== 'string' || typeof s.sk !== 'string') return 'has no string pk and sk';
  return undefined;
}

/** DynamoDB's answer to a start key the Query cannot take (an extra attribute, outside the key condition). */
const refusedStart = (e: unknown) => e instanceof Error && e.name === 'ValidationException';

/** The later of two positions in a partition (by sweepAt); undefined is the partition's start. */
function later(a: SweepStartKey | undefined, b: SweepStartKey | undefined): SweepStartKey | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return Number(b.sweepAt) > Number(a.sweepAt) ? b : a;
}

/** A partition's place in the rotation: class, then channel, then shard (sweepPartitions' order). */
const rank = (p: LeasePosition) =>
  (NOTICE_CLASSES.indexOf(p.noticeClass) * CHANNELS.length + CHANNELS.indexOf(p.channel)) * 1_000_000 + p.shard;

/** A Query's failure as the log and the result name it. */
export const failedQuery = (partition: string, e: unknown) => ({
  partition,
  error: e instanceof Error ? `${e.name}: ${e.message}` : String(e),
});

/** The work in rotation order, starting at the first partition at or after `from` (wrapping to the front). */
function rotated(work: readonly LeaseWork[], from: LeasePosition | undefined): LeaseWork[] {
  const ordered = [...work].sort((a, b) => rank(a) - rank(b));
  const at = from === undefined ? -1 : ordered.findIndex((w) => rank(w) >= rank(from));
  return at <= 0 ? ordered : [...ordered.slice(at), ...ordered.slice(0, at)];
}

/**
 * Whether a page read from `start` up to `next` took a partition kept first past the lease it holds: read past the
 * lease's place where it was kept; otherwise (an item saved before it was) a page read from its saved cursor.
 */
function pastLease(
  start: SweepStartKey | undefined,
  next: SweepStartKey | undefined,
  saved: SweepStartKey | undefined,
  lease: number | undefined,
) {
  if (lease !== undefined) return next === undefined || Number(next.sweepAt) > lease;
  return saved !== undefined && start !== undefined && Number(start.sweepAt) >= Number(saved.sweepAt);
}

/** A saved lease place beyond the horizon is none the pass could have left (a hand-edited item): ignored, not a pin. */
const leaseWithin = (at: number | undefined, horizon: number) => (at !== undefined && at <= horizon ? at : undefined);

/**
 * The place of the furthest lease a kept partition holds: the one left this run (the round's or the walk's: NaN, none
 * kept, if its place is unknown) and the one it was kept for, not yet passed.
 */
function heldLease(leftThisRun: boolean, leaseAt: number | undefined, kept: number | undefined): number | undefined {
  const held = [...(leftThisRun ? [leaseAt ?? Number.NaN] : []), ...(kept === undefined ? [] : [kept])];
  const at = Math.max(...held);
  return Number.isFinite(at) ? at : undefined;
}

/** The furthest place (sweepAt) of `at` and of the leases left for the next run among `entries`. */
function furthestLeft(
  at: number | undefined,
  entries: readonly SweepEntry[],
  handled: readonly ('left' | undefined)[],
) {
  const left = entries.filter((_, i) => handled[i] === 'left').map((e) => e.sweepAt);
  return left.length === 0 ? at : Math.max(at ?? Number.NEGATIVE_INFINITY, ...left);
}

/** Each partition's cursor, in the order given, from where its walk ended (the first of `ends` that holds it). */
function cursorsOf(ws: readonly LeaseWork[], ends: readonly Map<LeaseWork, SweepStartKey | undefined>[]) {
  const cursors: Record<string, SweepStartKey> = {};
  for (const w of ws) {
    const start = ends.find((m) => m.has(w))?.get(w);
    if (start !== undefined) cursors[sweepPartition(w)] = start;
  }
  return cursors;
}

/** A pass that read nothing. */
export const emptyLeasePass = (): LeasePassResult => ({
  pages: 0,
  found: 0,
  cursors: {},
  unfinished: 0,
  deferred: 0,
  walkFirst: [],
  leaseAt: {},
  dropped: [],
  failed: [],
});

export async function leasePass(work: readonly LeaseWork[], input: LeasePassInput): Promise<LeasePassResult> {
  const result = emptyLeasePass();
  const partitions = pLimit(Math.max(1, input.concurrency));
  // Those kept for a lease left for the next run first, in the order saved (those an earlier run did not walk lead),
  // then the rotation from where it stopped.
  const first = new Set(input.walkFirst ?? []);
  const byKey = new Map(work.map((w) => [sweepPartition(w), w]));
  const ahead = [...first].flatMap((key) => byKey.get(key) ?? []);
  const rotation = rotated(
    work.filter((w) => !first.has(sweepPartition(w))),
    input.resumeAt,
  );
  const order = [...ahead, ...rotation];
  // Walks that ended holding a lease left for the next run, however they ended.
  const holding = new Set<LeaseWork>();
  // Walks that read at least one page.
  const started = new Set<LeaseWork>();
  // Walks kept first that ended (cut, or failed) before reading past their lease (pastLease): still ahead.
  const short = new Set<LeaseWork>();
  const left = new Map<LeaseWork, SweepStartKey | undefined>();
  const failed = new Map<LeaseWork, SweepStartKey | undefined>();
  const deferred = new Map<LeaseWork, SweepStartKey | undefined>();
  // Where the lease each kept partition holds sits (sweepAt), where known.
  const leaseOf = new Map<LeaseWork, number>();
  const walk = async (w: LeaseWork): Promise<void> => {
    const key = sweepPartition(w);
    const drop = (reason: string) => result.dropped.push({ partition: key, reason });
    let saved = input.saved[key];
    const bad = saved === undefined ? undefined : badCursor(key, saved, input.horizon);
    if (bad !== undefined) {
      drop(bad);
      saved = undefined;
    }
    let start = later(w.next, saved);
    let fromSaved = saved !== undefined && start === saved;
    // Where the due round stopped needs no keeping: the next run's round gives it again.
    const kept = () => (start === w.next ? undefined : start);
    // The start of the first page that held a lease left for the next run: the partition is kept from there, before it,
    // even where the due round stopped (the next run's round may not reach it, and its pass must meet the lease first).
    let leftFrom = w.leftAt;
    // The furthest lease left for the next run in this partition this run (the round's, then the walk's).
    let leaseAt = w.leftAt?.lease;
    // A partition kept first has its lease's page at its saved cursor (none: its front): one not read past the lease
    // still holds it, items written since before the lease may have pushed it to a later page. An item saved before
    // the lease's place was kept: one not read from its saved cursor.
    const lease = first.has(key) ? leaseWithin(input.leaseAt?.[key], input.horizon) : undefined;
    let before = first.has(key) && (saved !== undefined || lease !== undefined);
    const keep = (into: Map<LeaseWork, SweepStartKey | undefined>) => {
      into.set(w, leftFrom ? leftFrom.at : kept());
      if (leftFrom !== undefined) holding.add(w);
      else if (before) short.add(w);
      // Kept first until a walk passes the furthest lease it holds.
      const at = heldLease(leftFrom !== undefined, leaseAt, before ? lease : undefined);
      if (at !== undefined) leaseOf.set(w, at);
    };
    if (w.leasesDone) {
      if (leftFrom !== undefined) keep(deferred);
      return;
    }
    for (;;) {
      if (input.now() >= input.deadline) {
        keep(left);
        return;
      }
      let page: Awaited<ReturnType<SweepStore['findExpiredLeases']>>;
      try {
        page = await input.store.findExpiredLeases(w, input.at, input.horizon, start);
      } catch (e) {
        if (fromSaved && refusedStart(e)) {
          // A saved cursor DynamoDB refuses would otherwise fail every run: set aside, read from the round's stop.
          drop(`refused by DynamoDB: ${(e as Error).message}`);
          fromSaved = false;
          start = w.next;
          continue;
        }
        // Access denied, a request refused, a bug: the run fails and SweeperErrors counts it, as before.
        if (!isWorthRetrying(e)) throw e;
        // Throttled, a 5xx, a timeout: the partition waits for the next run where it stood; the rest goes on.
        result.failed.push(failedQuery(key, e));
        keep(failed);
        return;
      }
      if (pastLease(start, page.next, saved, lease)) before = false;
      fromSaved = false;
      started.add(w);
      result.pages++;
      result.found += page.entries.length;
      const handled = await Promise.all(page.entries.map(input.handle));
      // A lease left does not stop the walk: the claims after it in the partition are still resolved this run.
      if (handled.includes('left')) leftFrom ??= { at: start };
      leaseAt = furthestLeft(leaseAt, page.entries, handled);
      if (page.next === undefined) {
        if (leftFrom !== undefined) keep(deferred);
        return;
      }
      start = page.next;
    }
  };
  // In rotation order, a few at a time: no class waits for another's slowest partition.
  await Promise.all(order.map((w) => partitions(() => walk(w))));
  // Walked first next run: those kept first that this run did not walk (cut or failed before their first page), so one
  // walked first run after run cannot starve them; the walks holding a left lease; those kept first whose walk ended
  // before reading past their lease (items written since pushed it to a later page, or DynamoDB refused their cursor).
  // One walked past it goes back to the rotation.
  const waiting = ahead.filter((w) => !started.has(w) && !w.leasesDone);
  const again = new Set([...waiting, ...rotated([...holding, ...short], undefined)]);
  result.walkFirst = [...again].map(sweepPartition);
  for (const w of again) if (leaseOf.has(w)) result.leaseAt[sweepPartition(w)] = leaseOf.get(w) as number;
  // Where the rotation resumes: the first partition of the rotation left unfinished, not one walked first next run.
  const resume = rotation.find((w) => left.has(w) && !again.has(w));
  if (resume) result.resumeAt = { noticeClass: resume.noticeClass, channel: resume.channel, shard: resume.shard };
  // The cursors, in the order the item keeps them (withinItem): where the rotation resumes, so it always moves on;
  // those walked first next run (one dropped would be walked from the round's stop, past its lease; all those kept for
  // a left lease are among them); the other unfinished ones; the failed ones.
  const byEnd = [left, failed].flatMap((m) => order.filter((w) => m.has(w)));
  result.cursors = cursorsOf([...(resume ? [resume] : []), ...again, ...byEnd], [left, deferred, failed]);
  result.unfinished = left.size;
  result.deferred = deferred.size;
  return result;
}

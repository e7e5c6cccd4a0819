/**
 * Use case: one sweeper run — the delay queue's clock and the safety net. Nothing is silently lost
 * (docs/dispatch.md "The sweeper").
 *
 * Input: the clock, the thresholds, the channels' send rates and the run's deadline. Output: what it did, and how fast.
 * Through the sparse sweep index (never a scan), whose sweepAt says when an item is next due:
 *   - SENDING with an expired lease (its holder crashed or hung) → SENT when the holder recorded the provider's
 *     acceptance on the item before it stopped (its message id), or put its send's record in the evidence spool
 *     (spooled-send.ts): that send is known and never repeated; otherwise by
 *     the channel's policy: UNKNOWN (at most once), or PENDING again (at least once, attempt budget left). The claim
 *     leaves an item at its PENDING sweepAt in its PENDING partition, at most the pending threshold ahead: each
 *     PENDING partition is read up to now + that threshold (the horizon), and its expired leases are resolved
 *     whatever the channel's cap or the class order say (lease-pass.ts). A live lease is filtered out by the Query:
 *     it never spends a page or a channel's cap. Items claimed by an earlier deploy sit in SENDING partitions at
 *     their lease's end, read as before.
 *   - HELD (outside its type's send window) whose window opened → PENDING, so dispatch checks it again (validity,
 *     audience) and sends it. A held item waits in its class's PENDING partition at its release time, and is paced
 *     and served by class like every wake-up: a held backlog of bulk notices goes at the channel's rate, critical first.
 *   - PENDING past the maximum age → FAILED: EXPIRED.
 *   - PENDING and due → touched (retryAt removed) so its fresh stream record re-drives it: either a deferred item
 *     whose retryAt came (routine, "woken") or one whose stream record never came (stuck, "redriven", alarmed).
 *     At most a channel's rate × the schedule's period per run: re-driving more than the channel can send would only
 *     make dispatch claim and defer them again.
 * Critical first: a PENDING item's sweep key carries its class (critical, normal, bulk; keys.ts), and a channel's
 * re-drive cap is spent by strict priority — its normal partitions are not read while one of its critical partitions
 * still has due items, nor its bulk ones while a normal one has. So a critical notice due now is woken in the next
 * run whatever backlog of others is due before it. Strict, not a reserved share: one run at a time holds the whole
 * cap (runs never overlap), so nothing needs coordinating, and waking a notice the pacer would then hold back behind
 * a critical one gains nothing.
 * Its fixed cost is one Query per partition per run — SENDING × channel × shard, and PENDING × class × channel ×
 * shard: 96 at 8 shards, 768 at 64 — most of them empty at 0.5 read units each: one Query reads a partition's due
 * items and its leases alike.
 * Fair: the partitions are visited round-robin, one page each per round, SENDING first, then PENDING critical,
 * normal, bulk, paging with LastEvaluatedKey; the round stops at its item budget or its deadline, whichever comes
 * first. Then the lease pass reads, for expired leases only, what the round left of each PENDING partition up to the
 * horizon, as a rotation resumed across runs (critical first in each cycle), in the time the round left it
 * (leaseReserveMs at least).
 * Every write is conditional on what the sweeper saw and re-reads the item after a failed condition, so overlapping
 * runs and racing dispatchers change each item at most once, and a write whose reply was lost still counts.
 */
import pLimit from 'p-limit';
import { isWorthRetrying } from '../commons/retry.ts';
import { NOTICE_CLASSES, type NoticeClass } from '../domain/catalogue.ts';
import { CHANNELS, type Channel } from '../domain/channels.ts';
import type { ChannelPolicies } from '../domain/delivery-policy.ts';
import { type SweepPartition, type SweepState, sweepPartition } from '../domain/keys.ts';
import { attemptsUsed, isExpired } from '../domain/send-outcome.ts';
import { leaseHorizon, SWEEP_SHARDS } from '../domain/sweep-index.ts';
import type { LeasePosition } from '../stores/lease-cursors.ts';
import type { SweepStartKey } from '../stores/notification-port.ts';
import type { SweepEntry, SweepStore, SweepWindow, Transition } from '../stores/notification-store.ts';
import { emptyLeasePass, failedQuery, type LeasePassResult, leasePass } from './lease-pass.ts';
import type { SpooledSends } from './spooled-send.ts';

export interface SweepDeps {
  readonly store: SweepStore;
  readonly now: () => number;
  readonly policies: ChannelPolicies;
  readonly pendingThresholdMs: number;
  readonly maxSendAttempts: number;
  readonly maxAgeMs: number;
  readonly sendRates: Readonly<Record<Channel, number>>;
  /** The schedule's period: caps a channel's re-drives per run at its rate × this. */
  readonly intervalMs: number;
  /** Items one run may examine. */
  readonly limit: number;
  readonly pageSize: number;
  /** Conditional writes in flight. */
  readonly concurrency: number;
  /** Epoch ms after which no new page is started. */
  readonly deadline: number;
  /**
   * Shards to visit per (state, channel): max(the shard mark, this deploy's count), so items written under an earlier
   * deploy's larger count are still found (functions/stores/sweep-shard-mark.ts). Default SWEEP_SHARDS.
   */
  readonly shards?: number;
  /**
   * A dead holder's record in the evidence spool (spooled-send.ts): an expired lease whose holder spooled its send's
   * record before it died is SENT with it. Without it (no evidence kept) every expired lease is decided by policy.
   */
  readonly spooled?: Pick<SpooledSends, 'resolve'>;
  /** Time the due round leaves to the lease pass before the deadline. Default 0. */
  readonly leaseReserveMs?: number;
  /** Where an earlier run's lease pass stopped, by partition key (stores/lease-cursors.ts). */
  readonly leaseCursors?: Readonly<Record<string, SweepStartKey>>;
  /** Where an earlier run's lease pass left its rotation: this run's pass starts there. */
  readonly leaseResumeAt?: LeasePosition | undefined;
  /** Partitions an earlier run's lease pass kept for a lease left for the next run: this run's pass walks them first. */
  readonly leaseWalkFirst?: readonly string[] | undefined;
  /** Where the lease each of those holds sits (its sweepAt), by key: kept first until a walk passes it. */
  readonly leaseAt?: Readonly<Record<string, number>> | undefined;
}

export interface SweepResult {
  /** PENDING items whose stream record never came (or was lost): re-driven, alarmed. */
  redriven: SweepEntry[];
  /** Deferred items whose retryAt came: woken, routine. */
  woken: SweepEntry[];
  /** HELD items whose send window opened: released to PENDING. */
  released: SweepEntry[];
  expired: SweepEntry[];
  resolvedUnknown: SweepEntry[];
  resolvedRetry: SweepEntry[];
  /** Expired leases whose holder had recorded the provider's acceptance: SENT, not an unknown outcome. */
  resolvedSent: SweepEntry[];
  /**
   * Of those, the ones SENT from the message id a lease extension put on the item (not from a spooled record): their
   * send's evidence record was never written with them, and may have died with the holder (the caller checks).
   */
  sentFromItem: SweepEntry[];
  lostRaces: number;
  examined: number;
  pages: number;
  /**
   * Partitions not finished when the run stopped: still holding due items (budget, deadline or a channel's cap), or
   * not read at all (the same, or held behind a higher class of their channel).
   */
  unfinished: number;
  /**
   * Partitions whose due-round Query failed for a reason worth retrying, and the error: not read further by the round
   * this run (a PENDING one's expired leases are still the lease pass's), the others read.
   */
  failed: { partition: string; error: string }[];
  /** The lease pass over what the due round left: its pages, and where it stopped in what it did not finish. */
  leasePass: LeasePassResult;
  elapsedMs: number;
}

interface Cursor extends SweepPartition {
  next?: SweepStartKey | undefined;
  /** Where the page holding a lease the round left for the next run started (a cut spool look-up): at, before it. */
  leftLease?: { readonly at: SweepStartKey | undefined; readonly lease?: number };
  /** No due item left (sweepAt past now, or the partition's end). */
  done: boolean;
  /** Read to its horizon: its expired leases are all found. */
  leasesDone: boolean;
}

/** sweepAt of a page's LastEvaluatedKey (the index's sort key); NaN when absent. */
const nextAt = (next: SweepStartKey | undefined) => Number(next?.sweepAt);

/** Every partition the sweeper visits, in its order within a round: SENDING, then PENDING by class. */
export function sweepPartitions(shards: number): SweepPartition[] {
  const group = (state: SweepState, noticeClass: NoticeClass) =>
    CHANNELS.flatMap((channel) =>
      Array.from({ length: shards }, (_, shard): SweepPartition => ({ state, channel, noticeClass, shard })),
    );
  // SENDING partitions carry no class (functions/domain/keys.ts): one group, under the normal key.
  return [group('SENDING', 'normal'), ...NOTICE_CLASSES.map((k) => group('PENDING', k))].flat();
}

/**
 * What the round left the lease pass: each partition not read to its horizon, from the round's stop. One where the
 * round left a lease for the next run is walked from there too (that lease is not looked up twice in a run), and kept
 * from before that lease (`leftAt`), whatever an earlier run saved past it; read to its horizon, it is only kept, for
 * the next run's pass to walk first. One the round read to its horizon otherwise needs no cursor: the saved cursors
 * are replaced by the pass's, and the next run reads it from its round's stop.
 */
const leaseWork = (cursors: readonly Cursor[]) =>
  cursors
    .filter((c) => !c.leasesDone || c.leftLease !== undefined)
    .map((c) => (c.leftLease === undefined ? c : { ...c, leftAt: c.leftLease }));

/**
 * Keeps a partition from the page of the first lease the round left for the next run, and the furthest one's place
 * (its sweepAt): the next run's pass walks it first until a walk passes that.
 */
function keepLeft(c: Cursor, from: SweepStartKey | undefined, act: readonly SweepEntry[], handled: readonly unknown[]) {
  const left = act.filter((_, i) => handled[i] === 'left');
  if (left.length === 0) return;
  const lease = Math.max(c.leftLease?.lease ?? 0, ...left.map((e) => e.sweepAt));
  c.leftLease = { at: c.leftLease ? c.leftLease.at : from, lease };
}

/**
 * One due-round page. Throttled, a 5xx, a timeout: undefined, the failure in `failed`, the partition left for the next
 * run. Access denied, a request refused, a bug: thrown, the run fails (SweeperErrors).
 */
async function duePage(
  store: SweepStore,
  partition: SweepPartition,
  window: SweepWindow,
  size: number,
  from: SweepStartKey | undefined,
  failed: SweepResult['failed'],
) {
  try {
    return await store.findDue(partition, window, size, from);
  } catch (e) {
    if (!isWorthRetrying(e)) throw e;
    failed.push(failedQuery(sweepPartition(partition), e));
    return undefined;
  }
}

/** A run's result before it did anything. */
const emptyResult = (): SweepResult => ({
  redriven: [],
  woken: [],
  released: [],
  expired: [],
  resolvedUnknown: [],
  resolvedRetry: [],
  resolvedSent: [],
  sentFromItem: [],
  lostRaces: 0,
  examined: 0,
  pages: 0,
  unfinished: 0,
  failed: [],
  leasePass: emptyLeasePass(),
  elapsedMs: 0,
});

export async function sweep(deps: SweepDeps): Promise<SweepResult> {
  const now = deps.now();
  const result = emptyResult();
  const cursors: Cursor[] = sweepPartitions(deps.shards ?? SWEEP_SHARDS).map((p) => ({
    ...p,
    done: false,
    leasesDone: p.state === 'SENDING',
  }));
  // A claimed item sits at most the pending threshold ahead (functions/domain/sweep-index.ts), plus the clocks' skew.
  const horizon = leaseHorizon(now, deps.pendingThresholdMs);
  const dueBy = deps.deadline - (deps.leaseReserveMs ?? 0);
  const redriveLeft = Object.fromEntries(
    CHANNELS.map((c) => [c, Math.max(1, Math.floor((deps.sendRates[c] * deps.intervalMs) / 1000))]),
  ) as Record<Channel, number>;
  // PENDING partitions of each channel and class still holding due items: a class is held while a higher one has any.
  const openPending = Object.fromEntries(
    CHANNELS.map((c) => [c, Object.fromEntries(NOTICE_CLASSES.map((k) => [k, 0]))]),
  ) as Record<Channel, Record<NoticeClass, number>>;
  for (const c of cursors) if (c.state === 'PENDING') openPending[c.channel][c.noticeClass]++;
  const writes = pLimit(deps.concurrency);
  let budget = deps.limit;
  const capped = (c: Cursor) => c.state === 'PENDING' && redriveLeft[c.channel] <= 0;
  const held = (c: Cursor) =>
    c.state === 'PENDING' &&
    NOTICE_CLASSES.slice(0, NOTICE_CLASSES.indexOf(c.noticeClass)).some((k) => openPending[c.channel][k] > 0);
  const counted = (t: Transition, list: SweepEntry[], e: SweepEntry) => {
    if (t === 'applied') list.push(e);
    else result.lostRaces++;
  };

  const handle = async (e: SweepEntry): Promise<'left' | undefined> => {
    if (e.status === 'SENDING') {
      // The holder's send record in the spool says the provider accepted: SENT with it. A look-up that fails (or is
      // skipped: spooled-send.ts) decides by policy, as without one; a record found whose SENT write failed, or a
      // look-up the run's cap or deadline cut short, leaves the lease to the next run — the record proves the send, or
      // may, so no policy may resend it.
      const spooled = await deps.spooled?.resolve(e, now).catch(() => undefined);
      if (spooled === 'later') return 'left';
      if (spooled !== undefined) {
        if (spooled === 'lost') result.lostRaces++;
        else result.resolvedSent.push(e);
        return;
      }
      const resend = deps.policies[e.channel] === 'AT_LEAST_ONCE' && attemptsUsed(e) < deps.maxSendAttempts;
      const t = await deps.store.resolveExpired(e, resend ? 'PENDING' : 'UNKNOWN', now, now + deps.pendingThresholdMs);
      if (t === 'accepted') {
        result.resolvedSent.push(e);
        result.sentFromItem.push(e);
      } else counted(t, resend ? result.resolvedRetry : result.resolvedUnknown, e);
      return;
    }
    if (e.status === 'HELD') {
      // Its window opened: released, within the channel's cap like a wake-up. Never aged here: it was waiting on purpose.
      redriveLeft[e.channel]--;
      counted(await deps.store.releaseHeld(e, now, now + deps.pendingThresholdMs), result.released, e);
      return;
    }
    if (isExpired(e, now, deps.maxAgeMs)) {
      counted(await deps.store.expire(e, now), result.expired, e);
      return;
    }
    redriveLeft[e.channel]--;
    const routine = e.retryAt !== undefined && now - e.retryAt < deps.pendingThresholdMs;
    const redriven = await deps.store.redrive(e, now, now + deps.pendingThresholdMs);
    counted(redriven, routine ? result.woken : result.redriven, e);
  };

  for (;;) {
    const open = cursors.filter((c) => !c.done && !capped(c));
    if (open.length === 0 || budget <= 0 || deps.now() >= dueBy) break;
    const queries = result.pages + result.failed.length;
    for (const c of open) {
      if (budget <= 0 || deps.now() >= dueBy) break;
      if (capped(c) || held(c)) continue;
      const pending = c.state === 'PENDING';
      const size = Math.min(deps.pageSize, budget, pending ? redriveLeft[c.channel] : deps.pageSize);
      const from = c.next;
      const page = await duePage(deps.store, c, { now, until: pending ? horizon : now }, size, from, result.failed);
      if (page === undefined) {
        // Done for the round, so it holds no lower class of its channel back (nor the round open); the others are
        // read, and a PENDING one's expired leases are still the lease pass's.
        c.done = true;
        if (pending) openPending[c.channel][c.noticeClass]--;
        continue;
      }
      result.pages++;
      // Sorted by sweepAt: once past now, the rest up to the horizon matters only for its expired leases.
      const act = page.entries.filter((e) => e.status === 'SENDING' || e.sweepAt <= now);
      // Only what is due spends the budget: a crossing page's entries not yet due (near retries, fresh items) would
      // otherwise use it up and leave later partitions' due items unread.
      result.examined += act.length;
      budget -= act.length;
      c.next = page.next;
      c.leasesDone = page.next === undefined;
      c.done = c.leasesDone || nextAt(page.next) > now || page.entries.some((e) => e.sweepAt > now);
      if (c.done && pending) openPending[c.channel][c.noticeClass]--;
      const handled = await Promise.all(act.map((e) => writes(() => handle(e))));
      // A SENDING partition is read from its start every run: only a PENDING one's lease pass needs to go back.
      if (pending) keepLeft(c, from, act, handled);
    }
    // Only a Query changes what is held or capped: a pass that made none would spin (a bug in the counts), not wait.
    if (result.pages + result.failed.length === queries) break;
  }
  result.unfinished = cursors.filter((c) => !c.done).length;
  result.leasePass = await leasePass(leaseWork(cursors), {
    store: deps.store,
    now: deps.now,
    at: now,
    horizon,
    deadline: deps.deadline,
    concurrency: deps.concurrency,
    saved: deps.leaseCursors ?? {},
    resumeAt: deps.leaseResumeAt,
    walkFirst: deps.leaseWalkFirst,
    leaseAt: deps.leaseAt,
    handle: (e) => writes(() => handle(e)),
  });
  result.elapsedMs = deps.now() - now;
  return result;
}

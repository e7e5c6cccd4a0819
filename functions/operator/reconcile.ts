/**
 * `ops reconcile --from <old>` as a use case (docs/regions.md "ops demote and ops reconcile"): once a failed-over
 * region answers again and is demoted and quiet, its own records decide what the active region held.
 *
 *   1. Every unfinished item of the old region (its own sweep index, where nothing moves any more) gets its successor
 *      in the active region, if it has none: what arrived late, or never.
 *   2. An original still SENDING there is resolved where it lives, as the sweeper would resolve an expired lease.
 *   3. Every successor waiting in the active region follows its original: handed over (the original finished), unknown
 *      (so was the original), or released — sent now, late — when the old region provably never sent it: its
 *      original still PENDING (handed over there first), or absent with no inbox item of any kind there (it never
 *      took the event: neither `INBOX` nor a held `INBOX#E<n>` — after a failback, what the other region held and
 *      released has only the held one).
 *   0. First, the predecessor is marked reconciled: ingest stops holding events read again and looks them up in the
 *      old region instead (sound now: it is fenced and quiet). Then it waits until no ingest invocation can still be
 *      acting on the state before (the ingest timeout and the fence's cache), so every hold is written before step 3
 *      lists them — a hold decided a moment before the mark and written after the listing would wait forever.
 */
import { CHANNELS, type Channel } from '../domain/channels.ts';
import type { ChannelPolicies } from '../domain/delivery-policy.ts';
import { buildSuccessor, failoverSuccessor, inFlightResolution, reconcileDecision } from '../domain/failover.ts';
import { epochOf } from '../domain/fence.ts';
import { successorSk } from '../domain/keys.ts';
import type { OwnedNotification } from '../stores/successor-store.ts';
import type { Clock, RegionSide } from './promote.ts';
import { reconcileRefusal } from './region-refusal.ts';

export interface ReconcileRequest {
  readonly by: string;
  readonly reason: string;
  readonly policies: ChannelPolicies;
  readonly secondCopy: readonly Channel[];
  readonly placement: { readonly sweepShards: number; readonly pendingThresholdMs: number };
  /** How long ingest still looks events up in the old region after this (`failoverLookupMinutes`). */
  readonly lookupMs: number;
  /** Ingest's timeout plus the fence's cache: after the mark, no invocation can still hold an event. */
  readonly settleAfterMs: number;
  /**
   * The longest this call may wait for that (default: as long as it takes). A longer wait answers `settlesAt` and
   * lists nothing: the same command run again from then settles (the operator API answers within 29 s).
   */
  readonly waitUpToMs?: number;
}

export interface ReconcileReport {
  readonly from: string;
  readonly to: string;
  /** Successors created now for what the old region had not finished. */
  readonly lateSuccessors: number;
  readonly handedOver: number;
  readonly unknown: number;
  /** Sent now, late: the old region provably never sent them. */
  readonly released: number;
  /** Still waiting: nothing proven (the old region's record not readable). */
  readonly waiting: number;
  /** Marked reconciled, not settled yet: nothing was listed; run it again from this instant. */
  readonly settlesAt?: number;
}

export async function reconcile(
  from: RegionSide,
  to: RegionSide,
  request: ReconcileRequest,
  clock: Clock,
): Promise<ReconcileReport> {
  const [old, active] = await Promise.all([from.fence.control(true), to.fence.control(true)]);
  const refusal = reconcileRefusal(from.region, to.region, old, active);
  // The rule has checked the predecessor; the type does not follow it through the function.
  if (refusal !== undefined || active?.predecessor === undefined) throw refusal ?? new Error('no predecessor');
  const report = { lateSuccessors: 0, handedOver: 0, unknown: 0, released: 0, waiting: 0 };
  const markedAt = active.predecessor.reconciledAt ?? clock.now();
  if (active.predecessor.reconciledAt === undefined) {
    await to.fence.note({ predecessor: { ...active.predecessor, reconciledAt: markedAt } }, active.epoch);
    await to.fence.note({ lookupUntil: clock.now() + request.lookupMs }, active.epoch);
  }
  // Run again after the mark (to settle, or after an interruption): only what is left of the wait.
  const wait = markedAt + request.settleAfterMs - clock.now();
  if (wait > (request.waitUpToMs ?? Number.POSITIVE_INFINITY)) {
    return { from: from.region, to: to.region, ...report, settlesAt: markedAt + request.settleAfterMs };
  }
  if (wait > 0) await clock.sleep(wait);
  const owner = { owner: to.region, epoch: active.epoch };
  for await (const original of from.store.unfinished()) {
    if (epochOf(original) >= active.epoch) continue;
    const start = failoverSuccessor(original, request.secondCopy);
    if (start === undefined) continue;
    const successor = buildSuccessor(original, start, owner, clock.now(), request.placement);
    if (await to.store.create(successor)) report.lateSuccessors++;
  }
  for await (const successor of to.store.waiting(CHANNELS)) {
    if (epochOf(successor) !== active.epoch || successor.supersedes === undefined) continue;
    const outcome = await settle(successor, from, to, request, clock);
    report[outcome]++;
  }
  return { from: from.region, to: to.region, ...report };
}

type Outcome = 'handedOver' | 'unknown' | 'released' | 'waiting';

/** One waiting successor, by what its original shows in the old region (read consistently there). */
async function settle(
  successor: OwnedNotification,
  from: RegionSide,
  to: RegionSide,
  request: ReconcileRequest,
  clock: Clock,
): Promise<Outcome> {
  const key = { pk: successor.pk, sk: successor.supersedes ?? successorSk(successor.channel, 0) };
  let original = await from.store.get(key);
  if (original?.status === 'SENDING') {
    const resolved = inFlightResolution(original, request.policies[original.channel]);
    await from.store.move(original, resolved, 'pipeline', { lastError: 'RECONCILED_IN_FLIGHT' }, clock.now());
    original = await from.store.get(key);
  }
  const tookEvent = await from.store.tookEvent(successor.eventId, successor.epoch ?? 0);
  const decision = reconcileDecision(original, tookEvent, true);
  const by = successor.status === 'UNKNOWN' ? 'reconcile' : 'pipeline';
  switch (decision.kind) {
    case 'HAND_OVER':
      return (await to.store.move(successor, 'HANDED_OVER', by, { handedOverTo: key.sk }, clock.now()))
        ? 'handedOver'
        : 'waiting';
    case 'UNKNOWN':
      if (successor.status === 'UNKNOWN') await to.store.stopWaiting(successor, clock.now());
      else await to.store.move(successor, 'UNKNOWN', 'pipeline', { lastError: 'ORIGINAL_UNKNOWN' }, clock.now());
      return 'unknown';
    case 'RELEASE':
      if (decision.handOverOriginal && original !== undefined) {
        const moved = await from.store.move(
          original,
          'HANDED_OVER',
          'pipeline',
          { handedOverTo: successor.sk },
          clock.now(),
        );
        if (!moved) return 'waiting';
      }
      return (await to.store.move(successor, 'PENDING', by, { late: true }, clock.now())) ? 'released' : 'waiting';
    case 'WAIT':
      return 'waiting';
  }
}

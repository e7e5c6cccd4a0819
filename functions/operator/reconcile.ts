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
import { randomUUID } from 'node:crypto';
import { CHANNELS, type Channel } from '../domain/channels.ts';
import type { ChannelPolicies } from '../domain/delivery-policy.ts';
import { buildSuccessor, failoverSuccessor, inFlightResolution, reconcileDecision } from '../domain/failover.ts';
import { epochOf } from '../domain/fence.ts';
import { isHeld, isWaiting } from '../domain/held.ts';
import { successorSk } from '../domain/keys.ts';
import { canMove, type NotificationStatus } from '../domain/state-machine.ts';
import type { OwnedNotification } from '../stores/successor-store.ts';
import { IdTally } from './id-tally.ts';
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
  /** Names this run in its report and on what it writes (default: a random id). */
  readonly runId?: string;
}

/** What a run's own conditional write did to a successor, or why it wrote nothing. */
export type Outcome = 'handedOver' | 'unknown' | 'released' | 'waiting' | 'decidedByOperator' | 'alreadyDecided';

export interface ReconcileReport {
  readonly from: string;
  readonly to: string;
  /** This run: stamped (`reconcileRun`) on every successor it created or moved in the active region. */
  readonly runId: string;
  /** Successors created now for what the old region had not finished. */
  readonly lateSuccessors: number;
  readonly handedOver: number;
  readonly unknown: number;
  /** Sent now, late: the old region provably never sent them. */
  readonly released: number;
  /** Still waiting: nothing proven (the old region's record not readable). */
  readonly waiting: number;
  /** Released or settled by an operator (`ops release-held`, `settle-held`) before this run's write: not decided here. */
  readonly decidedByOperator: number;
  /** Decided by another run of reconcile (an overlapping one, or one before) before this run's write: counted there. */
  readonly alreadyDecided: number;
  /**
   * The notification ids behind each count, the first IDS_LISTED of each; `idsTruncated` when a list is cut: the rest
   * of what this run created or moved carries `reconcileRun` = `runId` in the active region's table.
   */
  readonly ids: Readonly<Record<Outcome | 'lateSuccessors', readonly string[]>>;
  readonly idsTruncated?: true;
  /** Marked reconciled, not settled yet: nothing was listed; run it again from this instant. */
  readonly settlesAt?: number;
  /**
   * The promotion's own successor pass had not finished (its fence has no `doneAt`): `lateSuccessors` then also counts
   * what that pass had not reached yet, not only what reached the replica late. Nothing is lost either way.
   */
  readonly promotePassUnfinished?: true;
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
  const tally = new Tally(request.runId ?? randomUUID());
  const markedAt = active.predecessor.reconciledAt ?? clock.now();
  if (active.predecessor.reconciledAt === undefined) {
    await to.fence.note({ predecessor: { ...active.predecessor, reconciledAt: markedAt } }, active.epoch);
    await to.fence.note({ lookupUntil: clock.now() + request.lookupMs }, active.epoch);
  }
  // Run again after the mark (to settle, or after an interruption): only what is left of the wait.
  const wait = markedAt + request.settleAfterMs - clock.now();
  if (wait > (request.waitUpToMs ?? Number.POSITIVE_INFINITY)) {
    return { ...tally.report(from.region, to.region), settlesAt: markedAt + request.settleAfterMs };
  }
  if (wait > 0) await clock.sleep(wait);
  const owner = { owner: to.region, epoch: active.epoch };
  for await (const original of from.store.unfinished()) {
    if (epochOf(original) >= active.epoch) continue;
    const start = failoverSuccessor(original, request.secondCopy);
    if (start === undefined) continue;
    const built = buildSuccessor(original, start, owner, clock.now(), request.placement);
    const successor = { ...built, reconcileRun: tally.runId };
    if (await to.store.create(successor)) tally.count('lateSuccessors', successor.notificationId);
    else if (await handOverToDecided(original, successor, from, to, clock)) {
      tally.count('alreadyDecided', original.notificationId);
    }
  }
  // Overlapping runs (a re-run after a 504 while the first still runs) decide each successor once: every write is
  // conditional on what was read, and each run counts only what its own writes did.
  for await (const successor of to.store.waiting(CHANNELS)) {
    if (epochOf(successor) !== active.epoch || successor.supersedes === undefined) continue;
    tally.count(await settle(successor, from, to, request, clock, tally.runId), successor.notificationId);
  }
  const unfinished = active.successorPass !== undefined && active.successorPass.doneAt === undefined;
  return { ...tally.report(from.region, to.region), ...(unfinished ? { promotePassUnfinished: true as const } : {}) };
}

/** The counts of a run and the ids behind them, bounded. */
class Tally extends IdTally<Outcome | 'lateSuccessors'> {
  constructor(readonly runId: string) {
    super(['lateSuccessors', 'handedOver', 'unknown', 'released', 'waiting', 'decidedByOperator', 'alreadyDecided']);
  }

  report(from: string, to: string): ReconcileReport {
    const { runId, counts, ids } = this;
    return { from, to, runId, ...counts, ids, ...(this.truncated ? { idsTruncated: true as const } : {}) };
  }
}

/**
 * One waiting successor, by what its original shows in the old region (read consistently there). A write that finds
 * the item changed since it was read decides nothing: the original is read again (another run handed it over to this
 * successor: the release is finished here), or the successor tells who decided it.
 */
async function settle(
  listed: OwnedNotification,
  from: RegionSide,
  to: RegionSide,
  request: ReconcileRequest,
  clock: Clock,
  runId: string,
): Promise<Outcome> {
  let successor: OwnedNotification | undefined = listed;
  for (let attempt = 0; attempt < 3; attempt++) {
    if (successor === undefined || !isHeld(successor)) return decidedElsewhere(successor);
    const written = await settleOnce(successor, from, to, request, clock, runId);
    if (written !== 'CHANGED') return written;
    successor = await to.store.get({ pk: successor.pk, sk: successor.sk });
  }
  return successor === undefined || !isHeld(successor) ? decidedElsewhere(successor) : 'waiting';
}

/** Not waiting any more, and not by this run's write: an operator's decision carries `heldDecision`. */
const decidedElsewhere = (successor: OwnedNotification | undefined): Outcome =>
  successor !== undefined && 'heldDecision' in successor ? 'decidedByOperator' : 'alreadyDecided';

async function settleOnce(
  successor: OwnedNotification,
  from: RegionSide,
  to: RegionSide,
  request: ReconcileRequest,
  clock: Clock,
  runId: string,
): Promise<Outcome | 'CHANGED'> {
  const key = { pk: successor.pk, sk: successor.supersedes ?? successorSk(successor.channel, 0) };
  let original = await from.store.get(key);
  if (original?.status === 'SENDING') {
    const resolved = inFlightResolution(original, request.policies[original.channel]);
    await from.store.move(original, resolved, 'pipeline', { lastError: 'RECONCILED_IN_FLIGHT' }, clock.now());
    original = await from.store.get(key);
  }
  const tookEvent = await from.store.tookEvent(successor.eventId, successor.epoch ?? 0);
  const decision = reconcileDecision(original, tookEvent, true, successor.sk);
  const by = successor.status === 'UNKNOWN' ? 'reconcile' : 'pipeline';
  const store = to.store;
  // Only while it still waits: an operator's settlement (which takes it out of waiting) is never overwritten.
  const moved = (status: NotificationStatus, fields: Record<string, unknown>) =>
    store.move(successor, status, by, { ...fields, reconcileRun: runId }, clock.now(), { whileWaiting: true });
  switch (decision.kind) {
    case 'HAND_OVER':
      return (await moved('HANDED_OVER', { handedOverTo: key.sk })) ? 'handedOver' : 'CHANGED';
    case 'UNKNOWN':
      if (successor.status === 'UNKNOWN')
        return (await store.stopWaiting(successor, clock.now(), runId)) ? 'unknown' : 'CHANGED';
      return (await moved('UNKNOWN', { lastError: 'ORIGINAL_UNKNOWN' })) ? 'unknown' : 'CHANGED';
    case 'RELEASE':
      // The original first, in the old region: a run that stops after it leaves it HANDED_OVER to this successor,
      // which the next run reads as the release half done (reconcileDecision) and finishes.
      if (decision.handOverOriginal && original !== undefined) {
        const handed = await from.store.move(
          original,
          'HANDED_OVER',
          'pipeline',
          { handedOverTo: successor.sk },
          clock.now(),
        );
        if (!handed) return 'CHANGED';
      }
      return (await moved('PENDING', { late: true })) ? 'released' : 'CHANGED';
    case 'WAIT':
      return 'waiting';
  }
}

/**
 * The original's successor here is decided already — released by an operator while this region could not ask the old
 * one, sent, or settled — so the original is the successor's now: handed over to it in the old region, or a later
 * promotion there (a failback) would give it a successor of its own and send the notice again. A successor that
 * still waits is decided below, from the original's record; one handed over carries nothing on.
 */
async function handOverToDecided(
  original: OwnedNotification,
  successor: OwnedNotification,
  from: RegionSide,
  to: RegionSide,
  clock: Clock,
): Promise<boolean> {
  const existing = await to.store.get({ pk: successor.pk, sk: successor.sk });
  if (existing === undefined || existing.status === 'HANDED_OVER') return false;
  if (isWaiting(existing) || !canMove(original.status, 'HANDED_OVER', 'pipeline')) return false;
  return from.store.move(original, 'HANDED_OVER', 'pipeline', { handedOverTo: existing.sk }, clock.now());
}

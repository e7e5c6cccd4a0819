/**
 * What a promotion does to the notifications it inherits, and what the old region's records decide later
 * (docs/regions.md "What promotion does to each notification", "ops demote and ops reconcile"). The new region never
 * writes the old region's items — last writer wins would erase the record of a send — it writes successors of its
 * own: same (eventId, channel), the key `NOTIFICATION#<channel>#E<epoch>`. Pure: the use cases read and write.
 */
import { createHash } from 'node:crypto';
import type { Channel } from './channels.ts';
import type { DeliveryPolicy } from './delivery-policy.ts';
import type { Ownership } from './fence.ts';
import { successorIdOf, successorSk } from './keys.ts';
import { messageIdOf } from './message-id.ts';
import { type NotificationItem, pendingSweepKey } from './notification.ts';
import type { NotificationStatus } from './state-machine.ts';

/** Why a successor starts where it does. */
export type HeldReason =
  /** The original was PENDING: the old region may have claimed and sent it since. */
  | 'INHERITED_PENDING'
  /** The original was SENDING: its send may have happened. Never resent blindly. */
  | 'IN_FLIGHT_AT_FAILOVER'
  /** The event was read again from the replicated topic with no inbox item here: the old region may have taken it. */
  | 'REPLAYED_WITHOUT_INBOX';

export interface SuccessorStart {
  readonly status: 'FAILOVER_HELD' | 'UNKNOWN' | 'PENDING';
  readonly heldReason: HeldReason;
  /** An email the bank allowed a second copy of: sent now, with the note saying it may be a repeat. */
  readonly secondCopy?: true;
}

/**
 * The sweep-index partitions of successors waiting for their original's record, `HELD#<channel>#<shard>`: found by a
 * reconciliation without a scan, and by no sweeper query of PENDING or SENDING.
 */
export const HELD_SHARDS = 4;
export const heldPartition = (channel: Channel, shard: number) => `HELD#${channel}#${shard}`;
export const heldSweepKey = (channel: Channel, notificationId: string) =>
  heldPartition(channel, createHash('sha256').update(notificationId).digest().readUInt8(0) % HELD_SHARDS);

/** The statuses in which a notification may still be sent by the region that owns it. */
const UNFINISHED: readonly NotificationStatus[] = ['PENDING', 'SENDING'];
export const isUnfinished = (status: NotificationStatus) => UNFINISHED.includes(status);

/**
 * A failover's decision for an item of an older epoch as the new region's replica shows it: a successor for what the
 * old region had not finished, nothing for the rest (its outcome is its own). A second copy only on a channel the bank
 * listed (`failoverSecondCopy`, email at most).
 */
export function failoverSuccessor(
  original: Pick<NotificationItem, 'status' | 'channel'>,
  secondCopyChannels: readonly Channel[],
): SuccessorStart | undefined {
  if (!isUnfinished(original.status)) return undefined;
  const heldReason: HeldReason = original.status === 'PENDING' ? 'INHERITED_PENDING' : 'IN_FLIGHT_AT_FAILOVER';
  if (secondCopyChannels.includes(original.channel)) return { status: 'PENDING', heldReason, secondCopy: true };
  return { status: heldReason === 'INHERITED_PENDING' ? 'FAILOVER_HELD' : 'UNKNOWN', heldReason };
}

/** The successor item: the original's notice (template, data, recipient), owned by the new epoch. */
export function buildSuccessor(
  original: NotificationItem,
  start: SuccessorStart,
  owner: Ownership,
  now: number,
  placement: { readonly sweepShards: number; readonly pendingThresholdMs: number },
): NotificationItem & SuccessorFields {
  const iso = new Date(now).toISOString();
  const notificationId = successorIdOf(original.eventId, original.channel, owner.epoch);
  const {
    sweepKey: _k,
    sweepAt: _a,
    leaseUntil: _l,
    retryAt: _r,
    providerMessageId: _m,
    sesMessageId: _s,
    lastError: _e,
    deferrals: _d,
    // The original's evidence reference (a resend keeps it, an extension writes it) names the original's record, at an
    // attempt the successor's own claims count again from 0: never the successor's (domain/attempt-evidence.ts).
    evidence: _v,
    ...notice
  } = original;
  return {
    ...notice,
    sk: successorSk(original.channel, owner.epoch),
    notificationId,
    status: start.status,
    attempt: 0,
    createdAt: iso,
    updatedAt: iso,
    owner: owner.owner,
    epoch: owner.epoch,
    supersedes: original.sk,
    heldReason: start.heldReason,
    ...(start.secondCopy === true ? { secondCopy: true } : {}),
    ...(start.status === 'PENDING'
      ? {
          sweepKey: pendingSweepKey(original.template, original.channel, notificationId, placement.sweepShards),
          sweepAt: now + placement.pendingThresholdMs,
        }
      : {}),
    ...(start.status === 'UNKNOWN' ? { lastError: start.heldReason } : {}),
    // Held, or unknown because the original was in flight: each waits for its original's record.
    ...(start.status === 'PENDING' ? {} : { sweepKey: heldSweepKey(original.channel, notificationId), sweepAt: now }),
  };
}

export interface SuccessorFields {
  owner: string;
  epoch: number;
  /** The original's sort key, in the same partition. */
  supersedes: string;
  heldReason: HeldReason;
  secondCopy?: boolean;
  /** Released after a hold: email carries the "late" note. */
  late?: boolean;
}

/**
 * What the original, read in the old region once it is demoted and quiet (or as it arrived here), decides for a
 * successor still waiting (FAILOVER_HELD, or UNKNOWN because the original was in flight):
 * - HAND_OVER: the original holds the outcome (it finished) — the successor is not sent;
 * - UNKNOWN: the original's send is unknown — so is the notice, alarmed, never resent blindly;
 * - RELEASE: proven never sent — the successor is sent (late); the original, if there, is handed over first;
 * - WAIT: nothing is proven yet.
 * `quiet` says the old region is fenced and can write nothing more: only then does "still PENDING", or "absent with no
 * inbox item", prove a notice was never sent. An original HANDED_OVER to this very successor (`successorSk`) was
 * PENDING when a release began: the run stopped (or another run is at it) before the successor moved — the release
 * is finished, never mistaken for an original that finished (both would point at each other, and nothing be sent).
 */
export type ReconcileDecision =
  | { readonly kind: 'HAND_OVER' }
  | { readonly kind: 'UNKNOWN' }
  | { readonly kind: 'RELEASE'; readonly handOverOriginal: boolean }
  | { readonly kind: 'WAIT' };

export function reconcileDecision(
  original: (Pick<NotificationItem, 'status' | 'providerMessageId'> & { readonly handedOverTo?: unknown }) | undefined,
  oldRegionTookEvent: boolean,
  quiet: boolean,
  successorSk: string,
): ReconcileDecision {
  if (original === undefined) {
    return quiet && !oldRegionTookEvent ? { kind: 'RELEASE', handOverOriginal: false } : { kind: 'WAIT' };
  }
  if (original.status === 'HANDED_OVER' && original.handedOverTo === successorSk) {
    return { kind: 'RELEASE', handOverOriginal: false };
  }
  switch (original.status) {
    case 'UNKNOWN':
      return { kind: 'UNKNOWN' };
    case 'PENDING':
    case 'FAILOVER_HELD':
      return quiet && original.status === 'PENDING' ? { kind: 'RELEASE', handOverOriginal: true } : { kind: 'WAIT' };
    case 'SENDING':
      // Its holder may still be running: resolved first where the original lives (inFlightResolution), then decided.
      return { kind: 'WAIT' };
    default:
      return { kind: 'HAND_OVER' };
  }
}

/**
 * An original still SENDING in a demoted, quiet region: its holder stopped. Resolved as the sweeper resolves an expired
 * lease — SENT when the provider's acceptance is on the item, else the channel's unknown-outcome policy.
 */
export const inFlightResolution = (
  original: Pick<NotificationItem, 'providerMessageId' | 'sesMessageId'>,
  policy: DeliveryPolicy,
): 'SENT' | 'UNKNOWN' | 'PENDING' =>
  messageIdOf(original) !== undefined ? 'SENT' : policy === 'AT_LEAST_ONCE' ? 'PENDING' : 'UNKNOWN';

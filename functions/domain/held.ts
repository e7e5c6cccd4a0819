/**
 * An operator's decision on a held notice (docs/regions.md "Runbook", "What to tell customers of held notices"): a
 * successor a failover left waiting for the old region's record — FAILOVER_HELD, or UNKNOWN because its original was
 * in flight — when that record may never come (the old region's cluster destroyed, its table gone). `release` sends
 * it now, late; `settle` closes it without sending. Pure: which notices may be decided, what each decision writes,
 * and the words that say so.
 */
import type { Channel } from './channels.ts';
import type { DeliveryPolicy } from './delivery-policy.ts';
import { erasedRefusal, isErased } from './erasure.ts';
import { isUnfinished } from './failover.ts';
import { type Refusal, refusal } from './refusal.ts';
import type { NotificationStatus } from './state-machine.ts';

/** A notification as the decision reads it: its status, whose notice it carries, and whether it still waits. */
export interface HeldCandidate {
  readonly notificationId: string;
  readonly status: NotificationStatus;
  readonly channel: Channel;
  readonly supersedes?: string;
  readonly heldReason?: string;
  readonly sweepKey?: string;
  readonly erasedAt?: unknown;
}

/** The original a successor carries on, as this replica shows it (absent: the old region's record never arrived). */
export interface OriginalSeen {
  readonly status: NotificationStatus;
  readonly providerMessageId?: string;
}

/** Successors waiting for their original's record carry the sweep key `HELD#<channel>#<shard>`. */
export const isWaiting = (item: Pick<HeldCandidate, 'sweepKey'>): boolean =>
  typeof item.sweepKey === 'string' && item.sweepKey.startsWith('HELD#');

/** Held: a successor FAILOVER_HELD, or UNKNOWN (in flight at the failover) that still waits for its original. */
export const isHeld = (item: HeldCandidate): boolean =>
  typeof item.supersedes === 'string' &&
  (item.status === 'FAILOVER_HELD' || (item.status === 'UNKNOWN' && isWaiting(item)));

/** Why this notice is not one an operator releases or settles, or undefined: the true reason. */
export function notHeldRefusal(id: string, item: HeldCandidate | undefined): Refusal | undefined {
  if (item === undefined) return refusal('NOT_FOUND', `no notification ${id}`);
  if (typeof item.supersedes !== 'string') {
    return refusal(
      'NOT_HELD',
      `${id} is not held by a failover (it is ${item.status}, and no successor): ops resend decides FAILED and UNKNOWN notices`,
    );
  }
  if (isHeld(item)) return undefined;
  return refusal(
    'ALREADY_RESOLVED',
    `${id} is ${item.status}: already decided (by the old region's record, a reconciliation or an operator); nothing is held`,
  );
}

/**
 * Why a held notice is not released, or undefined. An erased customer's notice is never sent; one whose original's
 * record shows it sent in this replica is decided by that record (settle it), never sent twice. An original still
 * PENDING or SENDING here is what the old region last wrote before it was lost — the very reason the notice is held —
 * and proves nothing either way: the release is the operator's decision, its risk said in the preview.
 */
export function releaseRefusal(
  id: string,
  item: HeldCandidate | undefined,
  original: OriginalSeen | undefined,
): Refusal | undefined {
  const notHeld = notHeldRefusal(id, item);
  if (notHeld !== undefined || item === undefined) return notHeld;
  if (isErased(item)) return refusal('ERASED', erasedRefusal(id, item, 'released'));
  if (original?.status === 'SENT' || typeof original?.providerMessageId === 'string') {
    const message = original.providerMessageId === undefined ? '' : ` as message ${original.providerMessageId}`;
    return refusal(
      'ACCEPTED',
      `${id}: its original ${item.supersedes} is ${original.status} in this replica — the old region's provider accepted it${message}. Releasing it would send it twice: settle it (ops settle-held) instead`,
    );
  }
  return undefined;
}

/**
 * What a release risks, said before the operator confirms: nothing proves the old region did not send this notice.
 * On an at-most-once channel the customer may get it twice — the operator's decision; on an at-least-once channel a
 * rare second copy is what the bank chose for that channel.
 */
export function releaseRisk(channel: Channel, policy: DeliveryPolicy, oldRegionOutcome: string): string {
  const maybe = `If the old region had sent it, the customer gets it twice (${oldRegionOutcome}).`;
  return policy === 'AT_MOST_ONCE'
    ? `${channel} is at-most-once: ${maybe} Nothing here proves it was not sent; releasing it is your decision, recorded as yours.`
    : `${channel} is at-least-once: ${maybe} The bank accepts a rare second copy on this channel.`;
}

/** How a settled notice ends: with the old region's record or the operator's proof of a send, or never sent here. */
export type Settlement =
  /** The original holds the outcome (its record in this replica, or the operator's proof): nothing to tell. */
  | { readonly to: 'HANDED_OVER'; readonly proof: string }
  /** Held, and closed unsent: the customer is told, as for a notice held until it expired. */
  | { readonly to: 'FAILED'; readonly lastError: 'HELD_SETTLED' }
  /** In flight at the failover, and no record will say more: it stays UNKNOWN, waiting no more; the customer is told. */
  | { readonly to: 'UNKNOWN' };

/**
 * What settling writes: handed over when the original's record is in this replica and finished, or the operator names
 * the proof of the old region's send (a provider message id, an evidence object); else FAILED (HELD_SETTLED) for a
 * FAILOVER_HELD notice, and UNKNOWN, no longer waiting, for one that was in flight.
 */
export function settlementOf(
  item: HeldCandidate,
  original: OriginalSeen | undefined,
  sentBefore: string | undefined,
): Settlement {
  if (sentBefore !== undefined) return { to: 'HANDED_OVER', proof: sentBefore };
  if (original !== undefined && isFinishedHere(original.status)) {
    return { to: 'HANDED_OVER', proof: `original ${original.status}${originalMessage(original)}` };
  }
  return item.status === 'UNKNOWN' ? { to: 'UNKNOWN' } : { to: 'FAILED', lastError: 'HELD_SETTLED' };
}

/** An original that holds its own outcome: not waiting (held, unfinished), nor handed over to another item. */
const isFinishedHere = (status: NotificationStatus) =>
  !isUnfinished(status) && status !== 'FAILOVER_HELD' && status !== 'HANDED_OVER';

const originalMessage = (o: OriginalSeen) => (o.providerMessageId === undefined ? '' : ` (${o.providerMessageId})`);

/** What the customer is owed after a settlement (docs/regions.md "What to tell customers of held notices"). */
export const customerMessageOf = (s: Settlement): string =>
  s.to === 'HANDED_OVER'
    ? 'none: the old region sent it once'
    : s.to === 'FAILED'
      ? 'tell the customer: this notice was held after a failover and never sent from this region'
      : 'tell the customer: this notice was in flight when the region was lost, and whether it arrived is unknown';

/** The original's status as the preview says it: what this replica shows of the old region's record. */
export const originalText = (original: OriginalSeen | undefined): string =>
  original === undefined
    ? "the old region's record of it has not reached this replica"
    : `its original is ${original.status} in this replica${originalMessage(original)}`;

/**
 * The old region as an operator's decision finds it: its fence asked once, briefly, in a stage in two regions. A fence
 * that answers means that region's own records answer too — `ops reconcile` decides from them, with proof —, unless a
 * reconciliation already ran and left this notice waiting (nothing proven: the operator decides).
 */
export type OldRegionLook =
  | { readonly region: string; readonly answers: false }
  | {
      readonly region: string;
      readonly answers: true;
      readonly state: string | undefined;
      readonly quiescent: boolean;
      /** This region's predecessor already marked reconciled: a reconciliation ran. */
      readonly reconciled: boolean;
    };

export function oldRegionRefusal(id: string, look: OldRegionLook | undefined): Refusal | undefined {
  if (look === undefined || !look.answers || look.reconciled) return undefined;
  const first = look.quiescent
    ? ''
    : `demote it first (\`ops demote --region ${look.region}\`; its fence is ${look.state ?? 'not written'}), then `;
  return refusal(
    'USE_RECONCILE',
    `the old region ${look.region} answers: ${first}\`ops reconcile --from ${look.region}\` decides ${id} from its record, with proof — not an operator at the customer's risk`,
  );
}

/** What the preview says of the old region (a reconciliation that ran and proved nothing for it, or no answer). */
export const oldRegionText = (look: OldRegionLook | undefined): string | null =>
  look === undefined
    ? null
    : look.answers
      ? `${look.region} answers; ops reconcile ran and proved nothing for this notice`
      : `${look.region} does not answer`;

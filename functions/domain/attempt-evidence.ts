/**
 * Whether the evidence reference an item carries is its current attempt's. A resend (stores/event-store.ts `resend`)
 * removes the message ids but keeps `evidence`, and moves `createdAt` to the moment of the resend; a release from HELD
 * moves it too. Every send of the attempt now on the item was accepted after that moment, so a reference accepted
 * before it names an earlier attempt's record. Two paths put such a reference beside a fresh message id: a lease
 * extension by a holder with evidence off, or by the earlier version (which wrote the id only).
 */
import type { NotificationItem } from './notification.ts';

/** The item's evidence reference, or undefined when it has none or it names an earlier attempt's record (above). */
export function attemptEvidence(
  item: Pick<NotificationItem, 'evidence' | 'createdAt'>,
): NotificationItem['evidence'] | undefined {
  const { evidence } = item;
  if (evidence === undefined) return undefined;
  // An item without a createdAt (none is written so) reads as current: the reference is then trusted as before.
  return Date.parse(evidence.acceptedAt) < Date.parse(item.createdAt) ? undefined : evidence;
}

/**
 * Whether the evidence reference an item carries is its current attempt's. A resend (stores/event-store.ts `resend`)
 * removes the message ids but keeps `evidence`, and the next claim moves `attempt` on. Two paths put such an earlier
 * reference beside a fresh message id: a lease extension by a holder with evidence off, or by the earlier version
 * (which wrote the id only). A reference names the attempt whose send wrote it (dispatch/record-evidence.ts
 * `sentWriteOf`), so it is this attempt's only when that is the item's attempt: one counter, no clocks compared.
 * A reference written before it named its attempt falls back on time: a resend and a release from HELD move
 * `createdAt`, so one accepted before it is an earlier attempt's. That compares the ingest, ops or sweeper clock with
 * the dispatch clock: a skew of more than the claim and the provider call misjudges it (only such old references).
 */
import type { NotificationItem } from './notification.ts';

/** The item's evidence reference, or undefined when it has none or it names an earlier attempt's record (above). */
export function attemptEvidence(
  item: Pick<NotificationItem, 'evidence' | 'createdAt' | 'attempt'>,
): NotificationItem['evidence'] | undefined {
  const { evidence } = item;
  if (evidence === undefined) return undefined;
  if (evidence.attempt !== undefined) return evidence.attempt === item.attempt ? evidence : undefined;
  // An item without a createdAt (none is written so) reads as current: the reference is then trusted as before.
  return Date.parse(evidence.acceptedAt) < Date.parse(item.createdAt) ? undefined : evidence;
}

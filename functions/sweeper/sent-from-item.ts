/**
 * A dead holder's send the sweeper SENT from the message id its lease extension had put on the item (sweep.ts
 * `sentFromItem`): the SENT write that would have named its evidence record never landed. The record was kept if the
 * holder's invocation lived to write its batch — the evidence index then finds it by its event — or if its spool put
 * landed (then the spool look-up SENT it with its record, and it is not here). Otherwise it went with the holder —
 * nothing rebuilds a record whose digest nothing holds (docs/evidence-and-privacy.md "Where such an invocation dies")
 * — or it waits unindexed (a gap not yet filled, a batch whose index write was refused): the index cannot tell which.
 * An earlier attempt's record of the same notification, indexed, reads as kept: the index does not say the attempt.
 */
import { parseNotificationId } from '../domain/keys.ts';
import type { EvidenceIndex } from '../stores/evidence-index.ts';
import type { SweepEntry } from '../stores/notification-store.ts';

export interface RecordsNotKept {
  /** Sends whose record no index names: lost with their holder, or not indexed yet. */
  readonly notKept: readonly SweepEntry[];
  /** Sends the index could not be read for (it refused): neither kept nor lost as far as this run knows. */
  readonly unchecked: readonly SweepEntry[];
}

export async function recordsNotKept(
  sent: readonly SweepEntry[],
  index: Pick<EvidenceIndex, 'sendsOfEvent'>,
): Promise<RecordsNotKept> {
  const notKept: SweepEntry[] = [];
  const unchecked: SweepEntry[] = [];
  for (const e of sent) {
    const eventId = parseNotificationId(e.notificationId)?.eventId;
    try {
      const refs = eventId === undefined ? [] : await index.sendsOfEvent(eventId);
      if (!refs.some((r) => r.notificationId === e.notificationId)) notKept.push(e);
    } catch {
      unchecked.push(e);
    }
  }
  return { notKept, unchecked };
}

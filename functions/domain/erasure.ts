/**
 * Erasure is final (docs/evidence-and-privacy.md "Erasure policy"): a notification whose customer was erased has lost
 * its address, its data and its user id, and nothing may send it again — no repair by the producer's corrected resend,
 * no operator's resend or repair, no record that reaches dispatch anyway. Its data is emptied, so anything rebuilt
 * from it would be a blank message to nobody; and its user id is gone, so the customer's opt-outs could no longer be
 * read for it. Pure: the predicate every path asks, and the words each refusal says.
 */

/** The user id an erased notification carries instead of the customer's. */
export const ERASED_USER = 'ERASED';

/** What an item says of its erasure: when, and whose data it no longer holds. */
export interface ErasureMarks {
  readonly erasedAt?: unknown;
  readonly userId?: unknown;
}

/**
 * Whether an item's customer was erased: it carries the erasure's time, which every erasure writes. Not the user id
 * alone: that is the producer's to choose, and a customer whose id is the word ERASED must still get their notices.
 */
export const isErased = (item: ErasureMarks): boolean => typeof item.erasedAt === 'string';

/** Why an erased notification is not sent again by `action` (resent, repaired …): what an operator reads. */
export const erasedRefusal = (notificationId: string, item: ErasureMarks, action: 'resent' | 'repaired' | 'released') =>
  `${notificationId} was erased${typeof item.erasedAt === 'string' ? ` at ${item.erasedAt}` : ''}: an erased notification is never ${action} — its address and data are gone, and its customer's opt-outs can no longer be read for it`;

/**
 * Why a SENT notification is not erased yet: its evidence batch is still open (its invocation has not written it, or
 * died and the sweeper has yet to rebuild it). The rebuild renders the notification again from its data; erased, it
 * could not, and the record would be lost. So erasure waits for the batch: what an operator reads.
 */
export const evidencePendingWait = (batch: string, dueMs: number, again: 'erase' | 'resend' = 'erase') =>
  `its evidence batch ${batch} is not written yet (due ${new Date(dueMs).toISOString()}; the sweeper rebuilds it from this notification): ${again} again once it is`;

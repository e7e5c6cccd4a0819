/**
 * Why an operator's action is not done: the true reason, typed, and the words an operator reads. The preview and the
 * write of an action ask the same rule and answer with the same refusal (docs/operations.md "The operator CLI").
 * Pure.
 */

export const REFUSAL_CODES = [
  /** Nothing by that id: no notification, quarantined record, event or active suppression. */
  'NOT_FOUND',
  /** The request itself is wrong: a malformed id, a corrected value that is no event of this id. */
  'INVALID',
  /** The customer was erased: nothing of theirs is sent again (functions/domain/erasure.ts). */
  'ERASED',
  /** The provider is known to have accepted it: a resend would be a second copy, unless the operator names it. */
  'ACCEPTED',
  /** The pipeline has not given up on it yet. */
  'IN_FLIGHT',
  /** Finished in a way a resend does not undo: suppressed (an opt-out, a bouncing address). */
  'SUPPRESSED',
  /** Its contact point has no sendable reading: the producer's corrected event repairs it, not a resend. */
  'CONTACT_REFUSED',
  /** What was read moved before the write: shown one thing, it would have done another. */
  'CHANGED',
  /** The action has nothing to do (no refused channel to repair). */
  'NOTHING_TO_DO',
  /** Waiting for its send window: the sweeper releases it when the window opens. */
  'HELD',
  /**
   * Its send's evidence batch is not written yet (its intent open): a resend now would take from the notification
   * what the batch's rebuild needs. Try again once it is written (minutes).
   */
  'EVIDENCE_PENDING',
  /** Past its type's validity (EXPIRED, or it would be at the send): a late notice is never sent. */
  'PAST_VALIDITY',
  /** A newer notice for the same customer and key replaced it: that one is what the customer gets. */
  'SUPERSEDED',
  /** Its type's flood guard limited it: the customer had their share in that window. */
  'THROTTLED',
  /** Its secret (a one-time code) was forgotten when it ended: nothing to send again. */
  'SECRET_FORGOTTEN',
  /** The kept copy of a quarantined record was cut short: only a corrected value can be replayed. */
  'VALUE_TRUNCATED',
  /** A replay of a quarantined record's stored value would be quarantined again: only a corrected value cures it. */
  'WOULD_QUARANTINE',
  /** Replayed, and ingest quarantined it again (the outcome of a replay, never DONE). */
  'STILL_QUARANTINED',
  /** A corrected value that is not the quarantined record's event (it names another eventId, or none). */
  'CORRECTION_REFUSED',
  /** Four eyes: this action is proposed by one identity and approved by another, never confirmed alone. */
  'APPROVAL_REQUIRED',
  /** Four eyes: the identity that proposed an action may not approve it. */
  'OWN_PROPOSAL',
  /**
   * Four eyes: the proposer's and the approver's names are of two kinds (a console e-mail, an Identity Center user
   * name), or one is a shared role — possibly one person under two names: a person of the proposer's kind approves.
   */
  'OWN_PROPOSAL_UNKNOWN',
  /** A proposal past its expiry: propose again, on what is there now. */
  'EXPIRED',
  /** A proposal already approved or rejected: each is decided once. */
  'DECIDED',
  /**
   * A proposal that is not what its write-once PROPOSE audit record says was proposed (another request, what was
   * shown, proposer or reason): it was edited in the table, or has no such record. Never applied.
   */
  'TAMPERED',
  /** Not decided on this surface: the support console decides resends only; an engineer decides the rest. */
  'NOT_HERE',
  /** Not a notice a failover held (no successor waiting for the old region's record): nothing to release or settle. */
  'NOT_HELD',
  /** A held notice decided already (by the old region's record, a reconciliation or an operator): held no more. */
  'ALREADY_RESOLVED',
  /**
   * A copy of a record from the other region's cluster: that region takes it from its own cluster, so replaying it
   * here could send it twice.
   */
  'TAKEN_ELSEWHERE',
  /** The other region answers: `ops reconcile` decides this from its record, not an operator at their risk. */
  'USE_RECONCILE',
] as const;
export type RefusalCode = (typeof REFUSAL_CODES)[number];

export interface Refusal {
  readonly code: RefusalCode;
  readonly message: string;
  /** What exactly, where a code covers several causes (SUPPRESSED: CARRIER_OPT_OUT, OPTED_OUT, BOUNCED …). */
  readonly cause?: string;
}

export const refusal = (code: RefusalCode, message: string, cause?: string): Refusal =>
  cause === undefined ? { code, message } : { code, message, cause };

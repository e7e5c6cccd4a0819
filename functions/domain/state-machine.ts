/**
 * The notification state machine: the statuses a notification can be in and every move between them the code makes.
 * The pipeline's moves are TRANSITIONS; the operator's are OPERATOR_TRANSITIONS. Adapters derive the condition of
 * each write from these tables (allowedFrom), and the chaos suite checks every observed change against them.
 */
export const NOTIFICATION_STATUSES = [
  'PENDING',
  'SENDING',
  'SENT',
  'FAILED',
  'UNKNOWN',
  'SUPPRESSED',
  'REFUSED',
  /** Outside its type's send window (quiet hours): waits for the window to open; the sweeper releases it. */
  'HELD',
  /** Its type's validity since occurredAt ended before it could be sent: never sent. */
  'EXPIRED',
  /** A newer notice of its series (same customer, type and key) replaces it: never sent. */
  'SUPERSEDED',
  /** The flood guard: the customer already had its type's limit on this channel in the window. Never sent. */
  'THROTTLED',
  /**
   * A successor a promoted region wrote about a notice the previous epoch's region may have sent (docs/regions.md):
   * waits for that region's record, or an operator's decision. Never released by time.
   */
  'FAILOVER_HELD',
  /** This item's notice lives on in another item of the same (eventId, channel) — its successor or its original. */
  'HANDED_OVER',
] as const;
export type NotificationStatus = (typeof NOTIFICATION_STATUSES)[number];
export const TERMINAL_STATUSES: readonly NotificationStatus[] = [
  'SENT',
  'FAILED',
  'UNKNOWN',
  'SUPPRESSED',
  'REFUSED',
  'EXPIRED',
  'SUPERSEDED',
  'THROTTLED',
  'HANDED_OVER',
];
/** The terminal statuses of a notification never sent because of its moment (docs/dispatch.md "The right moment"). */
export const NOT_SENT_BY_MOMENT = [
  'EXPIRED',
  'SUPERSEDED',
  'THROTTLED',
] as const satisfies readonly NotificationStatus[];

/** Legal transitions; the chaos suite checks every observed change against this table. */
export const TRANSITIONS: Readonly<Record<NotificationStatus, readonly NotificationStatus[]>> = {
  // PENDING → FAILED: the sweeper expires a notification past its maximum age without claiming it.
  // PENDING → SUPPRESSED: a suppression written without a claim (the store's markSuppressed).
  // PENDING → HANDED_OVER: a demoted region's original, once its successor in the active region carries the notice.
  PENDING: ['SENDING', 'PENDING', 'FAILED', 'SUPPRESSED', 'HANDED_OVER'],
  // SENDING → SENDING: the holder extends its lease (with the provider's message id once it accepted).
  // SENDING → SUPPRESSED: the audience check, after the claim and the pacing wait, found the channel opted out.
  // SENDING → HELD, EXPIRED, SUPERSEDED, THROTTLED: the moment checks, between the claim and the provider call.
  SENDING: [
    'SENT',
    'FAILED',
    'PENDING',
    'UNKNOWN',
    'SENDING',
    'SUPPRESSED',
    'HELD',
    'EXPIRED',
    'SUPERSEDED',
    'THROTTLED',
  ],
  SENT: [],
  FAILED: [],
  UNKNOWN: [],
  SUPPRESSED: [],
  // The sweeper releases it when its window opens; dispatch then checks everything again (validity, audience …).
  HELD: ['PENDING'],
  EXPIRED: [],
  SUPERSEDED: [],
  THROTTLED: [],
  // The previous epoch's record decides: finished → HANDED_OVER, unknown → UNKNOWN, proven never sent → PENDING;
  // past the notice's maximum age → FAILED (EXPIRED).
  FAILOVER_HELD: ['HANDED_OVER', 'UNKNOWN', 'PENDING', 'FAILED'],
  HANDED_OVER: [],
  // Written REFUSED by ingest (its contact point has no sendable reading); nothing in the pipeline moves it. Only the
  // producer's corrected resend of the event repairs it: REFUSED → PENDING with the new contact point, conditionally
  // (functions/ingest/inbox-store.ts repairChannels, docs/event.md "A refused channel").
  REFUSED: ['PENDING'],
};

/**
 * The operator's moves, apart from the pipeline's: `ops resend` puts a notification the pipeline has given up on back
 * to PENDING for one more send. FAILED and UNKNOWN on the operator's word alone; SENT only when the operator names
 * the message id the provider accepted (--despite-accepted), having checked that message's delivery — a resend of a
 * SENT notification is a second copy, so it is never the pipeline's to take (docs/dispatch.md "The state machine").
 */
export const OPERATOR_TRANSITIONS: Readonly<Partial<Record<NotificationStatus, readonly NotificationStatus[]>>> = {
  FAILED: ['PENDING'],
  UNKNOWN: ['PENDING'],
  SENT: ['PENDING'],
};

/**
 * `ops reconcile`'s moves, once a failed-over region answers again and is fenced and quiet (docs/regions.md): a successor
 * UNKNOWN because its original was in flight follows what the original shows — handed over when it was sent, sent
 * when it never was.
 */
export const RECONCILE_TRANSITIONS: Readonly<Partial<Record<NotificationStatus, readonly NotificationStatus[]>>> = {
  UNKNOWN: ['HANDED_OVER', 'PENDING'],
};

/**
 * `ops release-held` and `ops settle-held`: an operator decides a successor that waits for an old region's record
 * which may never come (docs/regions.md). Released → PENDING (sent, late); settled → HANDED_OVER (the old region's
 * record or the operator's proof holds the outcome) or FAILED (held, closed unsent). An UNKNOWN successor settled
 * without proof stays UNKNOWN (no move: it only stops waiting).
 */
export const HELD_DECISION_TRANSITIONS: Readonly<Partial<Record<NotificationStatus, readonly NotificationStatus[]>>> = {
  FAILOVER_HELD: ['PENDING', 'HANDED_OVER', 'FAILED'],
  UNKNOWN: ['PENDING', 'HANDED_OVER'],
};

/**
 * Who moves a notification: the pipeline (ingest, dispatch, the sweeper), an operator's resend, a reconciliation, or
 * an operator's decision on a held notice.
 */
export type Mover = 'pipeline' | 'operator' | 'reconcile' | 'held';

const MOVES_BY: Readonly<Record<Exclude<Mover, 'pipeline'>, typeof OPERATOR_TRANSITIONS>> = {
  operator: OPERATOR_TRANSITIONS,
  reconcile: RECONCILE_TRANSITIONS,
  held: HELD_DECISION_TRANSITIONS,
};

/** Whether `by` may move a notification from `from` to `to`. */
export const canMove = (from: NotificationStatus, to: NotificationStatus, by: Mover = 'pipeline'): boolean =>
  (by === 'pipeline' ? TRANSITIONS[from] : (MOVES_BY[by][from] ?? [])).includes(to);

/** A write the state machine does not allow: a bug in the code that asked for it, never a condition of the data. */
export class IllegalTransitionError extends Error {
  override name = 'IllegalTransitionError';
}

/**
 * The condition a conditional write moving a notification from `from` to `to` carries: `#status = :fromStatus`, with
 * its value. Thrown when the table has no such edge, so an adapter can only write the moves this module allows.
 * The caller maps `#status` to `status` (a reserved word) and adds its own fencing (attempt, sweepAt …).
 */
export function moveCondition(
  from: NotificationStatus,
  to: NotificationStatus,
  by: Mover = 'pipeline',
): { readonly expression: string; readonly values: { readonly ':fromStatus': NotificationStatus } } {
  if (!canMove(from, to, by)) throw new IllegalTransitionError(`${by} may not move a notification ${from} → ${to}`);
  return { expression: '#status = :fromStatus', values: { ':fromStatus': from } };
}

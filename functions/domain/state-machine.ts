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
] as const;
export type NotificationStatus = (typeof NOTIFICATION_STATUSES)[number];
export const TERMINAL_STATUSES: readonly NotificationStatus[] = ['SENT', 'FAILED', 'UNKNOWN', 'SUPPRESSED', 'REFUSED'];

/** Legal transitions; the chaos suite checks every observed change against this table. */
export const TRANSITIONS: Readonly<Record<NotificationStatus, readonly NotificationStatus[]>> = {
  // PENDING → FAILED: the sweeper expires a notification past its maximum age without claiming it.
  // PENDING → SUPPRESSED: a suppression written without a claim (the store's markSuppressed).
  PENDING: ['SENDING', 'PENDING', 'FAILED', 'SUPPRESSED'],
  // SENDING → SENDING: the holder extends its lease (with the provider's message id once it accepted).
  // SENDING → SUPPRESSED: the audience check, after the claim and the pacing wait, found the channel opted out.
  SENDING: ['SENT', 'FAILED', 'PENDING', 'UNKNOWN', 'SENDING', 'SUPPRESSED'],
  SENT: [],
  FAILED: [],
  UNKNOWN: [],
  SUPPRESSED: [],
  // Written REFUSED by ingest (its contact point has no sendable reading); nothing in the pipeline moves it. Only the
  // producer's corrected resend of the event repairs it: REFUSED → PENDING with the new contact point, conditionally
  // (functions/ingest/inbox-store.ts repairChannels, docs/event.md "A refused channel").
  REFUSED: ['PENDING'],
};

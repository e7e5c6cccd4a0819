/**
 * An operator's resend (`ops resend`): which notifications it may put back in flight, and why the others are refused
 * (docs/operations.md "The operator CLI"). One pure rule, asked by the preview and again by the write itself, so what
 * the operator is shown is what the write does.
 */
import type { SuppressedReason } from './audience.ts';
import { erasedRefusal, evidencePendingWait, isErased } from './erasure.ts';
import type { VerifiedIdentity } from './identity.ts';
import { messageIdOf } from './message-id.ts';
import { type Refusal, refusal } from './refusal.ts';
import { validUntilOf } from './send-moment.ts';
import { canMove, type NotificationStatus } from './state-machine.ts';

/** What a resend decides on, as the item holds it. */
export interface ResendCandidate {
  readonly status?: unknown;
  /** The send's message id: a push's or an SMS's here, an email's in sesMessageId (message-id.ts). */
  readonly providerMessageId?: unknown;
  readonly sesMessageId?: unknown;
  readonly erasedAt?: unknown;
  readonly userId?: unknown;
  /** What its validity is judged by (send-moment.ts): the type and when it occurred. */
  readonly template?: unknown;
  readonly occurredAt?: unknown;
  /** When notifier received it (send-moment.ts occurredMsOf: an occurredAt ahead of its arrival counts from there). */
  readonly createdAt?: unknown;
  readonly firstCreatedAt?: unknown;
  readonly validUntil?: unknown;
  readonly supersededBy?: unknown;
  readonly throttledWindow?: unknown;
  readonly heldUntil?: unknown;
  readonly suppressedReason?: unknown;
  /** A secret field's value until the notification ends, and its keyed MAC (secrets.ts): kept after. */
  readonly secrets?: unknown;
  readonly secretDigests?: unknown;
  /** The provider's latest delivery report on it (feedback.ts), and its words. */
  readonly deliveryStatus?: unknown;
  readonly deliveryResponse?: unknown;
}

/** A delivery report that says the customer did not get it. */
const NOT_DELIVERED = new Set(['REJECTED', 'BOUNCED', 'FAILED']);

/**
 * Why the moment ended a notification, so a resend is refused (docs/dispatch.md "The right moment"): waiting for its
 * window (HELD: the sweeper releases it), or ended by the moment (EXPIRED, SUPERSEDED, THROTTLED — the pipeline
 * decided it must not be sent, and a resend would end the same).
 */
function endedByMoment(id: string, item: ResendCandidate): Refusal | undefined {
  switch (item.status) {
    case 'HELD':
      return refusal(
        'HELD',
        `${id} is HELD until ${String(item.heldUntil)} (its send window): the sweeper releases it then, nothing to resend`,
      );
    case 'EXPIRED':
      return refusal(
        'PAST_VALIDITY',
        `${id} is EXPIRED: its validity ended at ${String(item.validUntil)}; a resend would expire again, never sent`,
      );
    case 'SUPERSEDED':
      return refusal(
        'SUPERSEDED',
        `${id} is SUPERSEDED by the newer notice ${String(item.supersededBy)}: that one is what the customer is to get`,
      );
    case 'THROTTLED':
      return refusal(
        'THROTTLED',
        `${id} is THROTTLED by its type's flood guard (${String(item.throttledWindow)}): the customer had their limit; it is not resent`,
      );
  }
  return undefined;
}

/** A notice past its validity (send-moment.ts) at `now`, whatever its status: dispatch would end it EXPIRED, never sent. */
function pastValidity(id: string, item: ResendCandidate, now: number | undefined): Refusal | undefined {
  if (now === undefined || typeof item.template !== 'string') return undefined;
  const text = (value: unknown) => (typeof value === 'string' ? value : undefined);
  const validUntil = validUntilOf({
    template: item.template,
    occurredAt: text(item.occurredAt),
    createdAt: text(item.createdAt),
    firstCreatedAt: text(item.firstCreatedAt),
  });
  if (validUntil === undefined || now < validUntil) return undefined;
  return refusal(
    'PAST_VALIDITY',
    `${id}: its validity ended at ${new Date(validUntil).toISOString()}; a resend would end EXPIRED, never sent`,
  );
}

/** The provider's message id when the item says the provider accepted it (SENT, or a late acceptance on UNKNOWN). */
export const acceptedMessageId = (item: {
  readonly providerMessageId?: unknown;
  readonly sesMessageId?: unknown;
}): string | undefined => messageIdOf(item);

/** Why a resend of a notification whose acceptance is known is refused: what the operator must see, and do. */
export function acceptedRefusal(
  id: string,
  status: string,
  messageId: string | undefined,
  delivery: Pick<ResendCandidate, 'deliveryStatus' | 'deliveryResponse'> = {},
): string {
  // A report that it failed is said as such: "the customer has it" would be the refusal's false reason.
  // A delay (SES DeliveryDelay) is not there yet either: the email service is still trying.
  const delayed = delivery.deliveryStatus === 'DELAYED';
  const failed = typeof delivery.deliveryStatus === 'string' && (NOT_DELIVERED.has(delivery.deliveryStatus) || delayed);
  const words = typeof delivery.deliveryResponse === 'string' && delivery.deliveryResponse !== '';
  const report = failed
    ? `delivery: ${String(delivery.deliveryStatus)}${words ? ` “${String(delivery.deliveryResponse)}”` : ''}${delayed ? ', still being tried' : ''}`
    : '';
  // "The customer has it" only on a report that says so — delivered, or a complaint, which only a delivered message
  // can draw: without one, the provider accepted it and no more is known.
  const delivered = delivery.deliveryStatus === 'DELIVERED' || delivery.deliveryStatus === 'COMPLAINED';
  if (messageId === undefined) {
    return failed
      ? `${id} is ${status}: the provider accepted it (${report}); it is never resent`
      : `${id} is ${status}: ${delivered ? `the customer has it (delivery: ${String(delivery.deliveryStatus)})` : 'the provider accepted it; no delivery report yet'}; it is never resent`;
  }
  const what =
    status === 'SENT'
      ? failed
        ? `${id} is SENT: the provider accepted it as message ${messageId} (${report})`
        : delivered
          ? `${id} is SENT: the customer has it (the provider accepted it as message ${messageId}; delivery: ${String(delivery.deliveryStatus)})`
          : `${id} is SENT: the provider accepted it as message ${messageId}; no delivery report yet`
      : `${id} is ${status}, but the provider accepted it as message ${messageId} (recorded after its lease expired)`;
  return `${what}. A resend sends a second copy: check that message's delivery first, then resend only with --despite-accepted ${messageId}`;
}

/**
 * Why this notification may not be resent, or undefined when it may: erased (never); accepted by the provider
 * (SENT, or UNKNOWN with a late message id) unless the operator names that message id; REFUSED (the producer's
 * corrected event repairs it); SUPPRESSED (an opt-out or an unreachable address: a resend would be suppressed again);
 * still in flight; held, or ended by the moment (EXPIRED, SUPERSEDED, THROTTLED); past its validity at `now`; a
 * one-time code forgotten when it ended.
 */
export function resendRefusal(
  id: string,
  item: ResendCandidate,
  despiteAccepted?: string,
  /** The clock: with it, a notice past its validity is refused too (the check dispatch would make). */
  now?: number,
): Refusal | undefined {
  if (isErased(item)) return refusal('ERASED', erasedRefusal(id, item, 'resent'));
  const ended = endedByMoment(id, item);
  if (ended !== undefined) return ended;
  const status = String(item.status);
  const accepted = acceptedMessageId(item);
  if ((status === 'SENT' || accepted !== undefined) && (accepted === undefined || despiteAccepted !== accepted)) {
    const mismatch =
      despiteAccepted !== undefined && accepted !== undefined
        ? ` (--despite-accepted names ${despiteAccepted}, not ${accepted})`
        : '';
    return refusal('ACCEPTED', `${acceptedRefusal(id, status, accepted, item)}${mismatch}`);
  }
  if (status === 'REFUSED') {
    return refusal(
      'CONTACT_REFUSED',
      `${id} is REFUSED: its contact point has no sendable reading; the producer's corrected event repairs it (repair <eventId> --value-file FILE)`,
    );
  }
  if (status === 'SUPPRESSED') {
    const why = typeof item.suppressedReason === 'string' ? ` (${item.suppressedReason})` : '';
    return refusal(
      'SUPPRESSED',
      `${id} is SUPPRESSED${why}: the customer opted out or the address cannot be reached; a resend would be suppressed again (lift-suppression, or the customer's new preferences, first)`,
      typeof item.suppressedReason === 'string' ? item.suppressedReason : undefined,
    );
  }
  if (!canMove(status as NotificationStatus, 'PENDING', 'operator')) {
    return refusal('IN_FLIGHT', `${id} is ${status}: still in flight, the pipeline has not given up on it`);
  }
  return pastValidity(id, item, now) ?? secretForgotten(id, item);
}

/**
 * A notice whose secret (a one-time code) was forgotten when it ended (secrets.ts): there is nothing to send again, and
 * a message without its code would mislead. The customer asks for a new code; the producer sends a new event.
 */
function secretForgotten(id: string, item: ResendCandidate): Refusal | undefined {
  if (item.secretDigests === undefined || item.secrets !== undefined) return undefined;
  return refusal(
    'SECRET_FORGOTTEN',
    `${id} carried a secret (a one-time code) that was never kept after it ended: it cannot be sent again; the customer asks for a new code`,
  );
}

/**
 * Why a resend that the item itself allows would be stopped at the send all the same: the address's active
 * suppression (a carrier STOP, a bounce, a complaint) or the customer's choice for the channel — the check dispatch
 * makes (audience.ts suppressedReason), asked before a second person's approval is spent on a send that never goes.
 */
export function blockedRefusal(id: string, blocked: SuppressedReason | undefined): Refusal | undefined {
  if (blocked === undefined) return undefined;
  const why =
    blocked === 'OPTED_OUT'
      ? 'the customer turned this kind of message off'
      : `the address is suppressed (${blocked}): a send to it is stopped`;
  return refusal('SUPPRESSED', `${id} would be SUPPRESSED at the send: ${why}; nothing would go out`, blocked);
}

/**
 * Why a resend of a SENT notification waits while its send's evidence batch is still open (its intent not closed: the
 * invocation still running, or dead and not yet rebuilt): the rebuild takes the notification as SENT with that batch
 * on it, and a resend takes both off — the first send's record, the one a dispute asks about, would never be written.
 * Refused, not queued: the operator sees why and resends once the batch is written (minutes), as an erasure waits.
 */
export function evidencePendingRefusal(
  id: string,
  pending: { readonly batch: string; readonly dueMs: number } | undefined,
): Refusal | undefined {
  if (pending === undefined) return undefined;
  return refusal('EVIDENCE_PENDING', `${id}: ${evidencePendingWait(pending.batch, pending.dueMs, 'resend')}`);
}

/** What a resend keeps of the send it replaces, as read before the write. */
export interface ResentItem extends ResendCandidate {
  readonly attempt?: unknown;
  readonly lastError?: unknown;
  readonly deliveryStatus?: unknown;
  readonly deliveryResponse?: unknown;
  /** The send's evidence (its batch and digest) while the item was SENT. */
  readonly evidence?: unknown;
}

/** The evidence batch a SENT item's record is in, if it names one. */
export const evidenceBatchOfItem = (item: { readonly status?: unknown; readonly evidence?: unknown }) => {
  const batch = (item.evidence as { batch?: unknown } | undefined)?.batch;
  return item.status === 'SENT' && typeof batch === 'string' ? batch : undefined;
};

/**
 * The entry a resend appends to the item's `manualResends`: who (the verified principal, and how it was verified), when, why, and the status, attempt, last error,
 * provider message id and delivery report the notification had — the earlier send's feedback stays here, while the
 * new send's starts afresh on the item.
 */
export function manualResendRecord(
  item: ResentItem,
  by: VerifiedIdentity,
  reason: string,
  at: string,
  despiteAccepted: boolean,
): Record<string, unknown> {
  return {
    by: by.principal,
    verifiedBy: by.verifiedBy,
    // The name people read, beside the principal four eyes compares.
    ...(by.display === undefined ? {} : { byName: by.display }),
    at,
    reason,
    fromStatus: String(item.status),
    attempt: item.attempt,
    ...(item.lastError === undefined ? {} : { lastError: item.lastError }),
    // The earlier send's id under one name whatever its channel: the feedback reads it here (feedback.ts).
    ...(messageIdOf(item) === undefined ? {} : { providerMessageId: messageIdOf(item) }),
    ...(despiteAccepted ? { despiteAccepted: true } : {}),
    ...(typeof item.deliveryStatus === 'string' ? { deliveryStatus: item.deliveryStatus } : {}),
    ...(typeof item.deliveryResponse === 'string' ? { deliveryResponse: item.deliveryResponse } : {}),
    // The batch the replaced send's record is in: a recovery that finds it here, not SENT, counts the record lost.
    ...(evidenceBatchOfItem(item) === undefined ? {} : { evidenceBatch: evidenceBatchOfItem(item) }),
  };
}

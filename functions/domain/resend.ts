/**
 * An operator's resend (`ops resend`): which notifications it may put back in flight, and why the others are refused
 * (docs/operations.md "The operator CLI"). One pure rule, asked by the preview and again by the write itself, so what
 * the operator is shown is what the write does.
 */
import { erasedRefusal, isErased } from './erasure.ts';
import { validUntilOf } from './send-moment.ts';
import { canMove, type NotificationStatus } from './state-machine.ts';

/** What a resend decides on, as the item holds it. */
export interface ResendCandidate {
  readonly status?: unknown;
  readonly providerMessageId?: unknown;
  readonly erasedAt?: unknown;
  readonly userId?: unknown;
  /** What its validity is judged by (send-moment.ts): the type and when it occurred. */
  readonly template?: unknown;
  readonly occurredAt?: unknown;
  readonly validUntil?: unknown;
  readonly supersededBy?: unknown;
  readonly throttledWindow?: unknown;
  readonly heldUntil?: unknown;
}

/**
 * Why the moment refuses a resend (docs/dispatch.md "The right moment"): ended by it (EXPIRED, SUPERSEDED,
 * THROTTLED — the pipeline decided it must not be sent, and a resend would end the same), waiting for its window
 * (HELD), or past its validity whatever its status: dispatch would end it EXPIRED, never sent.
 */
function momentRefusal(id: string, item: ResendCandidate, now: number | undefined): string | undefined {
  switch (item.status) {
    case 'HELD':
      return `${id} is HELD until ${String(item.heldUntil)} (its send window): the sweeper releases it then, nothing to resend`;
    case 'EXPIRED':
      return `${id} is EXPIRED: its validity ended at ${String(item.validUntil)}; a resend would expire again, never sent`;
    case 'SUPERSEDED':
      return `${id} is SUPERSEDED by the newer notice ${String(item.supersededBy)}: that one is what the customer is to get`;
    case 'THROTTLED':
      return `${id} is THROTTLED by its type's flood guard (${String(item.throttledWindow)}): the customer had their limit; it is not resent`;
  }
  if (now === undefined || typeof item.template !== 'string') return undefined;
  const occurredAt = typeof item.occurredAt === 'string' ? item.occurredAt : undefined;
  const validUntil = validUntilOf({ template: item.template, occurredAt });
  return validUntil !== undefined && now >= validUntil
    ? `${id}: its validity ended at ${new Date(validUntil).toISOString()}; a resend would end EXPIRED, never sent`
    : undefined;
}

/** The provider's message id when the item says the provider accepted it (SENT, or a late acceptance on UNKNOWN). */
export const acceptedMessageId = (item: { readonly providerMessageId?: unknown }): string | undefined =>
  typeof item.providerMessageId === 'string' && item.providerMessageId !== '' ? item.providerMessageId : undefined;

/** Why a resend of a notification whose acceptance is known is refused: what the operator must see, and do. */
export function acceptedRefusal(id: string, status: string, messageId: string | undefined): string {
  if (messageId === undefined) return `${id} is ${status}: the customer has it; it is never resent`;
  const what =
    status === 'SENT'
      ? `${id} is SENT: the customer has it (the provider accepted it as message ${messageId})`
      : `${id} is ${status}, but the provider accepted it as message ${messageId} (recorded after its lease expired)`;
  return `${what}. A resend sends a second copy: check that message's delivery first, then resend only with --despite-accepted ${messageId}`;
}

/**
 * Why this notification may not be resent, or undefined when it may: erased (never); accepted by the provider
 * (SENT, or UNKNOWN with a late message id) unless the operator names that message id; REFUSED (the producer's
 * corrected event repairs it); still in flight.
 */
export function resendRefusal(
  id: string,
  item: ResendCandidate,
  despiteAccepted?: string,
  /** The clock: with it, a notice past its validity is refused too (the check dispatch would make). */
  now?: number,
): string | undefined {
  if (isErased(item)) return erasedRefusal(id, item, 'resent');
  const moment = momentRefusal(id, item, now);
  if (moment !== undefined) return moment;
  const status = String(item.status);
  const accepted = acceptedMessageId(item);
  if ((status === 'SENT' || accepted !== undefined) && (accepted === undefined || despiteAccepted !== accepted)) {
    const mismatch =
      despiteAccepted !== undefined && accepted !== undefined
        ? ` (--despite-accepted names ${despiteAccepted}, not ${accepted})`
        : '';
    return `${acceptedRefusal(id, status, accepted)}${mismatch}`;
  }
  if (status === 'REFUSED') {
    return `${id} is REFUSED: its contact point has no sendable reading; the producer's corrected event repairs it (repair <eventId> --value-file FILE)`;
  }
  if (!canMove(status as NotificationStatus, 'PENDING', 'operator')) {
    return `${id} is ${status}: still in flight, the pipeline has not given up on it`;
  }
  return undefined;
}

/**
 * What became of a notification, in one line: what was sent, or exactly why not (docs/evidence-and-privacy.md "One
 * customer's data"). Pure: the item, its event's inbox item, and the customer's preferences and the address's
 * suppression as read now.
 */
import type { Channel } from '../domain/channels.ts';
import { messageIdOf } from '../domain/message-id.ts';
import type { EventView, StoredItem } from '../stores/event-store.ts';

export interface NoticeView {
  readonly eventId: string;
  readonly type: string;
  readonly occurredAt: string;
  readonly channel: Channel | null;
  readonly status: string;
  /** What was sent, or exactly why not, in one line. */
  readonly why: string;
}

/** The one line of a notification. */
export function whyOf(n: StoredItem, prefs: StoredItem | undefined, suppression: StoredItem | undefined): string {
  const status = String(n.status);
  switch (status) {
    case 'SENT':
      return `sent ${n.updatedAt} to ${n.recipient}, provider message ${messageIdOf(n)}${n.deliveryStatus ? `; provider reported ${n.deliveryStatus} at ${n.deliveryAt}${n.deliveryResponse ? ` (${n.deliveryResponse})` : ''}${n.bounceType ? ` (${n.bounceType}/${n.bounceSubType})` : ''}` : ''}`;
    case 'SUPPRESSED':
      return suppressedWhy(n, prefs, suppression);
    case 'REFUSED':
      return `not sent: the contact point was refused (${n.refusedReason}): ${n.refusedDetail}`;
    case 'FAILED': {
      const error = String(n.lastError ?? '');
      if (error === 'EXPIRED') return `not sent: too old — not sent within the maximum age (${n.updatedAt})`;
      return `not sent: failed (${error})`;
    }
    case 'HELD':
      return `waiting for its send window: held until ${n.heldUntil} (${n.heldZone}), then sent if still valid`;
    case 'EXPIRED':
      return `not sent: past its validity (valid until ${n.validUntil}); a late notice is never sent`;
    case 'SUPERSEDED':
      return `not sent: superseded by the newer notice ${n.supersededBy} (occurred ${n.supersededByOccurredAt})`;
    case 'THROTTLED':
      return `not sent: its type's flood guard (${n.throttledWindow}): the customer had their limit on ${n.channel}`;
    case 'UNKNOWN':
      return `outcome unknown (${n.lastError}): the provider may have it${messageIdOf(n) ? ` — it accepted message ${messageIdOf(n)} after the lease` : ''}`;
    case 'PENDING':
    case 'SENDING':
      return `in flight (${status}${n.retryAt ? `, next try ${new Date(Number(n.retryAt)).toISOString()}` : ''}${n.lastError ? `, last ${n.lastError}` : ''})`;
    default:
      return status;
  }
}

function suppressedWhy(n: StoredItem, prefs: StoredItem | undefined, suppression: StoredItem | undefined): string {
  const reason = String(n.suppressedReason ?? '');
  if (reason === 'OPTED_OUT') {
    const since = prefs
      ? ` (preferences of ${prefs.occurredAt}, event ${prefs.eventId}${Array.isArray(prefs.optOut) && !prefs.optOut.includes(n.channel) ? '; opted in again since' : ''})`
      : '';
    return `not sent: the customer opted out of ${n.channel}${since}`;
  }
  const lifted = suppression?.state === 'LIFTED' ? `; lifted ${suppression.liftedAt} by ${suppression.liftedBy}` : '';
  return `not sent: the address is suppressed (${reason})${suppression ? ` since ${suppression.since}, from the provider's report on ${suppression.notificationId}${lifted}` : ''}`;
}

/**
 * The notices of one event, each with its reason; an event that made no notification says why. `suppressionOf`
 * reads the suppression of a SUPPRESSED notification's address.
 */
export async function explainEvent(
  view: EventView,
  prefs: StoredItem | undefined,
  suppressionOf: (n: StoredItem) => Promise<StoredItem | undefined>,
): Promise<NoticeView[]> {
  const inbox = view.inbox;
  const base = {
    eventId: view.eventId,
    type: String(inbox?.type ?? view.notifications[0]?.template ?? '?'),
    occurredAt: String(inbox?.occurredAt ?? view.notifications[0]?.occurredAt ?? ''),
  };
  if (view.notifications.length === 0) {
    const why =
      inbox?.skipped === 'TOO_OLD'
        ? 'not sent: too old when it arrived (recorded, never sent)'
        : inbox?.erasedAt !== undefined
          ? `erased ${inbox.erasedAt}`
          : `no notification: ${inbox?.skipped ?? 'the event named no channel to send'}`;
    return [{ ...base, channel: null, status: 'NONE', why }];
  }
  const notices: NoticeView[] = [];
  for (const n of view.notifications) {
    const suppression = String(n.status) === 'SUPPRESSED' ? await suppressionOf(n) : undefined;
    const why = whyOf(n, prefs, suppression);
    notices.push({
      ...base,
      channel: n.channel as Channel,
      status: String(n.status),
      why: n.erasedAt !== undefined ? `${why} (erased ${n.erasedAt})` : why,
    });
  }
  return notices;
}

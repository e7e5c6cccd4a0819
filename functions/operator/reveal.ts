/**
 * Showing one notification's contact point in full (docs/console.md): the console masks
 * every contact point; a person who must read one out — to confirm it with the customer on the phone — asks, says
 * why, and the request is audited (REVEAL) before the value is answered. The audit keeps who, when, why and which
 * notice, never the value itself.
 *
 * Input: the notification id. Output: the channel and the contact point. Steps: read the notification; decide
 * (it exists, it was not erased, it has a contact point); perform: nothing to write — the answer is the value read.
 */
import type { Channel } from '../domain/channels.ts';
import { parseNotificationId } from '../domain/keys.ts';
import type { StoredItem } from '../stores/event-store.ts';
import { type OperatorAction, ok, refused } from './action.ts';

export interface RevealRequest {
  readonly notificationId: string;
}

export interface Revealed {
  readonly notificationId: string;
  readonly channel: Channel;
  readonly contact: string;
  /** Whose it is (not shown: the console knows whom it is looking at). */
  readonly userId?: string;
}

export const reveal: OperatorAction<RevealRequest, StoredItem | undefined, Revealed, Revealed> = {
  audit: 'REVEAL',
  target: (request) => request.notificationId,
  kind: () => 'REVEAL',
  customer: (plan) => plan.userId,

  async read(ports, request) {
    const ref = parseNotificationId(request.notificationId);
    if (ref === undefined) return undefined;
    const view = await ports.events.read(ref.eventId);
    return view.notifications.find((n) => n.notificationId === request.notificationId);
  },

  decide(item, { notificationId }) {
    if (parseNotificationId(notificationId) === undefined) {
      return refused('INVALID', `"${notificationId}" is not a notification id (<eventId>#EMAIL|PUSH|SMS)`);
    }
    if (item === undefined) return refused('NOT_FOUND', `no notification ${notificationId}`);
    if (item.erasedAt !== undefined) return refused('ERASED', `${notificationId}: the customer's data was erased`);
    const contact = typeof item.recipient === 'string' ? item.recipient : '';
    if (contact === '') return refused('NOT_FOUND', `${notificationId} has no contact point`);
    const userId = typeof item.userId === 'string' ? item.userId : undefined;
    return ok({
      notificationId,
      channel: item.channel as Channel,
      contact,
      ...(userId === undefined ? {} : { userId }),
    });
  },

  // The audit names the notice and its channel; the value stays out of it.
  shown: (plan) => ({ channel: plan.channel }),
  perform: async (_ports, plan) => ok(plan),
  done: (revealed) => ({ channel: revealed.channel }),
};

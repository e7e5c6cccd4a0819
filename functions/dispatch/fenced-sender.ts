/**
 * The fence read before every provider call (docs/regions.md "Where it is checked"): a send starts only if this region's
 * fence shard, read consistently just now, says ACTIVE at the epoch the notification was claimed at. The send is what
 * is fenced, not only the claim: a claim may be up to a lease old when its send starts. Wrapping the sender puts the
 * read after every other step (holds, the send token, the audience check, the deadline), immediately before the call.
 *
 * Refused, or the fence unreadable: nothing was sent — a `notSent` failure, which dispatch defers without using an
 * attempt. The notification stays this region's, PENDING: a switchover hands it over, a failover gives it a successor.
 */
import type { NotificationItem } from '../domain/notification.ts';
import type { Message } from '../domain/templates.ts';
import type { FenceGate } from '../stores/fence-store.ts';
import { SendError } from './send-error.ts';
import type { Sender } from './senders.ts';

export const REGION_FENCED = 'REGION_FENCED';

export class FencedSender implements Sender {
  constructor(
    private readonly inner: Sender,
    private readonly fence: Pick<FenceGate, 'permitsSend'>,
    /** Counts a send the fence stopped (the FencedSendAttempts alarm). */
    private readonly onRefused: (notification: NotificationItem) => void = () => undefined,
  ) {}

  async send(notification: NotificationItem, message: Message, signal: AbortSignal): Promise<string> {
    const claimEpoch = (notification as { claimEpoch?: unknown }).claimEpoch;
    let permitted: boolean;
    try {
      permitted = await this.fence.permitsSend(
        notification.notificationId,
        typeof claimEpoch === 'number' ? claimEpoch : undefined,
      );
    } catch (error) {
      throw new SendError('notSent', 'FENCE_UNREADABLE', 'the fence could not be read: not sent', { cause: error });
    }
    if (!permitted) {
      this.onRefused(notification);
      throw new SendError('notSent', REGION_FENCED, 'this region is fenced: not sent');
    }
    return this.inner.send(notification, message, signal);
  }
}

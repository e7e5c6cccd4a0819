/**
 * Use case: record one SES feedback event (issue 16).
 *
 * Input: the EventBridge event SES published through the configuration set.
 * Output: what was recorded — for logs and metrics.
 * Steps:
 *   1. Read it (domain/feedback.ts): not ours, not a type we record, or malformed → ignored (acknowledged: a retry
 *      would read the same bytes).
 *   2. A permanent bounce or a complaint → suppress each address for the channel (idempotent; first report stays).
 *      Before the notification's own status, so a feedback whose notification has expired (TTL) still protects the
 *      address.
 *   3. The deliveryStatus on the notification, by rank (a late Delivery never overwrites a Bounce; a duplicate changes
 *      nothing). The send state machine is not touched: SENT stays SENT.
 * Throws only when DynamoDB fails: the invocation is retried, and every step above is safe to repeat.
 */
import type { DeliveryRecorded, SuppressionRecorded } from '../commons/audience-store.ts';
import type { Channel } from '../domain/channels.ts';
import { type Feedback, type FeedbackIgnored, readFeedback, type SuppressionCause } from '../domain/feedback.ts';

export interface FeedbackStore {
  recordDelivery(f: Feedback): Promise<DeliveryRecorded>;
  suppressAddress(
    channel: Channel,
    address: string,
    cause: SuppressionCause,
    notificationId: string,
    at: string,
  ): Promise<SuppressionRecorded>;
}

export type FeedbackResult =
  | { kind: 'ignored'; ignored: FeedbackIgnored }
  | { kind: DeliveryRecorded; feedback: Feedback; suppressions: SuppressionRecorded[] };

export async function recordFeedback(event: unknown, store: FeedbackStore): Promise<FeedbackResult> {
  const read = readFeedback(event);
  if (!read.ok) return { kind: 'ignored', ignored: read.ignored };
  const f = read.feedback;
  const suppressions: SuppressionRecorded[] = [];
  const suppress = f.suppress;
  if (suppress !== undefined) {
    for (const address of suppress.addresses) {
      suppressions.push(await store.suppressAddress(f.channel, address, suppress.cause, f.notificationId, f.at));
    }
  }
  return { kind: await store.recordDelivery(f), feedback: f, suppressions };
}

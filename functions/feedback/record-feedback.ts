/**
 * Use case: record what a provider said about a message it accepted (issue 16).
 *
 * Input: an SES event (EventBridge) or SNS delivery status log entries (a CloudWatch Logs subscription), read by
 * domain/feedback.ts into Feedback.
 * Output: what was recorded, per feedback — for logs and metrics.
 * Steps, per feedback:
 *   1. Not ours, not a type we record, or malformed → ignored (acknowledged: a retry would read the same bytes).
 *   2. The notification: named by SES's tag, or found by SNS's message id. A message id not found is not ours (another
 *      sender of the account shares SNS's log groups), once the index had time to catch up with a send just made.
 *   3. An address the provider says can never be reached → suppressed for the channel (idempotent; the first report
 *      stays). Before the notification's own status, so SES feedback whose notification has expired (TTL) still
 *      protects the address.
 *   4. The deliveryStatus on the notification, only for the send it describes and by rank (a late Delivery never
 *      overwrites a Bounce; a duplicate changes nothing; feedback about a send before a resend leaves the resend's
 *      own). The send state machine is not touched: SENT stays SENT.
 * Throws only when DynamoDB fails: the invocation is retried, and every step above is safe to repeat.
 */
import type { SuppressionRecorded } from '../commons/audience-store.ts';
import type { DeliveryRecorded } from '../commons/delivery-store.ts';
import type { Channel } from '../domain/channels.ts';
import type { Feedback, FeedbackIgnored, FeedbackTarget, ReadResult, SuppressionCause } from '../domain/feedback.ts';

export interface FeedbackStore {
  findByMessageId(messageId: string): Promise<FeedbackTarget | undefined>;
  recordDelivery(target: FeedbackTarget, f: Feedback): Promise<DeliveryRecorded>;
  suppressAddress(
    channel: Channel,
    address: string,
    cause: SuppressionCause,
    notificationId: string,
    at: string,
  ): Promise<SuppressionRecorded>;
}

export interface FeedbackDeps {
  readonly store: FeedbackStore;
  readonly now: () => number;
  readonly sleep: (ms: number) => Promise<void>;
}

export type FeedbackResult =
  | { kind: 'ignored'; ignored: FeedbackIgnored }
  | { kind: 'notOurs'; feedback: Feedback }
  | { kind: DeliveryRecorded; feedback: Feedback; target: FeedbackTarget; suppressions: SuppressionRecorded[] };

/**
 * A send is marked (and its message id indexed) moments after the provider accepted it, while SNS can log a push
 * delivered within milliseconds: a message id sent this recently and not found yet is looked up again a few times.
 */
export const INDEX_CATCH_UP = { recentMs: 60_000, retries: 3, waitMs: 500 } as const;

async function targetOf(f: Feedback, deps: FeedbackDeps): Promise<FeedbackTarget | undefined> {
  if (f.target !== undefined) return f.target;
  for (let retry = 0; ; retry++) {
    const found = await deps.store.findByMessageId(f.messageId);
    if (found !== undefined && found.channel === f.channel) return found;
    if (found !== undefined || retry >= INDEX_CATCH_UP.retries) return undefined;
    if (deps.now() - f.sentAtMs > INDEX_CATCH_UP.recentMs) return undefined;
    await deps.sleep(INDEX_CATCH_UP.waitMs);
  }
}

export async function recordFeedback(read: ReadResult, deps: FeedbackDeps): Promise<FeedbackResult> {
  if (!read.ok) return { kind: 'ignored', ignored: read.ignored };
  const f = read.feedback;
  const target = await targetOf(f, deps);
  // Not ours: SES feedback always names its notification; an SNS message id that no notification recorded is another
  // sender's (SNS's delivery status log groups are the account's), and says nothing to us about anyone.
  if (target === undefined) return { kind: 'notOurs', feedback: f };
  const suppressions: SuppressionRecorded[] = [];
  const suppress = f.suppress;
  if (suppress !== undefined) {
    for (const address of suppress.addresses) {
      suppressions.push(
        await deps.store.suppressAddress(f.channel, address, suppress.cause, target.notificationId, f.at),
      );
    }
  }
  return { kind: await deps.store.recordDelivery(target, f), feedback: f, target, suppressions };
}

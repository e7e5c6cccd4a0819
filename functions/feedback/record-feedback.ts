/**
 * Use case: record what a provider said about a message it accepted.
 *
 * Input: an SES event (EventBridge) or SNS delivery status log entries (a CloudWatch Logs subscription, up to
 * thousands at once), read by domain/feedback.ts into Feedback.
 * Output: what was recorded, per feedback — for logs and metrics.
 * Steps, per feedback:
 *   1. Not ours, not a type we record, or malformed → ignored (acknowledged: a retry would read the same bytes).
 *   2. The notification: named by SES's tag, or found by SNS's message id. A message id not found is not ours (another
 *      sender of the account shares SNS's log groups), once the index had time to catch up with a send just made.
 *   3. An address the provider says can never be reached → suppressed for the channel (idempotent; the first report
 *      stays) — only when it is the notification's own recipient. SNS's delivery status log groups are the account's,
 *      so an entry naming a real message id may be anyone's words: it may stop messages to the address this
 *      notification went to, never to another (a suppression stops even a sign-in alert). When the notification is
 *      gone (TTL) or erased, only SES's own events still suppress (EventBridge accepts an aws.ses event from SES
 *      alone); a log entry then suppresses nothing. Before the notification's own status, so SES feedback whose
 *      notification has expired still protects the address.
 *   4. The deliveryStatus on the notification, only for the send it describes and by rank (a late Delivery never
 *      overwrites a Bounce; a duplicate changes nothing; feedback about a send before a resend leaves the resend's
 *      own). The send state machine is not touched: SENT stays SENT.
 *   5. The report appended to the send's evidence (a record of its own, under the provider's message id).
 * Throws only when DynamoDB fails: the invocation is retried, and every step above is safe to repeat.
 */
import pLimit from 'p-limit';
import { normaliseAddress } from '../domain/audience.ts';
import { evidenceBody, evidenceKey, feedbackEvidence } from '../domain/evidence.ts';
import type { Feedback, FeedbackIgnored, FeedbackTarget, ReadResult } from '../domain/feedback.ts';
import type { AudienceStore, SuppressionRecorded } from '../stores/audience-store.ts';
import type { EvidenceStore } from '../stores/evidence-store.ts';
import type { DeliveryRecorded } from './delivery-store.ts';

/** The feedback function's store: the notifications the reports are about, and the audience's suppressions. */
export interface FeedbackStore extends Pick<AudienceStore, 'suppressAddress'> {
  findByMessageId(messageId: string): Promise<FeedbackTarget | undefined>;
  /** The address the notification was sent to, or undefined when the item is gone or erased. */
  recipientOf(target: FeedbackTarget): Promise<string | undefined>;
  recordDelivery(target: FeedbackTarget, f: Feedback): Promise<DeliveryRecorded>;
}

export interface FeedbackDeps {
  readonly store: FeedbackStore;
  /** The evidence store: every report on a send is appended to that send's evidence (docs/evidence-and-privacy.md). */
  readonly evidence?: { readonly store: EvidenceStore; readonly retentionDays: number };
  readonly now: () => number;
  readonly sleep: (ms: number) => Promise<void>;
}

/** What became of each address a feedback asked to suppress: recorded, or refused as not the notification's own. */
export type SuppressionOutcome = SuppressionRecorded | 'notTheRecipient';

export type FeedbackResult =
  | { kind: 'ignored'; ignored: FeedbackIgnored }
  | { kind: 'notOurs'; feedback: Feedback }
  | { kind: DeliveryRecorded; feedback: Feedback; target: FeedbackTarget; suppressions: SuppressionOutcome[] };

/**
 * A send is marked (and its message id indexed) moments after the provider accepted it, while SNS can log a push
 * delivered within milliseconds: message ids sent this recently and not found yet are looked up again a few times —
 * once for the whole batch, so a batch full of another sender's messages costs at most these few waits.
 */
export const INDEX_CATCH_UP = { recentMs: 60_000, rounds: 3, waitMs: 500 } as const;
/** DynamoDB calls in flight for one batch of log entries. */
export const BATCH_CONCURRENCY = 8;

type Read = Extract<ReadResult, { ok: true }>['feedback'];

/** The notification of each feedback: its own target (SES), or the one that recorded its message id (SNS). */
async function targetsOf(feedbacks: readonly Read[], deps: FeedbackDeps): Promise<Map<Read, FeedbackTarget>> {
  const limit = pLimit(BATCH_CONCURRENCY);
  const targets = new Map<Read, FeedbackTarget>();
  let pending: Read[] = [];
  for (const f of feedbacks) {
    if (f.target !== undefined) targets.set(f, f.target);
    else pending.push(f);
  }
  for (let round = 0; pending.length > 0; round++) {
    const found = await Promise.all(pending.map((f) => limit(() => deps.store.findByMessageId(f.messageId))));
    const missing: Read[] = [];
    pending.forEach((f, i) => {
      const target = found[i];
      // Found under another channel: not this log's message (a message id of another provider that happens to match).
      if (target !== undefined) {
        if (target.channel === f.channel) targets.set(f, target);
      } else if (deps.now() - f.sentAtMs <= INDEX_CATCH_UP.recentMs) missing.push(f);
    });
    if (missing.length === 0 || round + 1 >= INDEX_CATCH_UP.rounds) break;
    await deps.sleep(INDEX_CATCH_UP.waitMs);
    pending = missing;
  }
  return targets;
}

async function record(f: Read, target: FeedbackTarget, deps: FeedbackDeps): Promise<FeedbackResult> {
  const suppressions: SuppressionOutcome[] = [];
  const suppress = f.suppress;
  if (suppress !== undefined) {
    const recipient = await deps.store.recipientOf(target);
    const own = recipient === undefined ? undefined : normaliseAddress(f.channel, recipient);
    // SES names its notification by tag (f.target); SNS's log entries are found by message id.
    const fromSesWithoutItem = own === undefined && f.target !== undefined;
    for (const address of suppress.addresses) {
      suppressions.push(
        fromSesWithoutItem || normaliseAddress(f.channel, address) === own
          ? await deps.store.suppressAddress(f.channel, address, suppress.cause, target.notificationId, f.at)
          : 'notTheRecipient',
      );
    }
  }
  const kind = await deps.store.recordDelivery(target, f);
  // After the table: the evidence is about the message id, whatever the hot item says (a resend's, or expired). A
  // failure throws, and the retried invocation repeats only idempotent steps (the same key is "already there").
  if (deps.evidence !== undefined) {
    const r = feedbackEvidence(target, f, deps.now(), deps.evidence.retentionDays);
    await deps.evidence.store.put(evidenceKey(r), evidenceBody(r), new Date(r.retainUntil));
  }
  return { kind, feedback: f, target, suppressions };
}

/** Records a batch of feedback (one SES event, or a subscription's log entries), each on its own notification. */
export async function recordFeedback(reads: readonly ReadResult[], deps: FeedbackDeps): Promise<FeedbackResult[]> {
  const feedbacks = reads.flatMap((r) => (r.ok ? [r.feedback] : []));
  const targets = await targetsOf(feedbacks, deps);
  const limit = pLimit(BATCH_CONCURRENCY);
  return Promise.all(
    reads.map((r) => {
      if (!r.ok) return { kind: 'ignored' as const, ignored: r.ignored };
      const target = targets.get(r.feedback);
      // Not ours: SES feedback always names its notification; an SNS message id that no notification recorded is
      // another sender's (SNS's delivery status log groups are the account's), and says nothing to us about anyone.
      if (target === undefined) return { kind: 'notOurs' as const, feedback: r.feedback };
      return limit(() => record(r.feedback, target, deps));
    }),
  );
}

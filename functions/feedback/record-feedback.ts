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
 *   5. The report appended to the send's evidence: a record of its own, kept with the batch's other reports on the
 *      same send batch under that batch's prefix (`<batch>.reports/`, one object per send batch and invocation), or,
 *      for a send from before batches, under the send's own key (`<send>.feedback/`).
 * Throws only when DynamoDB fails, or when the evidence could neither be stored nor kept as a gap: the invocation is
 * retried, and every step above is safe to repeat (a report written twice is read once: docs/evidence-and-privacy.md).
 */
import pLimit from 'p-limit';
import { normaliseAddress } from '../domain/audience.ts';
import { evidenceBody, evidenceKey, type FeedbackEvidence, feedbackEvidence } from '../domain/evidence.ts';
import { batchRecord, reportsBatchName } from '../domain/evidence-batch.ts';
import type { Feedback, FeedbackIgnored, FeedbackTarget, ReadResult } from '../domain/feedback.ts';
import type { AudienceStore, SuppressionRecorded } from '../stores/audience-store.ts';
import { type BatchWritten, writeBatch } from '../stores/evidence-batch-writer.ts';
import type { EvidenceGaps } from '../stores/evidence-gaps.ts';
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
  readonly evidence?: ReportEvidenceDeps;
  readonly now: () => number;
  readonly sleep: (ms: number) => Promise<void>;
}

/** What became of each address a feedback asked to suppress: recorded, or refused as not the notification's own. */
export type SuppressionOutcome = SuppressionRecorded | 'notTheRecipient';

export type FeedbackResult =
  | { kind: 'ignored'; ignored: FeedbackIgnored }
  | { kind: 'notOurs'; feedback: Feedback }
  | {
      kind: DeliveryRecorded;
      feedback: Feedback;
      target: FeedbackTarget;
      suppressions: SuppressionOutcome[];
      /** The report's evidence record, appended to its send's evidence once the batch is recorded. */
      report?: FeedbackEvidence;
    };

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
  // After the table: the evidence is about the message id, whatever the hot item says (a resend's, or expired).
  const report =
    deps.evidence === undefined ? undefined : feedbackEvidence(target, f, deps.now(), deps.evidence.retentionDays);
  return { kind, feedback: f, target, suppressions, ...(report === undefined ? {} : { report }) };
}

/** Records a batch of feedback (one SES event, or a subscription's log entries), each on its own notification. */
export async function recordFeedback(reads: readonly ReadResult[], deps: FeedbackDeps): Promise<FeedbackResult[]> {
  const feedbacks = reads.flatMap((r) => (r.ok ? [r.feedback] : []));
  const targets = await targetsOf(feedbacks, deps);
  const limit = pLimit(BATCH_CONCURRENCY);
  const results = await Promise.all(
    reads.map((r) => {
      if (!r.ok) return { kind: 'ignored' as const, ignored: r.ignored };
      const target = targets.get(r.feedback);
      // Not ours: SES feedback always names its notification; an SNS message id that no notification recorded is
      // another sender's (SNS's delivery status log groups are the account's), and says nothing to us about anyone.
      if (target === undefined) return { kind: 'notOurs' as const, feedback: r.feedback };
      return limit(() => record(r.feedback, target, deps));
    }),
  );
  if (deps.evidence !== undefined) await appendReports(results, deps.evidence, deps.now());
  return results;
}

export interface ReportEvidenceDeps {
  readonly store: EvidenceStore;
  readonly gaps: EvidenceGaps;
  readonly retentionDays: number;
  /** The evidence batch a send's record is in: on its notification while it records that send; else undefined. */
  readonly sendBatchOf: (target: FeedbackTarget, providerMessageId: string) => Promise<string | undefined>;
  /** A random id of [0-9a-z] for each reports batch this invocation writes. */
  readonly newId: () => string;
  readonly timeoutMs: number;
}

/**
 * The batch's reports, appended to their sends' evidence: one object per send batch under its prefix; a report on a
 * send recorded before batches (or no longer on its notification) under that send's own key, as it was then. A store
 * that fails keeps the object as a gap; one that fails with the table too throws, and the batch is retried.
 */
async function appendReports(results: readonly FeedbackResult[], deps: ReportEvidenceDeps, now: number) {
  const reports = results.flatMap((r) => ('report' in r && r.report !== undefined ? [{ r, report: r.report }] : []));
  const limit = pLimit(BATCH_CONCURRENCY);
  const batches = await Promise.all(
    reports.map(({ r, report }) =>
      limit(() => ('target' in r ? deps.sendBatchOf(r.target, report.providerMessageId) : undefined)),
    ),
  );
  const bySendBatch = new Map<string, FeedbackEvidence[]>();
  const alone: FeedbackEvidence[] = [];
  reports.forEach(({ report }, i) => {
    const batch = batches[i];
    if (batch === undefined) alone.push(report);
    else bySendBatch.set(batch, [...(bySendBatch.get(batch) ?? []), report]);
  });
  const written: BatchWritten[] = await Promise.all(
    [...bySendBatch].map(([sendBatch, records]) =>
      writeBatch(
        deps,
        { name: reportsBatchName(sendBatch, now, deps.newId()), writer: 'feedback', records: records.map(batchRecord) },
        { timeoutMs: deps.timeoutMs, now },
      ),
    ),
  );
  const lost = written.find((w) => w.outcome === 'lost');
  if (lost !== undefined)
    throw Object.assign(new Error(`evidence of reports lost: ${lost.error}`), { name: 'EvidenceLost' });
  // Before batches, each report was an object of its own under its send: the same key again is "already there".
  for (const r of alone) await deps.store.put(evidenceKey(r), evidenceBody(r), new Date(r.retainUntil));
}

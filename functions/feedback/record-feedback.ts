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
 *   5. The report appended to the send's evidence: a record of its own, kept with the invocation's other reports in
 *      one object (`batches/<day>/<hhmmss>-feedback-<id>`), which an item per send batch names
 *      (`EVIDENCE_REPORTS#<send batch>`), or, for a send from before batches, under the send's own key
 *      (`<send>.feedback/`).
 * A feedback fails only when DynamoDB fails, or when its report could neither be stored nor kept as a gap: a queue's
 * message is then handed back alone (recordEachFeedback), a log batch retried whole (recordFeedback throws), and every
 * step above is safe to repeat (a report written twice is read once: docs/evidence-and-privacy.md).
 */
import pLimit from 'p-limit';
import { normaliseAddress } from '../domain/audience.ts';
import { evidenceBody, evidenceKey, type FeedbackEvidence, feedbackEvidence } from '../domain/evidence.ts';
import { batchName, batchRecord, sha256Hex } from '../domain/evidence-batch.ts';
import { maySpool, SPOOL_BELOW_RECORDS, sliceBatchName } from '../domain/evidence-spool.ts';
import type { Feedback, FeedbackIgnored, FeedbackTarget, ReadResult } from '../domain/feedback.ts';
import type { AudienceStore, SuppressionRecorded } from '../stores/audience-store.ts';
import { writeBatch } from '../stores/evidence-batch-writer.ts';
import type { EvidenceGaps } from '../stores/evidence-gaps.ts';
import type { EvidenceReports } from '../stores/evidence-reports.ts';
import type { EvidenceSpool } from '../stores/evidence-spool.ts';
import type { EvidenceStore } from '../stores/evidence-store.ts';
import type { DeliveryOutcome, DeliveryRecorded } from './delivery-store.ts';

/** The feedback function's store: the notifications the reports are about, and the audience's suppressions. */
export interface FeedbackStore extends Pick<AudienceStore, 'suppressAddress'> {
  findByMessageId(messageId: string): Promise<FeedbackTarget | undefined>;
  /** The address the notification was sent to, or undefined when the item is gone or erased. */
  recipientOf(target: FeedbackTarget): Promise<string | undefined>;
  /** Records it on the notification; answers what it did and the evidence batch of the send it is about. */
  recordDelivery(target: FeedbackTarget, f: Feedback): Promise<DeliveryOutcome>;
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
      /** The evidence batch of the send's record, as its notification named it when the feedback was recorded. */
      sendBatch?: string;
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
  const { kind, sendBatch } = await deps.store.recordDelivery(target, f);
  // After the table: the evidence is about the message id, whatever the hot item says (a resend's, or expired).
  const report =
    deps.evidence === undefined ? undefined : feedbackEvidence(target, f, deps.now(), deps.evidence.retentionDays);
  return {
    kind,
    feedback: f,
    target,
    suppressions,
    ...(report === undefined ? {} : { report }),
    ...(sendBatch === undefined ? {} : { sendBatch }),
  };
}

/** Records a batch of feedback (one SES event, or a subscription's log entries), each on its own notification. */
export async function recordFeedback(reads: readonly ReadResult[], deps: FeedbackDeps): Promise<FeedbackResult[]> {
  const settled = await recordEachFeedback(reads, deps);
  const failed = settled.find((s) => !s.ok);
  if (failed !== undefined && !failed.ok) throw failed.error;
  return settled.flatMap((s) => (s.ok ? [s.result] : []));
}

/** One feedback's outcome: recorded (whatever its kind), or the error that leaves it to be retried on its own. */
export type SettledFeedback = { ok: true; result: FeedbackResult } | { ok: false; error: unknown };

/**
 * A batch of feedback recorded each on its own: one that fails (DynamoDB, or its report's evidence lost) is answered
 * as failed, in the batch's order, and the others stand — a queue hands back only the failed messages.
 */
export async function recordEachFeedback(reads: readonly ReadResult[], deps: FeedbackDeps): Promise<SettledFeedback[]> {
  const feedbacks = reads.flatMap((r) => (r.ok ? [r.feedback] : []));
  const targets = await targetsOf(feedbacks, deps);
  const limit = pLimit(BATCH_CONCURRENCY);
  const settled = await Promise.all(
    reads.map(async (r): Promise<SettledFeedback> => {
      if (!r.ok) return { ok: true, result: { kind: 'ignored', ignored: r.ignored } };
      const target = targets.get(r.feedback);
      // Not ours: SES feedback always names its notification; an SNS message id that no notification recorded is
      // another sender's (SNS's delivery status log groups are the account's), and says nothing to us about anyone.
      if (target === undefined) return { ok: true, result: { kind: 'notOurs', feedback: r.feedback } };
      try {
        return { ok: true, result: await limit(() => record(r.feedback, target, deps)) };
      } catch (error) {
        return { ok: false, error };
      }
    }),
  );
  if (deps.evidence === undefined) return settled;
  const lost = await appendReports(
    settled.flatMap((s) => (s.ok ? [s.result] : [])),
    deps.evidence,
    deps.now(),
  );
  if (lost.size === 0) return settled;
  // A feedback whose report's evidence could be neither stored nor kept as a gap is retried (recording is idempotent).
  return settled.map((s) =>
    s.ok && 'report' in s.result && s.result.report !== undefined && lost.has(s.result.report)
      ? { ok: false, error: Object.assign(new Error('evidence of the report lost'), { name: 'EvidenceLost' }) }
      : s,
  );
}

export interface ReportEvidenceDeps {
  readonly store: EvidenceStore;
  readonly gaps: EvidenceGaps;
  /** Where the reports on each send batch are: the feedback batch that holds them, named per send batch. */
  readonly reports: EvidenceReports;
  readonly retentionDays: number;
  /** A random id of [0-9a-z] for each reports batch this invocation writes. */
  readonly newId: () => string;
  readonly timeoutMs: number;
  /** The evidence spool: an invocation of fewer than `spoolBelow` reports puts them there (domain/evidence-spool.ts). */
  readonly spool?: Pick<EvidenceSpool, 'put'>;
  readonly spoolBelow?: number;
}

/**
 * The invocation's reports, appended to their sends' evidence: one object for all of them (a feedback batch, however
 * many send batches its reports are on), then one small item per send batch naming it (stores/evidence-reports.ts);
 * a report on a send recorded before batches (or no longer on its notification) under that send's own key, as it
 * was then. A store that fails or hangs (at most `timeoutMs`) keeps the object as a gap the sweeper writes; the
 * reports the table refused too — the gap, or a send batch's item naming the object — are answered, for their
 * feedback to be retried (a retry writes them again under a new name; a reader reads a report once).
 */
async function appendReports(
  results: readonly FeedbackResult[],
  deps: ReportEvidenceDeps,
  now: number,
): Promise<Set<FeedbackEvidence>> {
  const reports = results.flatMap((r) => ('report' in r && r.report !== undefined ? [{ r, report: r.report }] : []));
  const limit = pLimit(BATCH_CONCURRENCY);
  // The send's batch as its notification named it when the feedback was recorded (no read of its own).
  const batches = reports.map(({ r }) => ('sendBatch' in r ? r.sendBatch : undefined));
  const bySendBatch = new Map<string, FeedbackEvidence[]>();
  const alone: FeedbackEvidence[] = [];
  reports.forEach(({ report }, i) => {
    const batch = batches[i];
    if (batch === undefined) alone.push(report);
    else bySendBatch.set(batch, [...(bySendBatch.get(batch) ?? []), report]);
  });
  const lost = new Set<FeedbackEvidence>();
  const batched = [...bySendBatch.values()].flat();
  if (batched.length > 0) {
    const spooled = await spoolReports(batched, deps, now);
    const name = spooled ?? batchName('feedback', now, deps.newId());
    const written =
      spooled !== undefined
        ? { outcome: 'written' as const }
        : await writeBatch(
            deps,
            { name, writer: 'feedback', records: batched.map(batchRecord) },
            { timeoutMs: deps.timeoutMs, now },
          );
    if (written.outcome === 'lost') for (const r of batched) lost.add(r);
    else {
      // Stored or kept as a gap: each send batch names it; one the table refused is retried with its feedback.
      await Promise.all(
        [...bySendBatch].map(([sendBatch, records]) =>
          limit(() => deps.reports.add(sendBatch, name, records.length, reportsExpireAt(records))).catch(() => {
            for (const r of records) lost.add(r);
          }),
        ),
      );
    }
  }
  // Before batches, each report was an object of its own under its send: the same key again is "already there".
  for (const r of alone) if (!(await putAlone(r, deps, now))) lost.add(r);
  return lost;
}

/**
 * A few reports go to the spool, rolled with their minute's other reports into one object by the sweeper: the slice
 * they land in (each send batch's item names it), or undefined when they are written as an object of their own — many
 * reports, no spool, or a put the table refused (the object then holds them all; a report spooled too is read once).
 */
async function spoolReports(
  reports: readonly FeedbackEvidence[],
  deps: ReportEvidenceDeps,
  now: number,
): Promise<string | undefined> {
  const { spool, spoolBelow = SPOOL_BELOW_RECORDS } = deps;
  if (spool === undefined || reports.length >= spoolBelow || !maySpool(now, now + deps.timeoutMs)) return undefined;
  const slice = sliceBatchName(now, deps.retentionDays);
  const records = reports.map((r) => {
    const bytes = evidenceBody(r);
    return {
      slice,
      sha256: sha256Hex(bytes),
      notificationId: r.notificationId,
      recordKind: 'FEEDBACK' as const,
      bytes,
    };
  });
  try {
    await spool.put(records, now);
    return slice;
  } catch {
    return undefined;
  }
}

/** When a send batch's item naming a feedback batch may go: its reports' retention, and a day (epoch s). */
const reportsExpireAt = (records: readonly FeedbackEvidence[]) =>
  Math.ceil(Math.max(...records.map((r) => Date.parse(r.retainUntil))) / 1000) + 86_400;

/** A report on a send from before batches, under that send's own key: the store, else a gap, else false (lost). */
async function putAlone(r: FeedbackEvidence, deps: ReportEvidenceDeps, now: number): Promise<boolean> {
  const key = evidenceKey(r);
  const body = evidenceBody(r);
  const retainUntil = new Date(r.retainUntil);
  try {
    await deps.store.put(key, body, retainUntil, AbortSignal.timeout(deps.timeoutMs));
    return true;
  } catch {
    try {
      await deps.gaps.add({ key, body, retainUntil, since: new Date(now).toISOString() });
      return true;
    } catch {
      return false;
    }
  }
}

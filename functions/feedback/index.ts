/**
 * The feedback function, invoked two ways (lib/delivery-feedback.ts):
 * - by an EventBridge rule with SES feedback (Delivery, Bounce, Complaint, Reject, DeliveryDelay) from the stack's
 *   configuration set, one event per invocation;
 * - by CloudWatch Logs subscriptions with SNS delivery status logs (SMS, and push of the platform applications the
 *   settings name), a batch of log entries per invocation.
 * Each feedback is recorded on the notification it describes and, when the address can never be reached, as a
 * suppression of it. Thin: decode, the use case, logs and metrics. Logs carry ids and codes only, never an address.
 */

import { randomUUID } from 'node:crypto';
import { S3Client } from '@aws-sdk/client-s3';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { loadFeedbackConfig } from '../commons/config.ts';
import { documentClient } from '../commons/dynamodb-client.ts';
import { count, countBy, infoListing, logger, publishMetrics, traced } from '../commons/powertools.ts';
import { readDeliveryStatusLog, readFeedback } from '../domain/feedback.ts';
import { DynamoAudienceStore } from '../stores/audience-store.ts';
import { DynamoEvidenceGaps } from '../stores/evidence-gaps.ts';
import { DynamoEvidenceReports } from '../stores/evidence-reports.ts';
import { DynamoSpoolPut } from '../stores/evidence-spool.ts';
import { evidenceStoreOf } from '../stores/evidence-store.ts';
import { decodeLogsEvent, isLogsEvent, MalformedLogsEventError } from './delivery-logs.ts';
import { DynamoDeliveryStore } from './delivery-store.ts';
import { type FeedbackDeps, type FeedbackResult, recordEachFeedback, recordFeedback } from './record-feedback.ts';

const config = loadFeedbackConfig();
const evidenceStore = evidenceStoreOf(config.evidence.store, () => traced(new S3Client({})));
const audience = new DynamoAudienceStore(documentClient, config.tableName);
const deliveries = new DynamoDeliveryStore(documentClient, config.tableName);
const deps: FeedbackDeps = {
  store: {
    findByMessageId: (id) => deliveries.findByMessageId(id),
    recipientOf: (target) => deliveries.recipientOf(target),
    recordDelivery: (target, f) => deliveries.recordDelivery(target, f),
    suppressAddress: (...args) => audience.suppressAddress(...args),
  },
  now: Date.now,
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  ...(evidenceStore === undefined
    ? {}
    : {
        evidence: {
          store: evidenceStore,
          gaps: new DynamoEvidenceGaps(documentClient, config.tableName),
          reports: new DynamoEvidenceReports(documentClient, config.tableName),
          retentionDays: config.evidence.retentionDays,
          newId: () => randomUUID().replaceAll('-', '').slice(0, 20),
          timeoutMs: config.evidence.timeoutMs,
          // A few reports go to the spool, rolled into one object a minute by the sweeper.
          spool: new DynamoSpoolPut(documentClient, config.evidence.spoolTableName ?? config.tableName),
          spoolBelow: config.evidence.spoolBelow,
        },
      }),
};

/**
 * SES's events come as a queue's batch (each message an EventBridge event) and answer with the messages to hand out
 * again: only those whose feedback failed (every step is safe to repeat); one SES event
 * on its own (the local run) answers with its one result; a log subscription's batch with one result per entry.
 */
export const handler = async (
  event: unknown,
  context: Context,
): Promise<FeedbackResult | FeedbackResult[] | SQSBatchResponse> => {
  logger.addContext(context);
  // The invocation's recorded deliveries, listed in one line at its end (`<notificationId> <status> <messageId>` each).
  const delivered: string[] = [];
  const report = (r: FeedbackResult) => reportOne(r, delivered);
  try {
    let results: FeedbackResult[];
    if (isLogsEvent(event)) {
      let batch: ReturnType<typeof decodeLogsEvent>;
      try {
        batch = decodeLogsEvent(event);
      } catch (error) {
        if (!(error instanceof MalformedLogsEventError)) throw error;
        batch = { logGroup: '', messages: [] };
        report({ kind: 'ignored', ignored: { reason: 'MALFORMED', detail: error.message } });
      }
      results = await recordFeedback(
        batch.messages.map((m) => readDeliveryStatusLog(batch.logGroup, m)),
        deps,
      );
    } else if (isQueueBatch(event)) {
      const settled = await recordEachFeedback(
        event.Records.map((m) => readFeedback(parsedBody(m))),
        deps,
      );
      // Only the messages that failed go back to the queue (reportBatchItemFailures): the others stand.
      const batchItemFailures: SQSBatchResponse['batchItemFailures'] = [];
      settled.forEach((s, i) => {
        if (s.ok) {
          report(s.result);
          return;
        }
        const messageId = event.Records[i]?.messageId ?? '';
        batchItemFailures.push({ itemIdentifier: messageId });
        count('FeedbackFailed');
        logger.error('feedback not recorded: handed back to the queue', {
          messageId,
          reason: (s.error as Error)?.name ?? 'Error',
        });
      });
      return { batchItemFailures };
    } else {
      const [result] = await recordFeedback([readFeedback(event)], deps);
      if (result === undefined) throw new Error('recordFeedback answered no result for one event');
      report(result);
      return result;
    }
    for (const r of results) report(r);
    return results;
  } finally {
    infoListing('deliveries recorded', delivered);
    publishMetrics();
  }
};

function reportOne(r: FeedbackResult, delivered: string[]): void {
  if (r.kind === 'ignored') {
    countBy('FeedbackIgnored', { reason: r.ignored.reason });
    logger.warn('feedback ignored', { reason: r.ignored.reason, detail: r.ignored.detail });
    return;
  }
  const f = r.feedback;
  if (r.kind === 'notOurs') {
    // Another sender's message in SNS's account-wide log groups: counted, not logged one by one.
    countBy('FeedbackIgnored', { reason: 'NOT_OURS' });
    return;
  }
  const ids = { notificationId: r.target.notificationId, eventId: r.target.eventId, providerMessageId: f.messageId };
  countBy('DeliveryFeedback', { channel: f.channel, status: f.status });
  for (const s of r.suppressions) {
    if (s === 'suppressed') countBy('AddressesSuppressed', { channel: f.channel, cause: f.suppress?.cause ?? '?' });
  }
  if (r.kind === 'noNotification') count('FeedbackWithoutNotification');
  if (r.kind === 'otherSend') count('FeedbackForOtherSend');
  const line = {
    ...ids,
    channel: f.channel,
    deliveryStatus: f.status,
    bounceType: f.bounceType,
    bounceSubType: f.bounceSubType,
    providerResponse: f.providerResponse,
    recorded: r.kind,
    suppressions: r.suppressions.length > 0 ? r.suppressions : undefined,
  };
  // An address that is not the notification's own was named for suppression: a forged or stray log entry.
  if (['BOUNCED', 'COMPLAINED', 'REJECTED', 'FAILED'].includes(f.status) || r.suppressions.includes('notTheRecipient'))
    logger.warn('delivery feedback', line);
  else if (r.kind === 'recorded' && r.suppressions.length === 0 && f.bounceType === undefined) {
    // Listed by its notificationId (eventId#channel), which the runbook's trace finds in the invocation's line.
    delivered.push(`${r.target.notificationId} ${f.status} ${f.messageId}`);
  } else {
    // Anything more to say about it (not recorded as is, an address suppressed): a line of its own, as a warning is.
    const { eventId: _, ...rest } = line;
    logger.info('delivery feedback', rest);
  }
}

/** A batch from the SES events queue (lib/delivery-feedback.ts). */
function isQueueBatch(event: unknown): event is SQSEvent {
  const records = (event as { Records?: unknown } | null)?.Records;
  return Array.isArray(records) && records.length > 0 && records.every((r) => r?.eventSource === 'aws:sqs');
}

/** A message's EventBridge event; a body that is not JSON is read as what it is (readFeedback ignores it: not an SES event). */
function parsedBody(m: SQSRecord): unknown {
  try {
    return JSON.parse(m.body);
  } catch {
    return m.body;
  }
}

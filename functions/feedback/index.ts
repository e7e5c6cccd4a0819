/**
 * EventBridge-triggered Lambda: SES delivery feedback (Delivery, Bounce, Complaint, Reject, DeliveryDelay) from the
 * stack's configuration set, recorded on the notification it names and, for a permanent bounce or a complaint, as a
 * suppression of the address. Thin: one event per invocation, the use case, logs and metrics. Logs carry ids and
 * codes only, never an address.
 */
import type { Context } from 'aws-lambda';
import { DynamoAudienceStore } from '../commons/audience-store.ts';
import { loadFeedbackConfig } from '../commons/config.ts';
import { documentClient } from '../commons/dynamodb-client.ts';
import { count, countBy, logger, metrics } from '../commons/powertools.ts';
import { type FeedbackResult, recordFeedback } from './record-feedback.ts';

const config = loadFeedbackConfig();
const store = new DynamoAudienceStore(documentClient, config.tableName);

export const handler = async (event: unknown, context: Context): Promise<FeedbackResult> => {
  logger.addContext(context);
  try {
    const result = await recordFeedback(event, store);
    report(result);
    return result;
  } finally {
    if (metrics.hasStoredMetrics()) metrics.publishStoredMetrics();
  }
};

function report(r: FeedbackResult): void {
  if (r.kind === 'ignored') {
    countBy('FeedbackIgnored', { reason: r.ignored.reason });
    logger.warn('feedback ignored', { reason: r.ignored.reason, detail: r.ignored.detail });
    return;
  }
  const f = r.feedback;
  const ids = { notificationId: f.notificationId, eventId: f.eventId, providerMessageId: f.messageId };
  countBy('DeliveryFeedback', { channel: f.channel, status: f.status });
  for (const s of r.suppressions) {
    if (s === 'suppressed') countBy('AddressesSuppressed', { channel: f.channel, cause: f.suppress?.cause ?? '?' });
  }
  if (r.kind === 'noNotification') count('FeedbackWithoutNotification');
  const line = {
    ...ids,
    deliveryStatus: f.status,
    bounceType: f.bounceType,
    bounceSubType: f.bounceSubType,
    recorded: r.kind,
    suppressions: r.suppressions,
  };
  if (f.status === 'BOUNCED' || f.status === 'COMPLAINED' || f.status === 'REJECTED')
    logger.warn('delivery feedback', line);
  else logger.info('delivery feedback', line);
}

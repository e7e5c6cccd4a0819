/**
 * DynamoDB Streams-triggered Lambda: sends each new PENDING notification via SES or SNS.
 * Thin: checks each record is one to send (the trigger filters too: defense in depth), runs the use case with
 * bounded concurrency, and reports failed records (ReportBatchItemFailures) so one failure holds back no other.
 */
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import type { Context, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import pLimit from 'p-limit';
import { loadBrandConfig, loadDispatchConfig } from '../commons/config.ts';
import { documentClient } from '../commons/dynamodb-client.ts';
import { DynamoNotificationStore } from '../commons/notification-store.ts';
import { countBy, logger, metrics } from '../commons/powertools.ts';
import { sesClient, snsClient } from '../commons/provider-clients.ts';
import { sleep } from '../commons/retry.ts';
import { type DispatchDeps, type DispatchResult, dispatchNotification } from './dispatch-notification.ts';
import { ProviderSender } from './senders.ts';
import { dispatchable } from './stream-record.ts';

const config = loadDispatchConfig();
const processor = new BatchProcessor(EventType.DynamoDBStreams);
const limit = pLimit(config.concurrency);
const deps: DispatchDeps = {
  store: new DynamoNotificationStore(documentClient, config.tableName),
  sender: new ProviderSender(sesClient, snsClient, config),
  now: Date.now,
  sleep,
  policies: config.policies,
  leaseMs: config.leaseMs,
  sendTimeoutMs: config.sendTimeoutMs,
  maxSendAttempts: config.maxSendAttempts,
  retryBaseMs: config.retryBaseMs,
  brand: loadBrandConfig(),
};

const recordHandler = async (record: DynamoDBRecord): Promise<void> => {
  const target = dispatchable(record);
  if (target === undefined) {
    // The trigger's filter should have stopped it: counted, so a filter that drifted from the code shows up.
    metrics.addMetric('RecordsIgnored', MetricUnit.Count, 1);
    return;
  }
  const result = await limit(() => dispatchNotification(target.key, target.retryAt, deps));
  report(result);
};

export const handler = async (event: DynamoDBStreamEvent, context: Context) => {
  logger.addContext(context);
  try {
    return await processPartialResponse(event, recordHandler, processor, { context });
  } finally {
    metrics.publishStoredMetrics();
  }
};

/** Logs carry notificationId and reason codes, never an address or a phone number. */
function report(r: DispatchResult): void {
  if (r.kind === 'skipped') {
    metrics.addMetric('DispatchSkipped', MetricUnit.Count, 1);
    return;
  }
  const ids = {
    notificationId: r.item.notificationId,
    eventId: r.item.eventId,
    channel: r.item.channel,
    attempt: r.item.attempt,
  };
  switch (r.kind) {
    case 'sent':
      countBy('NotificationsSent', { channel: r.item.channel });
      if (r.fenced) {
        metrics.addMetric('LateAcceptances', MetricUnit.Count, 1);
        logger.error('provider accepted after the lease expired; the sweeper had already resolved it', ids);
      } else logger.info('notification sent', { ...ids, providerMessageId: r.providerMessageId });
      break;
    case 'failed':
      // Alarms read SendFailures per channel; the reason breakdown is a metric of its own so both stay queryable.
      countBy('SendFailures', { channel: r.item.channel });
      countBy('SendFailuresByReason', { channel: r.item.channel, reason: r.reason.split(':')[0] ?? r.reason });
      logger.error('notification failed', { ...ids, reason: r.reason });
      break;
    case 'retrying':
      metrics.addMetric('SendRetries', MetricUnit.Count, 1);
      logger.warn('transient send failure; released for retry', { ...ids, reason: r.reason });
      break;
    case 'unknown':
      if (r.resend) metrics.addMetric('SendRetries', MetricUnit.Count, 1);
      else countBy('UnknownOutcomes', { channel: r.item.channel });
      logger.error('send outcome unknown', { ...ids, reason: r.reason, resend: r.resend });
      break;
  }
}

/**
 * DynamoDB Streams-triggered Lambda: sends each new PENDING notification via SES or SNS.
 * Thin: checks each record is one to send (the trigger filters too: defense in depth), shares the invocation's time
 * out among the records (invocation-budget.ts), runs the use case with bounded concurrency, and reports failed and
 * unstarted records (ReportBatchItemFailures) so one failure holds back no other.
 */
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import { S3Client } from '@aws-sdk/client-s3';
import type { Context, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import pLimit from 'p-limit';
import { loadDispatchConfig } from '../commons/config.ts';
import { documentClient } from '../commons/dynamodb-client.ts';
import { count, countBy, logger, metrics, traced } from '../commons/powertools.ts';
import { sleep } from '../commons/retry.ts';
import { uniformRetention } from '../domain/evidence.ts';
import { DynamoAudienceStore } from '../stores/audience-store.ts';
import { DynamoEvidenceGaps } from '../stores/evidence-gaps.ts';
import { evidenceStoreOf } from '../stores/evidence-store.ts';
import { DynamoMomentStore } from '../stores/moment-store.ts';
import { DynamoNotificationStore } from '../stores/notification-store.ts';
import { DynamoSweepShardMark, onceRaised } from '../stores/sweep-shard-mark.ts';
import { ChannelBreaker } from './channel-breaker.ts';
import { type DispatchDeps, type DispatchResult, dispatchNotification } from './dispatch-notification.ts';
import { InvocationBudget } from './invocation-budget.ts';
import { SharedTokenBucket } from './pacer.ts';
import { createProviderClients } from './provider-clients.ts';
import { DynamoBreakerStore, DynamoTokenWindows } from './send-quota-store.ts';
import { ProviderSender } from './senders.ts';
import { criticalFirst, dispatchable } from './stream-record.ts';

const config = loadDispatchConfig();
const processor = new BatchProcessor(EventType.DynamoDBStreams);
const limit = pLimit(config.concurrency);
const providers = createProviderClients(config);
const evidenceStore = evidenceStoreOf(config.evidence.store, () => traced(new S3Client({ maxAttempts: 2 })));
const sender = new ProviderSender(providers.ses, providers.sns, {
  ...config,
  origin: { account: config.accountId, region: config.region, applications: config.pushApplications },
});
const deps: DispatchDeps = {
  store: new DynamoNotificationStore(documentClient, config.tableName, config.sweepShards),
  sender,
  pacer: new SharedTokenBucket(new DynamoTokenWindows(documentClient, config.tableName), config.sendRates, {
    now: Date.now,
    sleep,
  }),
  breaker: new ChannelBreaker(new DynamoBreakerStore(documentClient, config.tableName), {
    holdMs: config.breakerHoldMs,
    refreshMs: 5_000,
  }),
  now: Date.now,
  sleep,
  policies: config.policies,
  leaseMs: config.leaseMs,
  sendTimeoutMs: config.sendTimeoutMs,
  maxSendAttempts: config.maxSendAttempts,
  retryBaseMs: config.retryBaseMs,
  retryMaxMs: config.retryMaxMs,
  nearRetryMs: config.nearRetryMs,
  pendingThresholdMs: config.pendingThresholdMs,
  maxAgeMs: config.maxAgeMs,
  brand: config.brand,
  audience: new DynamoAudienceStore(documentClient, config.tableName),
  moment: new DynamoMomentStore(documentClient, config.tableName),
  timing: config.noticeTiming,
  ...(evidenceStore === undefined
    ? {}
    : {
        evidence: {
          store: evidenceStore,
          gaps: new DynamoEvidenceGaps(documentClient, config.tableName),
          retention: uniformRetention(config.evidence.retentionDays),
          requestOf: (n, m) => sender.request(n, m),
          timeoutMs: config.evidence.timeoutMs,
        },
      }),
};

const raiseShardMark = onceRaised(
  new DynamoSweepShardMark(documentClient, config.tableName),
  config.sweepShards,
  Date.now,
);

export const handler = async (event: DynamoDBStreamEvent, context: Context) => {
  logger.addContext(context);
  // Before this environment writes a sweep key (claim, release): the sweeper must visit every shard in use.
  await raiseShardMark();
  const budget = new InvocationBudget(Date.now() + context.getRemainingTimeInMillis() - config.deadlineMarginMs, {
    concurrency: config.concurrency,
    sendTimeoutMs: config.sendTimeoutMs,
    maxWaitMs: config.maxPacingWaitMs,
    records: event.Records.length,
    writeMarginMs: config.deadlineMarginMs,
  });
  const recordHandler = async (record: DynamoDBRecord): Promise<void> => {
    const target = dispatchable(record);
    if (target === undefined) {
      budget.done();
      // The trigger's filter should have stopped it: counted, so a filter that drifted from the code shows up.
      count('RecordsIgnored');
      return;
    }
    await limit(async () => {
      try {
        report(await dispatchNotification(target, deps, budget.start(Date.now())));
      } catch (error) {
        if ((error as Error).name === 'NotStartedError') {
          count('RecordsNotStarted');
          logger.warn('record not started: too little time left; handed back to the stream', {
            notificationId: target.notificationId,
            reason: (error as Error).message,
          });
        }
        throw error;
      } finally {
        budget.done();
      }
    });
  };
  try {
    // A batch none of whose records could start is handed back whole, not thrown: it is no function error, and
    // bisecting it would not help.
    // Critical records first: they take the first free send slots (stream-record.ts, criticalFirst).
    const ordered = { ...event, Records: criticalFirst(event.Records) };
    return await processPartialResponse(ordered, recordHandler, processor, { context, throwOnFullBatchFailure: false });
  } finally {
    // Per-channel outcomes flush on their own (countBy); the rest only when there is any, without an empty-flush warning.
    if (metrics.hasStoredMetrics()) metrics.publishStoredMetrics();
  }
};

/** The metric of each status the moment ends a notification in (docs/dispatch.md "The right moment"). */
const UNSENT_METRIC = {
  EXPIRED: 'NotificationsPastValidity',
  SUPERSEDED: 'NotificationsSuperseded',
  THROTTLED: 'NotificationsFloodLimited',
} as const;

/** Logs carry notificationId and reason codes, never an address or a phone number. */
function report(r: DispatchResult): void {
  if (r.kind === 'skipped') {
    count('DispatchSkipped');
    return;
  }
  if (r.kind === 'suppressed') {
    countBy('NotificationsSuppressed', { channel: r.channel, reason: r.reason });
    logger.info('notification suppressed: not sent', {
      notificationId: r.notificationId,
      channel: r.channel,
      reason: r.reason,
    });
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
      if (r.acceptance === 'late') {
        count('LateAcceptances');
        logger.error('provider accepted after the lease expired; the sweeper had already resolved it', {
          ...ids,
          providerMessageId: r.providerMessageId,
        });
      } else if (r.acceptance === 'notRecorded') {
        // DynamoDB refused every write for the rest of the invocation: the send happened and only this line says so.
        count('AcceptancesNotRecorded');
        logger.error('provider accepted; DynamoDB refused to record it before the deadline', {
          ...ids,
          providerMessageId: r.providerMessageId,
        });
      } else logger.info('notification sent', { ...ids, providerMessageId: r.providerMessageId });
      if (r.evidence?.outcome === 'gap') {
        // SENT stands; the record's bytes wait in the table and the sweeper writes them (EvidenceGapsOpen alarms).
        countBy('EvidenceGaps', { channel: r.item.channel });
        logger.warn('evidence not written: kept as a gap for the sweeper', { ...ids, reason: r.evidence.error });
      } else if (r.evidence?.outcome === 'lost') {
        countBy('EvidenceLost', { channel: r.item.channel });
        logger.error('evidence not written and no gap recorded', {
          ...ids,
          providerMessageId: r.providerMessageId,
          reason: r.evidence.error,
        });
      }
      break;
    case 'failed':
      // Alarms read SendFailures per channel; the reason breakdown is a metric of its own so both stay queryable.
      countBy('SendFailures', { channel: r.item.channel });
      countBy('SendFailuresByReason', { channel: r.item.channel, reason: r.reason.split(':')[0] ?? r.reason });
      logger.error('notification failed', { ...ids, reason: r.reason });
      break;
    case 'expired':
      countBy('NotificationsExpired', { channel: r.item.channel });
      logger.error('notification expired before it could be sent', { ...ids, reason: 'EXPIRED' });
      break;
    case 'held':
      countBy('NotificationsHeld', { channel: r.item.channel });
      logger.info('notification held: outside its send window', {
        ...ids,
        heldUntil: new Date(r.until).toISOString(),
        zone: r.zone,
      });
      break;
    case 'unsent': {
      const { status, ...facts } = r.end;
      countBy(UNSENT_METRIC[status], { channel: r.item.channel });
      logger.info('notification not sent: its moment has passed', { ...ids, status, ...facts });
      break;
    }
    case 'deferred':
      countBy('SendsDeferred', { channel: r.item.channel, reason: r.reason });
      if (r.reason === 'THROTTLED') countBy('SendsThrottled', { channel: r.item.channel });
      if (r.reason === 'ACCOUNT_BLOCKED') {
        countBy('ProviderBlocked', { channel: r.item.channel });
        countBy('ProviderBlockedByCode', { channel: r.item.channel, code: r.code ?? 'unknown' });
        logger.error('provider refused the account, not the message: channel held, notification deferred', {
          ...ids,
          code: r.code,
          scope: 'channel',
          retryAt: r.retryAt,
        });
      } else if (r.reason === 'APPLICATION_BLOCKED') {
        // One platform application (an expired certificate), not the channel: its own metric, so the channel's
        // ProviderBlocked alarm keeps meaning "the account".
        countBy('ApplicationBlocked', { channel: r.item.channel });
        logger.error('provider refused the platform application: that application held, notification deferred', {
          ...ids,
          code: r.code,
          scope: 'application',
          retryAt: r.retryAt,
        });
      } else logger.warn('send deferred', { ...ids, reason: r.reason, code: r.code, retryAt: r.retryAt });
      break;
    case 'unknown':
      if (r.resend) count('SendRetries');
      else countBy('UnknownOutcomes', { channel: r.item.channel });
      logger.error('send outcome unknown', { ...ids, reason: r.reason, resend: r.resend });
      break;
  }
}

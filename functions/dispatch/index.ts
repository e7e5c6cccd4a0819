/**
 * DynamoDB Streams-triggered Lambda: sends each new PENDING notification via SES or SNS.
 * Thin: checks each record is one to send (the trigger filters too: defense in depth), shares the invocation's time
 * out among the records (invocation-budget.ts), runs the use case with bounded concurrency, and reports failed and
 * unstarted records (ReportBatchItemFailures) so one failure holds back no other.
 */
// The card brands' ranges and the IBAN registry at start: only ingest loads them with a value that needs them.
import '../domain/card-rules.ts';
import { randomUUID } from 'node:crypto';
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import { S3Client } from '@aws-sdk/client-s3';
import type { Context, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { loadDispatchConfig } from '../commons/config.ts';
import { documentClient } from '../commons/dynamodb-client.ts';
import { onFirstCall } from '../commons/on-first-call.ts';
import { count, countBy, countNow, infoListing, logger, thenPublishMetrics, traced } from '../commons/powertools.ts';
import { loadRegionFence } from '../commons/region-fence-loader.ts';
import { sleep } from '../commons/retry.ts';
import { uniformRetention } from '../domain/evidence.ts';
import { loadTemplates } from '../domain/template-sets.ts';
import { DynamoAudienceStore } from '../stores/audience-store.ts';
import type { BatchOutlets } from '../stores/evidence-batch-writer.ts';
import { DynamoEvidenceIndexWriter } from '../stores/evidence-index.ts';
import { DynamoEvidenceIntentWriter, type EvidenceIntentWriter } from '../stores/evidence-intents.ts';
import { DynamoSpoolPut, type EvidenceSpool } from '../stores/evidence-spool.ts';
import { evidenceStoreOf } from '../stores/evidence-store.ts';
import { DynamoNotificationStore } from '../stores/notification-store.ts';
import { DynamoSweepShardMark, onceRaised } from '../stores/sweep-shard-mark.ts';
import { ChannelBreaker } from './channel-breaker.ts';
import { type DispatchDeps, type DispatchResult, startDispatch } from './dispatch-notification.ts';
import { evidenceReserveMs, InvocationBudget } from './invocation-budget.ts';
import { SharedTokenBucket } from './pacer.ts';
import { createProviderClients } from './provider-clients.ts';
import { InvocationEvidence, type SendProof, type SendRecordDeps } from './record-evidence.ts';
import { DynamoBreakerStore, DynamoTokenWindows } from './send-quota-store.ts';
import { sendSlots } from './send-slots.ts';
import { ProviderSender } from './senders.ts';
import { criticalFirst, dispatchable } from './stream-record.ts';

const config = loadDispatchConfig();
const processor = new BatchProcessor(EventType.DynamoDBStreams);
/** The invocation's send slots: a spooled send's slot is free at its put, its SENT write after (send-slots.ts). */
const slots = sendSlots(config.concurrency);
const providers = createProviderClients(config);
const evidenceStore = evidenceStoreOf(config.evidence.store, () => traced(new S3Client({ maxAttempts: 2 })));
const sender = new ProviderSender(providers.ses, providers.sns, {
  ...config,
  origin: { account: config.accountId, region: config.region, applications: config.pushApplications },
});
// Two regions: every claim carries this region's epoch, and the fence is read immediately before every provider call.
// The fence and its sender are loaded only then (FENCE_TABLE_NAME set): a stage in one region never loads them.
const fence = await loadRegionFence();
const deps: DispatchDeps = {
  store: new DynamoNotificationStore(documentClient, config.tableName, config.sweepShards, fence?.store),
  sender:
    fence === undefined
      ? sender
      : new (await import('./fenced-sender.ts')).FencedSender(sender, fence.store, () =>
          countNow('FencedSendAttempts'),
        ),
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
  // Read only for a notice in a series or under a flood guard: loaded with the first such notice.
  moment: onFirstCall(
    async () => new (await import('../stores/moment-store.ts')).DynamoMomentStore(documentClient, config.tableName),
    { newerNotice: true, takeFloodSlot: true, giveBackFloodSlot: true },
  ),
  timing: config.noticeTiming,
};
/** Where each invocation's evidence batch goes (record-evidence.ts): the store, the gaps, the intents, the index. */
const evidence:
  | {
      outlets: BatchOutlets & { intents: EvidenceIntentWriter; spool: Pick<EvidenceSpool, 'put'> };
      records: SendRecordDeps;
    }
  | undefined =
  evidenceStore === undefined
    ? undefined
    : {
        outlets: {
          store: evidenceStore,
          // Written only when the store fails or hangs: loaded then.
          gaps: onFirstCall(
            async () =>
              new (await import('../stores/evidence-gaps.ts')).DynamoEvidenceGaps(documentClient, config.tableName),
            { add: true, list: true, close: true, find: true, removeTorn: true },
          ),
          intents: new DynamoEvidenceIntentWriter(documentClient, config.tableName),
          // An invocation of few records spools them; the sweeper rolls each minute's into one object.
          spool: new DynamoSpoolPut(documentClient, config.evidence.spoolTableName ?? config.tableName),
          index: {
            index: new DynamoEvidenceIndexWriter(documentClient, config.evidenceIndexTableName),
            retentionDays: config.evidence.retentionDays,
          },
        },
        records: {
          retention: uniformRetention(config.evidence.retentionDays),
          requestOf: (n, m) => sender.request(n, m),
        },
      };
/** An intent still open this long after its invocation's deadline is the sweeper's to finish (recover-evidence.ts). */
const EVIDENCE_RECOVERY_GRACE_MS = 30_000;

const raiseShardMark = onceRaised(
  new DynamoSweepShardMark(documentClient, config.tableName),
  config.sweepShards,
  Date.now,
);

export const handler = async (event: DynamoDBStreamEvent, context: Context) => {
  logger.addContext(context);
  // Before this environment writes a sweep key (claim, release): the sweeper must visit every shard in use.
  await raiseShardMark();
  const startedAt = Date.now();
  const budget = new InvocationBudget(startedAt + context.getRemainingTimeInMillis() - config.deadlineMarginMs, {
    concurrency: config.concurrency,
    sendTimeoutMs: config.sendTimeoutMs,
    maxWaitMs: config.maxPacingWaitMs,
    records: event.Records.length,
    writeMarginMs: config.deadlineMarginMs,
    // The evidence batch's own time, after the last send (invocation-budget.ts).
    ...(evidence === undefined ? {} : { evidenceReserveMs: evidenceReserveMs(config.evidence.timeoutMs) }),
  });
  const batch = openEvidenceBatch(event, startedAt + context.getRemainingTimeInMillis());
  // The templates of the batch's notice types start loading now, beside the first claims (each record awaits its own).
  for (const type of new Set(event.Records.map((r) => r.dynamodb?.NewImage?.template?.S))) {
    if (type !== undefined) void loadTemplates(type).catch(() => undefined);
  }
  const invocationDeps: DispatchDeps =
    batch === undefined || evidence === undefined ? deps : { ...deps, evidence: { ...evidence.records, batch } };
  // The invocation's sends, listed in one line at its end (`<notificationId> <attempt> <providerMessageId>` each).
  const sent: string[] = [];
  const recordHandler = async (record: DynamoDBRecord): Promise<void> => {
    const target = dispatchable(record);
    if (target === undefined) {
      budget.done();
      // The trigger's filter should have stopped it: counted, so a filter that drifted from the code shows up.
      count('RecordsIgnored');
      return;
    }
    try {
      const started = await slots(async () => {
        try {
          return await startDispatch(target, invocationDeps, budget.start(Date.now()));
        } catch (error) {
          if ((error as Error).name === 'NotStartedError') {
            count('RecordsNotStarted');
            logger.warn('record not started: too little time left; handed back to the stream', {
              notificationId: target.notificationId,
              reason: (error as Error).message,
            });
          }
          throw error;
        }
      });
      // Outside the slot: a spooled send's SENT write, awaited before the record counts as done.
      report(started.kind === 'recording' ? await started.settled : started, sent);
    } finally {
      budget.done();
    }
  };
  try {
    // A batch none of whose records could start is handed back whole, not thrown: it is no function error, and
    // bisecting it would not help.
    // Critical records first: they take the first free send slots (stream-record.ts, criticalFirst).
    const ordered = { ...event, Records: criticalFirst(event.Records) };
    return await processPartialResponse(ordered, recordHandler, processor, { context, throwOnFullBatchFailure: false });
  } finally {
    // The sends' listing, held for the invocation's closing metric document, written after the evidence close even
    // if it throws. An invocation killed during the close (its timeout: the close has a time limit of its own inside
    // it) loses this line; its sends stand in the table (SENT, with their message ids) and in their evidence.
    infoListing('notifications sent', sent);
    // After every record: the invocation's evidence, in one batch, outside every send slot. Then the invocation's
    // summed counts and the listing (one EMF document, plus one per further channel), even if the close throws;
    // what an alarm reads (UnknownOutcomes, SendFailures, AcceptancesNotRecorded…) was written as it was counted.
    await thenPublishMetrics(async () => {
      if (batch !== undefined) await closeEvidenceBatch(batch, budget);
    });
  }
};

/**
 * The invocation's evidence batch, when evidence is kept and a record may be sent. Its intent is written alongside the
 * first claims, never before them; each provider call waits for it (record-evidence.ts `ready`), which in practice
 * costs nothing: a claim, the pacer and the audience check come first. An intent the table refused is counted
 * (EvidenceIntentsNotWritten, alarmed) and the records are then written one by one as they come. An invocation of few
 * records writes no intent: each record is put in the spool before its SENT write (`putFirst`).
 */
function openEvidenceBatch(event: DynamoDBStreamEvent, deadline: number) {
  if (evidence === undefined) return undefined;
  const notificationIds = event.Records.flatMap((r) => dispatchable(r)?.notificationId ?? []);
  if (notificationIds.length === 0) return undefined;
  /** An intent refused, or taken as refused: each record is then written on its own as it comes. */
  const notWritten = (reason = 'Timeout') => {
    countNow('EvidenceIntentsNotWritten');
    logger.error('evidence intent not written: each record is written on its own as it comes', {
      batch: batch.name,
      reason,
    });
  };
  const batch = new InvocationEvidence(evidence.outlets, {
    now: Date.now(),
    id: randomUUID().replaceAll('-', '').slice(0, 20),
    dueMs: deadline + EVIDENCE_RECOVERY_GRACE_MS,
    putTimeoutMs: config.evidence.timeoutMs,
    spoolBelow: config.evidence.spoolBelow,
    // Unanswered in time, it is taken as refused and the records go alone: counted so, however it ends. So is one a
    // spooling invocation opened late (a put before a SENT write that did not land in time) and the table refused.
    onIntentLate: notWritten,
  });
  void batch.open(notificationIds).then((opened) => {
    if (!(opened.kept || opened.spooling || batch.intentTimedOut)) notWritten(opened.error);
  });
  return batch;
}

/** Writes the batch in the time the budget kept for it, and reports where its records went. */
async function closeEvidenceBatch(batch: InvocationEvidence, budget: InvocationBudget): Promise<void> {
  const r = await batch.close(
    budget.evidencePutMs(Date.now(), config.evidence.timeoutMs),
    config.evidence.timeoutMs,
    Date.now(),
  );
  for (const a of r.alone) {
    reportBatch({ ...a, intentOpen: false }, a.key, [a.proof]);
    // No intent to finish it: a record stored but not indexed is counted, and kept as a gap the filler indexes.
    if (a.outcome === 'written' && !a.indexed) {
      countBy('EvidenceUnindexed', { channel: a.proof.record.channel });
      logger.error(
        a.indexGap === 'added'
          ? 'evidence record written alone; its index not written: left to the gap filler'
          : 'evidence record written alone; its index not written, nor its gap: found by its notification only',
        { key: a.key, notificationId: a.proof.record.notificationId, reason: a.error },
      );
    }
  }
  // Spooled: what is reported is the records whose put the table refused (the spooled ones are safe).
  reportBatch(r, batch.name, r.spool === undefined ? batch.records : (r.spool.refused as readonly SendProof[]));
  if (r.spool !== undefined) count('EvidenceSpooled', r.spool.spooled);
  // Its intent stays open and the sweeper indexes it; counted so a throttled index table shows.
  if (r.unindexedItems !== undefined) count('EvidenceIndexUnprocessed', r.unindexedItems);
}

/** Where a batch's records went: metrics per channel, ids in the log. */
function reportBatch(
  r: { outcome: string; records: number; intentOpen: boolean; spool?: { indexed: boolean }; error?: string },
  name: string,
  records: readonly SendProof[],
): void {
  // Nothing sent: the intent is closed, there is nothing to report.
  if (r.records === 0) return;
  const batch = { name };
  const perChannel = new Map<string, number>();
  for (const p of records) perChannel.set(p.record.channel, (perChannel.get(p.record.channel) ?? 0) + 1);
  const ids = records.map((p) => ({
    notificationId: p.record.notificationId,
    providerMessageId: p.record.providerMessageId,
  }));
  if (r.outcome === 'gap') {
    // SENT stands; the records wait in the table (or are rebuilt from their notifications) and the sweeper writes them.
    for (const [channel, n] of perChannel) countBy('EvidenceGaps', { channel }, n);
    logger.warn('evidence batch not written: left to the sweeper', {
      batch: batch.name,
      reason: r.error,
      records: r.records,
    });
  } else if (r.outcome === 'lost') {
    for (const [channel, n] of perChannel) countBy('EvidenceLost', { channel }, n);
    logger.error('evidence batch not written, no gap and no intent recorded', {
      batch: batch.name,
      reason: r.error,
      sends: ids,
    });
  } else if (r.intentOpen || r.spool?.indexed === false) {
    // A spooled record's index write that failed is the sweeper's too: the roll-up of its slice checks and fills it.
    logger.warn('evidence batch written; its index or intent left to the sweeper', {
      batch: batch.name,
      reason: r.error,
    });
  }
}

/** The metric of each status the moment ends a notification in (docs/dispatch.md "The right moment"). */
const UNSENT_METRIC = {
  EXPIRED: 'NotificationsPastValidity',
  SUPERSEDED: 'NotificationsSuperseded',
  THROTTLED: 'NotificationsFloodLimited',
} as const;

/** Logs carry notificationId and reason codes, never an address or a phone number. A send is listed in `sent`. */
function report(r: DispatchResult, sent: string[]): void {
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
        countNow('LateAcceptances');
        logger.error('provider accepted after the lease expired; the sweeper had already resolved it', {
          ...ids,
          providerMessageId: r.providerMessageId,
        });
      } else if (r.acceptance === 'notRecorded') {
        // DynamoDB refused every write for the rest of the invocation: the send happened and only this line says so.
        countNow('AcceptancesNotRecorded');
        logger.error('provider accepted; DynamoDB refused to record it before the deadline', {
          ...ids,
          providerMessageId: r.providerMessageId,
        });
      } else {
        // Listed by its notificationId (eventId#channel), which the runbook's trace finds in the invocation's line.
        sent.push(`${r.item.notificationId} ${r.item.attempt} ${r.providerMessageId}`);
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

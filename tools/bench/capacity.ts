/**
 * The capacity model: for a peak of notifications per second, what every part of notifier must take —
 * writes and reads per second on the table and on each index key, MSK partitions and event pollers, Lambda concurrency
 * per function, stream shards, the SES/SNS rates needed, and the month's cost on list prices — and which limit the
 * load meets first. Pure: the key functions and the shard sizing are the code's own (functions/domain/notification.ts,
 * functions/dispatch/send-quota-store.ts); item sizes come from items the code builds; the per-event units and durations
 * are what the bench measured. Nothing here restates a number the code decides.
 */
import { CHANNELS, type Channel } from '../../functions/domain/channels.ts';
import { SUPPRESSION_SHARDS, sweepKey } from '../../functions/domain/keys.ts';
import { rateShardsFor } from '../../functions/domain/send-rate.ts';
import { SWEEP_WRITES_PER_KEY_PER_NOTIFICATION, sweepShardsFor } from '../../functions/domain/sweep-index.ts';
import { sweepPartitions } from '../../functions/sweeper/sweep.ts';
import { recordsPerInvocation, reportsObjectsPerReportBySendBatch, stackBatching } from './batching.ts';
import { writeUnits } from './billing.ts';
import { RATE_ASSUMPTIONS } from './cost-at-rate.ts';
import { costOf, type Prices, US_EAST_1_PRICES } from './prices.ts';

/** What the bench measured per record (new or duplicate) and per send. */
export interface Measured {
  /** Ingest, per new event: DynamoDB units (sweep index included) and requests. */
  readonly ingestWruPerEvent: number;
  readonly ingestRruPerEvent: number;
  /** Ingest, per duplicate record. */
  readonly ingestWruPerDuplicate: number;
  readonly ingestRruPerDuplicate: number;
  /** Ingest invocation time per record, at the stack's concurrency with 10 ms per DynamoDB call. */
  readonly ingestSecondsPerRecord: number;
  /** Dispatch invocation time per send (provider latency included, the stack's concurrency per invocation). */
  readonly dispatchSecondsPerSend: number;
  /** Token-bucket writes per send (the pacing bench). */
  readonly pacerWritesPerSend: number;
}

/** Sizes of the items the code builds for a typical event (tools/bench/run.ts builds them with the real builders). */
export interface ItemSizes {
  readonly inboxBytes: number;
  readonly notificationBytes: number;
  /** The Kafka record value. */
  readonly eventBytes: number;
}

/** Limits the model checks against: DynamoDB's per-key ceiling and AWS default quotas (all raisable but the first). */
export const DEFAULT_LIMITS = {
  /** DynamoDB: writes per second to one partition key value (not raisable). */
  keyWritesPerSec: 1_000,
  /** A partition key's read units per second. */
  keyReadsPerSec: 3_000,
  /** DynamoDB on-demand: default maximum per table (and per index), raisable through Service Quotas. */
  tableWruPerSec: 40_000,
  tableRruPerSec: 40_000,
  /** Lambda: concurrent executions per account and region (default). */
  lambdaConcurrency: 1_000,
  /** SES: a common starting production sending rate; each account has its own (`aws ses get-send-quota`). */
  sesEmailsPerSec: 14,
  /** SNS: default SMS transactions per second. */
  snsSmsPerSec: 20,
  /** SNS: Publish requests per second (us-east-1 default). */
  snsPublishPerSec: 30_000,
  /** S3: PUT/COPY/POST/DELETE per second per partitioned prefix (S3 performance guidelines); GET/HEAD 5,500. */
  s3PutsPerPrefixPerSec: 3_500,
  s3GetsPerPrefixPerSec: 5_500,
} as const;

export interface CapacityInput {
  readonly notificationsPerSec: number;
  readonly channelsPerEvent: number;
  /** Share of notifications per channel (adds up to 1). */
  readonly channelMix: Readonly<Record<Channel, number>>;
  /** Share of delivered records that are duplicates (redeliveries, resends). */
  readonly duplicateShare: number;
  readonly measured: Measured;
  readonly sizes: ItemSizes;
  readonly prices?: Prices;
  /** The month's volume as a share of the peak held all month (a bank is at its peak a few hours a month). */
  readonly averageShareOfPeak?: number;
  readonly limits?: Readonly<Record<keyof typeof DEFAULT_LIMITS, number>>;
  /** Lambda memory, GB (the house construct's 512 MB). */
  readonly memoryGb?: number;
  readonly inboxRetentionDays?: number;
  /** Share of notifications of a critical type (the urgent trigger's small batches); default 0. */
  readonly criticalShare?: number;
}

const MSK_BATCH = 100;
const STREAM_BATCH = 100;
const STREAM_PARALLELIZATION = 2;
/** A partition's ingest invocation busy half the time at the peak: room for redeliveries and slow calls. */
const PARTITION_UTILISATION = 0.5;
/** Provisioned event pollers: about 5 MB/s each (Lambda developer guide, Kafka event poller scaling). */
const POLLER_BYTES_PER_SEC = 5 * 1024 * 1024;
const SWEEPER_RUNS_PER_MONTH = 30 * 24 * 60;
const SECONDS_PER_MONTH = 30 * 86_400;
const SAMPLE = 20_000;

/** The largest share of notifications one sweep shard gets, through the real key function (hash noise included). */
export function hottestShardShare(shards: number, sample = SAMPLE): number {
  const counts = new Map<string, number>();
  for (let i = 0; i < sample; i++) {
    const key = sweepKey('PENDING', 'EMAIL', `cap-${i}#EMAIL`, shards);
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return Math.max(...counts.values()) / sample;
}

/** The rates the peak means: notifications, events, records delivered (duplicates included), per channel. */
function ratesOf(input: CapacityInput) {
  const n = input.notificationsPerSec;
  const eventsPerSec = n / input.channelsPerEvent;
  const recordsPerSec = eventsPerSec / (1 - input.duplicateShare);
  const sendRates = Object.fromEntries(CHANNELS.map((c) => [c, n * input.channelMix[c]])) as Record<Channel, number>;
  const busiest = CHANNELS.reduce((a, c) => (input.channelMix[c] > input.channelMix[a] ? c : a), CHANNELS[0]);
  return { n, eventsPerSec, recordsPerSec, duplicatesPerSec: recordsPerSec - eventsPerSec, sendRates, busiest };
}
type Rates = ReturnType<typeof ratesOf>;

/**
 * The hottest keys: the sweep index (the code's shard count for this peak, the code's key function for the spread),
 * the token buckets (the code's shards per channel rate), the suppression items (a channel's over 16 keys by hash).
 */
function hotKeys(input: CapacityInput, r: Rates) {
  const sweepShards = sweepShardsFor(r.n);
  const shardShare = hottestShardShare(sweepShards);
  return {
    sweepShards,
    hottestKeyWritesPerSec: SWEEP_WRITES_PER_KEY_PER_NOTIFICATION * r.n * input.channelMix[r.busiest] * shardShare,
    hottestKeyWritesPerSecAllOneChannel: SWEEP_WRITES_PER_KEY_PER_NOTIFICATION * r.n * shardShare,
    rateKeyWritesPerSec: Math.max(...CHANNELS.map((c) => r.sendRates[c] / rateShardsFor(Math.ceil(r.sendRates[c])))),
    suppressionKeyReadsPerSec: (r.n * input.channelMix[r.busiest]) / SUPPRESSION_SHARDS.length,
  };
}

/** Table and index units per second. */
function unitsPerSecond(input: CapacityInput, r: Rates, sweepShards: number) {
  const m = input.measured;
  // Dispatch per notification: claim and finish are UpdateItems on the notification (billed on its size), each one
  // index write: the claim updates the projected status, attempt and lease in place (its key stays), finish deletes it.
  const claimWru = writeUnits(input.sizes.notificationBytes + 120);
  const finishWru = writeUnits(input.sizes.notificationBytes + 160);
  const dispatchIndexWruPerSend = 2;
  const ingestWruPerSec = r.eventsPerSec * m.ingestWruPerEvent + r.duplicatesPerSec * m.ingestWruPerDuplicate;
  const ingestIndexWruPerSec = r.n; // one index put per new notification (part of ingestWruPerEvent)
  const dispatchTableWruPerSec = r.n * (claimWru + finishWru + m.pacerWritesPerSend);
  // One Query per partition the sweeper visits: SENDING, and PENDING per class, per channel × shard.
  const sweeperQueriesPerRun = sweepPartitions(sweepShards).length;
  // The audience check before each claim: two strongly consistent reads per send — the address's suppression item
  // and the user's preferences (a key per user).
  const audienceRruPerSec = 2 * r.n;
  return {
    indexWcuPerSec: ingestIndexWruPerSec + r.n * dispatchIndexWruPerSend,
    tableWcuPerSec: ingestWruPerSec - ingestIndexWruPerSec + dispatchTableWruPerSec,
    tableRcuPerSec:
      r.eventsPerSec * m.ingestRruPerEvent + r.duplicatesPerSec * m.ingestRruPerDuplicate + audienceRruPerSec,
    sweeperQueriesPerRun,
    sweeperRruPerSec: (sweeperQueriesPerRun * 0.5) / 60,
  };
}
type Units = ReturnType<typeof unitsPerSecond>;

/** MSK partitions and pollers, stream shards, and Lambda concurrency (Little's law on the measured times). */
function computeFor(input: CapacityInput, r: Rates, u: Units) {
  const m = input.measured;
  const mskPartitions = Math.max(1, Math.ceil((r.recordsPerSec * m.ingestSecondsPerRecord) / PARTITION_UTILISATION));
  // A DynamoDB stream has about one shard per table partition; a partition takes 1,000 WRU/s or 3,000 RRU/s.
  const streamShards = Math.max(1, Math.ceil(Math.max(u.tableWcuPerSec / 1_000, u.tableRcuPerSec / 3_000)));
  const dispatchNeeded = Math.ceil(r.n * m.dispatchSecondsPerSend);
  return {
    mskPartitions,
    eventPollers: Math.max(1, Math.ceil((r.recordsPerSec * input.sizes.eventBytes) / POLLER_BYTES_PER_SEC)),
    streamShards,
    lambdaConcurrency: {
      /** One invocation per partition at a time (the MSK event source mapping). */
      ingest: mskPartitions,
      /** Little's law on the measured time per send; at most stream shards × parallelization factor at a time. */
      dispatch: dispatchNeeded,
      dispatchCeilingFromStream: streamShards * STREAM_PARALLELIZATION,
      sweeper: 1,
      total: mskPartitions + dispatchNeeded + 1,
    },
  };
}

/**
 * The evidence store's request rates: one send batch per dispatch invocation, one reports object per feedback
 * invocation of SES events and of SNS delivery status logs (and, for comparison, one per distinct send batch among a
 * feedback invocation's reports, the layout before), the gap filler's writes at most its budget a run. Every object is under `batches/<yyyy-mm-dd>/` — one
 * prefix a day — with a key that goes on `<hhmmss>-<writer>-<random id>` (reports under their send batch's key), so
 * the day's prefix takes every PUT and S3 partitions it further by the keys' time and random id as the rate grows.
 */
function evidenceRates(input: CapacityInput, r: Rates, streamShards: number) {
  const b = stackBatching(streamShards);
  const critical = input.criticalShare ?? 0;
  const perDispatch = recordsPerInvocation(r.n * (1 - critical), b.dispatch);
  const dispatchInvocations =
    (r.n * (1 - critical)) / perDispatch + (r.n * critical) / recordsPerInvocation(r.n * critical, b.urgent);
  const sesEvents = r.sendRates.EMAIL;
  const perFeedback = recordsPerInvocation(sesEvents, b.feedback);
  const reportsPerFeedbackInvocation = sesEvents / perFeedback;
  const reportsPerSendBatch =
    sesEvents *
    reportsObjectsPerReportBySendBatch(
      perFeedback,
      sesEvents * b.feedback.windowSeconds,
      r.n / Math.max(1e-9, dispatchInvocations),
    );
  // SNS's delivery status logs (push and SMS, one a send) reach feedback through a log subscription, batched over a
  // second as the cost model assumes (RATE_ASSUMPTIONS.logSubscription): one reports object per such invocation.
  const snsLogs = r.sendRates.PUSH + r.sendRates.SMS;
  const deliveryLogReports = snsLogs / recordsPerInvocation(snsLogs, RATE_ASSUMPTIONS.logSubscription);
  // The gap filler writes at most GAP_FILLS_PER_RUN a minute (functions/sweeper: its budget), only after failures.
  const gapPuts = GAP_FILLS_PER_RUN / 60;
  const puts = dispatchInvocations + reportsPerFeedbackInvocation + deliveryLogReports + gapPuts;
  return {
    recordsPerDispatchInvocation: round(perDispatch),
    sendBatchPutsPerSec: round(dispatchInvocations),
    reportsPutsPerSec: round(reportsPerFeedbackInvocation),
    reportsPutsPerSecOnePerSendBatch: round(reportsPerSendBatch),
    deliveryLogReportsPutsPerSec: round(deliveryLogReports),
    gapPutsPerSecAtMost: round(gapPuts),
    /** Every PUT of a day is under its one day prefix, before S3 partitions it further. */
    busiestPrefixPutsPerSec: round(puts),
    /** Reads: the sweeper's recovery and the operators' reads are per case, not per send; a rebuild reads its batch. */
    busiestPrefix: 'batches/<yyyy-mm-dd>/',
  };
}
type EvidenceRates = ReturnType<typeof evidenceRates>;
/** The gap filler's budget of objects a run (EVIDENCE_GAPS_PER_RUN in functions/sweeper/index.ts, a handler this pure model does not import). */
const GAP_FILLS_PER_RUN = 500;

/** Every limit the peak comes near, by how close (the first is the first to be met). */
function limitChecks(
  limits: Readonly<Record<keyof typeof DEFAULT_LIMITS, number>>,
  r: Rates,
  keys: ReturnType<typeof hotKeys>,
  u: Units,
  compute: ReturnType<typeof computeFor>,
  evidence: EvidenceRates,
) {
  const { lambdaConcurrency } = compute;
  return [
    {
      limit: 'evidence PUTs/s on the day prefix (S3 per prefix)',
      needed: evidence.busiestPrefixPutsPerSec,
      max: limits.s3PutsPerPrefixPerSec,
    },
    {
      limit: 'sweep-index key writes/s (DynamoDB per key)',
      needed: keys.hottestKeyWritesPerSec,
      max: limits.keyWritesPerSec,
    },
    {
      limit: 'token-bucket key writes/s (DynamoDB per key)',
      needed: keys.rateKeyWritesPerSec,
      max: limits.keyWritesPerSec,
    },
    {
      limit: 'suppression key reads/s (DynamoDB per key)',
      needed: keys.suppressionKeyReadsPerSec,
      max: limits.keyReadsPerSec,
    },
    { limit: 'table WRU/s (on-demand default per table)', needed: u.tableWcuPerSec, max: limits.tableWruPerSec },
    { limit: 'sweep index WRU/s (on-demand default per index)', needed: u.indexWcuPerSec, max: limits.tableWruPerSec },
    {
      limit: 'table RRU/s (on-demand default per table)',
      needed: u.tableRcuPerSec + u.sweeperRruPerSec,
      max: limits.tableRruPerSec,
    },
    { limit: 'Lambda concurrency (account default)', needed: lambdaConcurrency.total, max: limits.lambdaConcurrency },
    {
      limit: 'dispatch concurrency the stream allows (shards × 2)',
      needed: lambdaConcurrency.dispatch,
      max: lambdaConcurrency.dispatchCeilingFromStream,
    },
    { limit: 'SES send rate (account quota)', needed: r.sendRates.EMAIL, max: limits.sesEmailsPerSec },
    { limit: 'SNS SMS/s (default quota)', needed: r.sendRates.SMS, max: limits.snsSmsPerSec },
    { limit: 'SNS Publish/s (push + SMS)', needed: r.sendRates.PUSH + r.sendRates.SMS, max: limits.snsPublishPerSec },
  ]
    .map((c) => ({ ...c, needed: round(c.needed), utilisation: round(c.needed / c.max) }))
    .sort((a, b) => b.utilisation - a.utilisation);
}

/** The month at averageShareOfPeak of the peak: its notifications and what they cost, storage included. */
function monthOf(input: CapacityInput, r: Rates, u: Units) {
  const prices = input.prices ?? US_EAST_1_PRICES;
  const memoryGb = input.memoryGb ?? 0.5;
  const m = input.measured;
  const share = input.averageShareOfPeak ?? 0.05;
  const monthlyNotifications = r.n * share * SECONDS_PER_MONTH;
  const perNotification = {
    wru: (u.tableWcuPerSec + u.indexWcuPerSec) / r.n,
    rru: u.tableRcuPerSec / r.n,
    lambdaGbSeconds: memoryGb * ((r.recordsPerSec / r.n) * m.ingestSecondsPerRecord + m.dispatchSecondsPerSend),
    lambdaRequests: r.recordsPerSec / r.n / MSK_BATCH + 1 / STREAM_BATCH,
  };
  const sweeperMonth = {
    rru: u.sweeperQueriesPerRun * 0.5 * SWEEPER_RUNS_PER_MONTH,
    // A run of empty queries: about 10 ms each, one after the other.
    lambdaGbSeconds: memoryGb * u.sweeperQueriesPerRun * 0.01 * SWEEPER_RUNS_PER_MONTH,
  };
  const retentionDays = input.inboxRetentionDays ?? 35;
  const storedGb =
    ((monthlyNotifications / input.channelsPerEvent) *
      (input.sizes.inboxBytes + input.channelsPerEvent * input.sizes.notificationBytes) *
      (retentionDays / 30)) /
    1024 ** 3;
  const month = costOf(
    {
      wru: perNotification.wru * monthlyNotifications,
      rru: perNotification.rru * monthlyNotifications + sweeperMonth.rru,
      lambdaGbSeconds: perNotification.lambdaGbSeconds * monthlyNotifications + sweeperMonth.lambdaGbSeconds,
      lambdaRequests: perNotification.lambdaRequests * monthlyNotifications + SWEEPER_RUNS_PER_MONTH,
      emails: monthlyNotifications * input.channelMix.EMAIL,
      pushes: monthlyNotifications * input.channelMix.PUSH,
      sms: monthlyNotifications * input.channelMix.SMS,
    },
    prices,
  );
  const storage = round(storedGb * prices.dynamodbStorageGbMonth);
  return {
    monthlyNotifications: Math.round(monthlyNotifications),
    monthlyCostUsd: { ...month, storage, total: round(month.total + storage), averageShareOfPeak: share },
    sweeperRruPerMonth: sweeperMonth.rru,
  };
}

/** What a peak of `notificationsPerSec` needs, from the units and durations measured, and which limit comes first. */
export function capacityModel(input: CapacityInput) {
  const r = ratesOf(input);
  const keys = hotKeys(input, r);
  const u = unitsPerSecond(input, r, keys.sweepShards);
  const compute = computeFor(input, r, u);
  const evidence = evidenceRates(input, r, compute.streamShards);
  const checks = limitChecks(input.limits ?? DEFAULT_LIMITS, r, keys, u, compute, evidence);
  const month = monthOf(input, r, u);
  return {
    notificationsPerSec: r.n,
    eventsPerSec: round(r.eventsPerSec),
    recordsPerSec: round(r.recordsPerSec),
    duplicateShare: input.duplicateShare,
    sweepShards: keys.sweepShards,
    hottestKeyWritesPerSec: round(keys.hottestKeyWritesPerSec),
    hottestKeyWritesPerSecAllOneChannel: round(keys.hottestKeyWritesPerSecAllOneChannel),
    rateKeyWritesPerSec: round(keys.rateKeyWritesPerSec),
    suppressionKeyReadsPerSec: round(keys.suppressionKeyReadsPerSec),
    tableWcuPerSec: round(u.tableWcuPerSec),
    tableRcuPerSec: round(u.tableRcuPerSec + u.sweeperRruPerSec),
    indexWcuPerSec: round(u.indexWcuPerSec),
    ...compute,
    evidence,
    providerRatesPerSec: Object.fromEntries(CHANNELS.map((c) => [c, round(r.sendRates[c])])),
    sweeper: { queriesPerRun: u.sweeperQueriesPerRun, rruPerMonth: month.sweeperRruPerMonth },
    monthlyNotifications: month.monthlyNotifications,
    monthlyCostUsd: month.monthlyCostUsd,
    limits: checks,
    firstLimit: checks[0]?.limit,
  };
}
export type Capacity = ReturnType<typeof capacityModel>;

const round = (x: number) => Math.round(x * 100) / 100;

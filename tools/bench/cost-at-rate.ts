/**
 * The complete cost at an arrival rate. A local run (full-cost.ts) pushes its events at once, so every batch is full;
 * what a notification costs per invocation — an evidence object, an intent, a trace, Lambda's own log lines, a metric
 * flush, a request — depends on how many records an invocation holds at the real rate (batching.ts). This takes what
 * the run measured that does not depend on batching, and prices the rest at `ratePerSec` for the evidence layouts
 * given (the customer index and the reports objects are parameters: the layouts change while this is measured).
 * Also what the run cannot see: KMS, AWS Backup, evidence replication (per notification, when the settings turn them
 * on) and the fixed monthly costs. Pure; every price and assumption named.
 */

import { MAX_CHUNK } from '../../functions/dispatch/pacer.ts';
import { CHANNELS } from '../../functions/domain/channels.ts';
import { batchName, indexEntriesOf } from '../../functions/domain/evidence-batch.ts';
import { SPOOL_BELOW_RECORDS, sliceBatchName } from '../../functions/domain/evidence-spool.ts';
import { sweepShardsFor } from '../../functions/domain/sweep-index.ts';
import { indexItemsOf } from '../../functions/stores/evidence-index.ts';
import { sweepPartitions } from '../../functions/sweeper/sweep.ts';
import { DEFAULT_TRACING, type TracingMode } from '../../lib/tracing.ts';
import {
  type Batching,
  recordsPerInvocation,
  reportsObjectsPerReportBySendBatch,
  STREAM_PARALLELIZATION,
  stackBatching,
} from './batching.ts';
import { itemBytes } from './billing.ts';
import type { Prices } from './prices.ts';
import { spoolCostAt } from './spool-cost.ts';

/** One function's metric documents in the run: what an invocation writes whatever its records, and what they add. */
export interface EmfOfFunction {
  /**
   * The invocation's closing document (its plain counts, the first dimension set and its listing, emf-tally.ts) and
   * any plain count written at once: bytes per invocation of the run, the listing's entries out.
   */
  readonly plainPerInvocation: number;
  /** A document of a dimension set of its own (an event's second channel): its mean bytes. */
  readonly setBytes: number;
  /** Dimension sets per invocation of the run, carried or of their own: its batches are full, so every set it meets. */
  readonly setsPerInvocation: number;
  /** The sets the closing document carries per invocation of the run (one when there is any). Absent: none. */
  readonly mergedSetsPerInvocation?: number;
  /** Dimension sets a record meets in an invocation of its own (an event: one per channel; a send, a report: one). */
  readonly setsPerRecord: number;
  /** The listing entries' bytes per notification (one entry a record, whatever the batching). Absent: none. */
  readonly entryBytesPerNotification?: number;
  /** The function's records (events, sends, reports) per notification; absent: it runs by the clock (the sweeper). */
  readonly recordsPerNotification?: number;
}

/** What one local run measured, per notification, that the rate model needs (full-cost.ts fills it). */
export interface RunDensity {
  readonly notifications: number;
  readonly events: number;
  readonly emails: number;
  readonly sesEvents: number;
  readonly snsDeliveryLogs: number;
  readonly criticalNotifications: number;
  readonly otpEvents: number;
  /** Invocations of the run, per function (ingest, dispatch, feedback, sweeper). */
  readonly invocations: Readonly<Record<string, number>>;
  /**
   * Metric (EMF) lines: the bytes of one directive written as a document of its own, no listing (what the floor prices
   * an invocation, and a function the run did not invoke writes), and all the run wrote per notification.
   */
  readonly emfLineBytes: number;
  readonly emfBytesPerNotification: number;
  /**
   * Per function, the bytes a listing line (contracts/telemetry.ts LOG_LISTINGS: one an invocation) adds besides its
   * entries, per invocation of the run: written once an invocation, priced at the rate's invocations. Absent: none.
   */
  readonly listingBytesPerInvocation?: Readonly<Record<string, number>>;
  /**
   * The metric (EMF) documents per function as the run wrote them (full-cost.ts, from the probe's emf-tally.ts), and
   * what a one-count plain directive adds (a spooling dispatch invocation's EvidenceSpooled, which the run never wrote):
   * priced at the rate's invocations and records (emfBytesAt). Absent: the run's, at least a mean line an invocation.
   */
  readonly emf?: {
    readonly byFunction: Readonly<Record<string, EmfOfFunction>>;
    readonly spoolDocBytes: number;
  };
  readonly evidence: {
    readonly puts: number;
    readonly gets: number;
    readonly lists: number;
    /** Records in the run's batches, their stored bytes, and the same records each in a batch of its own. */
    readonly records: number;
    readonly bytes: number;
    readonly bytesAlone: number;
    /** The same records each as a spool item (stores/evidence-spool.ts spoolItem): mean bytes and write units. */
    readonly spoolItem?: { readonly bytes: number; readonly wru: number };
    /**
     * The run's report records (its reports batches) each as a spool item: a report is far smaller than a send, so
     * the spooled reports are priced on their own measured items, not as sends. Absent: priced as sends (an upper bound).
     */
    readonly reportItem?: { readonly bytes: number; readonly wru: number };
  };
  /**
   * Table write units of the run's pacer (the shared token bucket's RATE items): taken out of the measured writes,
   * because the pacer is priced once, at the rate (`pacerWritesPerSendAt`). Absent: none measured.
   */
  readonly pacerWru?: number;
  /** Table write units of the run's intents (EVIDENCE_BATCH) and of its customer index items. */
  readonly intentWru: number;
  readonly indexWru: number;
  /** GB-months of the index items the run left (7 years each), in the index's own table; PITR on the same bytes. */
  readonly indexGbMonths: number;
  /** GB-months of everything the run left in the main table (the backup copies it whole; the index's table not). */
  readonly tableGbMonths: number;
}

/** The customer evidence index's layout, the reports' layout: parameters, so a re-keyed store is priced the same. */
export interface EvidenceLayouts {
  /**
   * The compact items the product writes (an item per customer and event, one per event: their bytes taken from the
   * product's own items, `compactIndexBytes`); the layout before it (an item per customer and send batch, one per
   * event and batch, of `indexItemBytes` and `eventItemBytes`); or the one growing item per customer-month before that.
   */
  readonly index: 'compact' | 'perCustomerBatch' | 'perCustomerMonth';
  /** One reports object per feedback invocation, or one per distinct send batch among its reports. */
  readonly reports: 'perFeedbackInvocation' | 'perSendBatch';
  readonly indexItemBytes: number;
  readonly eventItemBytes: number;
  /** A ref in the customer-month layout (batch name and notification id). */
  readonly refBytes: number;
  readonly sendsPerCustomerPerMonth: number;
  /** Writers of fewer records than this spool them (the deployed setting); 0 prices every invocation's own object. */
  readonly spoolBelow?: number;
}

const spoolBelowOf = (layouts: EvidenceLayouts) => layouts.spoolBelow ?? SPOOL_BELOW_RECORDS;

export const DEFAULT_LAYOUTS: EvidenceLayouts = {
  index: 'compact',
  reports: 'perFeedbackInvocation',
  indexItemBytes: 160,
  eventItemBytes: 90,
  refBytes: 115,
  sendsPerCustomerPerMonth: 10,
};

/**
 * A send's ids as long as the floor takes them (FLOOR.eventEntryBytes: an event's id and its customer's, 40 B): both
 * sides price the same ids. The run's own (tools/bench/workload.ts: `u-12`, `cost-mix-12`) are shorter than a bank's
 * and would price the product's items, which hold the ids in their keys, below the floor's for that reason alone.
 */
export const INDEX_SAMPLE = {
  userId: 'customer-00000000012',
  eventId: 'event-00000000000012',
  expiresAt: 2_023_430_400,
} as const;

/**
 * The compact index's items as the product writes them (stores/evidence-index.ts indexItemsOf), billed as DynamoDB
 * counts them (the attributes' names and values, and 100 B an item): an event's customer item holding `sends` of its
 * channels in `batch`, and its event item. A fraction of a send is priced between the two whole numbers around it.
 */
export function compactIndexBytes(batch: string, sends: number): { customer: number; event: number } {
  const itemsOf = (n: number) =>
    indexItemsOf(
      indexEntriesOf(
        batch,
        ['EMAIL', 'PUSH', 'SMS'].slice(0, n).map((channel) => ({
          userId: INDEX_SAMPLE.userId,
          acceptedAt: new Date(Date.parse(batch.slice(8, 18))).toISOString(),
          notificationId: `${INDEX_SAMPLE.eventId}#${channel}`,
          sha256: 'f'.repeat(64),
          // A first claim's send: its mark carries the attempt (`1.`), as the product's do.
          attempt: 1,
        })),
      ).map((entry) => ({ entry, expiresAt: INDEX_SAMPLE.expiresAt })),
    ).map((i) => ({ bytes: itemBytes(i) + 100, customer: i.s !== undefined }));
  const customerOf = (n: number) => itemsOf(n).find((i) => i.customer)?.bytes ?? 0;
  const whole = Math.max(1, Math.min(2, Math.floor(sends)));
  const customer = customerOf(whole) + (sends - whole) * (customerOf(whole + 1) - customerOf(whole));
  return { customer, event: itemsOf(1).find((i) => !i.customer)?.bytes ?? 0 };
}

/**
 * The compact index per notification at a rate. The customer's item of an event holds the event's channels, and a
 * writer adds all it holds of one (customer, day, event) in one write (stores/evidence-index.ts indexItemsOf). An
 * event's notifications are written in one transaction under one partition key, so one stream shard carries them
 * together — but a shard is read as STREAM_PARALLELIZATION concurrent batches, and Lambda keeps order per item
 * (partition AND sort key), not per partition key: each channel may be in either batch. So an event of `k` channels
 * is added to from as many invocations as it meets lanes, `F(1 − (1 − 1/F)^k)` (1.5 for two channels over two), and
 * a full batch's end may fall between two of them (counted as if every full batch's did: at most 1 a batch). The
 * event's item is put by the first of them (once per event). The batch named is a spool slice's when dispatch spools
 * at this density, else an invocation's own.
 */
function compactIndexAt(run: RunDensity, spools: boolean, d: ReturnType<typeof densityAt>) {
  const events = run.events / run.notifications;
  const critical = run.criticalNotifications / run.notifications;
  const lanes = STREAM_PARALLELIZATION;
  const met = lanes * (1 - (1 - 1 / lanes) ** (1 / events));
  const cut = (records: number, b: Batching) => (records >= b.batchSize ? 1 / records : 0);
  const cuts = (1 - critical) * cut(d.dispatch, d.batching.dispatch) + critical * cut(d.urgent, d.batching.urgent);
  const at = Date.parse('2026-12-05T09:15:00Z');
  const batch = spools ? sliceBatchName(at, 2_557) : batchName('dispatch', at, 'f'.repeat(20));
  const bytes = compactIndexBytes(batch, 1 / events);
  return { wru: events * met + cuts + events, bytes: (bytes.customer + bytes.event) * events };
}

/** What the settings may turn on, and the fixed costs' counts; each priced or named "off in this figure". */
export const RATE_ASSUMPTIONS = {
  evidenceRetentionMonths: 2_557 / 30.44,
  accessLogBytesPerRequest: 400,
  platformLogBytesPerInvocation: 700,
  logRetentionMonths: 12,
  /** An intent: its key and kind (about 200 B), and each notification id it names (about 40 B). */
  intentBaseBytes: 200,
  intentBytesPerRecord: 40,
  /** The SNS delivery status logs reach feedback through a log subscription: assumed batched over a second. */
  logSubscription: { batchSize: 10_000, windowSeconds: 1, lanes: 1 } satisfies Batching,
  secretsPerOtp: 1,
  /** AWS Backup (settings `backup`, the example's): a daily recovery point kept 35 days, and a copy elsewhere. */
  backup: { on: true, retentionDays: 35, copies: 1 },
  /** Evidence replication (settings `evidenceReplication`): a second copy of every object in another region. */
  replication: { on: true },
  /**
   * Two regions (settings `regions`, examples/settings.example.json): the main table a global table; and what the
   * recovery region's stack adds every month whatever the volume — its own alarm metrics and customer-managed keys,
   * and the alarms two regions add to the primary's (the production settings in two regions synthesize 102 alarm
   * metrics in the primary, 96 in one region, and 100 with 5 keys in the recovery stack: held to the template by
   * test/infra/cost-fixed.test.ts) — and its sweeper, which runs every minute there too. That region is fenced, so
   * its sweeper's run is the keeper's and its own spool's roll-up (functions/sweeper/index.ts fencedRun, keep-region.ts),
   * never the sweep's Queries: per run, counted from that code (not held by a test), two consistent reads of its
   * `CONTROL`, one of the other region's, the peer's heartbeat, the roll-up's cursor and one strongly consistent Query
   * of each of the spool's 8 shards, then the roll-up's report: the cursor again and an eventually consistent Query of
   * each shard (18 read units); the cursor's put, the minute moving on (the spool's table is regional), and the
   * heartbeat's (2 write units), the heartbeat's replica in the primary (1 replicated write unit), and the run's own
   * Lambda request.
   */
  regions: {
    two: true,
    fixed: { alarms: 106, kmsKeys: 5, dashboards: 1 },
    fencedRun: { readUnits: 18, writeUnits: 2, replicatedWriteUnits: 1 },
  },
  /**
   * Fixed monthly: the alarm metrics and customer-managed keys of the production-like settings' stack (one region), as
   * its synth counts them — CloudWatch bills an alarm per metric it reads, a metric-math alarm each metric of its
   * expression (57 alarms read 97) — held to the template by test/infra/cost-fixed.test.ts. A second region's are
   * under `regions`.
   */
  fixed: { alarms: 97, kmsKeys: 6, dashboards: 1, urgentWarmEnvironments: 0, warmMemoryGb: 0.5 },
  secondsPerMonth: 30.44 * 86_400,
  /**
   * The sweeper runs every minute whatever the volume (its schedule): its invocations, and its Queries — one per
   * partition of the sweep index (functions/sweeper/sweep.ts sweepPartitions), eventually consistent, 0.5 RRU each
   * when empty — over the shards the rate sizes (sweepShardsFor: 8 at a million a month, 64 at 10,000/s).
   */
  sweeperRunsPerMinute: 1,
  sweepQueryReadUnits: 0.5,
  /**
   * What active tracing records: Lambda's own sampling, which a function cannot configure (the Lambda developer
   * guide, "Visualize Lambda function invocations using AWS X-Ray": 1 request a second and 5% of the rest; X-Ray's
   * sampling rules reach API Gateway, AppSync, Step Functions and the SDKs, not Lambda's active tracing). Taken per
   * function (an upper bound: the reservoir may be shared). The ingest function is not traced: X-Ray does not trace
   * functions behind an MSK or self-managed Kafka event source mapping (same page).
   */
  lambdaSampling: { reservoirPerSecond: 1, fixedRate: 0.05 },
} as const;

/** The sweeper's runs a month, in a region, whatever the volume (its schedule). */
export const SWEEPER_RUNS_A_MONTH = RATE_ASSUMPTIONS.sweeperRunsPerMinute * (RATE_ASSUMPTIONS.secondsPerMonth / 60);

/**
 * X-Ray per million notifications for `tracesPerNotification`, priced by the settings' `tracing` (lib/tracing.ts): in
 * the totals when the stage traces by default, else in what the settings add (what turning it on costs).
 */
export function xrayByTracing(tracesPerNotification: number, p: Prices, tracing: TracingMode) {
  const cost = tracesPerNotification * p.xrayTracePerMillion;
  return tracing === 'active' ? { inTotal: cost, withSetting: 0 } : { inTotal: 0, withSetting: cost };
}

/** Traces a second Lambda's fixed sampling records of a function invoked `perSec` times a second. */
export function tracedPerSecond(perSec: number): number {
  const { reservoirPerSecond, fixedRate } = RATE_ASSUMPTIONS.lambdaSampling;
  return Math.min(perSec, reservoirPerSecond) + fixedRate * Math.max(0, perSec - reservoirPerSecond);
}

/** Prices the rate model needs beyond prices.ts (us-east-1 list prices, not re-checked live). */
export const EXTRA_PRICES = {
  kmsRequestPerTenThousand: 0.03,
  kmsKeyMonth: 1,
  /** AWS Backup, DynamoDB warm storage per GB-month; cross-region copy transfer per GB. */
  backupDynamodbGbMonth: 0.1,
  crossRegionTransferPerGb: 0.02,
  /** A standard-resolution CloudWatch alarm metric a month (an alarm is billed per metric it reads). */
  alarmMonth: 0.1,
  /** A CloudWatch dashboard a month (an account's first three are free: a bank's account has more). */
  dashboardMonth: 3,
  /** Provisioned concurrency, Arm: per GB-second kept warm. */
  provisionedGbSecondArm: 0.0000033334,
  dynamodbIaStorageGbMonth: 0.1,
  dynamodbIaWriteRequestUnitPerMillion: 0.78,
  /** Standard-IA reads (the roll-up's check of the evidence index), per million read request units. */
  dynamodbIaReadRequestUnitPerMillion: 0.155,
} as const;

const GB = 1024 ** 3;
const KB = 1024;

/** Records per invocation of each function at a rate of notifications per second. */
export function densityAt(ratePerSec: number, run: RunDensity, streamShards: number) {
  const b = stackBatching(streamShards);
  const perN = (x: number) => x / run.notifications;
  const critical = perN(run.criticalNotifications);
  return {
    ingest: recordsPerInvocation(ratePerSec * perN(run.events), b.ingest),
    dispatch: recordsPerInvocation(ratePerSec * (1 - critical), b.dispatch),
    urgent: recordsPerInvocation(ratePerSec * critical, b.urgent),
    feedback: recordsPerInvocation(ratePerSec * perN(run.sesEvents), b.feedback),
    logs: recordsPerInvocation(ratePerSec * perN(run.snsDeliveryLogs), RATE_ASSUMPTIONS.logSubscription),
    batching: b,
  };
}

/** Per notification at the rate: invocations, evidence objects and bytes, intents and index units. */
export function perNotificationAt(ratePerSec: number, run: RunDensity, layouts: EvidenceLayouts, streamShards: number) {
  const A = RATE_ASSUMPTIONS;
  const d = densityAt(ratePerSec, run, streamShards);
  const perN = (x: number) => x / run.notifications;
  const critical = perN(run.criticalNotifications);
  const dispatchInvocations = (1 - critical) / d.dispatch + (critical > 0 ? critical / d.urgent : 0);
  const sendsPerBatch = 1 / Math.max(1e-9, dispatchInvocations);
  const feedbackInvocations = perN(run.sesEvents) / d.feedback + perN(run.snsDeliveryLogs) / d.logs;
  const monthly = ratePerSec * A.secondsPerMonth;
  const byFunction: Record<string, number> = {
    ingest: perN(run.events) / d.ingest,
    dispatch: dispatchInvocations,
    feedback: feedbackInvocations,
    // The sweeper's runs, whether the local run invoked it or not: it runs every minute.
    sweeper: SWEEPER_RUNS_A_MONTH / monthly,
  };
  const invocations = Object.values(byFunction).reduce((a, b) => a + b, 0);
  // Traces per notification: each traced function sampled on its own (ingest is not traced, RATE_ASSUMPTIONS).
  const traced =
    (tracedPerSecond(ratePerSec * dispatchInvocations) +
      tracedPerSecond(ratePerSec * feedbackInvocations) +
      tracedPerSecond(SWEEPER_RUNS_A_MONTH / A.secondsPerMonth)) /
    ratePerSec;
  const reports = perN(run.sesEvents + run.snsDeliveryLogs);
  const reportsObjects =
    layouts.reports === 'perFeedbackInvocation'
      ? feedbackInvocations
      : perN(run.sesEvents) *
          reportsObjectsPerReportBySendBatch(
            d.feedback,
            ratePerSec * perN(run.emails) * d.batching.feedback.windowSeconds,
            sendsPerBatch,
          ) +
        perN(run.snsDeliveryLogs) / d.logs;
  // A batch of r records: the dense bytes per record, plus what a batch of its own adds, shared by its r records.
  const dense = run.evidence.bytes / Math.max(1, run.evidence.records);
  const alone = run.evidence.bytesAlone / Math.max(1, run.evidence.records);
  // Writers of few records spool them (spool-cost.ts): rolled a minute at a time, stored as densely as a full batch.
  const sesReports = perN(run.sesEvents);
  const logReports = perN(run.snsDeliveryLogs);
  const reportItem = run.evidence.reportItem === undefined ? {} : { item: run.evidence.reportItem };
  const spool = spoolCostAt({
    ratePerSec,
    writers: [
      { recordsPerInvocation: d.dispatch, recordsPerNotification: 1 - critical },
      { recordsPerInvocation: d.urgent, recordsPerNotification: critical },
      { recordsPerInvocation: d.feedback, recordsPerNotification: sesReports, ...reportItem },
      { recordsPerInvocation: d.logs, recordsPerNotification: logReports, ...reportItem },
    ].filter((w) => w.recordsPerNotification > 0),
    gzippedRecordBytes: alone,
    ...(run.evidence.spoolItem === undefined ? {} : { item: run.evidence.spoolItem }),
    ...(layouts.spoolBelow === undefined ? {} : { spoolBelow: layouts.spoolBelow }),
  });
  const sendRecords = 1;
  const directShare = Math.max(0, 1 - spool.spooledRecords / (sendRecords + sesReports + logReports));
  const evidenceBytes = dense + ((alone - dense) / sendsPerBatch) * directShare;
  // An invocation that spools its records writes no intent (each record is put before its SENT write).
  const spooledSends =
    (d.dispatch < spoolBelowOf(layouts) ? 1 - critical : 0) +
    (critical > 0 && d.urgent < spoolBelowOf(layouts) ? critical : 0);
  const spooledDispatch =
    (d.dispatch < spoolBelowOf(layouts) ? (1 - critical) / d.dispatch : 0) +
    (critical > 0 && d.urgent < spoolBelowOf(layouts) ? critical / d.urgent : 0);
  const intentWru =
    Math.max(0, dispatchInvocations - spooledDispatch) *
    2 *
    Math.ceil((A.intentBaseBytes + A.intentBytesPerRecord * sendsPerBatch) / KB);
  // The roll-up's check of the index for each spooled send: an event's customer item and event item (BatchGetItem,
  // eventually consistent: half a read unit an item of up to 4 KB), an event's channels sharing them.
  const indexCheckRru = spooledSends * Math.min(1, perN(run.events)) * 2 * 0.5;
  const spools = d.dispatch < spoolBelowOf(layouts);
  const index =
    layouts.index === 'compact'
      ? compactIndexAt(run, spools, d)
      : layouts.index === 'perCustomerBatch'
        ? {
            wru: 1 + perN(run.events),
            bytes: layouts.indexItemBytes + 100 + perN(run.events) * (layouts.eventItemBytes + 100),
          }
        : {
            // An ADD is billed on the item's size after it: on average half the month's refs.
            wru: Math.max(1, Math.ceil(((layouts.sendsPerCustomerPerMonth / 2) * layouts.refBytes) / KB)),
            bytes: layouts.refBytes + 100 / layouts.sendsPerCustomerPerMonth,
          };
  // The objects written directly: the invocations that did not spool (each its own batch), and the spool's minutes.
  const spooledFeedback = spool.spoolingInvocations - spooledDispatch;
  const sendObjects = dispatchInvocations - spooledDispatch;
  const directReports = layouts.reports === 'perFeedbackInvocation' ? reportsObjects - spooledFeedback : reportsObjects;
  return {
    density: d,
    invocations,
    /** Dispatch invocations (urgent ones too) per notification that spool their records. */
    spooledDispatch,
    /** Invocations per notification of each function. */
    byFunction,
    traced,
    evidenceObjects: sendObjects + directReports + spool.sliceObjects,
    sendObjects,
    reportsObjects: directReports,
    spool,
    reportsPerNotification: reports,
    evidenceBytes,
    intentWru,
    indexCheckRru,
    index,
  };
}

/**
 * The metric (EMF) bytes per notification at the rate: each function's closing document once an invocation, a
 * document per dimension set its records meet beyond the one the closing document carries — a record's own sets when
 * it is alone, at most the sets a full invocation of the run met — the listing entries once a record, and a spooling
 * dispatch invocation's EvidenceSpooled. A function the run did not invoke (the sweeper, by the clock): one mean line
 * an invocation. Undefined when the run did not tally them.
 */
export function emfBytesAt(
  run: RunDensity,
  m: { byFunction: Readonly<Record<string, number>>; spooledDispatch: number },
): number | undefined {
  if (run.emf === undefined) return undefined;
  let bytes = 0;
  for (const [fn, invocations] of Object.entries(m.byFunction)) {
    const e = run.emf.byFunction[fn];
    if (e === undefined) {
      bytes += invocations * run.emfLineBytes;
      continue;
    }
    const records = e.recordsPerNotification === undefined ? undefined : e.recordsPerNotification / invocations;
    const sets =
      records === undefined
        ? e.setsPerInvocation
        : Math.min(records * e.setsPerRecord, Math.max(e.setsPerInvocation, e.setsPerRecord));
    const alone = Math.max(0, sets - (e.mergedSetsPerInvocation ?? 0));
    bytes += invocations * (e.plainPerInvocation + alone * e.setBytes) + (e.entryBytesPerNotification ?? 0);
  }
  // A document the run wrote from code of no function the rate invokes (attributed 'outside functions/'; none in the
  // recorded run): priced as the run wrote it, a notification's share — never dropped, since the run's whole EMF is
  // taken out of the measured logs.
  for (const [fn, e] of Object.entries(run.emf.byFunction)) {
    if (fn in m.byFunction) continue;
    const runInvocations = Math.max(1, run.invocations[fn] ?? 0);
    const alone = e.setsPerInvocation - (e.mergedSetsPerInvocation ?? 0);
    bytes +=
      ((e.plainPerInvocation + alone * e.setBytes) * runInvocations) / run.notifications +
      (e.entryBytesPerNotification ?? 0);
  }
  return bytes + m.spooledDispatch * run.emf.spoolDocBytes;
}

/**
 * The listing lines' own bytes (an invocation's "batch ingested", "notifications sent", "deliveries recorded") at the
 * rate, less the run's: the run counted them once per its invocations, the rate writes one per each of its own.
 */
function listingGbAt(run: RunDensity, byFunction: Readonly<Record<string, number>>): number {
  let bytes = 0;
  for (const [fn, perInvocation] of Object.entries(run.listingBytesPerInvocation ?? {})) {
    const runInvocations = (run.invocations[fn] ?? 0) / run.notifications;
    bytes += ((byFunction[fn] ?? runInvocations) - runInvocations) * perInvocation;
  }
  return bytes / GB;
}

/**
 * The complete cost per million notifications at `ratePerSec`: the run's measured parts that do not depend on
 * batching, the rest re-priced at the rate; then what the settings add and the fixed costs, each apart.
 */
export function costAtRate(
  measuredPerMillion: Readonly<Record<string, number>>,
  run: RunDensity,
  ratePerSec: number,
  streamShards: number,
  p: Prices,
  layouts: EvidenceLayouts = DEFAULT_LAYOUTS,
  tracing: TracingMode = DEFAULT_TRACING,
  /** The pacer's writes per send at a quota with a backlog (the quota bench); pacing is priced once, here. */
  pacerAtQuota = 0,
) {
  const A = RATE_ASSUMPTIONS;
  const X = EXTRA_PRICES;
  const perN = (x: number) => x / run.notifications;
  const m = perNotificationAt(ratePerSec, run, layouts, streamShards);
  const xray = xrayByTracing(m.traced, p, tracing);
  const runInvocations = perN(Object.values(run.invocations).reduce((a, b) => a + b, 0));
  // Lambda's own lines per invocation; metric lines per function at the rate (emfBytesAt), the run's own out — or,
  // when the run did not tally them by function, as the run wrote them per notification, at least one an invocation.
  const emfAt = emfBytesAt(run, m);
  const emfOf = (inv: number) => Math.max(run.emfBytesPerNotification, inv * run.emfLineBytes);
  const emfAdded =
    emfAt === undefined ? emfOf(m.invocations) - emfOf(runInvocations) : emfAt - run.emfBytesPerNotification;
  const logGbAdded = ((m.invocations - runInvocations) * A.platformLogBytesPerInvocation + emfAdded) / GB;
  const logMoney = (gb: number) => gb * (p.logsIngestPerGb + p.logsStorageGbMonth * A.logRetentionMonths);
  const wru = p.dynamodbWriteRequestUnitPerMillion / 1e6;
  // The evidence index's own table: Standard-IA storage and writes, point-in-time recovery, outside AWS Backup.
  const indexStorage = (bytes: number) =>
    (bytes / GB) * A.evidenceRetentionMonths * (X.dynamodbIaStorageGbMonth + p.dynamodbPitrGbMonth);
  const gets = perN(run.evidence.gets + run.evidence.lists);
  const requests = m.evidenceObjects + gets;
  const M = 1e6;
  const get = (k: string) => measuredPerMillion[k] ?? 0;
  const sweeperRuns = SWEEPER_RUNS_A_MONTH / (ratePerSec * A.secondsPerMonth);
  // One Query a partition reads its due items and its leases alike (up to now + the pending threshold: at a steady
  // rate only the items in flight, well under a read unit a partition); plus the lease pass's cursor item, one GetItem.
  const sweepQueries = sweepPartitions(sweepShardsFor(ratePerSec)).length + 1;
  const pacerWrites = pacerWritesPerSendAt(pacerAtQuota, m.density.dispatch);
  const parts = {
    // The run's pacer writes out (its bucket is unpaced, so its writes are no rate's): the pacer is priced below.
    dynamodbWrites:
      get('dynamodbWrites') + M * wru * (m.intentWru - perN(run.intentWru) - perN(run.pacerWru ?? 0) + m.spool.wru),
    dynamodbIndexWrites: get('dynamodbIndexWrites'),
    dynamodbReads: get('dynamodbReads') + M * m.spool.rru * (p.dynamodbReadRequestUnitPerMillion / 1e6),
    // The sweeper's Queries a run (the local run invokes no sweeper): a fixed cost, spread over the rate's month.
    sweeperReads: M * sweeperRuns * sweepQueries * A.sweepQueryReadUnits * (p.dynamodbReadRequestUnitPerMillion / 1e6),
    // The spool's own table: its items until their TTL, with point-in-time recovery (outside AWS Backup).
    dynamodbStorageAndPitr:
      get('dynamodbStorageAndPitr') + M * m.spool.storageGbMonths * (p.dynamodbStorageGbMonth + p.dynamodbPitrGbMonth),
    evidenceIndex:
      M *
      (m.index.wru * (X.dynamodbIaWriteRequestUnitPerMillion / 1e6) +
        m.indexCheckRru * (X.dynamodbIaReadRequestUnitPerMillion / 1e6) +
        indexStorage(m.index.bytes)),
    evidenceRequests: M * (m.evidenceObjects * (p.s3PutPerThousand / 1000) + gets * (p.s3GetPerThousand / 1000)),
    evidenceStorage: M * (m.evidenceBytes / GB) * A.evidenceRetentionMonths * p.s3StandardGbMonth,
    evidenceAccessLogs:
      M * ((requests * A.accessLogBytesPerRequest) / GB) * A.evidenceRetentionMonths * p.s3StandardGbMonth,
    cloudWatchLogs: get('cloudWatchLogs') + M * logMoney(logGbAdded) + M * logMoney(listingGbAt(run, m.byFunction)),
    xray: xray.inTotal,
    feedbackQueue: get('feedbackQueue'),
    lambda: get('lambda') + M * (m.invocations - runInvocations) * (p.lambdaRequestPerMillion / 1e6),
    kmsSecretMacs: M * perN(run.otpEvents) * A.secretsPerOtp * (X.kmsRequestPerTenThousand / 1e4),
  };
  const total = Object.values(parts).reduce((a, b) => a + b, 0);
  const pacing = { writesPerSend: round3(pacerWrites), perMillion: pacingPerMillion(pacerWrites, p) };
  // A two-region stage's main table is a global table: what it replicates (the spool's table is regional).
  const globalTable = {
    writes: parts.dynamodbWrites - M * wru * m.spool.wru + pacing.perMillion,
    indexWrites: parts.dynamodbIndexWrites,
    storage: get('dynamodbStorageAndPitr'),
  };
  const settings = settingsCosts(run, m, p, ratePerSec, xray.withSetting, globalTable);
  return {
    ratePerSec,
    recordsPerInvocation: Object.fromEntries(
      Object.entries(m.density)
        .filter(([k]) => k !== 'batching')
        .map(([k, v]) => [k, round2(v as number)]),
    ),
    perNotification: {
      invocations: round3(m.invocations),
      emfBytes: Math.round(run.emfBytesPerNotification + emfAdded),
      traces: round3(m.traced),
      evidenceObjects: round3(m.evidenceObjects),
      sendObjects: round3(m.sendObjects),
      reportsObjects: round3(m.reportsObjects),
      evidenceBytes: Math.round(m.evidenceBytes),
      indexWru: round3(m.index.wru),
      intentWru: round3(m.intentWru),
      indexCheckRru: round3(m.indexCheckRru),
      spooledRecords: round3(m.spool.spooledRecords),
      spoolObjects: round3(m.spool.sliceObjects),
      spoolWru: round3(m.spool.wru),
      spoolReplicaWru: round3(m.spool.replicaWru),
      spoolRru: round3(m.spool.rru),
      spoolItemBytes: Math.round(m.spool.itemBytes),
      spoolItemWru: round3(m.spool.itemWru),
      sweeperQueriesPerRun: sweepQueries,
    },
    pacing,
    perMillion: { ...roundAll(parts), total: round2(total) },
    withSettings: { ...roundAll(settings.parts), total: round2(total + settings.total) },
    fixedMonthly: settings.fixed,
  };
}

/** What backup, replication, tracing and the fixed costs add (per million at the rate; the fixed ones per month). */
function settingsCosts(
  run: RunDensity,
  m: ReturnType<typeof perNotificationAt>,
  p: Prices,
  ratePerSec: number,
  xrayTracing: number,
  globalTable: { writes: number; indexWrites: number; storage: number },
) {
  const A = RATE_ASSUMPTIONS;
  const X = EXTRA_PRICES;
  const M = 1e6;
  const perN = (x: number) => x / run.notifications;
  // AWS Backup backs a DynamoDB table up in full each time (not incrementally): the table's steady size, per
  // notification its GB-months, is in each of the retention's daily recovery points, and in each copy's. The main
  // table only: the evidence index's own table is outside the plan (lib/evidence-index-table.ts).
  const tableGbMonths = perN(run.tableGbMonths);
  const points = A.backup.retentionDays;
  const backup = A.backup.on ? M * tableGbMonths * points * X.backupDynamodbGbMonth * (1 + A.backup.copies) : 0;
  // Each day's copy crosses regions once: the table's size per notification, once per notification's days kept.
  const backupTransfer = A.backup.on ? M * tableGbMonths * 30.44 * A.backup.copies * X.crossRegionTransferPerGb : 0;
  const evidenceGb = m.evidenceBytes / GB;
  const replication = A.replication.on
    ? M *
      (evidenceGb * A.evidenceRetentionMonths * p.s3StandardGbMonth +
        m.evidenceObjects * (p.s3PutPerThousand / 1000) +
        evidenceGb * X.crossRegionTransferPerGb)
    : 0;
  const fixed = {
    alarms: round2(A.fixed.alarms * X.alarmMonth),
    kmsKeys: round2(A.fixed.kmsKeys * X.kmsKeyMonth),
    dashboards: round2(A.fixed.dashboards * X.dashboardMonth),
    warmUrgentLane: round2(
      A.fixed.urgentWarmEnvironments * A.fixed.warmMemoryGb * A.secondsPerMonth * X.provisionedGbSecondArm,
    ),
    secondRegion: A.regions.two
      ? round2(
          A.regions.fixed.alarms * X.alarmMonth +
            A.regions.fixed.kmsKeys * X.kmsKeyMonth +
            A.regions.fixed.dashboards * X.dashboardMonth,
        )
      : 0,
  };
  const fixedMonth = Object.values(fixed).reduce((a, b) => a + b, 0);
  const fixedPerMillion = (fixedMonth / (ratePerSec * A.secondsPerMonth)) * M;
  // A stage with `regions` (the example's): its main table a global table (lib/table.ts, TableV2 replicas). The
  // replica receives every main-table write as a replicated write unit (on-demand rWRU at the WRU's price), keeps its
  // own index copies (the same GSI writes), stores the items with point-in-time recovery as the primary does, and the
  // writes cross regions (at most 1 KB a write unit). The evidence index's and the spool's tables are regional.
  // The MSK Replicator's own charges are not in this figure.
  const wruPrice = p.dynamodbWriteRequestUnitPerMillion / 1e6;
  const replicatedGb = (globalTable.writes / (M * wruPrice)) * (1 / (1024 * 1024));
  const f = A.regions.fencedRun;
  const fencedRunUsd =
    f.readUnits * (p.dynamodbReadRequestUnitPerMillion / 1e6) +
    (f.writeUnits + f.replicatedWriteUnits) * wruPrice +
    p.lambdaRequestPerMillion / 1e6;
  const twoRegionTable = A.regions.two
    ? globalTable.writes + globalTable.indexWrites + globalTable.storage + M * replicatedGb * X.crossRegionTransferPerGb
    : 0;
  const parts = {
    backup,
    backupTransfer,
    evidenceReplication: replication,
    globalTable: twoRegionTable,
    // The recovery region's fenced sweeper every minute (RATE_ASSUMPTIONS.regions.fencedRun); its alarms, keys and
    // dashboard are in `fixed`.
    secondRegionKeeper: A.regions.two
      ? (SWEEPER_RUNS_A_MONTH * fencedRunUsd * M) / (ratePerSec * A.secondsPerMonth)
      : 0,
    xrayTracing,
    fixedPerMillion,
  };
  return {
    parts,
    total: Object.values(parts).reduce((a, b) => a + b, 0),
    fixed: { ...fixed, totalPerMonth: round2(fixedMonth) },
  };
}

export const round2 = (n: number) => Math.round(n * 100) / 100;
const round3 = (n: number) => Math.round(n * 1000) / 1000;
export const roundAll = <T extends Record<string, number>>(o: T) =>
  Object.fromEntries(Object.entries(o).map(([k, v]) => [k, round2(v)])) as T;

/**
 * The pacer's writes per send at a rate: an invocation takes a chunk per channel it sends on and per MAX_CHUNK sends
 * (so at about one send an invocation, one write a send), and at a quota with a backlog what the quota bench measured,
 * whichever is more. Counted once: the run's own token writes are taken out of its measured writes.
 */
export function pacerWritesPerSendAt(atQuota: number, dispatchRecordsPerInvocation: number): number {
  const r = Math.max(1, dispatchRecordsPerInvocation);
  return Math.max(atQuota, Math.min(1, (CHANNELS.length + r / MAX_CHUNK) / r));
}

/** Pacing at a quota, per million: `writesPerSend` conditional writes of 1 WRU (measured, or the floor's). */
export const pacingPerMillion = (writesPerSend: number, p: Prices) =>
  round2(writesPerSend * p.dynamodbWriteRequestUnitPerMillion);

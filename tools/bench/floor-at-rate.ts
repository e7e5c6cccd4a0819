/**
 * The floor: what the same guarantees need at the least, independent of how notifier does it (docs/measurements.md
 * "The floor"). Changed only where it was wrong about what the guarantees need; each term says which guarantee asks
 * for it. Pure.
 */
import {
  DEFAULT_LAYOUTS,
  EXTRA_PRICES,
  perNotificationAt,
  RATE_ASSUMPTIONS,
  type RunDensity,
  round2,
  roundAll,
} from './cost-at-rate.ts';
import type { Prices } from './prices.ts';

/** The floor's own assumptions: what the guarantees need at the least, independent of how notifier does it. */
export const FLOOR = {
  /**
   * The index, found by customer and by notification without listing the bucket. By customer: an entry per send (the
   * customer, the batch and the record's place, about 60 B), on an item per customer and minute — the minute's
   * buffer below sees an event's channels together — about one item (100 B of overhead, one write) per event. By
   * notification: a notification's id names its event, not its customer, so the customer's entries alone find it
   * only for who knows the customer — after the table's 35-day items expire, nobody; the least that finds it is an
   * entry per event naming its customer (its id and the customer's, about 40 B, and 100 B of overhead), written once.
   * Point-in-time recovery on it is the bank's control (Security Hub DynamoDB.2, cdk-nag), not a guarantee's need:
   * the index can be rebuilt from the evidence. It is kept because the bank requires it of every table.
   */
  indexEntryBytes: 60,
  eventEntryBytes: 40,
  /**
   * Evidence objects: one per minute, buffered by the table's own DynamoDB stream read by an evidence roller with a
   * 60 s batching window — every record the floor evidences (a send's outcome, a report's) is a table write, so the
   * stream carries them all, and an event's channels share its partition key and so a shard. Lambda's reads of a
   * stream are not billed, and a stream takes two readers per shard: dispatch and the roller. Not a writer's own
   * buffer (at a million a month a dispatch invocation holds about one record) and not a delivery stream (Firehose
   * bills each record rounded up to 5 KB: about $0.14 a million records). The roller's invocation a minute is priced
   * below (its request and log lines).
   */
  evidenceBufferSeconds: 60,
  rollerRunsPerMinute: 1,
  /** Pacing at a quota: one conditional write per chunk of tokens (the pacer's MAX_CHUNK, 10). */
  pacingWritesPerSend: 0.1,
  /**
   * The sweeper's reads on a sweep index keyed once, at creation (no write at the claim; its projection leaves out
   * status, attempt and lease): one eventually consistent Query a run, and each item still in flight at a run read for
   * its lease (0.5 RRU). An item is in flight for its send (about a second) against a run a minute, so few are read:
   * taken as half a read unit a notification at most, 0.25 (between none and every one read once).
   */
  sweepQueriesPerRun: 1,
  sweepLeaseReadUnitsPerNotification: 0.25,
} as const;

/**
 * The floor per million at the rate, independent of the implementation:
 * - the one transaction per event (an inbox item and one item per channel, each ≤ 1 KB: 2 WRU each);
 * - a claim and an outcome (1 WRU each — a claim, because without it two deliveries of one stream record both send);
 * - the flood guard's conditional write per guarded send (every non-critical type has a per-customer window limit,
 *   docs/dispatch.md; concurrent dispatch environments send for one customer, so a read cannot count race-free);
 * - index writes: a sweep-index put and delete (keyed once: no re-key at the claim), a message-index put for the
 *   channels whose reports need it (SNS's push and SMS; an email's report finds its notification by its SES tag,
 *   functions/domain/feedback.ts), and a byUser write per event (one customer's events without a scan — docs/table.md,
 *   operations.md `customer`, console.md — unsent notices included, so at ingest, not after the send);
 * - the audience check's two STRONGLY consistent reads (guarantee 10: a preference "in force before the transfer is
 *   written", window 3 in docs/guarantees.md; an eventually consistent read can miss a write made just before);
 * - per report a read and a write;
 * - the sweeper: a Query a run and its lease reads (FLOOR);
 * - the evidence as compressed records in a minute's objects, their minimum index entries on a Standard-IA table;
 * - Lambda's own log lines and one metric line per invocation, and Lambda's requests, at the rate's density — the
 *   product's batching windows (batching.ts), taken as what latency requires — with the sweeper's and the evidence
 *   roller's runs;
 * - the table's 35-day items, Lambda's time (at full batches, as the run measured it) and the queue as measured;
 * - the secret MAC; pacing at a quota at one write per chunk (`pacingPerMillion`: both the cost and the floor carry it).
 */
export function floorAtRate(
  measuredPerMillion: Readonly<Record<string, number>>,
  run: RunDensity,
  ratePerSec: number,
  streamShards: number,
  p: Prices,
) {
  const A = RATE_ASSUMPTIONS;
  const X = EXTRA_PRICES;
  const M = 1e6;
  const perN = (x: number) => x / run.notifications;
  const m = perNotificationAt(ratePerSec, run, DEFAULT_LAYOUTS, streamShards);
  const wru = p.dynamodbWriteRequestUnitPerMillion / 1e6;
  const rru = p.dynamodbReadRequestUnitPerMillion / 1e6;
  const reports = perN(run.sesEvents + run.snsDeliveryLogs);
  const objects = 1 / Math.max(1, ratePerSec * FLOOR.evidenceBufferSeconds);
  const dense = run.evidence.bytes / Math.max(1, run.evidence.records);
  const months = A.evidenceRetentionMonths;
  const events = perN(run.events);
  const guarded = 1 - perN(run.criticalNotifications);
  const snsShare = Math.max(0, 1 - perN(run.emails));
  const indexGb = (FLOOR.indexEntryBytes + events * (100 + FLOOR.eventEntryBytes + 100)) / GB;
  const runsPerNotification = (perMinute: number) => perMinute / 60 / ratePerSec;
  const invocations = m.invocations + runsPerNotification(FLOOR.rollerRunsPerMinute);
  const logGb = (invocations * (A.platformLogBytesPerInvocation + run.emfLineBytes)) / GB;
  const parts = {
    dynamodbWrites: M * wru * (2 * (1 + events) + 2 + guarded + reports),
    dynamodbIndexWrites: M * wru * (2 + snsShare + events),
    dynamodbReads: M * rru * (2 + reports / 2),
    sweeperReads:
      M *
      rru *
      (FLOOR.sweepQueriesPerRun * 0.5 * runsPerNotification(A.sweeperRunsPerMinute) +
        FLOOR.sweepLeaseReadUnitsPerNotification),
    // The main table's items as measured (the evidence index's are in a table of their own, priced below).
    dynamodbStorageAndPitr: measuredPerMillion.dynamodbStorageAndPitr ?? 0,
    evidenceIndex:
      M *
      (2 * events * (X.dynamodbIaWriteRequestUnitPerMillion / 1e6) +
        indexGb * months * (X.dynamodbIaStorageGbMonth + p.dynamodbPitrGbMonth)),
    evidenceRequests: M * objects * (p.s3PutPerThousand / 1000),
    evidenceStorage: M * (dense / GB) * months * p.s3StandardGbMonth,
    cloudWatchLogs: M * logGb * (p.logsIngestPerGb + p.logsStorageGbMonth * A.logRetentionMonths),
    feedbackQueue: measuredPerMillion.feedbackQueue ?? 0,
    // Lambda's time as measured; its requests at the rate's density, as the log line above counts them (the feedback,
    // sweeper and roller invocations with them). The shape is the customer's: an MSK-triggered and a stream-triggered
    // function, invoked per batch their mappings deliver, and at a million a month (0.38/s) a batch holds about one
    // event or notification whatever is built — the run's full batches of an at-once burst are no density any
    // implementation gets at this rate.
    lambda:
      (measuredPerMillion.lambda ?? 0) +
      M *
        (invocations - perN(Object.values(run.invocations).reduce((a, b) => a + b, 0))) *
        (p.lambdaRequestPerMillion / 1e6),
    kmsSecretMacs: M * perN(run.otpEvents) * A.secretsPerOtp * (X.kmsRequestPerTenThousand / 1e4),
  };
  return { ...roundAll(parts), total: round2(Object.values(parts).reduce((a, b) => a + b, 0)) };
}

const GB = 1024 ** 3;

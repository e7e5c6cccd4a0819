/**
 * The stage's alarms, by group: what came in, what the sends came to, the evidence, the MSK source, the functions'
 * health. Every alarm goes to the one topic (lib/observability.ts) and says what it means and what to do.
 *
 * Each alarm states how many datapoints must breach (M of N) and what missing data means, because for a count that
 * is only emitted when something happens "no data" means "nothing happened", while for ingest silence it is the
 * symptom itself.
 */
import { Duration } from 'aws-cdk-lib';
import { type IMetric, MathExpression, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { Queue } from 'aws-cdk-lib/aws-sqs';
import type { MetricName } from '../functions/contracts/telemetry.ts';
import { CHANNELS } from '../functions/domain/channels.ts';
import { type AlarmSink, PERIOD, SILENCE, type StageMetrics, SUSTAINED } from './stage-metrics.ts';

/** The functions and queues the alarms watch. */
export interface AlarmedParts {
  readonly ingest: IFunction;
  readonly dispatch: IFunction;
  readonly sweeper: IFunction;
  /** How often the sweeper is scheduled: a run missing for five of these is the SweeperNotRunning alarm. */
  readonly sweeperInterval: Duration;
  /** Minutes without a single ingest invocation before the IngestIdle alarm; 0: no such alarm. */
  readonly ingestIdleAlarmMinutes: number;
  readonly dispatchFailures: Queue;
}

/** What came in and was turned away or changed: bad input, a reused eventId, a card number in a shown field. */
export function alarmOnIntake(sink: AlarmSink, m: StageMetrics): void {
  sink.alarm(
    'RecordsQuarantined',
    m.metric('RecordsQuarantined'),
    'Bad input was quarantined. Query the quarantine items (docs/operations.md).',
  );
  sink.alarm(
    'EventIdConflicts',
    m.metric('EventIdConflicts'),
    'A producer reused an eventId with a different payload. Tell the producer; the original was kept.',
  );
}

/** What the sends came to: each failure, unknown outcome, refusal, expiry and blocked account needs a human. */
export function alarmOnSends(sink: AlarmSink, m: StageMetrics): void {
  sink.alarm(
    'SendFailures',
    m.acrossChannels('SendFailures', 'failed sends'),
    'A notification ended FAILED (rejected or retries exhausted). See failures by reason.',
  );
  sink.alarm(
    'UnknownOutcomes',
    m.acrossChannels('UnknownOutcomes', 'unknown outcomes'),
    'A send outcome is unknown; on an at-most-once channel the customer may not have it. Check the provider.',
  );
  sink.alarm(
    'ProviderBlocked',
    m.acrossChannels('ProviderBlocked', 'account-level refusals'),
    'SES or SNS refused the account, not a message (IAM, paused or sandboxed account, configuration set, KMS). The channel is held and nothing is FAILED; see ProviderBlockedByCode and fix the account.',
  );
  // Sustained, not a single burst: a moment out of phase with the provider's bucket is normal and harmless.
  sink.alarm(
    'ProviderThrottling',
    m.acrossChannels('SendsThrottled', 'throttled sends'),
    'SES or SNS throttled 10+ sends a minute in 3 of 5 minutes: sendRatePerSecond is above the account quota, or another sender shares it. Nothing fails; sends slow down.',
    10,
    SUSTAINED,
  );
  sink.alarm(
    'NotificationsExpired',
    m.acrossChannels('NotificationsExpired', 'expired notifications'),
    'A notification ended FAILED: EXPIRED, unsent past notificationMaxAgeHours (a long quota shortfall or a held channel).',
  );
  // Sustained, not one: a producer's late event past its type's validity is normal; a stream of them means customers
  // are not getting notices (one-time codes) in time.
  sink.alarm(
    'NotificationsPastValidity',
    m.acrossChannels('NotificationsPastValidity', 'notices past their validity'),
    'Notifications ended EXPIRED, unsent past their type\'s validity (10+ a minute in 3 of 5 minutes): dispatch is behind (quota, held channel) or producers publish late. Compare the events\' occurredAt with their receivedAt (docs/dispatch.md "The right moment").',
    10,
    SUSTAINED,
  );
  sink.alarm(
    'NotificationsRefused',
    m.acrossChannels('NotificationsRefused', 'refused channels'),
    'A contact point had no reading its provider can send to (malformed, no country code, a non-ASCII email local part, missing for a listed channel): that channel was written REFUSED, the event\'s other channels were sent. `npm run ops -- refused` lists them with the rule; the producer fixes the contact point and resends the event under the same eventId, which repairs the channel (docs/event.md "A refused channel").',
  );
}

/** Five minutes a datapoint, two of three breaching: a quarter of an hour of a pattern, not one message. */
const RATE_PERIOD = Duration.minutes(5);
const RATE_SHAPE = { datapoints: 2, periods: 3, missing: TreatMissingData.NOT_BREACHING } as const;
/** Fewer than this many failures in five minutes is never a page, whatever the ratio (a quiet night's one phone). */
export const RATE_MIN_COUNT = 10;

/**
 * The pages beside the tickets: the share of what failed among what was tried, over five-minute windows, alarmed
 * only from RATE_MIN_COUNT failures on. One customer's switched-off phone is a ticket (DeliveryFailures); a channel
 * failing for many is a page.
 */
export function alarmOnRates(sink: AlarmSink, m: StageMetrics): void {
  /** failed and tried: metrics by id (f… and t…), summed; the share only from RATE_MIN_COUNT failures on. */
  const rate = (
    name: string,
    failed: Record<string, IMetric>,
    tried: Record<string, IMetric>,
    share: number,
    description: string,
  ) => {
    const f = `(${Object.keys(failed).join(' + ')})`;
    const t = `(${Object.keys(tried).join(' + ')})`;
    return sink.alarm(
      name,
      new MathExpression({
        expression: `IF(${f} >= ${RATE_MIN_COUNT}, ${f} / (${f} + ${t}), 0)`,
        usingMetrics: { ...failed, ...tried },
        label: `${name} (share, from ${RATE_MIN_COUNT} a window)`,
        period: RATE_PERIOD,
      }),
      description,
      share,
      RATE_SHAPE,
    );
  };
  const byChannel = (prefix: string, name: MetricName, channels: readonly string[] = CHANNELS, dims = {}) =>
    Object.fromEntries(
      channels.map((c) => [
        `${prefix}${c.toLowerCase()}`,
        m.metric(name, { channel: c, ...dims }).with({ period: RATE_PERIOD }),
      ]),
    );
  rate(
    'SendFailureRate',
    byChannel('f', 'SendFailures'),
    byChannel('t', 'NotificationsSent'),
    0.1,
    'A tenth or more of the sends ended FAILED in 2 of the last 3 five-minute windows (from 10 failures a window): a channel is failing for many. See SendFailuresByReason and the provider.',
  );
  rate(
    'RefusedChannelRate',
    byChannel('f', 'NotificationsRefused'),
    byChannel('t', 'NotificationsCreated'),
    0.2,
    'A fifth or more of the channels written were REFUSED (no sendable contact point) in 2 of the last 3 five-minute windows: a producer sends broken contact points at scale. `npm run ops -- refused --since 1h` lists them.',
  );
  rate(
    'QuarantineRate',
    { f: m.metric('RecordsQuarantined').with({ period: RATE_PERIOD }) },
    { t: m.metric('EventsAccepted').with({ period: RATE_PERIOD }) },
    0.2,
    'A fifth or more of the records were quarantined in 2 of the last 3 five-minute windows: a producer (or a schema change) breaks at scale. `npm run ops -- quarantine --since 1h` lists them.',
  );
  rate(
    'DeliveryFailureRate',
    byChannel('f', 'DeliveryFeedback', ['SMS', 'PUSH'], { status: 'FAILED' }),
    byChannel('t', 'DeliveryFeedback', ['SMS', 'PUSH'], { status: 'DELIVERED' }),
    0.2,
    'A fifth or more of the SMS and pushes SNS accepted did not arrive, in 2 of the last 3 five-minute windows: a carrier, a country or a platform is failing for many (one dead phone is the DeliveryFailures ticket).',
  );
}

/** A card number in a field a notice shows: masked before anything kept it, but the topic still holds it. */
export function alarmOnCardNumbers(sink: AlarmSink, m: StageMetrics): void {
  sink.alarm(
    'CardNumbersMasked',
    m.metric('CardNumbersMasked'),
    'A producer put a card number (PAN) into a field a notice shows: it was masked to its last four digits before it was stored, hashed or sent (log line "card number masked" names the field, docs/event.md "Card numbers"). The event topic still holds it: tell the producer, and treat the topic\'s retention as holding cardholder data.',
  );
}

/** Dispatch's own facts: a send accepted late or unrecorded, a blocked application, records given up, stuck items. */
export function alarmOnDispatch(sink: AlarmSink, m: StageMetrics, parts: AlarmedParts): void {
  sink.alarm(
    'LateAcceptances',
    m.metric('LateAcceptances'),
    'A provider accepted a send after its lease expired. Check send latency against LEASE_SECONDS.',
  );
  sink.alarm(
    'AcceptancesNotRecorded',
    m.metric('AcceptancesNotRecorded'),
    'A provider accepted a send and DynamoDB refused every write recording it until the invocation ended. The log line has the provider message id; the notification ends by its channel policy (UNKNOWN at most once).',
  );
  sink.alarm(
    'ApplicationBlocked',
    m.metric('ApplicationBlocked', { channel: 'PUSH' }),
    'SNS refused a push platform application (PlatformApplicationDisabled: an expired APNs certificate or FCM key). That application is held and its pushes wait; other applications go on. Renew its credentials.',
  );
  sink.alarm(
    'DispatchOnFailureQueue',
    parts.dispatchFailures.metricApproximateNumberOfMessagesVisible({ period: PERIOD, statistic: 'Maximum' }),
    'Stream records were given up on; the sweeper re-drives their notifications. Inspect and purge.',
  );
  sink.alarm(
    'SweeperFoundStuck',
    new MathExpression({
      expression: 'r + u',
      usingMetrics: { r: m.metric('SweeperRedriven'), u: m.metric('SweeperResolvedUnknown') },
      label: 'stuck notifications',
      period: PERIOD,
    }),
    'The sweeper found notifications the stream never delivered or whose sender died.',
  );
  // Sustained: one run under a burst is normal; runs after runs is window 5 of docs/guarantees.md stretching.
  sink.alarm(
    'SweeperLeasePassBehind',
    m.metric('SweeperLeasePassUnfinished'),
    "The sweeper's lease pass left partitions unread in 3 of the last 5 runs: a backlog larger than a run reads. A dead sender's notification may wait several runs before it is resolved (docs/guarantees.md, window 5). Find the backlog (SweeperUnfinished, ProviderThrottling) and its cause.",
    1,
    SUSTAINED,
  );
  // Published every run (0 when none failed): one throttled Query is retried by the next run; run after run, a
  // partition's dead claims are not found at all.
  sink.alarm(
    'SweeperLeasePassFailing',
    m.metric('SweeperLeasePartitionsFailed'),
    "The sweeper could not read some partitions (their due-round or lease-pass Query failed: throttling, a 5xx) in 3 of the last 5 runs. The other partitions are read; a due notice or a dead sender's notification in a failing one waits until its Query succeeds (docs/guarantees.md, window 5). Read the sweeper's log ('Query failed') for the partitions and the error.",
    1,
    SUSTAINED,
  );
  // A found spool record whose SENT write keeps failing is never decided by policy (it proves the send), so its lease
  // waits unbounded and its partition's cursor stays before it; under a backlog it can pin the lease pass's rotation
  // (docs/guarantees.md, window 5). A retry or two is normal; every run of five is a write that keeps failing.
  sink.alarm(
    'SpoolSendsLeftForNextRun',
    m.metric('SpoolSendsLeftForNextRun'),
    "The sweeper found a dead sender's record in the evidence spool but could not write SENT in each of the last 5 runs. The lease waits, never resent, and its partition's lease cursor stays before it, so under a backlog the lease pass may not move past it (docs/guarantees.md, window 5). Find why the write fails: the sweeper's log, IAM after a release, a throttled item.",
    1,
    { ...SUSTAINED, datapoints: 5 },
  );
}

/**
 * Evidence (docs/evidence-and-privacy.md): a gap is filled by the next sweeper run; one still open after several runs
 * is a store that keeps refusing, and a lost record is a send nothing proves.
 */
export function alarmOnEvidence(sink: AlarmSink, m: StageMetrics): void {
  sink.alarm(
    'EvidenceGapsOpen',
    m.metric('EvidenceGapsOpen'),
    'Evidence of sends is waiting in the table in 3 of the last 5 sweeper runs: the evidence store (S3, its KMS key, the bucket policy) refuses writes. The sends are SENT; the sweeper writes the evidence once the store accepts it (docs/evidence-and-privacy.md).',
    1,
    SUSTAINED,
  );
  // A refused intent is absorbed (the invocation writes its records one by one), but until it is written a dying
  // invocation's in-flight record is lost uncounted: a table refusing it minute after minute pages.
  sink.alarm(
    'EvidenceIntentsNotWritten',
    m.metric('EvidenceIntentsNotWritten'),
    'Dispatch invocations could not write their evidence intent in 3 of the last 5 minutes: the table refuses writes (throttling, capacity, IAM, KMS). Sends go on and each record is written on its own; an invocation that dies meanwhile can lose the record it was writing, uncounted (docs/evidence-and-privacy.md).',
    1,
    SUSTAINED,
  );
  // A record written alone (its intent refused) whose index write failed too: kept as a gap the filler indexes; the
  // same table trouble as above, paged when it persists.
  sink.alarm(
    'EvidenceUnindexed',
    m.acrossChannels('EvidenceUnindexed', 'evidence unindexed'),
    'Evidence records written on their own (no intent) could not be added to the evidence index in 3 of the last 5 minutes: the table refuses writes. Each is kept as a gap the sweeper indexes; one whose gap was refused too is found only through its notification until then, so by no customer or event query after the table item expires (docs/evidence-and-privacy.md).',
    1,
    SUSTAINED,
  );
  // A batch whose index items the index table still left unprocessed after the retries: its intent stays open and
  // the sweeper indexes it, so one throttled minute is absorbed; a table refusing minute after minute pages.
  sink.alarm(
    'EvidenceIndexUnprocessed',
    m.metric('EvidenceIndexUnprocessed'),
    'The evidence index table left items unprocessed after every retry in 3 of the last 5 minutes: it is throttled or refusing writes. The sends are SENT and their evidence stored; each such batch stays open and the sweeper indexes it, so until then a customer\'s or an event\'s evidence query misses those sends (docs/table.md "The evidence index").',
    1,
    SUSTAINED,
  );
  // The sweeper rebuilds a dead invocation's batch within a few minutes of its due time; an intent open a quarter of
  // an hour, run after run, is a recovery that keeps failing (or cannot keep up), while a template deploy or an
  // erasure meanwhile would turn its records into EvidenceLost.
  sink.alarm(
    'EvidenceIntentOldestAge',
    m.metric('EvidenceIntentOldestAge').with({ statistic: 'Maximum' }),
    'A dead dispatch invocation\'s evidence batch has waited 15+ minutes for the sweeper to rebuild it, in 3 of the last 5 runs: its recovery keeps failing or cannot keep up. The sends are SENT; the sweeper log "evidence batches still open" names the batch and the error (docs/evidence-and-privacy.md).',
    900,
    SUSTAINED,
  );
  // A spooled minute is rolled 3 minutes after it starts, by the next run: its oldest slice is at most about 4 minutes
  // old. Twice that, run after run, is a roll-up that keeps failing (the store, the table) or a sweeper not running.
  sink.alarm(
    'EvidenceSpoolOldestAge',
    m.metric('EvidenceSpoolOldestAge').with({ statistic: 'Maximum' }),
    'Evidence records have waited 10+ minutes in the spool for the sweeper to roll them into the store, in 3 of the last 5 runs: the roll-up keeps failing or the sweeper is not running. Readers still show them from the spool; the sweeper log "evidence slices still spooled" names the slice and the error (docs/evidence-and-privacy.md "When the evidence lands").',
    600,
    SUSTAINED,
  );
  // A spool item the roll-up set apart is evidence it will never lock by itself: every one is a page.
  sink.alarm(
    'EvidenceSpoolSetAside',
    m.metric('EvidenceSpoolSetAside'),
    'The sweeper set apart a spool item it must not roll: its body does not unzip, or its bytes are not the digest its key names (some writer of the table replaced them). It is kept under BAD#<its key> in its partition, never rolled nor deleted; the sweeper log "evidence spool items set apart" names it (docs/operations.md).',
  );
  // A spool the sweeper cannot read gives no age (EvidenceSpoolOldestAge has nothing to breach on), and its records
  // expire unlocked SPOOL_KEEP_DAYS after their minute: every failed read is counted, run after run pages.
  sink.alarm(
    'EvidenceSpoolUnreadable',
    m.metric('EvidenceSpoolUnreadable'),
    'The sweeper could not read the evidence spool table (its cursor, a partition or its oldest minute) in 3 of the last 5 runs: nothing is rolled and no age is published. Spooled evidence is lost 8 days after its minute if it is not rolled by then; the sweeper log "evidence slices still spooled" or "the oldest spooled evidence could not be read" names the error (docs/operations.md).',
    1,
    SUSTAINED,
  );
  sink.alarm(
    'EvidenceLost',
    m.acrossChannels('EvidenceLost', 'evidence lost'),
    'A send was accepted and neither the evidence store nor the table took its evidence: nothing proves what that customer received. The dispatch log line names the notification and message id (docs/evidence-and-privacy.md).',
  );
}

/** The MSK mapping's batches: parked in S3, or not even that. */
export function alarmOnParkedBatches(sink: AlarmSink, m: StageMetrics, parts: AlarmedParts): void {
  // The failed-batch bucket's only writer is the mapping: its own count of batches delivered to the on-failure
  // destination is the count of objects arriving there, exact and free, unlike S3 request metrics (best effort).
  sink.alarm(
    'IngestBatchParked',
    m.mapping('OnFailureDestinationDeliveredEventCount'),
    'The MSK mapping gave up on a batch and parked its records in the failed-batch bucket (output FailedIngestBatchesBucketName). Replay them (docs/operations.md).',
  );
  // What no S3-side signal can see: a batch that could not even be parked (no S3 endpoint in the cluster VPC,
  // KMS, permissions) or was dropped.
  sink.alarm(
    'IngestBatchNotParked',
    new MathExpression({
      expression: 'f + d',
      usingMetrics: {
        f: parts.ingest.metric('DestinationDeliveryFailures', { period: PERIOD, statistic: 'Sum' }),
        d: m.mapping('DroppedEventCount'),
      },
      label: 'batches not parked',
      period: PERIOD,
    }),
    'The MSK mapping could not park a failed batch in S3, or dropped records: they are not in the bucket. Check the S3 VPC endpoint, the key and the ingest role (docs/deploy.md).',
  );
}

/** The functions' health: errors, lag, a sweeper that stopped, throttling. */
export function alarmOnFunctions(sink: AlarmSink, parts: AlarmedParts): void {
  for (const [name, fn] of [
    ['Ingest', parts.ingest],
    ['Dispatch', parts.dispatch],
  ] as const) {
    sink.alarm(
      `${name}Errors`,
      fn.metricErrors({ period: PERIOD, statistic: 'Sum' }),
      `The ${name.toLowerCase()} function failed invocations in 3 of the last 5 minutes.`,
      1,
      SUSTAINED,
    );
  }
  // The sweeper runs on a schedule: one failed run is redone by the next; two of three 5-minute windows is a trend.
  sink.alarm(
    'SweeperErrors',
    parts.sweeper.metricErrors({ period: Duration.minutes(5), statistic: 'Sum' }),
    'The sweeper failed in 2 of the last 3 five-minute windows.',
    1,
    { datapoints: 2, periods: 3, missing: TreatMissingData.NOT_BREACHING },
  );
  sink.alarm(
    'DispatchIteratorAge',
    parts.dispatch.metric('IteratorAge', { period: PERIOD, statistic: 'Maximum' }),
    'Dispatch is falling behind the stream (records older than 5 minutes).',
    300_000,
    SUSTAINED,
  );
  // Missing lag data means the mapping stopped reporting, not that it caught up: keep the state (IngestIdle
  // covers a mapping that stopped).
  sink.alarm(
    'KafkaOffsetLag',
    parts.ingest.metric('OffsetLag', { period: PERIOD, statistic: 'Maximum' }),
    'Ingest is falling behind the topic (more than 10,000 records).',
    10_000,
    { ...SUSTAINED, missing: TreatMissingData.IGNORE },
  );
  // The sweeper is the delay queue's clock and the safety net: a disabled schedule or a broken role makes no error,
  // only silence. Five intervals without one invocation (missing data breaches) is a sweeper that stopped.
  const sweeperWindow = 5;
  sink.alarm(
    'SweeperNotRunning',
    parts.sweeper.metricInvocations({ period: parts.sweeperInterval, statistic: 'Sum' }),
    `The sweeper has not run for ${sweeperWindow} scheduled intervals: deferred notifications are not woken and stuck ones not re-driven. Check the SweeperSchedule rule (enabled?) and the sweeper's throttles.`,
    1,
    SILENCE(sweeperWindow),
  );
  for (const [name, fn] of [
    ['Ingest', parts.ingest],
    ['Dispatch', parts.dispatch],
    ['Sweeper', parts.sweeper],
  ] as const) {
    sink.alarmOnThrottles(name, fn);
  }
}

/** The MSK mapping itself: errors it reports, and silence where invocations should be. */
export function alarmOnIngestSource(sink: AlarmSink, m: StageMetrics, parts: AlarmedParts): void {
  // The mapping's own errors (MetricsConfig ErrorCount): it cannot poll the topic (authentication, authorization,
  // network), cannot invoke ingest, or cannot commit offsets. A mapping stuck on credentials or a security group
  // invokes nothing; this fires in minutes where IngestIdle needs its whole window.
  sink.alarm(
    'KafkaMappingErrors',
    new MathExpression({
      expression: 'p + i + c',
      usingMetrics: {
        p: m.mapping('PollingErrorCount'),
        i: m.mapping('InvokeErrorCount'),
        c: m.mapping('CommitErrorCount'),
      },
      label: 'MSK mapping errors',
      period: PERIOD,
    }),
    'The MSK mapping reports polling, invoke or commit errors in 3 of the last 5 minutes: check its State and LastProcessingResult (docs/operations.md "The MSK mapping").',
    1,
    SUSTAINED,
  );
  if (parts.ingestIdleAlarmMinutes > 0) {
    // A mapping stuck in PROBLEM (auth, network) invokes nothing and reports nothing: silence is the symptom, so
    // here a missing datapoint breaches. A quiet topic looks the same: size the window to the traffic.
    const minutes = parts.ingestIdleAlarmMinutes;
    sink.alarm(
      'IngestIdle',
      parts.ingest.metricInvocations({ period: PERIOD, statistic: 'Sum' }),
      `Ingest has not been invoked for ${minutes} minutes: the MSK mapping may be stuck (check its state, docs/operations.md) or the topic is silent.`,
      1,
      SILENCE(minutes),
    );
  }
}

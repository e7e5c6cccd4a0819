/**
 * CloudWatch for notifier: an alarm for everything that needs a human, all to one SNS topic (with an optional email
 * subscription), and one dashboard. Metrics come from the functions' EMF output (the stage's namespace, dimension
 * service=notifier, plus channel where the metric is per channel), from Lambda, and from the MSK mapping's own
 * metrics. Every name carries the stage's prefix, so two stages coexist in one account.
 *
 * Each alarm states how many datapoints must breach (M of N) and what missing data means, because for a count that
 * is only emitted when something happens "no data" means "nothing happened", while for ingest silence it is the
 * symptom itself.
 */
import { Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import {
  Alarm,
  ComparisonOperator,
  Dashboard,
  GraphWidget,
  type IMetric,
  MathExpression,
  Metric,
  TextWidget,
  TreatMissingData,
} from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type { Queue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { type MetricName, SERVICE_NAME } from '../functions/contracts/telemetry.ts';
import { CHANNELS } from '../functions/domain/channels.ts';
import { grantsOnlyForAwsServices } from './evidence-key.ts';

export interface ObservabilityProps {
  /** The stage's name prefix, e.g. "notifier-prod". */
  readonly prefix: string;
  readonly metricNamespace: string;
  readonly ingest: IFunction;
  readonly dispatch: IFunction;
  readonly sweeper: IFunction;
  /** How often the sweeper is scheduled: a run missing for five of these is the SweeperNotRunning alarm. */
  readonly sweeperInterval: Duration;
  /** The MSK event source mapping's UUID: its own metrics carry it as the EventSourceMappingUUID dimension. */
  readonly ingestMappingId: string;
  /** Minutes without a single ingest invocation before the IngestIdle alarm; 0: no such alarm. */
  readonly ingestIdleAlarmMinutes: number;
  readonly dispatchFailures: Queue;
  readonly alarmEmail?: string;
  /** Encrypt the alarm topic with a key of this stack whose policy lets CloudWatch use it. */
  readonly encryptAlarmTopic: boolean;
}

/** How an alarm evaluates: M of N datapoints, and what a missing datapoint counts as. */
export interface AlarmShape {
  readonly datapoints: number;
  readonly periods: number;
  readonly missing: TreatMissingData;
  readonly comparison?: ComparisonOperator;
}

const PERIOD = Duration.minutes(1);
/** Each occurrence is a fact about a customer's message that needs a human; the metric exists only when it happens. */
const EVERY_OCCURRENCE: AlarmShape = { datapoints: 1, periods: 1, missing: TreatMissingData.NOT_BREACHING };
/** Errors and lag: one transient retry must not page, a pattern over a few minutes must. */
const SUSTAINED: AlarmShape = { datapoints: 3, periods: 5, missing: TreatMissingData.NOT_BREACHING };

export class Observability extends Construct {
  readonly topic: Topic;
  readonly dashboardName: string;
  readonly alarms: Alarm[] = [];
  /** The one dashboard: other constructs add their rows (lib/delivery-feedback.ts). */
  readonly dashboard: Dashboard;
  private readonly prefix: string;
  /** The alarm topic's own key, when encrypted: the protection watch guards it (lib/protection-watch.ts). */
  readonly alarmKey: Key | undefined;

  constructor(scope: Construct, id: string, props: ObservabilityProps) {
    super(scope, id);
    this.prefix = props.prefix;
    this.dashboardName = props.prefix;
    // The topic's own key when encrypted, never the bank's data key or alias/aws/sns: CloudWatch publishes an alarm
    // only if the key policy lets cloudwatch.amazonaws.com use the key, and only a key this stack owns can say so.
    const alarmKey = props.encryptAlarmTopic
      ? new Key(this, 'AlarmTopicKey', {
          description: `${props.prefix}: encrypts the alarm topic; CloudWatch may use it for this stage's alarms`,
          enableKeyRotation: true,
          // Alarm notifications are transient and carry no customer data: nothing to keep after the stack.
          removalPolicy: RemovalPolicy.DESTROY,
        })
      : undefined;
    alarmKey?.addToResourcePolicy(grantsOnlyForAwsServices());
    this.topic = new Topic(this, 'AlarmTopic', {
      displayName: `${props.prefix} alarms`,
      enforceSSL: true,
      ...(alarmKey === undefined ? {} : { masterKey: alarmKey }),
    });
    // enforceSSL makes the topic a resource policy holding only its TLS Deny, and a topic policy replaces SNS's
    // default one: without this Allow every alarm goes to ALARM and its action fails ("no resource-based policy
    // allows the SNS:Publish action"). Scoped to this account and to this stage's alarms (all named <prefix>-...).
    this.alarmKey = alarmKey;
    this.allowPublishFrom('CloudWatchAlarmsOfThisStage', 'cloudwatch.amazonaws.com', `alarm:${props.prefix}-*`);
    if (props.alarmEmail !== undefined) {
      const subscription = this.topic.addSubscription(new EmailSubscription(props.alarmEmail));
      Validations.of(subscription).acknowledge({
        id: 'Serverless-SNSRedrivePolicy',
        reason:
          'An email subscription for people: a dead-letter queue would hold alarm mails nobody reads, while the alarm state and history stay in CloudWatch.',
      });
    }

    const metric = (name: MetricName, dims: Record<string, string> = {}) =>
      new Metric({
        namespace: props.metricNamespace,
        metricName: name,
        dimensionsMap: { service: SERVICE_NAME, ...dims },
        statistic: 'Sum',
        period: PERIOD,
      });
    /** Sum of a per-channel metric over every channel: alarms cannot use SEARCH, metric math can add. */
    const acrossChannels = (name: MetricName, label: string) =>
      new MathExpression({
        expression: CHANNELS.map((c) => c.toLowerCase()).join(' + '),
        usingMetrics: Object.fromEntries(CHANNELS.map((c) => [c.toLowerCase(), metric(name, { channel: c })])),
        label,
        period: PERIOD,
      });
    /** A metric of the MSK mapping itself (enabled by its MetricsConfig). */
    const mappingMetric = (name: string) =>
      new Metric({
        namespace: 'AWS/Lambda',
        metricName: name,
        dimensionsMap: { EventSourceMappingUUID: props.ingestMappingId },
        statistic: 'Sum',
        period: PERIOD,
      });
    const any = (name: string, m: IMetric, description: string, threshold = 1) =>
      this.alarm(name, m, description, threshold, EVERY_OCCURRENCE);

    any(
      'RecordsQuarantined',
      metric('RecordsQuarantined'),
      'Bad input was quarantined. Query the quarantine items (docs/operations.md).',
    );
    any(
      'EventIdConflicts',
      metric('EventIdConflicts'),
      'A producer reused an eventId with a different payload. Tell the producer; the original was kept.',
    );
    any(
      'SendFailures',
      acrossChannels('SendFailures', 'failed sends'),
      'A notification ended FAILED (rejected or retries exhausted). See failures by reason.',
    );
    any(
      'UnknownOutcomes',
      acrossChannels('UnknownOutcomes', 'unknown outcomes'),
      'A send outcome is unknown; on an at-most-once channel the customer may not have it. Check the provider.',
    );
    any(
      'ProviderBlocked',
      acrossChannels('ProviderBlocked', 'account-level refusals'),
      'SES or SNS refused the account, not a message (IAM, paused or sandboxed account, configuration set, KMS). The channel is held and nothing is FAILED; see ProviderBlockedByCode and fix the account.',
    );
    // Sustained, not a single burst: a moment out of phase with the provider's bucket is normal and harmless.
    this.alarm(
      'ProviderThrottling',
      acrossChannels('SendsThrottled', 'throttled sends'),
      'SES or SNS throttled 10+ sends a minute in 3 of 5 minutes: sendRatePerSecond is above the account quota, or another sender shares it. Nothing fails; sends slow down.',
      10,
      SUSTAINED,
    );
    any(
      'NotificationsExpired',
      acrossChannels('NotificationsExpired', 'expired notifications'),
      'A notification ended FAILED: EXPIRED, unsent past notificationMaxAgeHours (a long quota shortfall or a held channel).',
    );
    any(
      'NotificationsRefused',
      acrossChannels('NotificationsRefused', 'refused channels'),
      'A contact point had no reading its provider can send to (malformed, no country code, a non-ASCII email local part, missing for a listed channel): that channel was written REFUSED, the event\'s other channels were sent. `npm run ops -- refused` lists them with the rule; the producer fixes the contact point and resends the event under the same eventId, which repairs the channel (docs/event.md "A refused channel").',
    );
    any(
      'CardNumbersMasked',
      metric('CardNumbersMasked'),
      'A producer put a card number (PAN) into a field a notice shows: it was masked to its last four digits before it was stored, hashed or sent (log line "card number masked" names the field, docs/event.md "Card numbers"). The event topic still holds it: tell the producer, and treat the topic\'s retention as holding cardholder data.',
    );
    any(
      'LateAcceptances',
      metric('LateAcceptances'),
      'A provider accepted a send after its lease expired. Check send latency against LEASE_SECONDS.',
    );
    any(
      'AcceptancesNotRecorded',
      metric('AcceptancesNotRecorded'),
      'A provider accepted a send and DynamoDB refused every write recording it until the invocation ended. The log line has the provider message id; the notification ends by its channel policy (UNKNOWN at most once).',
    );
    any(
      'ApplicationBlocked',
      metric('ApplicationBlocked', { channel: 'PUSH' }),
      'SNS refused a push platform application (PlatformApplicationDisabled: an expired APNs certificate or FCM key). That application is held and its pushes wait; other applications go on. Renew its credentials.',
    );
    any(
      'DispatchOnFailureQueue',
      props.dispatchFailures.metricApproximateNumberOfMessagesVisible({ period: PERIOD, statistic: 'Maximum' }),
      'Stream records were given up on; the sweeper re-drives their notifications. Inspect and purge.',
    );
    any(
      'SweeperFoundStuck',
      new MathExpression({
        expression: 'r + u',
        usingMetrics: { r: metric('SweeperRedriven'), u: metric('SweeperResolvedUnknown') },
        label: 'stuck notifications',
        period: PERIOD,
      }),
      'The sweeper found notifications the stream never delivered or whose sender died.',
    );
    // Evidence (docs/evidence-and-privacy.md): a gap is filled by the next sweeper run; one still open after several
    // runs is a store that keeps refusing, and a lost record is a send nothing proves.
    this.alarm(
      'EvidenceGapsOpen',
      metric('EvidenceGapsOpen'),
      'Evidence of sends is waiting in the table in 3 of the last 5 sweeper runs: the evidence store (S3, its KMS key, the bucket policy) refuses writes. The sends are SENT; the sweeper writes the evidence once the store accepts it (docs/evidence-and-privacy.md).',
      1,
      SUSTAINED,
    );
    any(
      'EvidenceLost',
      acrossChannels('EvidenceLost', 'evidence lost'),
      'A send was accepted and neither the evidence store nor the table took its evidence: nothing proves what that customer received. The dispatch log line names the notification and message id (docs/evidence-and-privacy.md).',
    );
    // The failed-batch bucket's only writer is the mapping: its own count of batches delivered to the on-failure
    // destination is the count of objects arriving there, exact and free, unlike S3 request metrics (best effort).
    any(
      'IngestBatchParked',
      mappingMetric('OnFailureDestinationDeliveredEventCount'),
      'The MSK mapping gave up on a batch and parked its records in the failed-batch bucket (output FailedIngestBatchesBucketName). Replay them (docs/operations.md).',
    );
    // What no S3-side signal can see: a batch that could not even be parked (no S3 endpoint in the cluster VPC,
    // KMS, permissions) or was dropped.
    any(
      'IngestBatchNotParked',
      new MathExpression({
        expression: 'f + d',
        usingMetrics: {
          f: props.ingest.metric('DestinationDeliveryFailures', { period: PERIOD, statistic: 'Sum' }),
          d: mappingMetric('DroppedEventCount'),
        },
        label: 'batches not parked',
        period: PERIOD,
      }),
      'The MSK mapping could not park a failed batch in S3, or dropped records: they are not in the bucket. Check the S3 VPC endpoint, the key and the ingest role (docs/deploy.md).',
    );
    for (const [name, fn] of [
      ['Ingest', props.ingest],
      ['Dispatch', props.dispatch],
    ] as const) {
      this.alarm(
        `${name}Errors`,
        fn.metricErrors({ period: PERIOD, statistic: 'Sum' }),
        `The ${name.toLowerCase()} function failed invocations in 3 of the last 5 minutes.`,
        1,
        SUSTAINED,
      );
    }
    // The sweeper runs on a schedule: one failed run is redone by the next; two of three 5-minute windows is a trend.
    this.alarm(
      'SweeperErrors',
      props.sweeper.metricErrors({ period: Duration.minutes(5), statistic: 'Sum' }),
      'The sweeper failed in 2 of the last 3 five-minute windows.',
      1,
      { datapoints: 2, periods: 3, missing: TreatMissingData.NOT_BREACHING },
    );
    this.alarm(
      'DispatchIteratorAge',
      props.dispatch.metric('IteratorAge', { period: PERIOD, statistic: 'Maximum' }),
      'Dispatch is falling behind the stream (records older than 5 minutes).',
      300_000,
      SUSTAINED,
    );
    // Missing lag data means the mapping stopped reporting, not that it caught up: keep the state (IngestIdle
    // covers a mapping that stopped).
    this.alarm(
      'KafkaOffsetLag',
      props.ingest.metric('OffsetLag', { period: PERIOD, statistic: 'Maximum' }),
      'Ingest is falling behind the topic (more than 10,000 records).',
      10_000,
      { ...SUSTAINED, missing: TreatMissingData.IGNORE },
    );
    // The sweeper is the delay queue's clock and the safety net: a disabled schedule or a broken role makes no error,
    // only silence. Five intervals without one invocation (missing data breaches) is a sweeper that stopped.
    const sweeperWindow = 5;
    this.alarm(
      'SweeperNotRunning',
      props.sweeper.metricInvocations({ period: props.sweeperInterval, statistic: 'Sum' }),
      `The sweeper has not run for ${sweeperWindow} scheduled intervals: deferred notifications are not woken and stuck ones not re-driven. Check the SweeperSchedule rule (enabled?) and the sweeper's throttles.`,
      1,
      {
        datapoints: sweeperWindow,
        periods: sweeperWindow,
        missing: TreatMissingData.BREACHING,
        comparison: ComparisonOperator.LESS_THAN_THRESHOLD,
      },
    );
    for (const [name, fn] of [
      ['Ingest', props.ingest],
      ['Dispatch', props.dispatch],
      ['Sweeper', props.sweeper],
    ] as const) {
      this.alarmOnThrottles(name, fn);
    }
    // The mapping's own errors (MetricsConfig ErrorCount): it cannot poll the topic (authentication, authorization,
    // network), cannot invoke ingest, or cannot commit offsets. A mapping stuck on credentials or a security group
    // invokes nothing; this fires in minutes where IngestIdle needs its whole window.
    this.alarm(
      'KafkaMappingErrors',
      new MathExpression({
        expression: 'p + i + c',
        usingMetrics: {
          p: mappingMetric('PollingErrorCount'),
          i: mappingMetric('InvokeErrorCount'),
          c: mappingMetric('CommitErrorCount'),
        },
        label: 'MSK mapping errors',
        period: PERIOD,
      }),
      'The MSK mapping reports polling, invoke or commit errors in 3 of the last 5 minutes: check its State and LastProcessingResult (docs/operations.md "The MSK mapping").',
      1,
      SUSTAINED,
    );
    if (props.ingestIdleAlarmMinutes > 0) {
      // A mapping stuck in PROBLEM (auth, network) invokes nothing and reports nothing: silence is the symptom, so
      // here a missing datapoint breaches. A quiet topic looks the same: size the window to the traffic.
      const minutes = props.ingestIdleAlarmMinutes;
      this.alarm(
        'IngestIdle',
        props.ingest.metricInvocations({ period: PERIOD, statistic: 'Sum' }),
        `Ingest has not been invoked for ${minutes} minutes: the MSK mapping may be stuck (check its state, docs/operations.md) or the topic is silent.`,
        1,
        {
          datapoints: minutes,
          periods: minutes,
          missing: TreatMissingData.BREACHING,
          comparison: ComparisonOperator.LESS_THAN_THRESHOLD,
        },
      );
    }

    const dashboard = new Dashboard(this, 'Dashboard', { dashboardName: this.dashboardName });
    this.dashboard = dashboard;
    const perChannel = (name: MetricName) =>
      CHANNELS.map((c) => metric(name, { channel: c }).with({ label: `${name} ${c}` }));
    dashboard.addWidgets(
      new TextWidget({
        markdown: `# ${props.prefix}\nEvents in → notifications created → sent. Runbook: docs/operations.md.`,
        width: 24,
        height: 2,
      }),
    );
    dashboard.addWidgets(
      new GraphWidget({
        title: 'Events in',
        left: (
          [
            'EventsReceived',
            'EventsAccepted',
            'DuplicateEvents',
            'EventsTooOld',
            'RecordsQuarantined',
            'EventIdConflicts',
          ] as const
        ).map((n) => metric(n)),
        width: 12,
      }),
      new GraphWidget({
        title: 'Notifications created per channel',
        left: perChannel('NotificationsCreated'),
        right: perChannel('NotificationsRefused'),
        width: 12,
      }),
    );
    dashboard.addWidgets(
      new GraphWidget({ title: 'Sent per channel', left: perChannel('NotificationsSent'), width: 12 }),
      new GraphWidget({
        title: 'Failures, unknown outcomes, retries',
        left: [
          ...perChannel('SendFailures'),
          ...perChannel('UnknownOutcomes'),
          ...perChannel('SendsThrottled'),
          ...perChannel('ProviderBlocked'),
          ...perChannel('NotificationsExpired'),
          metric('SendRetries'),
          metric('SweeperRedriven'),
          metric('SweeperWoken'),
        ],
        width: 12,
      }),
    );
    dashboard.addWidgets(
      new GraphWidget({
        title: 'Lag',
        left: [props.ingest.metric('OffsetLag', { statistic: 'Maximum' })],
        right: [props.dispatch.metric('IteratorAge', { statistic: 'Maximum' })],
        width: 12,
      }),
      new GraphWidget({
        title: 'Function errors',
        left: [props.ingest, props.dispatch, props.sweeper].map((f) => f.metricErrors()),
        width: 12,
      }),
    );
    dashboard.addWidgets(
      new GraphWidget({
        title: 'MSK mapping',
        left: ['PolledEventCount', 'InvokedEventCount', 'FailedInvokeEventCount'].map((n) =>
          mappingMetric(n).with({ label: n }),
        ),
        right: [
          mappingMetric('OnFailureDestinationDeliveredEventCount').with({ label: 'parked in S3' }),
          mappingMetric('DroppedEventCount').with({ label: 'dropped' }),
          props.ingest.metric('DestinationDeliveryFailures', { statistic: 'Sum' }).with({ label: 'not parked' }),
        ],
        width: 24,
      }),
    );
  }

  /**
   * Lets an AWS service publish to the alarm topic (and use its key), for this account's resources whose ARN, after
   * `arn:<partition>:<service>:<region>:<account>:`, matches `resource` — CloudWatch's alarms of this stage, or the
   * EventBridge rules that report changes to the evidence protections (lib/protection-watch.ts).
   */
  allowPublishFrom(sid: string, servicePrincipal: string, resource: string): void {
    const { account, region, partition } = Stack.of(this);
    const service = servicePrincipal.split('.')[0] as string;
    const fromOurs = {
      StringEquals: { 'aws:SourceAccount': account },
      ArnLike: { 'aws:SourceArn': `arn:${partition}:${service}:${region}:${account}:${resource}` },
    };
    const principals = [new ServicePrincipal(servicePrincipal)];
    this.topic.addToResourcePolicy(
      new PolicyStatement({
        sid,
        principals,
        actions: ['sns:Publish'],
        resources: [this.topic.topicArn],
        conditions: fromOurs,
      }),
    );
    this.alarmKey?.addToResourcePolicy(
      new PolicyStatement({
        sid,
        principals,
        actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
        resources: ['*'],
        conditions: fromOurs,
      }),
    );
  }

  /**
   * A throttled invocation runs no code, so it raises no error: ingest's batches and dispatch's stream records wait
   * (and age), the sweeper skips a run, feedback waits in Lambda's async queue. Sustained, since a moment of
   * throttling is retried by every trigger. Public: the stack adds the functions other constructs own.
   */
  alarmOnThrottles(name: string, fn: IFunction): Alarm {
    return this.alarm(
      `${name}Throttles`,
      fn.metricThrottles({ period: PERIOD, statistic: 'Sum' }),
      `Lambda throttled the ${name} function in 3 of the last 5 minutes: the account's concurrency (or a reservation) is exhausted. Nothing is lost; its work waits.`,
      1,
      SUSTAINED,
    );
  }

  /** An alarm of this stage, to the alarm topic. Public so that other constructs' alarms share the one topic. */
  alarm(name: string, m: IMetric, description: string, threshold = 1, shape: AlarmShape = EVERY_OCCURRENCE): Alarm {
    const alarm = new Alarm(this, name, {
      alarmName: `${this.prefix}-${name}`,
      alarmDescription: description,
      metric: m,
      threshold,
      evaluationPeriods: shape.periods,
      datapointsToAlarm: shape.datapoints,
      comparisonOperator: shape.comparison ?? ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: shape.missing,
    });
    alarm.addAlarmAction(new SnsAction(this.topic));
    this.alarms.push(alarm);
    return alarm;
  }
}

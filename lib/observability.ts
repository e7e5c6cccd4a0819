/**
 * CloudWatch for notifier: an alarm for everything that needs a human, all to one SNS topic (with an optional email
 * subscription), and one dashboard. Metrics come from the functions' EMF output (namespace "notifier", dimension
 * service=notifier, plus channel where the metric is per channel).
 */
import { Duration } from 'aws-cdk-lib';
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
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { Bucket } from 'aws-cdk-lib/aws-s3';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type { Queue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { CHANNELS } from '../functions/domain/channels.ts';

export interface ObservabilityProps {
  readonly ingest: IFunction;
  readonly dispatch: IFunction;
  readonly sweeper: IFunction;
  readonly dispatchFailures: Queue;
  readonly failedBatches: Bucket;
  readonly alarmEmail?: string;
}

const NAMESPACE = 'notifier';
const PERIOD = Duration.minutes(1);

const metric = (name: string, dims: Record<string, string> = {}) =>
  new Metric({
    namespace: NAMESPACE,
    metricName: name,
    dimensionsMap: { service: 'notifier', ...dims },
    statistic: 'Sum',
    period: PERIOD,
  });

/** Sum of a per-channel metric over every channel: alarms cannot use SEARCH, metric math can add. */
const acrossChannels = (name: string, label: string) =>
  new MathExpression({
    expression: CHANNELS.map((c) => c.toLowerCase()).join(' + '),
    usingMetrics: Object.fromEntries(CHANNELS.map((c) => [c.toLowerCase(), metric(name, { channel: c })])),
    label,
    period: PERIOD,
  });

export class Observability extends Construct {
  readonly topic: Topic;
  readonly alarms: Alarm[] = [];

  constructor(scope: Construct, id: string, props: ObservabilityProps) {
    super(scope, id);
    this.topic = new Topic(this, 'AlarmTopic', { displayName: 'notifier alarms', enforceSSL: true });
    if (props.alarmEmail !== undefined) this.topic.addSubscription(new EmailSubscription(props.alarmEmail));

    const any = (name: string, m: IMetric, description: string, threshold = 1) =>
      this.alarm(name, m, description, threshold);

    any(
      'RecordsQuarantined',
      metric('RecordsQuarantined'),
      'Bad input was quarantined. Query the quarantine items (README "Operations").',
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
    any(
      'ProviderThrottling',
      acrossChannels('SendsThrottled', 'throttled sends'),
      'SES or SNS throttled 10+ sends in a minute: sendRatePerSecond is above the account quota, or another sender shares it. Nothing fails; sends slow down.',
      10,
    );
    any(
      'NotificationsExpired',
      acrossChannels('NotificationsExpired', 'expired notifications'),
      'A notification ended FAILED: EXPIRED, unsent past notificationMaxAgeHours (a long quota shortfall or a held channel).',
    );
    any(
      'LateAcceptances',
      metric('LateAcceptances'),
      'A provider accepted a send after its lease expired. Check send latency against LEASE_SECONDS.',
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
    for (const [name, fn] of [
      ['Ingest', props.ingest],
      ['Dispatch', props.dispatch],
      ['Sweeper', props.sweeper],
    ] as const) {
      any(
        `${name}Errors`,
        fn.metricErrors({ period: PERIOD, statistic: 'Sum' }),
        `The ${name.toLowerCase()} function failed invocations.`,
      );
    }
    any(
      'DispatchIteratorAge',
      props.dispatch.metric('IteratorAge', { period: PERIOD, statistic: 'Maximum' }),
      'Dispatch is falling behind the stream (records older than 5 minutes).',
      300_000,
    );
    any(
      'KafkaOffsetLag',
      props.ingest.metric('OffsetLag', { period: PERIOD, statistic: 'Maximum' }),
      'Ingest is falling behind the topic (more than 10,000 records).',
      10_000,
    );

    const dashboard = new Dashboard(this, 'Dashboard', { dashboardName: 'notifier' });
    const perChannel = (name: string) =>
      CHANNELS.map((c) => metric(name, { channel: c }).with({ label: `${name} ${c}` }));
    dashboard.addWidgets(
      new TextWidget({
        markdown: '# notifier\nEvents in → notifications created → sent. Runbook: README "Operations".',
        width: 24,
        height: 2,
      }),
    );
    dashboard.addWidgets(
      new GraphWidget({
        title: 'Events in',
        left: ['EventsReceived', 'EventsAccepted', 'DuplicateEvents', 'RecordsQuarantined', 'EventIdConflicts'].map(
          (n) => metric(n),
        ),
        width: 12,
      }),
      new GraphWidget({
        title: 'Notifications created per channel',
        left: perChannel('NotificationsCreated'),
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
  }

  private alarm(name: string, m: IMetric, description: string, threshold: number): Alarm {
    const alarm = new Alarm(this, name, {
      alarmName: `notifier-${name}`,
      alarmDescription: description,
      metric: m,
      threshold,
      evaluationPeriods: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
    alarm.addAlarmAction(new SnsAction(this.topic));
    this.alarms.push(alarm);
    return alarm;
  }
}

/**
 * CloudWatch for notifier: an alarm for everything that needs a human, in two tiers — the page topic for what fails
 * for many, the ticket topic for what concerns one customer or one producer (stage-metrics.ts TICKET_ALARMS) — each
 * alarm telling its topic when it is OK again, an optional email subscription, and one dashboard. The alarms come by group (lib/alarm-groups.ts), the metrics they read from the
 * functions' EMF output, from Lambda and from the MSK mapping's own metrics (lib/stage-metrics.ts), the dashboard
 * from lib/dashboard.ts. Every name carries the stage's prefix, so two stages coexist in one account.
 */
import { RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, type Dashboard, type IMetric } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import { Construct } from 'constructs';
import {
  type AlarmedParts,
  alarmOnCardNumbers,
  alarmOnDispatch,
  alarmOnEvidence,
  alarmOnFunctions,
  alarmOnIngestSource,
  alarmOnIntake,
  alarmOnParkedBatches,
  alarmOnRates,
  alarmOnSends,
} from './alarm-groups.ts';
import { createDashboard } from './dashboard.ts';
import { grantsOnlyForAwsServices } from './evidence-key.ts';
import {
  type AlarmShape,
  type AlarmSink,
  type AlarmTier,
  EVERY_OCCURRENCE,
  PERIOD,
  StageMetrics,
  SUSTAINED,
  TICKET_ALARMS,
} from './stage-metrics.ts';

export interface ObservabilityProps extends AlarmedParts {
  /** The stage's name prefix, e.g. "notifier-prod". */
  readonly prefix: string;
  readonly metricNamespace: string;
  /** The MSK event source mapping's UUID: its own metrics carry it as the EventSourceMappingUUID dimension. */
  readonly ingestMappingId: string;
  readonly alarmEmail?: string;
  /** Encrypt the alarm topic with a key of this stack whose policy lets CloudWatch use it. */
  readonly encryptAlarmTopic: boolean;
}

export class Observability extends Construct implements AlarmSink {
  /** The page topic: the pipeline or a channel failing for many (its logical id is the one topic's it replaced). */
  readonly topic: Topic;
  /** The ticket topic: what concerns one customer or one producer, for working hours. */
  readonly ticketTopic: Topic;
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
      displayName: `${props.prefix} pages`,
      enforceSSL: true,
      ...(alarmKey === undefined ? {} : { masterKey: alarmKey }),
    });
    this.ticketTopic = new Topic(this, 'TicketTopic', {
      displayName: `${props.prefix} tickets`,
      enforceSSL: true,
      ...(alarmKey === undefined ? {} : { masterKey: alarmKey }),
    });
    // enforceSSL makes the topic a resource policy holding only its TLS Deny, and a topic policy replaces SNS's
    // default one: without this Allow every alarm goes to ALARM and its action fails ("no resource-based policy
    // allows the SNS:Publish action"). Scoped to this account and to this stage's alarms (all named <prefix>-...).
    this.alarmKey = alarmKey;
    this.allowPublishFrom('CloudWatchAlarmsOfThisStage', 'cloudwatch.amazonaws.com', `alarm:${props.prefix}-*`);
    // One address for both tiers (a bank wires its pager to the page topic and its ticket queue to the other).
    for (const topic of props.alarmEmail === undefined ? [] : [this.topic, this.ticketTopic]) {
      const subscription = topic.addSubscription(new EmailSubscription(props.alarmEmail as string));
      Validations.of(subscription).acknowledge({
        id: 'Serverless-SNSRedrivePolicy',
        reason:
          'An email subscription for people: a dead-letter queue would hold alarm mails nobody reads, while the alarm state and history stay in CloudWatch.',
      });
    }

    // By group, each alarm saying what it means and what to do (lib/alarm-groups.ts).
    const m = new StageMetrics(props.metricNamespace, props.ingestMappingId);
    alarmOnIntake(this, m);
    alarmOnSends(this, m);
    alarmOnRates(this, m);
    alarmOnCardNumbers(this, m);
    alarmOnDispatch(this, m, props);
    alarmOnEvidence(this, m);
    alarmOnParkedBatches(this, m, props);
    alarmOnFunctions(this, props);
    alarmOnIngestSource(this, m, props);
    this.dashboard = createDashboard(this, this.dashboardName, m, props);
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
    for (const topic of [this.topic, this.ticketTopic]) {
      topic.addToResourcePolicy(
        new PolicyStatement({
          sid,
          principals,
          actions: ['sns:Publish'],
          resources: [topic.topicArn],
          conditions: fromOurs,
        }),
      );
    }
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

  /**
   * An alarm of this stage, to its tier's topic (TICKET_ALARMS: the ticket topic; any other: the page topic), which
   * also hears when it is OK again. Public so that other constructs' alarms share the topics.
   */
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
    const action = new SnsAction(this.topicOf(TICKET_ALARMS.has(name) ? 'TICKET' : 'PAGE'));
    alarm.addAlarmAction(action);
    alarm.addOkAction(action);
    this.alarms.push(alarm);
    return alarm;
  }

  topicOf(tier: AlarmTier): Topic {
    return tier === 'PAGE' ? this.topic : this.ticketTopic;
  }
}

/**
 * SMS and push outcomes after "SNS accepted" (docs/design-choices.md "SNS delivery status logging"): SNS writes a
 * delivery status log entry per message to CloudWatch Logs — for SMS when the account's SMS attributes name a role
 * (DeliveryStatusIAMRole, DeliveryStatusSuccessSamplingRate), for push when a platform application's attributes do
 * (SuccessFeedbackRoleArn, FailureFeedbackRoleArn, SuccessFeedbackSampleRate) — in log groups SNS names itself:
 * sns/<region>/<account>/DirectPublishToPhoneNumber and sns/<region>/<account>/app/<platform>/<application>, each
 * with a /Failure twin. This construct sets those attributes (neither is a CloudFormation resource: an
 * AwsCustomResource calls SNS), makes sure the log groups exist with a retention (they hold phone numbers and device
 * tokens), and subscribes the feedback function to them; alarms watch SMS spend, SMS success and SNS's own failure
 * counts, and what the feedback function recorded.
 */
import { Duration, Stack } from 'aws-cdk-lib';
import { ComparisonOperator, MathExpression, Metric, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { PolicyDocument, PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { CfnPermission, type IFunction } from 'aws-cdk-lib/aws-lambda';
import { FilterPattern, LogGroup, RetentionDays, SubscriptionFilter } from 'aws-cdk-lib/aws-logs';
import { LambdaDestination } from 'aws-cdk-lib/aws-logs-destinations';
import { Construct } from 'constructs';
import { type MetricName, SERVICE_NAME } from '../functions/contracts/telemetry.ts';
import type { SnsChannel } from '../functions/domain/channels.ts';
import { pushDeliveryLogGroups, smsDeliveryLogGroups } from '../functions/domain/feedback.ts';
import { awsCall, sdkCall } from './aws-calls.ts';
import { acknowledgeDeliveryStatusFindings } from './nag-acknowledgements.ts';
import type { Observability } from './observability.ts';

export interface SnsDeliveryStatusProps {
  readonly prefix: string;
  readonly metricNamespace: string;
  /** The feedback function: it reads the log entries (functions/feedback/). */
  readonly feedback: IFunction;
  /** Set the account's SMS delivery status attributes from this stack (settings `manageSmsDeliveryStatus`). */
  readonly manageSmsAttributes: boolean;
  /** SNS platform applications whose delivery status is logged (settings `pushPlatformApplicationArns`). */
  readonly platformApplicationArns: readonly string[];
  /** The account's monthly SMS spend quota in USD: the SmsSpend alarm fires at 80% of it. */
  readonly smsMonthlySpendLimitUsd: number;
  readonly observability: Observability;
}

/** The name of the feedback function's subscription on each delivery status log group. */
export const SUBSCRIPTION_FILTER_NAME = (prefix: string) => `${prefix}-sns-delivery-status`;
/** SNS stops sending SMS within minutes of the quota: the alarm leaves time to raise it. */
export const SMS_SPEND_ALARM_FRACTION = 0.8;
/** Below this share of SMS delivered (SNS's SMSSuccessRate, 15-minute average), something is wrong beyond a number. */
export const SMS_SUCCESS_RATE_ALARM = 0.9;
/** Delivery status logs hold phone numbers and device tokens: kept as long as an investigation needs them. */
const DELIVERY_LOG_RETENTION = RetentionDays.ONE_MONTH;

/**
 * The construct id of what configures one thing, keyed by that thing (a platform application, a log group), never by
 * its place in a list: removing or reordering an entry of `pushPlatformApplicationArns` must leave every other
 * resource as it is — a resource that moved to another entry would be replaced, and the old one's delete (which
 * clears an application's roles, or a log group's subscription) would run after the new one's create.
 * `:` appears in no platform, application or log group name, so two keys never meet.
 */
const keyed = (kind: string, ...parts: string[]) => `${kind}[${parts.join(':')}]`;
/** A delivery status log group by what follows sns/<region>/<account>/: DirectPublishToPhoneNumber, app/GCM/<name>… */
const groupKey = (name: string) => name.split('/').slice(3).join(':');

/** The platform and name of a platform application ARN (…:app/<platform>/<name>). */
export function platformApplication(arn: string): { platform: string; name: string } {
  const [, platform = '', name = ''] = /:app\/([^/]+)\/(.+)$/.exec(arn) ?? [];
  return { platform, name };
}

export class SnsDeliveryStatus extends Construct {
  /** The log groups the feedback function is subscribed to. */
  readonly logGroupNames: string[] = [];

  constructor(scope: Construct, id: string, props: SnsDeliveryStatusProps) {
    super(scope, id);
    const role = this.loggingRole(props);
    this.logDeliveryStatus(props, role);
    this.subscribeFeedback(props);
    acknowledgeDeliveryStatusFindings(this, role);
    this.alarmOnDeliveries(props);
  }

  private logGroupArn(name: string): string {
    const { account, region, partition } = Stack.of(this);
    return `arn:${partition}:logs:${region}:${account}:log-group:${name}`;
  }

  /** The role SNS writes delivery status with: its own log groups of this account and region, nothing else. */
  private loggingRole(props: SnsDeliveryStatusProps): Role {
    const { account, region } = Stack.of(this);
    return new Role(this, 'LoggingRole', {
      assumedBy: new ServicePrincipal('sns.amazonaws.com', {
        conditions: { StringEquals: { 'aws:SourceAccount': account } },
      }),
      description: `${props.prefix}: SNS writes SMS and push delivery status to CloudWatch Logs with this role`,
      inlinePolicies: {
        DeliveryStatusLogs: new PolicyDocument({
          statements: [
            new PolicyStatement({
              actions: ['logs:CreateLogGroup', 'logs:CreateLogStream', 'logs:PutLogEvents'],
              resources: [this.logGroupArn(`sns/${region}/${account}/*`)],
            }),
          ],
        }),
      },
    });
  }

  /** Tells SNS to log the delivery status of SMS (the account's attributes, if ours to set) and of each application. */
  private logDeliveryStatus(props: SnsDeliveryStatusProps, role: Role): void {
    // The role is passed to SNS only, for these attributes: never to another service.
    const passRole = new PolicyStatement({
      actions: ['iam:PassRole'],
      resources: [role.roleArn],
      conditions: { StringEquals: { 'iam:PassedToService': 'sns.amazonaws.com' } },
    });
    // Account-level SMS attributes are no CloudFormation resource. Set on create and update; cleared on delete, so a
    // removed stack leaves no attribute naming its deleted role (SNS would stop logging without a word): the account
    // is back to no SMS delivery status logging, which the stage that takes over sets again.
    if (props.manageSmsAttributes) {
      const id = `${props.prefix}-sms-delivery-status`;
      const smsAttributes = awsCall(
        this,
        'SmsAttributes',
        sdkCall(
          'SNS',
          'setSMSAttributes',
          // 100%: every success is a customer told; the logs cost a fraction of the message.
          { attributes: { DeliveryStatusIAMRole: role.roleArn, DeliveryStatusSuccessSamplingRate: '100' } },
          id,
        ),
        [new PolicyStatement({ actions: ['sns:SetSMSAttributes'], resources: ['*'] }), passRole],
        sdkCall(
          'SNS',
          'setSMSAttributes',
          { attributes: { DeliveryStatusIAMRole: '', DeliveryStatusSuccessSamplingRate: '' } },
          id,
        ),
      );
      smsAttributes.node.addDependency(role);
    }
    for (const arn of props.platformApplicationArns) {
      const { platform, name } = platformApplication(arn);
      const attributes = awsCall(
        this,
        keyed('PushApplication', platform, name),
        sdkCall(
          'SNS',
          'setPlatformApplicationAttributes',
          {
            PlatformApplicationArn: arn,
            Attributes: {
              SuccessFeedbackRoleArn: role.roleArn,
              FailureFeedbackRoleArn: role.roleArn,
              SuccessFeedbackSampleRate: '100',
            },
          },
          `${props.prefix}-${platform}-${name}-delivery-status`,
        ),
        [new PolicyStatement({ actions: ['sns:SetPlatformApplicationAttributes'], resources: [arn] }), passRole],
        // On delete the application no longer names the deleted role: its delivery status logging is off.
        sdkCall(
          'SNS',
          'setPlatformApplicationAttributes',
          { PlatformApplicationArn: arn, Attributes: { SuccessFeedbackRoleArn: '', FailureFeedbackRoleArn: '' } },
          `${props.prefix}-${platform}-${name}-delivery-status`,
        ),
      );
      attributes.node.addDependency(role);
    }
  }

  /**
   * Subscribes the feedback function to each delivery status log group. SNS creates its log groups on its first
   * entry, but a subscription needs the group now: create it unless it exists (another stage, or SNS, made it
   * first), and bound its retention either way.
   */
  private subscribeFeedback(props: SnsDeliveryStatusProps): void {
    const { account, region } = Stack.of(this);
    const groups = [
      ...smsDeliveryLogGroups(region, account),
      ...props.platformApplicationArns.flatMap((arn) => {
        const { platform, name } = platformApplication(arn);
        return pushDeliveryLogGroups(region, account, platform, name);
      }),
    ];
    for (const name of groups) {
      const key = groupKey(name);
      const logsPolicy = (action: string) =>
        new PolicyStatement({ actions: [action], resources: [this.logGroupArn(name)] });
      const ensure = awsCall(
        this,
        keyed('LogGroup', key),
        sdkCall('CloudWatchLogs', 'createLogGroup', { logGroupName: name }, `${name}#exists`, {
          ignoreErrorCodesMatching: 'ResourceAlreadyExistsException',
        }),
        [logsPolicy('logs:CreateLogGroup')],
      );
      const retention = awsCall(
        this,
        keyed('LogGroupRetention', key),
        sdkCall(
          'CloudWatchLogs',
          'putRetentionPolicy',
          { logGroupName: name, retentionInDays: DELIVERY_LOG_RETENTION },
          `${name}#retention`,
        ),
        [logsPolicy('logs:PutRetentionPolicy')],
      );
      retention.node.addDependency(ensure);
      // CloudWatch Logs may invoke the feedback function for this log group of this account only.
      const invoke = new CfnPermission(this, keyed('SubscriptionCanInvokeLambda', key), {
        action: 'lambda:InvokeFunction',
        functionName: props.feedback.functionArn,
        principal: 'logs.amazonaws.com',
        sourceArn: `${this.logGroupArn(name)}:*`,
        sourceAccount: account,
      });
      const filter = new SubscriptionFilter(this, keyed('Subscription', key), {
        logGroup: LogGroup.fromLogGroupName(this, keyed('Group', key), name),
        destination: new LambdaDestination(props.feedback, { addPermissions: false }),
        filterPattern: FilterPattern.allEvents(),
        // Not the name the index-keyed subscriptions had (`<prefix>-delivery-status`): a subscription is its name on
        // its group, so the keyed one, created before the old one is deleted, would otherwise be that one and be
        // deleted with it (CHANGELOG).
        filterName: SUBSCRIPTION_FILTER_NAME(props.prefix),
      });
      filter.node.addDependency(ensure, invoke);
      this.logGroupNames.push(name);
    }
  }

  /** SMS spend and success, SNS's own failure count, and what the feedback function saw fail (docs/operations.md). */
  private alarmOnDeliveries(props: SnsDeliveryStatusProps): void {
    const o = props.observability;
    const threshold = Math.round(props.smsMonthlySpendLimitUsd * SMS_SPEND_ALARM_FRACTION * 100) / 100;
    o.alarm(
      'SmsSpend',
      sns('SMSMonthToDateSpentUSD', 'Maximum', Duration.minutes(5)),
      `SMS spend this month reached $${threshold}, ${SMS_SPEND_ALARM_FRACTION * 100}% of the account's $${props.smsMonthlySpendLimitUsd} quota: SNS stops sending SMS within minutes of the quota. Request a higher quota now (and raise smsMonthlySpendLimitUsd).`,
      threshold,
      { datapoints: 1, periods: 1, missing: TreatMissingData.NOT_BREACHING },
    );
    o.alarm(
      'SmsSuccessRate',
      sns('SMSSuccessRate', 'Average', Duration.minutes(15)),
      `Fewer than ${SMS_SUCCESS_RATE_ALARM * 100}% of SMS were delivered in 2 of the last 3 fifteen-minute windows: carrier filtering, an origination identity, a country's rules. See the failures' providerResponse (delivery status logs, DeliveryFeedback FAILED).`,
      SMS_SUCCESS_RATE_ALARM,
      {
        datapoints: 2,
        periods: 3,
        missing: TreatMissingData.NOT_BREACHING,
        comparison: ComparisonOperator.LESS_THAN_THRESHOLD,
      },
    );
    // SNS's own count, independent of the logs and the feedback function: it still sees failures if the delivery
    // status logging or its subscription were broken.
    const failedBy: Record<string, Metric> = {
      sms: sns('NumberOfNotificationsFailed', 'Sum', Duration.minutes(1), { PhoneNumber: 'PhoneNumberDirect' }),
    };
    props.platformApplicationArns.forEach((arn, i) => {
      const { platform, name } = platformApplication(arn);
      failedBy[`app${i}`] = sns('NumberOfNotificationsFailed', 'Sum', Duration.minutes(1), {
        Application: name,
        Platform: platform,
      });
    });
    o.alarm(
      'SnsNotificationsFailed',
      new MathExpression({
        expression: Object.keys(failedBy).join(' + '),
        usingMetrics: failedBy,
        label: 'SNS notifications failed',
        period: Duration.minutes(1),
      }),
      'SNS failed to deliver SMS or push in 3 of the last 5 minutes (its own count, apart from the delivery status logs). Compare with DeliveryFailures; if it alone fires, the delivery status logging or its subscription is broken.',
      1,
      { datapoints: 3, periods: 5, missing: TreatMissingData.NOT_BREACHING },
    );
    const feedbackMetric = (channel: SnsChannel) =>
      new Metric({
        namespace: props.metricNamespace,
        metricName: 'DeliveryFeedback' satisfies MetricName,
        dimensionsMap: { service: SERVICE_NAME, channel, status: 'FAILED' },
        statistic: 'Sum',
        period: Duration.minutes(1),
      });
    o.alarm(
      'DeliveryFailures',
      new MathExpression({
        expression: 'sms + push',
        usingMetrics: { sms: feedbackMetric('SMS'), push: feedbackMetric('PUSH') },
        label: 'SMS and push not delivered',
        period: Duration.minutes(1),
      }),
      "SNS accepted an SMS or a push that then did not arrive: the customer got nothing. The notification shows deliveryStatus FAILED and the carrier's or platform's words (deliveryResponse); dead numbers and devices are suppressed.",
      1,
      { datapoints: 1, periods: 1, missing: TreatMissingData.NOT_BREACHING },
    );
  }
}

/** A metric of SNS itself. */
const sns = (metricName: string, statistic: string, period: Duration, dimensionsMap: Record<string, string> = {}) =>
  new Metric({ namespace: 'AWS/SNS', metricName, statistic, period, dimensionsMap });

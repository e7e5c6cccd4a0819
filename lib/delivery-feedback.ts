/**
 * Delivery feedback: the SES configuration set dispatch sends through, its event destination on the
 * default EventBridge bus, the rule that hands Delivery / Bounce / Complaint / Reject / DeliveryDelay events of this
 * configuration set to the feedback function, and the alarms on the account's bounce and complaint rates.
 *
 * Why EventBridge, not an SNS topic: no topic to own, encrypt and police (SES publishes to the default bus itself),
 * the rule filters by detail-type and by our configuration set before anything is invoked, the target has its own
 * retry policy and dead-letter queue, and the event is the same SES record either way. Both are best effort and
 * unordered, which the feedback function is built for (domain/feedback.ts); SES's account-level suppression list
 * (enabled on the configuration set) and the reputation alarms do not depend on it.
 */
import { Duration, Validations } from 'aws-cdk-lib';
import {
  Alarm,
  ComparisonOperator,
  type Dashboard,
  GraphWidget,
  type IAlarmAction,
  Metric,
  TreatMissingData,
} from 'aws-cdk-lib/aws-cloudwatch';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { EventBus, Rule } from 'aws-cdk-lib/aws-events';
import { SqsQueue } from 'aws-cdk-lib/aws-events-targets';
import { PolicyStatement, type Role } from 'aws-cdk-lib/aws-iam';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import {
  ConfigurationSet,
  ConfigurationSetEventDestination,
  EmailSendingEvent,
  EventDestination,
  type IConfigurationSet,
  SuppressionReasons,
} from 'aws-cdk-lib/aws-ses';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { FeedbackEnvironment } from '../functions/contracts/environment.ts';
import { SES_EVENTS_BATCH_SIZE, SES_EVENTS_BATCH_WINDOW_SECONDS } from '../functions/contracts/stream-filter.ts';
import { TABLE_SCHEMA } from '../functions/contracts/table-schema.ts';
import { CHANNELS } from '../functions/domain/channels.ts';
import { FEEDBACK_DETAIL_TYPES } from '../functions/domain/feedback.ts';
import { NotifierFunction } from './notifier-function.ts';

export interface DeliveryFeedbackProps {
  readonly prefix: string;
  readonly metricNamespace: string;
  readonly table: ITable;
  /** The feedback function's environment (the table's name, where evidence goes). */
  readonly environment: FeedbackEnvironment;
  /** An existing configuration set to attach to (settings `sesConfigurationSet`); absent: the stack creates one. */
  readonly existingConfigurationSet?: string;
  readonly alarmAction: IAlarmAction;
  /** Where the feedback row goes. */
  readonly dashboard: Dashboard;
}

/**
 * SES puts an account under review at a 5% bounce rate and a 0.1% complaint rate. The alarms fire at 80% of those,
 * so an operator has time to act (lift nothing, find the list that bounces) before SES does.
 */
export const BOUNCE_RATE_ALARM = 0.04;
export const COMPLAINT_RATE_ALARM = 0.0008;

export class DeliveryFeedback extends Construct {
  readonly configurationSetName: string;
  readonly function: NotifierFunction;
  readonly deadLetters: Queue;
  /** SES's events, read by the function in batches. */
  readonly sesEvents: Queue;

  constructor(scope: Construct, id: string, props: DeliveryFeedbackProps) {
    super(scope, id);
    // The plain name, not a token: the rule's pattern and dispatch's environment read as what they are.
    this.configurationSetName = props.existingConfigurationSet ?? props.prefix;
    this.publishSesEvents(props);
    this.function = new NotifierFunction(this, 'Function', {
      entry: 'feedback/index.ts',
      description:
        'notifier: records SES feedback and SNS delivery status on their notification and suppresses dead addresses',
      metricNamespace: props.metricNamespace,
      // A CloudWatch Logs batch of SNS delivery status can hold thousands of entries (three DynamoDB calls each).
      timeout: Duration.seconds(60),
      memorySize: 256,
      environment: props.environment,
    });
    // UpdateItem: deliveryStatus (conditional on rank) and the suppression item; GetItem: the re-read after a
    // failed condition (duplicate or older feedback vs. a notification that no longer exists). Notifications and
    // suppressions only: never a send window, the breaker, preferences or the shard mark.
    this.function.useTable(props.table, ['dynamodb:GetItem', 'dynamodb:UpdateItem'], {
      leadingKeys: ['EVENT#*', 'SUPPRESSION#*'],
    });
    // SNS's delivery status names a message id only: the notification is found on the providerMessage index.
    this.function.useTable(props.table, ['dynamodb:Query'], { index: TABLE_SCHEMA.messageIndex.indexName });
    // Events neither EventBridge could deliver nor the function could record after its retries: kept 14 days.
    // SQS-managed encryption even with the customer key: EventBridge can write to a KMS-encrypted dead-letter queue
    // only if the key policy names events.amazonaws.com, which this stack cannot add to a key it does not own.
    this.deadLetters = new Queue(this, 'DeadLetters', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    this.sesEvents = new Queue(this, 'SesEvents', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(4),
      // Six times the function's timeout (AWS's advice for an SQS event source): a batch being recorded is not handed out again.
      visibilityTimeout: Duration.seconds(360),
      deadLetterQueue: { queue: this.deadLetters, maxReceiveCount: 5 },
    });
    this.routeSesEvents(props);
    this.alarmOnReputation(props);
    this.addDashboardRow(props);
    this.acknowledge();
  }

  /** The configuration set every email goes through (the stack's own, or the one the settings name) → EventBridge. */
  private publishSesEvents(props: DeliveryFeedbackProps): void {
    let configurationSet: IConfigurationSet;
    if (props.existingConfigurationSet === undefined) {
      configurationSet = new ConfigurationSet(this, 'ConfigurationSet', {
        configurationSetName: props.prefix,
        // Per-set reputation metrics too (the alarms read the account's, which SES reviews).
        reputationMetrics: true,
        // SES's own account-level list as a second guard: it refuses to deliver to an address it has seen bounce
        // or complain, whatever our table says (reported to us as a Bounce, OnAccountSuppressionList).
        suppressionReasons: SuppressionReasons.BOUNCES_AND_COMPLAINTS,
      });
    } else {
      configurationSet = ConfigurationSet.fromConfigurationSetName(
        this,
        'ConfigurationSet',
        props.existingConfigurationSet,
      );
    }
    new ConfigurationSetEventDestination(this, 'EventDestination', {
      configurationSet,
      // Per stage: two stages may share one existing configuration set.
      configurationSetEventDestinationName: `${props.prefix}-feedback`,
      // SES publishes only to the default bus.
      destination: EventDestination.eventBus(EventBus.fromEventBusName(this, 'DefaultBus', 'default')),
      events: [
        EmailSendingEvent.DELIVERY,
        EmailSendingEvent.BOUNCE,
        EmailSendingEvent.COMPLAINT,
        EmailSendingEvent.REJECT,
        EmailSendingEvent.DELIVERY_DELAY,
      ],
    });
  }

  /**
   * Our configuration set's events → the queue → the function in batches; the log subscriptions' batches invoke it
   * directly (retried, with what never lands in the dead-letter queue).
   */
  private routeSesEvents(props: DeliveryFeedbackProps): void {
    const deadLetters = this.deadLetters;
    this.function.configureAsyncInvoke({
      retryAttempts: 2,
      maxEventAge: Duration.hours(6),
      // sqs:SendMessage only (SqsDestination would grant more).
      onFailure: {
        bind: (_scope: Construct, target: IFunction) => {
          target.addToRolePolicy(
            new PolicyStatement({ actions: ['sqs:SendMessage'], resources: [deadLetters.queueArn] }),
          );
          return { destination: deadLetters.queueArn };
        },
      },
    });
    new Rule(this, 'Rule', {
      description: `${props.prefix}: SES feedback of configuration set ${this.configurationSetName} to the feedback function`,
      eventPattern: {
        source: ['aws.ses'],
        detailType: Object.keys(FEEDBACK_DETAIL_TYPES),
        // Only our configuration set's mail: other senders in the account have their own.
        detail: { mail: { tags: { 'ses:configuration-set': [this.configurationSetName] } } },
      },
      targets: [
        new SqsQueue(this.sesEvents, {
          retryAttempts: 8,
          maxEventAge: Duration.hours(24),
          deadLetterQueue: deadLetters,
        }),
      ],
    });
    // A message whose event could not be recorded is handed out again (then dead-lettered after five receives).
    this.sesEvents.grantConsumeMessages(this.function);
    const mapping = this.function.addEventSourceMapping('SesEventsTrigger', {
      eventSourceArn: this.sesEvents.queueArn,
      batchSize: SES_EVENTS_BATCH_SIZE,
      maxBatchingWindow: Duration.seconds(SES_EVENTS_BATCH_WINDOW_SECONDS),
      reportBatchItemFailures: true,
    });
    Validations.of(mapping).acknowledge({
      id: 'Serverless-LambdaEventSourceMappingDestination',
      reason:
        'An SQS event source has no on-failure destination: the queue itself dead-letters a message after five receives (its redrive policy).',
    });
  }

  /** The account's bounce and complaint rates, before SES reviews it, and feedback nobody could record. */
  private alarmOnReputation(props: DeliveryFeedbackProps): void {
    const alarm = (name: string, metric: Metric, threshold: number, description: string) => {
      const a = new Alarm(this, name, {
        alarmName: `${props.prefix}-${name}`,
        alarmDescription: description,
        metric,
        threshold,
        // Two of three 15-minute windows: SES computes the rates over a long window; one blip is not a trend.
        evaluationPeriods: 3,
        datapointsToAlarm: 2,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        // No sending, no rate: nothing to worry about.
        treatMissingData: TreatMissingData.NOT_BREACHING,
      });
      a.addAlarmAction(props.alarmAction);
      a.addOkAction(props.alarmAction);
      return a;
    };
    alarm(
      'SesBounceRate',
      reputation('Reputation.BounceRate'),
      BOUNCE_RATE_ALARM,
      'The account bounce rate is at 4%; SES reviews the account at 5%. Find the source of bad addresses (README "Delivery feedback").',
    );
    alarm(
      'SesComplaintRate',
      reputation('Reputation.ComplaintRate'),
      COMPLAINT_RATE_ALARM,
      'The account complaint rate is at 0.08%; SES reviews the account at 0.1%. Check what was sent to whom (README "Delivery feedback").',
    );
    alarm(
      'FeedbackDeadLetters',
      this.deadLetters.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(1), statistic: 'Maximum' }),
      1,
      'Feedback events (SES events, SNS delivery status batches) could not be recorded: inspect the dead-letter queue, fix, and redrive (docs/operations.md).',
    );
  }

  /** The feedback row of the stage's dashboard: what SES said, what was not sent and why, the reputation. */
  private addDashboardRow(props: DeliveryFeedbackProps): void {
    const ours = (name: string, dims: Record<string, string>) =>
      new Metric({
        namespace: props.metricNamespace,
        metricName: name,
        dimensionsMap: { service: 'notifier', ...dims },
        statistic: 'Sum',
        period: Duration.minutes(5),
      }).with({ label: `${name} ${Object.values(dims).join(' ')}` });
    props.dashboard.addWidgets(
      new GraphWidget({
        title: 'Email feedback (what SES said after accepting)',
        left: ['DELIVERED', 'DELAYED', 'BOUNCED', 'COMPLAINED', 'REJECTED'].map((status) =>
          ours('DeliveryFeedback', { channel: 'EMAIL', status }),
        ),
        width: 8,
      }),
      new GraphWidget({
        title: 'Not sent: suppressed or opted out',
        left: [
          ours('NotificationsSuppressed', { channel: 'EMAIL', reason: 'BOUNCED' }),
          ours('NotificationsSuppressed', { channel: 'EMAIL', reason: 'COMPLAINED' }),
          ...CHANNELS.map((channel) => ours('NotificationsSuppressed', { channel, reason: 'OPTED_OUT' })),
        ],
        width: 8,
      }),
      new GraphWidget({
        title: 'SES reputation (account)',
        left: [reputation('Reputation.BounceRate'), reputation('Reputation.ComplaintRate')],
        leftAnnotations: [
          { value: BOUNCE_RATE_ALARM, label: 'bounce alarm' },
          { value: COMPLAINT_RATE_ALARM, label: 'complaint alarm' },
        ],
        width: 8,
      }),
    );
  }

  private acknowledge(): void {
    Validations.of(this.deadLetters).acknowledge(
      {
        id: 'AwsSolutions-SQS3',
        reason: 'This queue is itself the dead-letter queue of the feedback rule, queue and function.',
      },
      {
        id: 'Serverless-SQSRedrivePolicy',
        reason: 'This queue is itself the dead-letter queue of the feedback rule and function.',
      },
    );
    Validations.of(this.function.role as Role).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason: 'X-Ray PutTraceSegments/PutTelemetryRecords, which have no resource-level permissions.',
    });
    Validations.of(this.function).acknowledge({
      id: 'Serverless-LambdaDLQ',
      reason:
        'Invoked asynchronously by EventBridge: its on-failure destination and the rule target carry the dead-letter queue.',
    });
  }
}

/** SES's account-level reputation (the rates SES reviews the account by). */
const reputation = (name: string) =>
  new Metric({ namespace: 'AWS/SES', metricName: name, statistic: 'Maximum', period: Duration.minutes(15) });

/**
 * notifier's stack: the one table, the ingest / dispatch / sweeper functions with their triggers, least-privilege
 * IAM, and the CloudWatch alarms and dashboard an operator needs.
 */
import { Duration, RemovalPolicy, Stack, type StackProps, Token, Validations } from 'aws-cdk-lib';
import { AttributeType, BillingMode, ProjectionType, StreamViewType, Table } from 'aws-cdk-lib/aws-dynamodb';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { Effect, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { FilterCriteria, type IEventSourceDlq, type IFunction, StartingPosition } from 'aws-cdk-lib/aws-lambda';
import {
  AuthenticationMethod,
  DynamoEventSource,
  ManagedKafkaEventSource,
  SqsDlq,
} from 'aws-cdk-lib/aws-lambda-event-sources';
import { BlockPublicAccess, Bucket, BucketEncryption } from 'aws-cdk-lib/aws-s3';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { assertDispatchTiming, DISPATCH_TIMING } from '../functions/commons/dispatch-timing.ts';
import { NotifierFunction } from './notifier-function.ts';
import { Observability } from './observability.ts';
import { kafkaResourceArns, type Settings } from './settings.ts';
import { DISPATCH_FILTER_PATTERN } from './stream-filter.ts';
import { TABLE_SCHEMA } from './table-schema.ts';

export interface NotifierStackProps extends StackProps {
  readonly settings: Settings;
}

export class NotifierStack extends Stack {
  readonly table: Table;

  constructor(scope: Construct, id: string, props: NotifierStackProps) {
    super(scope, id, props);
    const s = props.settings;
    const policies = Object.entries(s.deliveryPolicy)
      .map(([channel, policy]) => `${channel}=${policy}`)
      .join(',');
    // Timeouts, batch size, concurrency, send timeout and lease come from one place and are checked against each
    // other here, at synth: a broken rule fails the synth with its name.
    const timing = assertDispatchTiming(DISPATCH_TIMING);
    const sendEnv = {
      SEND_RATE_EMAIL: String(s.sendRatePerSecond.EMAIL),
      SEND_RATE_PUSH: String(s.sendRatePerSecond.PUSH),
      SEND_RATE_SMS: String(s.sendRatePerSecond.SMS),
      MAX_AGE_SECONDS: String(s.notificationMaxAgeHours * 3600),
      PENDING_THRESHOLD_SECONDS: String(timing.stuckAfterSeconds),
      MAX_SEND_ATTEMPTS: '5',
    };

    // ── The table (lib/table-schema.ts is the one definition; the local run builds from it too) ──
    const schema = TABLE_SCHEMA;
    this.table = new Table(this, 'Table', {
      partitionKey: { name: schema.partitionKey, type: AttributeType.STRING },
      sortKey: { name: schema.sortKey, type: AttributeType.STRING },
      billingMode: BillingMode.PAY_PER_REQUEST,
      stream: StreamViewType.NEW_AND_OLD_IMAGES,
      timeToLiveAttribute: schema.timeToLiveAttribute,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      deletionProtection: true,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    this.table.addGlobalSecondaryIndex({
      indexName: schema.sweepIndex.indexName,
      partitionKey: { name: schema.sweepIndex.partitionKey, type: AttributeType.STRING },
      sortKey: { name: schema.sweepIndex.sortKey, type: AttributeType.NUMBER },
      projectionType: ProjectionType.INCLUDE,
      nonKeyAttributes: [...schema.sweepIndex.nonKeyAttributes],
    });

    // ── Ingest: MSK → one transaction per event ──
    const ingest = new NotifierFunction(this, 'Ingest', {
      entry: 'ingest/index.ts',
      description: 'notifier: each MSK record becomes one DynamoDB transaction (inbox + one notification per channel)',
      table: this.table,
      timeout: Duration.minutes(2),
      environment: {
        INBOX_RETENTION_DAYS: String(s.inboxRetentionDays),
        INGEST_CONCURRENCY: '16',
        // A new notification is first due for the sweeper this long after creation.
        PENDING_THRESHOLD_SECONDS: String(timing.stuckAfterSeconds),
      },
    }).fn;
    // TransactWriteItems is authorized per item action: the transaction only puts.
    ingest.addToRolePolicy(new PolicyStatement({ actions: ['dynamodb:PutItem'], resources: [this.table.tableArn] }));
    const kafka = kafkaResourceArns(s.mskClusterArn, s.topic, s.consumerGroupId);
    if (s.kafkaScramSecretArn === undefined) {
      ingest.addToRolePolicy(
        new PolicyStatement({
          actions: ['kafka-cluster:Connect', 'kafka-cluster:DescribeClusterDynamicConfiguration'],
          resources: [kafka.cluster],
        }),
      );
      ingest.addToRolePolicy(
        new PolicyStatement({
          actions: ['kafka-cluster:DescribeTopic', 'kafka-cluster:ReadData'],
          resources: [kafka.topic],
        }),
      );
      ingest.addToRolePolicy(
        new PolicyStatement({
          actions: ['kafka-cluster:DescribeGroup', 'kafka-cluster:AlterGroup'],
          resources: [kafka.group],
        }),
      );
    }
    // Batches the mapping gives up on keep their full records in S3 (SQS/SNS destinations keep only metadata).
    const failedBatches = new Bucket(this, 'FailedIngestBatches', {
      encryption: BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      versioned: true,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    ingest.addEventSource(
      new ManagedKafkaEventSource({
        clusterArn: s.mskClusterArn,
        topic: s.topic,
        consumerGroupId: s.consumerGroupId,
        startingPosition: StartingPosition[s.startingPosition],
        batchSize: s.batchSize,
        maxBatchingWindow: Duration.seconds(s.batchingWindowSeconds),
        // Error-handling controls need provisioned pollers. The handler throws only on infrastructure failure
        // (never on bad input), and a retry is idempotent, so bounded retries then the S3 destination lose nothing.
        provisionedPollerConfig: { minimumPollers: 1, maximumPollers: s.kafkaMaxPollers },
        bisectBatchOnError: true,
        retryAttempts: 10,
        onFailure: putOnlyBucketDestination(failedBatches),
        ...(s.kafkaScramSecretArn === undefined
          ? {}
          : {
              authenticationMethod: AuthenticationMethod.SASL_SCRAM_512_AUTH,
              secret: Secret.fromSecretCompleteArn(this, 'KafkaSecret', s.kafkaScramSecretArn),
            }),
      }),
    );

    // ── Dispatch: stream → claim → send → mark ──
    const dispatch = new NotifierFunction(this, 'Dispatch', {
      entry: 'dispatch/index.ts',
      description: 'notifier: sends each new notification once via SES (email) or SNS (push, SMS)',
      table: this.table,
      timeout: Duration.seconds(timing.dispatchTimeoutSeconds),
      reservedConcurrentExecutions: s.dispatchReservedConcurrency,
      environment: {
        SENDER_EMAIL: s.senderEmail,
        CHANNEL_POLICIES: policies,
        // The lease outlives the function timeout, so a live holder is never taken over (dispatch-timing.ts).
        LEASE_SECONDS: String(timing.leaseSeconds),
        SEND_TIMEOUT_MS: String(timing.sendTimeoutMs),
        CONNECT_TIMEOUT_MS: String(timing.connectTimeoutMs),
        DEADLINE_MARGIN_MS: String(timing.deadlineMarginMs),
        DISPATCH_CONCURRENCY: String(timing.concurrency),
        ...sendEnv,
        ...(s.sesConfigurationSet === undefined ? {} : { SES_CONFIGURATION_SET: s.sesConfigurationSet }),
      },
    }).fn;
    // GetItem/UpdateItem also serve the send-rate windows and the channel breaker (RATE#…, BREAKER# items).
    dispatch.addToRolePolicy(
      new PolicyStatement({ actions: ['dynamodb:GetItem', 'dynamodb:UpdateItem'], resources: [this.table.tableArn] }),
    );
    const domain = s.senderEmail.split('@')[1] ?? '';
    dispatch.addToRolePolicy(
      new PolicyStatement({
        actions: ['ses:SendEmail'],
        resources: [
          this.formatArn({ service: 'ses', resource: 'identity', resourceName: s.senderEmail }),
          this.formatArn({ service: 'ses', resource: 'identity', resourceName: domain }),
          ...(s.sesConfigurationSet === undefined
            ? []
            : [this.formatArn({ service: 'ses', resource: 'configuration-set', resourceName: s.sesConfigurationSet })]),
        ],
        conditions: { StringEquals: { 'ses:FromAddress': s.senderEmail } },
      }),
    );
    // Push publishes to platform endpoints of this account and region.
    dispatch.addToRolePolicy(
      new PolicyStatement({
        actions: ['sns:Publish'],
        resources: [this.formatArn({ service: 'sns', resource: 'endpoint', resourceName: '*' })],
      }),
    );
    // SMS publishes straight to a phone number, which has no ARN: SNS authorizes it only on "*".
    dispatch.addToRolePolicy(
      new PolicyStatement({
        sid: 'SmsToPhoneNumbers',
        effect: Effect.ALLOW,
        actions: ['sns:Publish'],
        resources: ['*'],
      }),
    );
    const dispatchFailures = new Queue(this, 'DispatchOnFailure', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    dispatch.addEventSource(
      new DynamoEventSource(this.table, {
        startingPosition: StartingPosition.TRIM_HORIZON,
        batchSize: timing.batchSize,
        maxBatchingWindow: Duration.seconds(1),
        parallelizationFactor: 2,
        bisectBatchOnError: true,
        retryAttempts: 5,
        maxRecordAge: Duration.hours(6),
        reportBatchItemFailures: true,
        onFailure: new SqsDlq(dispatchFailures),
        filters: [FilterCriteria.filter(DISPATCH_FILTER_PATTERN as unknown as Record<string, unknown>)],
      }),
    );

    // ── Sweeper: nothing silently lost ──
    const sweeper = new NotifierFunction(this, 'Sweeper', {
      entry: 'sweeper/index.ts',
      description: 'notifier: wakes deferred and stuck notifications, expires old ones, resolves expired leases',
      table: this.table,
      timeout: Duration.seconds(timing.sweeperTimeoutSeconds),
      reservedConcurrentExecutions: 1,
      environment: {
        CHANNEL_POLICIES: policies,
        SWEEP_INTERVAL_SECONDS: String(timing.sweeperIntervalSeconds),
        DEADLINE_MARGIN_MS: String(timing.deadlineMarginMs),
        ...sendEnv,
      },
    }).fn;
    sweeper.addToRolePolicy(
      new PolicyStatement({
        actions: ['dynamodb:Query'],
        resources: [`${this.table.tableArn}/index/${schema.sweepIndex.indexName}`],
      }),
    );
    // GetItem: the re-read after a failed condition, so a write whose reply was lost is not counted as a lost race.
    sweeper.addToRolePolicy(
      new PolicyStatement({ actions: ['dynamodb:GetItem', 'dynamodb:UpdateItem'], resources: [this.table.tableArn] }),
    );
    // Every minute (EventBridge's smallest rate): the sweep index is the delay queue, and this is its clock.
    const schedule = new Rule(this, 'SweeperSchedule', {
      schedule: Schedule.rate(Duration.seconds(timing.sweeperIntervalSeconds)),
      targets: [new LambdaFunction(sweeper, { retryAttempts: 2 })],
    });
    Validations.of(schedule).acknowledge({
      id: 'Serverless-EventBusDLQ',
      reason: 'A missed sweeper run is redone by the next one a minute later; there is nothing to dead-letter.',
    });

    acknowledgeFindings({ ingest, dispatch, sweeper, dispatchFailures, failedBatches });

    new Observability(this, 'Observability', {
      ingest,
      dispatch,
      sweeper,
      dispatchFailures,
      failedBatches,
      ...(s.alarmEmail === undefined ? {} : { alarmEmail: s.alarmEmail }),
    });
  }
}

/**
 * The S3 on-failure destination with only what Lambda needs (PutObject, ListBucket), instead of the read-write
 * grant of S3OnFailureDestination.
 */
function putOnlyBucketDestination(bucket: Bucket): IEventSourceDlq {
  return {
    bind: (_mapping, fn: IFunction) => {
      fn.addToRolePolicy(new PolicyStatement({ actions: ['s3:PutObject'], resources: [bucket.arnForObjects('*')] }));
      fn.addToRolePolicy(new PolicyStatement({ actions: ['s3:ListBucket'], resources: [bucket.bucketArn] }));
      return { destination: bucket.bucketArn };
    },
  };
}

/** Every cdk-nag finding this stack accepts, each acknowledged where it arises with the reason it is acceptable. */
function acknowledgeFindings(r: {
  ingest: IFunction;
  dispatch: IFunction;
  sweeper: IFunction;
  dispatchFailures: Queue;
  failedBatches: Bucket;
}): void {
  const ack = (scope: Construct, id: string, reason: string) => Validations.of(scope).acknowledge({ id, reason });
  for (const fn of [r.ingest, r.dispatch, r.sweeper]) {
    const scope = fn.node.scope as Construct;
    ack(
      scope,
      'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
      "The AWS managed policy grants only CloudWatch Logs writes for the function's own log streams.",
    );
    ack(
      scope,
      'AwsSolutions-IAM5[Resource::*]',
      'X-Ray PutTraceSegments/PutTelemetryRecords have no resource-level permissions; for dispatch also SMS publishing to phone numbers, which SNS authorizes only on "*".',
    );
    ack(scope, 'AwsSolutions-L1', 'The customer fixed the runtime at nodejs22.x, a supported LTS runtime.');
    ack(
      scope,
      'Serverless-LambdaLatestVersion',
      'The customer fixed the runtime at nodejs22.x, a supported LTS runtime.',
    );
    ack(
      scope,
      'Serverless-LambdaDLQ',
      'Invoked by event source mappings (which have their own on-failure destinations) or by a one-minute schedule whose next run redoes a missed one.',
    );
  }
  const ingestScope = r.ingest.node.scope as Construct;
  ack(
    ingestScope,
    'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaMSKExecutionRole]',
    'Required by the MSK event source mapping for its network interfaces in the cluster VPC and cluster discovery.',
  );
  ack(
    ingestScope,
    'AwsSolutions-IAM5[Resource::<FailedIngestBatchesA6AB3207.Arn>/*]',
    'The MSK mapping writes failed batches under object keys it chooses; PutObject only.',
  );
  // cdk-nag names the finding after the ARN as synthesized: tokens when the stack is environment-agnostic.
  const stack = Stack.of(r.dispatch);
  const region = Token.isUnresolved(stack.region) ? '<AWS::Region>' : stack.region;
  const account = Token.isUnresolved(stack.account) ? '<AWS::AccountId>' : stack.account;
  ack(
    r.dispatch.node.scope as Construct,
    `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:sns:${region}:${account}:endpoint/*]`,
    'Push goes to any platform endpoint of this account and region: endpoints are created per device at run time.',
  );
  ack(
    r.dispatchFailures,
    'AwsSolutions-SQS3',
    'This queue is itself the on-failure destination of the dispatch stream trigger.',
  );
  ack(
    r.dispatchFailures,
    'Serverless-SQSRedrivePolicy',
    'This queue is itself the on-failure destination of the dispatch stream trigger.',
  );
  ack(
    r.failedBatches,
    'AwsSolutions-S1',
    'Holds only batches the MSK mapping gave up on, written by Lambda alone; access is audited through CloudTrail.',
  );
}

/**
 * notifier's stack: the one table, the ingest / dispatch / sweeper functions with their triggers, least-privilege
 * IAM, the CloudWatch alarms and dashboard an operator needs, and the outputs the README's Operations section names.
 * One stack per stage: its name and every fixed physical name carry the stage.
 */
import { Annotations, Aws, CfnOutput, Duration, RemovalPolicy, Stack, type StackProps, Validations } from 'aws-cdk-lib';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import {
  AttributeType,
  BillingMode,
  ProjectionType,
  StreamViewType,
  Table,
  TableEncryption,
} from 'aws-cdk-lib/aws-dynamodb';
import { CfnVPCEndpoint } from 'aws-cdk-lib/aws-ec2';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { AnyPrincipal, PolicyDocument, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { type IKey, Key } from 'aws-cdk-lib/aws-kms';
import {
  type CfnEventSourceMapping,
  EventSourceMapping,
  FilterCriteria,
  type IEventSourceDlq,
  type IFunction,
  MetricType,
  StartingPosition,
} from 'aws-cdk-lib/aws-lambda';
import { AuthenticationMethod, DynamoEventSource, ManagedKafkaEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { BlockPublicAccess, Bucket, BucketEncryption } from 'aws-cdk-lib/aws-s3';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { assertDispatchTiming, DISPATCH_TIMING } from '../functions/contracts/dispatch-timing.ts';
import {
  DISPATCH_ENVIRONMENT,
  type DispatchEnvironment,
  type FeedbackEnvironment,
  INGEST_ENVIRONMENT,
  type IngestEnvironment,
  type PlacementEnvironment,
  type SendingEnvironment,
  type SweeperEnvironment,
  sendRateEnvironment,
} from '../functions/contracts/environment.ts';
import {
  DISPATCH_FILTER_PATTERN,
  URGENT_BATCH_SIZE,
  URGENT_MAX_RECORD_AGE_SECONDS,
  URGENT_RETRIES,
  urgentFilterPattern,
} from '../functions/contracts/stream-filter.ts';
import { TABLE_SCHEMA } from '../functions/contracts/table-schema.ts';
import { metricNamespaceOf } from '../functions/contracts/telemetry.ts';
import { brandEnvValue } from '../functions/domain/brand.ts';
import { CRITICAL_TYPES } from '../functions/domain/catalogue.ts';
import { formatChannelPolicies } from '../functions/domain/delivery-policy.ts';
import { SWEEP_SHARD_MARK_KEY } from '../functions/domain/keys.ts';
import { sweepShardsFor } from '../functions/domain/sweep-index.ts';
import { DeliveryFeedback } from './delivery-feedback.ts';
import { EvidenceStore } from './evidence-store.ts';
import { acknowledgeFindings, acknowledgeUrgentTrigger } from './nag-acknowledgements.ts';
import { NotifierFunction } from './notifier-function.ts';
import { Observability } from './observability.ts';
import { schemaRegistryEnvironment, useSchemaRegistry } from './schema-registry.ts';
import { kafkaResourceArns, type Settings, stackNameOf } from './settings.ts';
import { SmokeProducer } from './smoke-producer.ts';
import { SnsDeliveryStatus } from './sns-delivery-status.ts';
import { OPTIONAL_STACK_OUTPUTS, STACK_OUTPUTS, type StackOutputName } from './stack-outputs.ts';

export interface NotifierStackProps extends StackProps {
  readonly settings: Settings;
}

/** The MSK mapping's logical id, fixed: CDK's default contains the topic (see the comment where it is set). */
export const KAFKA_MAPPING_LOGICAL_ID = 'IngestKafkaMapping';

export class NotifierStack extends Stack {
  readonly table: Table;

  constructor(scope: Construct, id: string, props: NotifierStackProps) {
    super(scope, id, props);
    const s = props.settings;
    const prefix = stackNameOf(s.stage);
    const metricNamespace = metricNamespaceOf(s.stage);
    const policies = formatChannelPolicies(s.deliveryPolicy);
    // Timeouts, batch size, concurrency, send timeout and lease come from one place and are checked against each
    // other here, at synth: a broken rule fails the synth with its name.
    const timing = assertDispatchTiming(DISPATCH_TIMING);
    // Each function's environment is built as its contract's type (functions/contracts/environment.ts).
    const placementEnv: PlacementEnvironment = {
      // A new notification is first due for the sweeper this long after creation.
      PENDING_THRESHOLD_SECONDS: String(timing.pendingThresholdSeconds),
      // The sweep index's shards, sized from the peak the stack is built for; every writer of a sweep key and the
      // sweeper get the same count.
      SWEEP_SHARDS: String(sweepShardsFor(s.peakNotificationsPerSecond)),
    };
    const sendEnv: SendingEnvironment = {
      ...sendRateEnvironment(s.sendRatePerSecond),
      MAX_AGE_SECONDS: String(s.notificationMaxAgeHours * 3600),
      MAX_SEND_ATTEMPTS: String(DISPATCH_ENVIRONMENT.MAX_SEND_ATTEMPTS.default),
      CHANNEL_POLICIES: policies,
      DEADLINE_MARGIN_MS: String(timing.deadlineMarginMs),
    };
    const key: IKey | undefined = s.kmsKeyArn === undefined ? undefined : Key.fromKeyArn(this, 'DataKey', s.kmsKeyArn);

    // ── The table (functions/contracts/table-schema.ts is the one definition; the local run builds from it too) ──
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
      ...(key === undefined ? {} : { encryption: TableEncryption.CUSTOMER_MANAGED, encryptionKey: key }),
    });
    this.table.addGlobalSecondaryIndex({
      indexName: schema.sweepIndex.indexName,
      partitionKey: { name: schema.sweepIndex.partitionKey, type: AttributeType.STRING },
      sortKey: { name: schema.sweepIndex.sortKey, type: AttributeType.NUMBER },
      projectionType: ProjectionType.INCLUDE,
      nonKeyAttributes: [...schema.sweepIndex.nonKeyAttributes],
    });
    // SNS's delivery status names the message, not the notification: the feedback function finds it here.
    this.table.addGlobalSecondaryIndex({
      indexName: schema.messageIndex.indexName,
      partitionKey: { name: schema.messageIndex.partitionKey, type: AttributeType.STRING },
      projectionType: ProjectionType.KEYS_ONLY,
    });

    // One customer's events without a scan (ops customer / export / erase): a sparse keys-only index on inbox items.
    this.table.addGlobalSecondaryIndex({
      indexName: schema.userIndex.indexName,
      partitionKey: { name: schema.userIndex.partitionKey, type: AttributeType.STRING },
      sortKey: { name: schema.userIndex.sortKey, type: AttributeType.STRING },
      projectionType: ProjectionType.KEYS_ONLY,
    });

    // ── Evidence: every accepted send and every report on it, kept for years (lib/evidence-store.ts) ──
    const evidence = new EvidenceStore(this, 'Evidence', {
      key,
      retentionDays: s.evidenceRetentionDays,
      lockMode: s.evidenceLockMode,
    });

    // ── Ingest: MSK → one transaction per event ──
    const ingestEnv: IngestEnvironment = {
      TABLE_NAME: this.table.tableName,
      INBOX_RETENTION_DAYS: String(s.inboxRetentionDays),
      INGEST_CONCURRENCY: String(INGEST_ENVIRONMENT.INGEST_CONCURRENCY.default),
      MAX_EVENT_AGE_SECONDS: String(s.maxEventAgeSeconds),
      ...placementEnv,
      // Avro and Protobuf records: ingest reads their writer schemas from the bank's registry.
      ...schemaRegistryEnvironment(s.schemaRegistry),
    };
    const ingest = new NotifierFunction(this, 'Ingest', {
      entry: 'ingest/index.ts',
      description: 'notifier: each MSK record becomes one DynamoDB transaction (inbox + one notification per channel)',
      metricNamespace,
      timeout: Duration.minutes(2),
      environment: ingestEnv,
    });
    useSchemaRegistry(ingest, s.schemaRegistry);
    // TransactWriteItems is authorized per item action: the transaction only puts. BatchGetItem: the look-up of a
    // batch's inbox items before its transactions (a known event costs no write).
    ingest.useTable(this.table, ['dynamodb:PutItem', 'dynamodb:BatchGetItem']);
    // UpdateItem on the sweep shard mark only (functions/stores/sweep-shard-mark.ts), never on an event's items.
    ingest.addToRolePolicy(
      new PolicyStatement({
        actions: ['dynamodb:UpdateItem'],
        resources: [this.table.tableArn],
        conditions: { 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': [SWEEP_SHARD_MARK_KEY.pk] } },
      }),
    );
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
    } else if (s.kafkaScramKmsKeyArn !== undefined) {
      // MSK accepts SCRAM secrets only on a customer-managed key; the mapping reads the secret with this role, and
      // Secrets Manager decrypts it with the role's permission on that key (and only through Secrets Manager).
      ingest.addToRolePolicy(
        new PolicyStatement({
          actions: ['kms:Decrypt'],
          resources: [s.kafkaScramKmsKeyArn],
          conditions: { StringEquals: { 'kms:ViaService': `secretsmanager.${this.region}.amazonaws.com` } },
        }),
      );
    }
    // Batches the mapping gives up on keep their full records in S3 (SQS/SNS destinations keep only metadata).
    // The records hold addresses and phone numbers: nothing outlives the inbox, after which a replay could resend.
    const failedBatches = new Bucket(this, 'FailedIngestBatches', {
      ...(key === undefined
        ? { encryption: BucketEncryption.S3_MANAGED }
        : { encryption: BucketEncryption.KMS, encryptionKey: key, bucketKeyEnabled: true }),
      enforceSSL: true,
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      versioned: true,
      removalPolicy: RemovalPolicy.RETAIN,
      lifecycleRules: [
        {
          id: 'expire-with-the-inbox',
          expiration: Duration.days(s.inboxRetentionDays),
          // A version deleted or expired is gone a day later: the day is an undo window, not an archive.
          noncurrentVersionExpiration: Duration.days(1),
          abortIncompleteMultipartUploadAfter: Duration.days(1),
        },
        { id: 'remove-expired-delete-markers', expiredObjectDeleteMarker: true },
      ],
    });
    if (s.mskVpcId !== undefined && s.mskRouteTableIds !== undefined) {
      // The mapping writes failed batches from its network interfaces in the cluster's VPC, which needs a route to
      // S3 (AWS: "You must deploy a VPC endpoint for your on-failure destination service inside your Amazon MSK
      // cluster VPC"). A gateway endpoint is free, and it carries all S3 traffic of those route tables: its policy
      // allows the failed-batch bucket and nothing else, so the endpoint opens no path to any other bucket (and
      // other S3 traffic of those subnets needs an endpoint of the bank's own: docs/deploy.md).
      new CfnVPCEndpoint(this, 'FailedBatchesS3Endpoint', {
        vpcId: s.mskVpcId,
        serviceName: `com.amazonaws.${this.region}.s3`,
        vpcEndpointType: 'Gateway',
        routeTableIds: s.mskRouteTableIds,
        policyDocument: new PolicyDocument({
          statements: [
            new PolicyStatement({
              sid: 'FailedIngestBatchesOnly',
              principals: [new AnyPrincipal()],
              actions: ['s3:PutObject', 's3:ListBucket'],
              resources: [failedBatches.bucketArn, failedBatches.arnForObjects('*')],
              conditions: { StringEquals: { 'aws:PrincipalAccount': this.account } },
            }),
          ],
        }),
      });
    }
    const kafkaSource = new ManagedKafkaEventSource({
      clusterArn: s.mskClusterArn,
      topic: s.topic,
      consumerGroupId: s.consumerGroupId,
      startingPosition: StartingPosition[s.startingPosition],
      ...(s.startingPositionTimestamp === undefined ? {} : { startingPositionTimestamp: s.startingPositionTimestamp }),
      batchSize: s.batchSize,
      maxBatchingWindow: Duration.seconds(s.batchingWindowSeconds),
      // Error-handling controls and metrics need provisioned pollers. The handler throws only on infrastructure
      // failure (never on bad input), and a retry is idempotent, so bounded retries then the S3 destination lose
      // nothing. No maxRecordAge: an old record is recorded as too old by ingest, not parked in S3.
      provisionedPollerConfig: { minimumPollers: 1, maximumPollers: s.kafkaMaxPollers },
      bisectBatchOnError: true,
      retryAttempts: 10,
      onFailure: putOnlyBucketDestination(failedBatches),
      metricsConfig: { metrics: [MetricType.EVENT_COUNT, MetricType.ERROR_COUNT, MetricType.KAFKA_METRICS] },
      ...(s.kafkaScramSecretArn === undefined
        ? {}
        : {
            authenticationMethod: AuthenticationMethod.SASL_SCRAM_512_AUTH,
            secret: Secret.fromSecretCompleteArn(this, 'KafkaSecret', s.kafkaScramSecretArn),
          }),
    });
    ingest.addEventSource(kafkaSource);
    // CDK names the mapping after the topic, so a topic change would create the new mapping before deleting the old
    // one under another logical id. A fixed id keeps the mapping one resource across updates. (Topic, cluster,
    // consumer group and starting position are create-only: changing them still replaces it, and the replacement
    // is created first, so it needs a consumer group id of its own: docs/deploy.md "Changing the source".)
    const kafkaMapping = ingest.node.children.find((c): c is EventSourceMapping => c instanceof EventSourceMapping);
    (kafkaMapping?.node.defaultChild as CfnEventSourceMapping | undefined)?.overrideLogicalId(KAFKA_MAPPING_LOGICAL_ID);

    // ── Dispatch: stream → claim → send → mark ──
    const dispatchEnv: DispatchEnvironment = {
      TABLE_NAME: this.table.tableName,
      SENDER_EMAIL: s.senderEmail,
      BRAND: brandEnvValue(s.brand),
      // Our own account: a push endpoint of another account is that message's fault, never the channel's.
      ACCOUNT_ID: Aws.ACCOUNT_ID,
      // The lease outlives the function timeout, so a live holder is never taken over (dispatch-timing.ts).
      LEASE_SECONDS: String(timing.leaseSeconds),
      SEND_TIMEOUT_MS: String(timing.sendTimeoutMs),
      CONNECT_TIMEOUT_MS: String(timing.connectTimeoutMs),
      DISPATCH_CONCURRENCY: String(timing.concurrency),
      ...sendEnv,
      ...placementEnv,
      ...evidence.environment,
      // Every email goes through the configuration set whose events reach the feedback function.
      SES_CONFIGURATION_SET: s.sesConfigurationSet ?? prefix,
    };
    const dispatch = new NotifierFunction(this, 'Dispatch', {
      entry: 'dispatch/index.ts',
      description: 'notifier: sends each new notification once via SES (email) or SNS (push, SMS)',
      metricNamespace,
      timeout: Duration.seconds(timing.dispatchTimeoutSeconds),
      // No reservation by default: Lambda keeps 100 unreserved per account, and new accounts often have a quota of
      // 10, where any reservation fails the deploy. Sends are paced by rate in the function, not by concurrency.
      ...(s.dispatchReservedConcurrency === undefined
        ? {}
        : { reservedConcurrentExecutions: s.dispatchReservedConcurrency }),
      environment: dispatchEnv,
    });
    // GetItem/UpdateItem also serve the send-rate windows and the channel breaker (RATE#…, BREAKER# items).
    dispatch.useTable(this.table, ['dynamodb:GetItem', 'dynamodb:UpdateItem']);
    const domain = s.senderEmail.split('@')[1] ?? '';
    dispatch.addToRolePolicy(
      new PolicyStatement({
        actions: ['ses:SendEmail'],
        resources: [
          this.formatArn({ service: 'ses', resource: 'identity', resourceName: s.senderEmail }),
          this.formatArn({ service: 'ses', resource: 'identity', resourceName: domain }),
          this.formatArn({
            service: 'ses',
            resource: 'configuration-set',
            resourceName: s.sesConfigurationSet ?? prefix,
          }),
        ],
        conditions: { StringEquals: { 'ses:FromAddress': s.senderEmail } },
      }),
    );
    // Push publishes to platform endpoints of this account and region (SNS publishes only within a region).
    dispatch.addToRolePolicy(
      new PolicyStatement({
        sid: 'PushToOwnPlatformEndpoints',
        actions: ['sns:Publish'],
        resources: [this.formatArn({ service: 'sns', resource: 'endpoint', resourceName: '*' })],
      }),
    );
    // SMS publishes straight to a phone number, which has no ARN, so SNS authorizes it only against "*". NotResource
    // keeps that grant away from every SNS ARN: no topic and no endpoint, in any account, through this statement.
    dispatch.addToRolePolicy(
      new PolicyStatement({
        sid: 'SmsToPhoneNumbersOnly',
        actions: ['sns:Publish'],
        notResources: [`arn:${Aws.PARTITION}:sns:*:*:*`],
      }),
    );
    const dispatchFailures = new Queue(this, 'DispatchOnFailure', {
      ...(key === undefined
        ? { encryption: QueueEncryption.SQS_MANAGED }
        : { encryption: QueueEncryption.KMS, encryptionMasterKey: key }),
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    dispatch.addEventSource(
      new DynamoEventSource(this.table, {
        startingPosition: StartingPosition.TRIM_HORIZON,
        bisectBatchOnError: true,
        retryAttempts: 5,
        maxRecordAge: Duration.hours(6),
        reportBatchItemFailures: true,
        onFailure: sendOnlyQueueDestination(dispatchFailures),
        batchSize: timing.batchSize,
        maxBatchingWindow: Duration.seconds(1),
        parallelizationFactor: 2,
        filters: [FilterCriteria.filter(DISPATCH_FILTER_PATTERN as unknown as Record<string, unknown>)],
      }),
    );
    // Critical notices first in the stream path too: a second reader of the stream (DynamoDB Streams allows two per
    // shard) that takes only the critical types, in small batches with no batching window, so a critical notice is
    // dispatched at once instead of when the routine mapping, paced at the provider's quota, reaches it.
    // (A second DynamoEventSource on the same table would reuse its construct id: the mapping is added directly; the
    // stream read permission is the routine trigger's.)
    // It is a fast lane, never the only one: the routine trigger delivers every record it carries. So it starts at
    // LATEST (its first deploy onto a running stack does not replay the stream's 24 hours), gives up on a record after
    // a minute and two retries, and sends nothing to the on-failure queue — whose alarm means a record no trigger
    // will deliver, which is never the case for these.
    if (CRITICAL_TYPES.length > 0) {
      const urgent = dispatch.addEventSourceMapping('UrgentDispatchTrigger', {
        eventSourceArn: this.table.tableStreamArn as string,
        startingPosition: StartingPosition.LATEST,
        batchSize: URGENT_BATCH_SIZE,
        parallelizationFactor: 2,
        bisectBatchOnError: true,
        retryAttempts: URGENT_RETRIES,
        maxRecordAge: Duration.seconds(URGENT_MAX_RECORD_AGE_SECONDS),
        reportBatchItemFailures: true,
        filters: [FilterCriteria.filter(urgentFilterPattern(CRITICAL_TYPES) as unknown as Record<string, unknown>)],
      });
      acknowledgeUrgentTrigger(urgent);
    }

    // ── Sweeper: nothing silently lost ──
    const sweeperEnv: SweeperEnvironment = {
      TABLE_NAME: this.table.tableName,
      SWEEP_INTERVAL_SECONDS: String(timing.sweeperIntervalSeconds),
      ...sendEnv,
      ...placementEnv,
      ...evidence.environment,
    };
    const sweeper = new NotifierFunction(this, 'Sweeper', {
      entry: 'sweeper/index.ts',
      description: 'notifier: wakes deferred and stuck notifications, expires old ones, resolves expired leases',
      metricNamespace,
      timeout: Duration.seconds(timing.sweeperTimeoutSeconds),
      // No reservation (see dispatch): an overlapping run is safe, every transition is a conditional write; the
      // timeout fits the one-minute schedule anyway (dispatch-timing.ts, SWEEPER_FITS_INTERVAL).
      environment: sweeperEnv,
    });
    sweeper.useTable(this.table, ['dynamodb:Query'], { index: schema.sweepIndex.indexName });
    // GetItem: the re-read after a failed condition, so a write whose reply was lost is not counted as a lost race.
    sweeper.useTable(this.table, ['dynamodb:GetItem', 'dynamodb:UpdateItem']);
    // Every minute (EventBridge's smallest rate): the sweep index is the delay queue, and this is its clock.
    const schedule = new Rule(this, 'SweeperSchedule', {
      schedule: Schedule.rate(Duration.seconds(timing.sweeperIntervalSeconds)),
      targets: [new LambdaFunction(sweeper, { retryAttempts: 2 })],
    });
    Validations.of(schedule).acknowledge({
      id: 'Serverless-EventBusDLQ',
      reason: 'A missed sweeper run is redone by the next one a minute later; there is nothing to dead-letter.',
    });

    evidence.grantWrite(dispatch);
    evidence.grantWrite(sweeper);
    // Dispatch records a gap (the evidence's bytes) when the store fails; the sweeper fills and closes it.
    dispatch.useTable(this.table, ['dynamodb:PutItem'], { leadingKeys: ['EVIDENCE_GAP#*'] });
    sweeper.useTable(this.table, ['dynamodb:Query', 'dynamodb:DeleteItem'], { leadingKeys: ['EVIDENCE_GAP#*'] });

    // The one customer key, when given, protects the table (and its stream), the on-failure queue and the
    // failed-batch bucket; each function is granted it through useTable.

    acknowledgeFindings({ ingest, dispatch, sweeper, dispatchFailures, failedBatches });

    const observability = new Observability(this, 'Observability', {
      prefix,
      metricNamespace,
      ingest,
      dispatch,
      sweeper,
      sweeperInterval: Duration.seconds(timing.sweeperIntervalSeconds),
      ingestMappingId: kafkaSource.eventSourceMappingId,
      ingestIdleAlarmMinutes: s.ingestIdleAlarmMinutes,
      dispatchFailures,
      ...(s.alarmEmail === undefined ? {} : { alarmEmail: s.alarmEmail }),
      encryptAlarmTopic: s.encryptAlarmTopic,
    });

    // ── Delivery feedback: SES configuration set → EventBridge → feedback function ──
    const feedbackEnv: FeedbackEnvironment = { TABLE_NAME: this.table.tableName, ...evidence.environment };
    const feedback = new DeliveryFeedback(this, 'DeliveryFeedback', {
      prefix,
      metricNamespace,
      table: this.table,
      environment: feedbackEnv,
      ...(s.sesConfigurationSet === undefined ? {} : { existingConfigurationSet: s.sesConfigurationSet }),
      alarmAction: new SnsAction(observability.topic),
      dashboard: observability.dashboard,
    });
    // Dispatch names the configuration set in every SendEmail: it must exist (with its destination) first.
    dispatch.node.addDependency(feedback);
    evidence.grantWrite(feedback.function);
    observability.alarmOnThrottles('Feedback', feedback.function);

    // ── SMS and push delivery status: SNS's logs → the same feedback function ──
    new SnsDeliveryStatus(this, 'SnsDeliveryStatus', {
      prefix,
      metricNamespace,
      feedback: feedback.function,
      manageSmsAttributes: s.manageSmsDeliveryStatus,
      platformApplicationArns: s.pushPlatformApplicationArns ?? [],
      smsMonthlySpendLimitUsd: s.smsMonthlySpendLimitUsd,
      observability,
    });
    // ── The smoke producer: npm run smoke through MSK (deployed where the settings name the cluster's subnets) ──
    const smoke =
      s.mskSubnetIds === undefined || s.mskSecurityGroupIds === undefined
        ? undefined
        : new SmokeProducer(this, 'SmokeProducer', {
            metricNamespace,
            clusterArn: s.mskClusterArn,
            topic: s.topic,
            kafka,
            subnetIds: s.mskSubnetIds,
            securityGroupIds: s.mskSecurityGroupIds,
          });
    if (smoke !== undefined) observability.alarmOnThrottles('SmokeProducer', smoke.function);
    if (s.pushPlatformApplicationArns === undefined) {
      Annotations.of(this).addWarningV2(
        'notifier:pushDeliveryStatus',
        'No pushPlatformApplicationArns: push delivery outcomes are not observed (SNS logs them only for the platform applications it is told about).',
      );
    }

    // ── What an operator needs, by name (docs/operations.md; lib/stack-outputs.ts lists them for ops/) ──
    const output = (id: StackOutputName, value: string) =>
      new CfnOutput(this, id, { value, description: STACK_OUTPUTS[id] });
    output('Stage', s.stage);
    output('TableName', this.table.tableName);
    output('IngestFunctionName', ingest.functionName);
    output('IngestLogGroupName', ingest.logGroup.logGroupName);
    output('DispatchFunctionName', dispatch.functionName);
    output('DispatchLogGroupName', dispatch.logGroup.logGroupName);
    output('SweeperFunctionName', sweeper.functionName);
    output('SweeperLogGroupName', sweeper.logGroup.logGroupName);
    output('MskClusterArn', s.mskClusterArn);
    output('IngestKafkaMappingId', kafkaSource.eventSourceMappingId);
    output('FailedIngestBatchesBucketName', failedBatches.bucketName);
    output('DispatchOnFailureQueueUrl', dispatchFailures.queueUrl);
    output('AlarmTopicArn', observability.topic.topicArn);
    output('FeedbackFunctionName', feedback.function.functionName);
    output('FeedbackLogGroupName', feedback.function.logGroup.logGroupName);
    output('FeedbackDeadLetterQueueUrl', feedback.deadLetters.queueUrl);
    output('SesConfigurationSetName', feedback.configurationSetName);
    output('EvidenceBucketName', evidence.bucket.bucketName);
    if (smoke !== undefined) {
      new CfnOutput(this, 'SmokeProducerFunctionName', {
        value: smoke.function.functionName,
        description: OPTIONAL_STACK_OUTPUTS.SmokeProducerFunctionName,
      });
    }
    output(
      'DashboardUrl',
      `https://${this.region}.console.aws.amazon.com/cloudwatch/home?region=${this.region}#dashboards/dashboard/${observability.dashboardName}`,
    );
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

/**
 * The SQS on-failure destination with only sqs:SendMessage (what Lambda documents for stream destinations), instead
 * of SqsDlq's grant, which adds wildcard KMS actions when the queue has a customer key.
 */
function sendOnlyQueueDestination(queue: Queue): IEventSourceDlq {
  return {
    bind: (_mapping, fn: IFunction) => {
      fn.addToRolePolicy(new PolicyStatement({ actions: ['sqs:SendMessage'], resources: [queue.queueArn] }));
      return { destination: queue.queueArn };
    },
  };
}

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
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { type IKey, Key } from 'aws-cdk-lib/aws-kms';
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
import { TABLE_SCHEMA } from '../functions/contracts/table-schema.ts';
import { metricNamespaceOf } from '../functions/contracts/telemetry.ts';
import { brandEnvValue } from '../functions/domain/brand.ts';
import { formatChannelPolicies } from '../functions/domain/delivery-policy.ts';
import { SWEEP_SHARD_MARK_KEY } from '../functions/domain/keys.ts';
import { sweepShardsFor } from '../functions/domain/sweep-index.ts';
import { TableBackup } from './backup.ts';
import { DeliveryFeedback } from './delivery-feedback.ts';
import { alarmOnUrgentTrigger, createDispatchTriggers } from './dispatch-triggers.ts';
import { EvidenceStore } from './evidence-store.ts';
import { createIngestSource, KAFKA_MAPPING_LOGICAL_ID } from './ingest-source.ts';
import { acknowledgeFindings, acknowledgeOutsideRuleSets } from './nag-acknowledgements.ts';
import { Network } from './network.ts';
import { NotifierFunction } from './notifier-function.ts';
import { Observability } from './observability.ts';
import { ProtectionWatch } from './protection-watch.ts';
import { schemaRegistryEnvironment, useSchemaRegistry } from './schema-registry.ts';
import { kafkaResourceArns, type Settings, stackNameOf } from './settings.ts';
import { SmokeProducer } from './smoke-producer.ts';
import { SnsDeliveryStatus } from './sns-delivery-status.ts';
import { OPTIONAL_STACK_OUTPUTS, STACK_OUTPUTS, type StackOutputName } from './stack-outputs.ts';

export interface NotifierStackProps extends StackProps {
  readonly settings: Settings;
}

export { KAFKA_MAPPING_LOGICAL_ID };

export class NotifierStack extends Stack {
  readonly table: Table;
  private readonly zones: readonly string[] | undefined;

  constructor(scope: Construct, id: string, props: NotifierStackProps) {
    super(scope, id, props);
    const s = props.settings;
    this.zones = s.vpc?.availabilityZones;
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
      prefix,
      retentionDays: s.evidenceRetentionDays,
      lockMode: s.evidenceLockMode,
      replication: s.evidenceReplication,
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
    // The MSK mapping, its failed-batch bucket and what it may do with ingest's role (lib/ingest-source.ts).
    const source = createIngestSource(this, ingest, s, key, evidence.accessLogs);
    const failedBatches = source.failedBatches;

    // ── Dispatch: stream → claim → send → mark ──
    const applications = s.pushPlatformApplicationArns ?? [];
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
      // The platform applications dispatch may publish to (below): an endpoint of any other fails that message alone.
      PUSH_APPLICATION_ARNS: applications.join(','),
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
    // Push publishes to the endpoints of the configured platform applications only (SNS publishes only within a
    // region): an endpoint ARN is the application's with `endpoint/` for `app/` and the device's id after it.
    // Without applications, no push is permitted (synth warns); dispatch reads an endpoint of any other application
    // as that message's fault alone (PUSH_APPLICATION_ARNS), never the channel's.
    if (applications.length > 0) {
      dispatch.addToRolePolicy(
        new PolicyStatement({
          sid: 'PushToConfiguredApplications',
          actions: ['sns:Publish'],
          resources: applications.map((arn) => `${arn.replace(':app/', ':endpoint/')}/*`),
        }),
      );
    }
    // SMS publishes straight to a phone number, which has no ARN, so SNS authorizes it only against "*". NotResource
    // keeps that grant away from every SNS ARN: no topic and no endpoint, in any account, through this statement.
    dispatch.addToRolePolicy(
      new PolicyStatement({
        sid: 'SmsToPhoneNumbersOnly',
        actions: ['sns:Publish'],
        notResources: [`arn:${Aws.PARTITION}:sns:*:*:*`],
      }),
    );
    // The routine and the urgent stream triggers, and where each parks what it gives up (lib/dispatch-triggers.ts).
    const triggers = createDispatchTriggers(this, dispatch, this.table, key, timing);
    const dispatchFailures = triggers.routineFailures;

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

    evidence.grantWrite(dispatch, ['sends', 'users']);
    // The sweeper fills evidence gaps, which may be a send record or a customer's pointer.
    evidence.grantWrite(sweeper, ['sends', 'users']);
    // Dispatch records a gap (the evidence's bytes) when the store fails; the sweeper fills and closes it.
    dispatch.useTable(this.table, ['dynamodb:PutItem'], { leadingKeys: ['EVIDENCE_GAP#*'] });
    sweeper.useTable(this.table, ['dynamodb:Query', 'dynamodb:DeleteItem'], { leadingKeys: ['EVIDENCE_GAP#*'] });

    // The one customer key, when given, protects the table (and its stream), the on-failure queue and the
    // failed-batch bucket; each function is granted it through useTable.

    acknowledgeFindings({ ingest, dispatch, sweeper, dispatchFailures, urgentFailures: triggers.urgentFailures });

    const observability = new Observability(this, 'Observability', {
      prefix,
      metricNamespace,
      ingest,
      dispatch,
      sweeper,
      sweeperInterval: Duration.seconds(timing.sweeperIntervalSeconds),
      ingestMappingId: source.mappingId,
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
    // Reports are appended under their send (sends/…); the feedback function never writes a customer's pointer.
    evidence.grantWrite(feedback.function, ['sends']);
    observability.alarmOnThrottles('Feedback', feedback.function);
    alarmOnUrgentTrigger(observability, triggers);
    if (evidence.replicationFailures !== undefined) {
      observability.alarm(
        'EvidenceReplicationFailed',
        evidence.replicationFailures,
        'Evidence objects failed to replicate to the log-archive account: the copy there is incomplete. Check the destination bucket policy, its key policy and its Object Lock (docs/deploy.md "Evidence in a log-archive account"); S3 retries, and a failed object is replicated again by S3 Batch Replication.',
      );
    }
    // Every change to the evidence protections and every use of the break-glass role reaches the operators.
    const watch = new ProtectionWatch(this, 'ProtectionWatch', {
      prefix,
      buckets: [evidence.bucket, evidence.accessLogs],
      key: evidence.key,
      breakGlassRole: evidence.breakGlassRole,
      observability,
    });
    // Preferences and suppressions never expire: a locked vault here, a copy in another account.
    if (s.backup !== undefined) {
      new TableBackup(this, 'Backup', { prefix, table: this.table, settings: s.backup });
    }

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
            kafka: kafkaResourceArns(s.mskClusterArn, s.topic, s.consumerGroupId),
            subnetIds: s.mskSubnetIds,
            securityGroupIds: s.mskSecurityGroupIds,
          });
    if (smoke !== undefined) observability.alarmOnThrottles('SmokeProducer', smoke.function);
    if (s.pushPlatformApplicationArns === undefined) {
      Annotations.of(this).addWarningV2(
        'notifier:pushDeliveryStatus',
        'No pushPlatformApplicationArns: dispatch may publish to no platform endpoint (push is refused), and no push delivery outcome is observed.',
      );
    }
    // The functions that hold customers' contact points, off the internet (settings `vpc`).
    if (s.vpc !== undefined) {
      const network = new Network(this, 'Network', {
        prefix,
        settings: s.vpc,
        table: this.table,
        evidenceBucket: evidence.bucket,
        schemaRegistry: s.schemaRegistry,
      });
      for (const fn of [ingest, dispatch, sweeper, feedback.function]) network.place(fn);
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
    output('IngestKafkaMappingId', source.mappingId);
    output('FailedIngestBatchesBucketName', failedBatches.bucketName);
    output('DispatchOnFailureQueueUrl', dispatchFailures.queueUrl);
    output('AlarmTopicArn', observability.topic.topicArn);
    output('FeedbackFunctionName', feedback.function.functionName);
    output('FeedbackLogGroupName', feedback.function.logGroup.logGroupName);
    output('FeedbackDeadLetterQueueUrl', feedback.deadLetters.queueUrl);
    output('SesConfigurationSetName', feedback.configurationSetName);
    output('EvidenceBucketName', evidence.bucket.bucketName);
    output('EvidenceReaderRoleArn', evidence.readerRole.roleArn);
    output('EvidenceBreakGlassRoleArn', evidence.breakGlassRole.roleArn);
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
    acknowledgeOutsideRuleSets(this, {
      table: this.table,
      failedBatches,
      evidence,
      deadLetterQueues: [
        dispatchFailures,
        ...(triggers.urgentFailures ? [triggers.urgentFailures] : []),
        feedback.deadLetters,
        watch.deadLetters,
      ],
      dispatch,
      pushApplicationArns: applications,
      settings: {
        kmsKey: key !== undefined,
        vpc: s.vpc !== undefined,
        backup: s.backup !== undefined,
        replication: s.evidenceReplication !== undefined,
      },
    });
  }

  /**
   * The zones the settings name for the VPC, when it has one: CDK would otherwise look the account's zones up at synth
   * (AWS credentials, and a different answer per account), and the synth must run offline.
   */
  override get availabilityZones(): string[] {
    return this.zones === undefined ? super.availabilityZones : [...this.zones];
  }
}

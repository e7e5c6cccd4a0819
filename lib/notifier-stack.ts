/**
 * notifier's stack: the one table, the ingest / dispatch / sweeper functions with their triggers, delivery feedback,
 * the evidence store, least-privilege IAM, the CloudWatch alarms and dashboard an operator needs, and the outputs the
 * README's Operations section names. It composes one part per function (lib/ingest.ts, lib/dispatch.ts,
 * lib/sweeper.ts, lib/delivery-feedback.ts, lib/smoke-producer.ts), the evidence store and the alarms by group
 * (lib/observability.ts). One stack per stage: its name and every fixed physical name carry the stage.
 */
import { Annotations, CfnOutput, Duration, Stack, type StackProps } from 'aws-cdk-lib';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { type ITable, Table } from 'aws-cdk-lib/aws-dynamodb';
import { Key } from 'aws-cdk-lib/aws-kms';
import { CfnEventSourceMapping } from 'aws-cdk-lib/aws-lambda';
import type { Construct } from 'constructs';
import { assertDispatchTiming, DISPATCH_TIMING } from '../functions/contracts/dispatch-timing.ts';
import type { FeedbackEnvironment } from '../functions/contracts/environment.ts';
import { metricNamespaceOf } from '../functions/contracts/telemetry.ts';
import { formatApprovalKinds } from '../functions/domain/approval.ts';
import { TableBackup } from './backup.ts';
import { SupportConsole } from './console.ts';
import { DeliveryFeedback } from './delivery-feedback.ts';
import { createDispatch, type Dispatch } from './dispatch.ts';
import { alarmOnUrgentTrigger } from './dispatch-triggers.ts';
import { EvidenceStore } from './evidence-store.ts';
import { type FunctionPartProps, placementEnvironment, sendingEnvironment } from './function-parts.ts';
import { createIngest } from './ingest.ts';
import { KAFKA_MAPPING_LOGICAL_ID } from './ingest-source.ts';
import { acknowledgeFindings, acknowledgeOutsideRuleSets } from './nag-acknowledgements.ts';
import { Network } from './network.ts';
import { type NotifierFunction, traceAwsCalls } from './notifier-function.ts';
import { addOutputs } from './notifier-outputs.ts';
import { Observability } from './observability.ts';
import { createOperatorApi } from './operator-api.ts';
import { ProtectionWatch } from './protection-watch.ts';
import { watchFunctions } from './protection-watch-functions.ts';
import { alarmOnRegions, createFence, fenceFunctions, type RegionRole, regionalTable } from './regional.ts';
import { kafkaResourceArns, type Settings, stackNameOf } from './settings.ts';
import { SmokeProducer } from './smoke-producer.ts';
import { SnsDeliveryStatus } from './sns-delivery-status.ts';
import { OPTIONAL_STACK_OUTPUTS } from './stack-outputs.ts';
import { createSweeper } from './sweeper.ts';
import { createTable, guardTableWrites } from './table.ts';

export interface NotifierStackProps extends StackProps {
  readonly settings: Settings;
  /** A stage in two regions: which side this stack is (lib/regional.ts); absent in one region. */
  readonly region?: RegionRole;
}

export { KAFKA_MAPPING_LOGICAL_ID };

export class NotifierStack extends Stack {
  readonly table: ITable;
  private readonly zones: readonly string[] | undefined;

  constructor(scope: Construct, id: string, props: NotifierStackProps) {
    super(scope, id, props);
    const s = props.settings;
    this.zones = s.vpc?.availabilityZones;
    const prefix = props.stackName ?? stackNameOf(s.stage);
    // Timeouts, batch size, concurrency, send timeout and lease come from one place and are checked against each
    // other here, at synth: a broken rule fails the synth with its name.
    const timing = assertDispatchTiming(DISPATCH_TIMING);
    // The one customer key, when given, protects the table (and its stream), the on-failure queues and the
    // failed-batch bucket; each function is granted it through useTable.
    const key = s.kmsKeyArn === undefined ? undefined : Key.fromKeyArn(this, 'DataKey', s.kmsKeyArn);
    this.table = props.region === undefined ? createTable(this, key) : regionalTable(this, key, props.region);
    // Every accepted send and every report on it, kept for years (lib/evidence-store.ts).
    const evidence = new EvidenceStore(this, 'Evidence', {
      prefix,
      retentionDays: s.evidenceRetentionDays,
      lockMode: s.evidenceLockMode,
      replication: s.evidenceReplication,
      assumers: { readers: s.evidenceReaders, breakGlass: s.breakGlassPrincipals },
    });
    const parts: FunctionPartProps = {
      stack: this,
      settings: s,
      prefix,
      metricNamespace: metricNamespaceOf(s.stage),
      timing,
      table: this.table,
      key,
      evidence,
      placementEnv: placementEnvironment(s, timing),
      sendingEnv: sendingEnvironment(s, timing),
      ...(props.region === undefined ? {} : { owner: props.region.region }),
    };
    // Item writes: the functions useTable granted them, and break glass (which also runs `smoke --direct`). The global
    // table of a stage in two regions is not guarded yet: its replicas need each region's roles (docs/regions.md).
    if (this.table instanceof Table) guardTableWrites(this.table, [evidence.breakGlassRole.roleArn]);
    const ingest = createIngest(parts);
    const dispatch = createDispatch(parts);
    const sweeper = createSweeper(parts);
    // Every operator action on this stage, behind IAM (lib/operator-api.ts).
    const operator = createOperatorApi(parts, ingest.fn, ingest.source.failedBatches);
    const dispatchFailures = dispatch.triggers.routineFailures;
    acknowledgeFindings({
      ingest: ingest.fn,
      dispatch: dispatch.fn,
      sweeper,
      dispatchFailures,
      urgentFailures: dispatch.triggers.urgentFailures,
    });

    const observability = new Observability(this, 'Observability', {
      prefix,
      metricNamespace: parts.metricNamespace,
      ingest: ingest.fn,
      dispatch: dispatch.fn,
      sweeper,
      sweeperInterval: Duration.seconds(timing.sweeperIntervalSeconds),
      ingestMappingId: ingest.source.mappingId,
      ingestIdleAlarmMinutes: s.ingestIdleAlarmMinutes,
      dispatchFailures,
      ...(s.alarmEmail === undefined ? {} : { alarmEmail: s.alarmEmail }),
      encryptAlarmTopic: s.encryptAlarmTopic,
    });
    const feedback = this.deliveryFeedback(parts, dispatch, observability);
    const smoke = this.smokeProducer(parts, observability);
    const functions = [ingest.fn, dispatch.fn, sweeper, feedback.function, ...(smoke === undefined ? [] : [smoke])];
    const supportConsole = this.supportConsole(parts, observability);
    if (supportConsole !== undefined) functions.push(supportConsole.apiFunction, supportConsole.pageFunction);
    const watch = this.protect(parts, observability, functions);
    this.snsDeliveryStatus(parts, feedback, observability);
    if (s.pushPlatformApplicationArns === undefined) {
      Annotations.of(this).addWarningV2(
        'notifier:pushDeliveryStatus',
        'No pushPlatformApplicationArns: dispatch may publish to no platform endpoint (push is refused), and no push delivery outcome is observed.',
      );
    }
    this.placeInNetwork(parts, [ingest.fn, dispatch.fn, sweeper, feedback.function]);
    if (props.region !== undefined)
      this.fenceRegion(parts, props.region, observability, [ingest.fn, dispatch.fn, sweeper]);
    // An X-Ray subsegment per AWS call only when asked (settings `traceAwsCalls`): the SDK it loads costs every cold start.
    if (s.traceAwsCalls) traceAwsCalls(this);

    addOutputs(this, {
      stage: s.stage,
      mskClusterArn: s.mskClusterArn,
      table: this.table,
      ingest: ingest.fn,
      ingestMappingId: ingest.source.mappingId,
      failedBatches: ingest.source.failedBatches,
      dispatch: dispatch.fn,
      dispatchFailures,
      sweeper,
      feedback,
      evidence,
      observability,
      smoke,
      operatorApi: operator.api,
      operator: operator.fn,
    });
    acknowledgeOutsideRuleSets(this, {
      table: this.table,
      failedBatches: ingest.source.failedBatches,
      evidence,
      deadLetterQueues: [
        dispatchFailures,
        ...(dispatch.triggers.urgentFailures ? [dispatch.triggers.urgentFailures] : []),
        feedback.deadLetters,
        watch.deadLetters,
      ],
      dispatch: dispatch.fn,
      pushApplicationArns: s.pushPlatformApplicationArns ?? [],
      settings: {
        kmsKey: key !== undefined,
        vpc: s.vpc !== undefined,
        backup: s.backup !== undefined,
        replication: s.evidenceReplication !== undefined,
      },
    });
  }

  /** A stage in two regions: this region's fence, the functions fenced, its alarms (lib/regional.ts). */
  private fenceRegion(
    p: FunctionPartProps,
    role: RegionRole,
    observability: Observability,
    [ingest, dispatch, sweeper]: readonly NotifierFunction[],
  ): void {
    const fence = createFence(this, p.prefix, p.key, role);
    // The MSK mapping lib/ingest-source.ts adds to the ingest function (its logical id is fixed there).
    const ingestMapping = ingest?.node.findChild('KafkaMapping').node.defaultChild as CfnEventSourceMapping;
    fenceFunctions(this, p.table, fence, role, {
      ingest: ingest as NotifierFunction,
      dispatch: dispatch as NotifierFunction,
      sweeper: sweeper as NotifierFunction,
      ingestMapping,
    });
    alarmOnRegions(observability, p.metricNamespace, p.table, role);
    new CfnOutput(this, 'FenceTableName', { description: "This region's fence table", value: fence.tableName });
  }

  /** The functions that hold customers' contact points, off the internet (settings `vpc`). */
  private placeInNetwork(parts: FunctionPartProps, functions: readonly NotifierFunction[]): void {
    const s = parts.settings;
    if (s.vpc === undefined) return;
    const network = new Network(this, 'Network', {
      prefix: parts.prefix,
      settings: s.vpc,
      table: this.table,
      evidenceBucket: parts.evidence.bucket,
      schemaRegistry: s.schemaRegistry,
    });
    for (const fn of functions) network.place(fn);
  }

  /**
   * Delivery feedback: SES's configuration set → EventBridge, and SNS's delivery status logs → the feedback
   * function, which records each report on its send (lib/delivery-feedback.ts, lib/sns-delivery-status.ts).
   */
  private deliveryFeedback(p: FunctionPartProps, dispatch: Dispatch, observability: Observability): DeliveryFeedback {
    const s = p.settings;
    const environment: FeedbackEnvironment = { TABLE_NAME: p.table.tableName, ...p.evidence.environment };
    const feedback = new DeliveryFeedback(this, 'DeliveryFeedback', {
      prefix: p.prefix,
      metricNamespace: p.metricNamespace,
      table: p.table,
      environment,
      ...(s.sesConfigurationSet === undefined ? {} : { existingConfigurationSet: s.sesConfigurationSet }),
      alarmAction: new SnsAction(observability.topic),
      dashboard: observability.dashboard,
    });
    // Dispatch names the configuration set in every SendEmail: it must exist (with its destination) first.
    dispatch.fn.node.addDependency(feedback);
    // Reports are appended under their send's batch (batches/…), or under the send itself for a send from before
    // batches (sends/…); the feedback function never writes a customer's pointer. A batch the store refused waits
    // as a gap.
    p.evidence.grantWrite(feedback.function, ['batches', 'sends']);
    feedback.function.useTable(p.table, ['dynamodb:PutItem'], { leadingKeys: ['EVIDENCE_GAP#*'] });
    observability.alarmOnThrottles('Feedback', feedback.function);
    alarmOnUrgentTrigger(observability, dispatch.triggers);
    if (p.evidence.replicationFailures !== undefined) {
      observability.alarm(
        'EvidenceReplicationFailed',
        p.evidence.replicationFailures,
        'Evidence objects failed to replicate to the log-archive account: the copy there is incomplete. Check the destination bucket policy, its key policy and its Object Lock (docs/deploy.md "Evidence in a log-archive account"); S3 retries, and a failed object is replicated again by S3 Batch Replication.',
      );
    }
    return feedback;
  }

  /**
   * What guards the evidence and the table beyond the functions: the backup if set, and the protection watch over
   * the evidence protections, the keys (the vault's too), the roles' use and the functions that write evidence.
   */
  private protect(p: FunctionPartProps, observability: Observability, functions: NotifierFunction[]): ProtectionWatch {
    const s = p.settings;
    // Preferences and suppressions never expire: a locked vault here, a copy in another account.
    const backup =
      s.backup === undefined
        ? undefined
        : new TableBackup(this, 'Backup', { prefix: p.prefix, table: p.table, settings: s.backup });
    // Every change to the evidence protections and every use of the break-glass role reaches the operators.
    const watch = new ProtectionWatch(this, 'ProtectionWatch', {
      prefix: p.prefix,
      buckets: [p.evidence.bucket, p.evidence.accessLogs],
      key: p.evidence.key,
      breakGlassRole: p.evidence.breakGlassRole,
      readerRole: p.evidence.readerRole,
      observability,
      guardedKeys: backup === undefined ? [] : [backup.key],
      watchedKeys: [p.evidence.auditSealKey],
      ...(p.table instanceof Table ? { table: p.table } : {}),
      securityEventBusArn: s.securityEventBusArn,
    });
    watchFunctions(watch, {
      functions,
      mappingIds: this.node
        .findAll()
        .filter((c): c is CfnEventSourceMapping => c instanceof CfnEventSourceMapping)
        .map((m) => m.ref),
      otherRoles: [p.evidence.readerRole, p.evidence.breakGlassRole],
    });
    if (s.evidenceReaders === undefined || s.breakGlassPrincipals === undefined) {
      Annotations.of(this).addWarningV2(
        'notifier:namedPrincipals',
        'No evidenceReaders or breakGlassPrincipals: the evidence-reader and break-glass roles trust the account (any principal allowed sts:AssumeRole may decrypt the evidence or break glass). Only the example stage may leave them out.',
      );
    }
    return watch;
  }

  /** SMS and push delivery status: SNS's logs → the same feedback function (lib/sns-delivery-status.ts). */
  private snsDeliveryStatus(p: FunctionPartProps, feedback: DeliveryFeedback, observability: Observability): void {
    const s = p.settings;
    new SnsDeliveryStatus(this, 'SnsDeliveryStatus', {
      prefix: p.prefix,
      metricNamespace: p.metricNamespace,
      feedback: feedback.function,
      manageSmsAttributes: s.manageSmsDeliveryStatus,
      platformApplicationArns: s.pushPlatformApplicationArns ?? [],
      smsMonthlySpendLimitUsd: s.smsMonthlySpendLimitUsd,
      observability,
    });
  }

  /** The support console (lib/console.ts), where the settings describe it. */
  private supportConsole(p: FunctionPartProps, observability: Observability): SupportConsole | undefined {
    const s = p.settings;
    if (s.console === undefined) return undefined;
    const supportConsole = new SupportConsole(this, 'SupportConsole', {
      prefix: p.prefix,
      metricNamespace: p.metricNamespace,
      settings: s.console,
      table: p.table,
      evidence: p.evidence,
      // Four eyes as the operator API has it: the same settings, the same operations.
      approval: {
        INBOX_RETENTION_DAYS: String(s.inboxRetentionDays),
        APPROVAL_REQUIRED_FOR: formatApprovalKinds(s.approvalRequiredFor),
        PROPOSAL_HOURS: String(s.proposalHours),
        ...(s.identityCenterUserNameIsEmail ? { IDENTITY_CENTER_USER_NAME_IS_EMAIL: 'true' as const } : {}),
      },
    });
    observability.alarmOnThrottles('ConsoleApi', supportConsole.apiFunction);
    new CfnOutput(this, 'SupportConsoleUrl', {
      description: 'The support console, through the bank network (docs/console.md)',
      value: supportConsole.url,
    });
    new CfnOutput(this, 'ConsoleApiFunctionName', {
      description: OPTIONAL_STACK_OUTPUTS.ConsoleApiFunctionName,
      value: supportConsole.apiFunction.functionName,
    });
    return supportConsole;
  }

  /** The smoke producer: npm run smoke through MSK, deployed where the settings name the cluster's subnets. */
  private smokeProducer(p: FunctionPartProps, observability: Observability): NotifierFunction | undefined {
    const s = p.settings;
    if (s.mskSubnetIds === undefined || s.mskSecurityGroupIds === undefined) return undefined;
    const smoke = new SmokeProducer(this, 'SmokeProducer', {
      metricNamespace: p.metricNamespace,
      clusterArn: s.mskClusterArn,
      topic: s.topic,
      kafka: kafkaResourceArns(s.mskClusterArn, s.topic, s.consumerGroupId),
      subnetIds: s.mskSubnetIds,
      securityGroupIds: s.mskSecurityGroupIds,
    });
    observability.alarmOnThrottles('SmokeProducer', smoke.function);
    return smoke.function;
  }

  /**
   * The zones the settings name for the VPC, when it has one: CDK would otherwise look the account's zones up at synth
   * (AWS credentials, and a different answer per account), and the synth must run offline.
   */
  override get availabilityZones(): string[] {
    return this.zones === undefined ? super.availabilityZones : [...this.zones];
  }
}

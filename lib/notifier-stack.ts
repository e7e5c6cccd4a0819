/**
 * notifier's stack: the one table, the ingest / dispatch / sweeper functions with their triggers, delivery feedback,
 * the evidence store, least-privilege IAM, the CloudWatch alarms and dashboard an operator needs, and the outputs the
 * README's Operations section names. It composes one part per function (lib/ingest.ts, lib/dispatch.ts,
 * lib/sweeper.ts, lib/delivery-feedback.ts, lib/smoke-producer.ts), the evidence store and the alarms by group
 * (lib/observability.ts). One stack per stage: its name and every fixed physical name carry the stage.
 */
import { Annotations, CfnOutput, Duration, Stack, type StackProps } from 'aws-cdk-lib';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { type ITable, Table, TableV2 } from 'aws-cdk-lib/aws-dynamodb';
import type { IRole, Role } from 'aws-cdk-lib/aws-iam';
import { type IKey, Key } from 'aws-cdk-lib/aws-kms';
import { CfnEventSourceMapping } from 'aws-cdk-lib/aws-lambda';
import type { Construct } from 'constructs';
import { assertDispatchTiming, DISPATCH_TIMING } from '../functions/contracts/dispatch-timing.ts';
import type { FeedbackEnvironment } from '../functions/contracts/environment.ts';
import { metricNamespaceOf } from '../functions/contracts/telemetry.ts';
import { formatApprovalKinds } from '../functions/domain/approval.ts';
import { fenceShardCount } from '../functions/domain/fence.ts';
import { sweepShardsFor } from '../functions/domain/sweep-index.ts';
import { TableBackup } from './backup.ts';
import { SupportConsole } from './console.ts';
import { DeliveryFeedback } from './delivery-feedback.ts';
import { createDispatch, type Dispatch } from './dispatch.ts';
import { alarmOnUrgentTrigger } from './dispatch-triggers.ts';
import { createEvidenceIndex } from './evidence-index-table.ts';
import { createEvidenceSpool, grantSpoolPuts } from './evidence-spool-table.ts';
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
import { watchInvokes } from './protection-watch-invokes.ts';
import {
  alarmOnRegions,
  createFence,
  fenceFunctions,
  fenceTableName,
  fixRoleNames,
  type RegionRole,
  regionalTable,
} from './regional.ts';
import { operateRegion } from './regional-operator.ts';
import { kafkaResourceArns, type Settings, stackNameOf } from './settings.ts';
import { SmokeProducer } from './smoke-producer.ts';
import { SnsDeliveryStatus } from './sns-delivery-status.ts';
import { OPTIONAL_STACK_OUTPUTS, REGION_STACK_OUTPUTS, type RegionStackOutputName } from './stack-outputs.ts';
import { createSweeper } from './sweeper.ts';
import { createTable, guardTableWrites, tableWriters } from './table.ts';
import { useTracing } from './tracing.ts';

export interface NotifierStackProps extends StackProps {
  readonly settings: Settings;
  /** A stage in two regions: which side this stack is (lib/regional.ts); absent in one region. */
  readonly region?: RegionRole;
}

export { KAFKA_MAPPING_LOGICAL_ID };

/** CDK's feature flag (aws-cdk-lib cx-api DYNAMODB_TABLEV2_RESOURCE_POLICY_PER_REPLICA). */
const RESOURCE_POLICY_PER_REPLICA = '@aws-cdk/aws-dynamodb:resourcePolicyPerReplica';

export class NotifierStack extends Stack {
  readonly table: ITable;
  /** The evidence break-glass role: it may also write the table's items (the table's guard). */
  readonly breakGlassRole: Role;
  /** The operator function's role: in a stage in two regions, each region's reaches the other's replica. */
  readonly operatorRole: IRole;
  private readonly zones: readonly string[] | undefined;

  constructor(scope: Construct, id: string, props: NotifierStackProps) {
    super(scope, id, props);
    pinPolicyPerReplica(this, props.region);
    const s = props.settings;
    // Before any function: each is created traced or not (settings `tracing`, lib/tracing.ts).
    useTracing(this, s.tracing);
    this.zones = s.vpc?.availabilityZones;
    const prefix = props.stackName ?? stackNameOf(s.stage);
    // Timeouts, batch size, concurrency, send timeout and lease come from one place and are checked against each
    // other here, at synth: a broken rule fails the synth with its name.
    const timing = assertDispatchTiming(DISPATCH_TIMING);
    // The one customer key, when given, protects the table (and its stream), the on-failure queues and the
    // failed-batch bucket; each function is granted it through useTable.
    const key = s.kmsKeyArn === undefined ? undefined : Key.fromKeyArn(this, 'DataKey', s.kmsKeyArn);
    this.table = stageTable(this, key, props.region);
    const evidence = evidenceStoreOf(this, prefix, s);
    const parts: FunctionPartProps = {
      stack: this,
      settings: s,
      prefix,
      metricNamespace: metricNamespaceOf(s.stage),
      timing,
      table: this.table,
      evidenceIndexTable: createEvidenceIndex(this, key, evidence),
      evidenceSpoolTable: createEvidenceSpool(this, key, evidence),
      key,
      evidence,
      placementEnv: placementEnvironment(s, timing),
      sendingEnv: sendingEnvironment(s, timing),
      ...(props.region === undefined ? {} : { owner: props.region.region }),
    };
    guardItemWrites(this.table, evidence.breakGlassRole);
    this.breakGlassRole = evidence.breakGlassRole;
    const ingest = createIngest(parts);
    const dispatch = createDispatch(parts);
    const sweeper = createSweeper(parts);
    // Every operator action on this stage, behind IAM (lib/operator-api.ts).
    const operator = createOperatorApi(parts, ingest.fn, ingest.source.failedBatches, props.region?.settings);
    this.operatorRole = operator.fn.role as IRole;
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
    const supportConsole = this.supportConsole(parts, observability);
    const watch = this.watchAll(parts, observability, {
      ingest: ingest.fn,
      operator: operator.fn,
      others: [dispatch.fn, sweeper, feedback.function],
      smoke,
      supportConsole,
    });
    this.snsDeliveryStatus(parts, feedback, observability);
    if (s.pushPlatformApplicationArns === undefined) warnWithoutPushApplications(this);
    this.placeInNetwork(parts, [ingest.fn, dispatch.fn, sweeper, feedback.function]);
    if (props.region !== undefined)
      this.fenceRegion(parts, props.region, observability, [ingest.fn, dispatch.fn, sweeper, operator.fn]);
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

  /**
   * Every function watched for changes, the operator's too: it seals audit records and invokes ingest, and the invoke
   * rules trust it as a caller. Direct invokes of ingest, the operator and the console's API are reported.
   */
  private watchAll(
    p: FunctionPartProps,
    observability: Observability,
    fns: {
      readonly ingest: NotifierFunction;
      readonly operator: NotifierFunction;
      readonly others: readonly NotifierFunction[];
      readonly smoke: NotifierFunction | undefined;
      readonly supportConsole: ReturnType<NotifierStack['supportConsole']>;
    },
  ) {
    const functions = [fns.ingest, ...fns.others, fns.operator, ...(fns.smoke === undefined ? [] : [fns.smoke])];
    if (fns.supportConsole !== undefined)
      functions.push(fns.supportConsole.apiFunction, fns.supportConsole.pageFunction);
    const watch = this.protect(p, observability, functions, [fns.operator]);
    watchInvokes(watch, { ingest: fns.ingest, operator: fns.operator, consoleApi: fns.supportConsole?.apiFunction });
    return watch;
  }

  /** A stage in two regions: this region's fence, the functions fenced, its alarms (lib/regional.ts). */
  private fenceRegion(
    p: FunctionPartProps,
    role: RegionRole,
    observability: Observability,
    [ingest, dispatch, sweeper, operator]: readonly NotifierFunction[],
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
    // The region commands, run by this region's operator function (lib/regional-operator.ts).
    operateRegion(this, p.table, fence, role, {
      operator: operator as NotifierFunction,
      ingest: ingest as NotifierFunction,
      dispatch: dispatch as NotifierFunction,
      ingestMapping,
      placementEnv: p.placementEnv,
    });
    alarmOnRegions(observability, p.metricNamespace, p.table, role);
    const output = (id: RegionStackOutputName, value: string) =>
      new CfnOutput(this, id, { value, description: REGION_STACK_OUTPUTS[id] });
    output('RegionName', role.region);
    output('RegionKind', role.kind);
    output('FenceTableName', fence.tableName);
    output('FenceShards', String(fenceShardCount(role.peakNotificationsPerSecond)));
    output('SweepShards', String(sweepShardsFor(p.settings.peakNotificationsPerSecond)));
    output('PeerRegionName', role.otherRegion);
    output('PeerStackName', role.otherPrefix);
    output('PeerFenceTableName', fenceTableName(role.otherPrefix));
    // The primary's stack names the recovery replica's writers in its guard: by fixed role names.
    if (role.kind === 'recovery') fixRoleNames([...tableWriters(this.table), this.breakGlassRole]);
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
    // An invocation's reports are one batch of its own (batches/…), named by an item per send batch
    // (EVIDENCE_REPORTS#…), or under the send itself for a send from before batches (sends/…); the feedback function
    // never writes a customer's pointer. A batch the store refused waits as a gap.
    p.evidence.grantWrite(feedback.function, ['batches', 'sends']);
    feedback.function.useTable(p.table, ['dynamodb:PutItem'], {
      leadingKeys: ['EVIDENCE_GAP#*', 'EVIDENCE_REPORTS#*'],
    });
    // A few reports go to the evidence spool instead of an object of their own.
    grantSpoolPuts(feedback.function, p.evidenceSpoolTable);
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
  private protect(
    p: FunctionPartProps,
    observability: Observability,
    functions: NotifierFunction[],
    apiOnly: NotifierFunction[],
  ): ProtectionWatch {
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
      // The recovery stack watches its replica's policy: its changes are events of its own region.
      table: p.table,
      evidenceIndexTable: p.evidenceIndexTable,
      evidenceSpoolTable: p.evidenceSpoolTable,
      securityEventBusArn: s.securityEventBusArn,
    });
    watchFunctions(watch, {
      functions,
      apiOnly,
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
      evidenceIndexTable: p.evidenceIndexTable,
      evidenceSpoolTable: p.evidenceSpoolTable,
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
      contacts: s.smokeContacts ?? [],
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

/** Without platform applications dispatch may publish to none, and no push delivery outcome is observed. */
function warnWithoutPushApplications(stack: Stack): void {
  Annotations.of(stack).addWarningV2(
    'notifier:pushDeliveryStatus',
    'No pushPlatformApplicationArns: dispatch may publish to no platform endpoint (push is refused), and no push delivery outcome is observed.',
  );
}

/**
 * Item writes: the functions useTable granted them, and break glass (which also runs `smoke --direct`). A stage in two
 * regions: the primary's stack guards its replica here and the recovery replica in guardReplica (lib/regional.ts); the
 * recovery stack only reads its table.
 */
function guardItemWrites(table: NotifierStack['table'], breakGlass: Role): void {
  if (table instanceof Table || table instanceof TableV2) guardTableWrites(table, [breakGlass.roleArn]);
}

/** The stage's table: in one region, or the global table of a stage in two. */
function stageTable(stack: NotifierStack, key: IKey | undefined, region: RegionRole | undefined): ITable {
  return region === undefined ? createTable(stack, key) : regionalTable(stack, key, region);
}

/**
 * Each replica of the global table gets its own resource policy, never a copy of the primary's, which names the
 * primary's roles (the recovery's functions could not write their replica): pinned here, not left to cdk.json. Set
 * before the stack has children: constructs refuses context after.
 */
function pinPolicyPerReplica(stack: NotifierStack, region: RegionRole | undefined): void {
  if (region !== undefined) stack.node.setContext(RESOURCE_POLICY_PER_REPLICA, true);
}

/** Every accepted send and every report on it, kept for years (lib/evidence-store.ts). */
function evidenceStoreOf(stack: Stack, prefix: string, s: NotifierStackProps['settings']): EvidenceStore {
  return new EvidenceStore(stack, 'Evidence', {
    prefix,
    retentionDays: s.evidenceRetentionDays,
    lockMode: s.evidenceLockMode,
    replication: s.evidenceReplication,
    assumers: { readers: s.evidenceReaders, breakGlass: s.breakGlassPrincipals },
  });
}

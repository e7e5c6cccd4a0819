/**
 * A stage in two regions (docs/regions.md "The stack for two regions"): the table as a DynamoDB global table (MREC)
 * owned by the primary's stack with its replica in the recovery region; in each region a small fence table of its own,
 * never replicated, with its first state; the functions told their fence; the recovery region's intake created
 * disabled; the alarms on replication and on a fenced region trying to send. A stage in one region uses none of this:
 * its template stays as it was.
 */

import { marshall } from '@aws-sdk/util-dynamodb';
import { ArnFormat, Duration, RemovalPolicy, Stack, Token } from 'aws-cdk-lib';
import { Metric, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import {
  AttributeType,
  Billing,
  BillingMode,
  type ITable,
  StreamViewType,
  Table,
  TableEncryption,
  TableEncryptionV2,
  TableV2,
} from 'aws-cdk-lib/aws-dynamodb';
import { type CfnRole, type IRole, PolicyDocument, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import type { CfnEventSourceMapping } from 'aws-cdk-lib/aws-lambda';
import { FENCE_TABLE_SCHEMA } from '../functions/contracts/fence-schema.ts';
import type { RegionEnvironment } from '../functions/contracts/region-environment.ts';
import { TABLE_SCHEMA } from '../functions/contracts/table-schema.ts';
import { type MetricName, SERVICE_NAME } from '../functions/contracts/telemetry.ts';
import { FENCE_CONTROL_KEY, type FenceControl, fenceShardCount, fenceShardKey } from '../functions/domain/fence.ts';
import { awsCall, sdkCall } from './aws-calls.ts';
import { acknowledgeFenceTable } from './nag-acknowledgements.ts';
import type { NotifierFunction } from './notifier-function.ts';
import type { Observability } from './observability.ts';
import type { RegionsSettings } from './regions-settings.ts';
import { SUSTAINED } from './stage-metrics.ts';
import { replicationRoleArn, tableGuard, tableIndexes, tableWriters } from './table.ts';

/** Which side of a stage in two regions a stack is. */
export interface RegionRole {
  readonly kind: 'primary' | 'recovery';
  readonly region: string;
  readonly otherRegion: string;
  /** The other region's stack name (its fence table's prefix). */
  readonly otherPrefix: string;
  /** The primary's stack name: the global table's name derives from it, in both regions. */
  readonly primaryPrefix: string;
  readonly settings: RegionsSettings;
  readonly peakNotificationsPerSecond: number;
  /** The other region's customer key (settings `kmsKeyArn` of that region), when the stage gives one. */
  readonly otherKeyArn?: string | undefined;
}

/** The global table's physical name: fixed, so the recovery region's stack finds its replica without a lookup. */
export const globalTableName = (primaryPrefix: string) => `${primaryPrefix}-notifications`;
export const fenceTableName = (prefix: string) => `${prefix}-fence`;

/**
 * The table of a stage in two regions. The primary's stack owns the global table and its replica (AWS: define every
 * replica in one region's stack, https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/globaltables-bestpractices.html);
 * a construct id of its own (`GlobalTable`), so its logical id never meets the one-region table's `AWS::DynamoDB::Table`
 * (changing a resource's type in place may delete the table: docs/deploy.md "From one region to two"). The recovery
 * region's stack reads its replica: the name is fixed, the stream's ARN is asked of DynamoDB at deploy.
 */
export function regionalTable(stack: Stack, key: IKey | undefined, role: RegionRole): ITable {
  const tableName = globalTableName(role.primaryPrefix);
  if (role.kind === 'primary') {
    const recoveryKey = role.settings.recovery.kmsKeyArn;
    return new TableV2(stack, 'GlobalTable', {
      tableName,
      partitionKey: { name: TABLE_SCHEMA.partitionKey, type: AttributeType.STRING },
      sortKey: { name: TABLE_SCHEMA.sortKey, type: AttributeType.STRING },
      billing: Billing.onDemand(),
      dynamoStream: StreamViewType.NEW_AND_OLD_IMAGES,
      timeToLiveAttribute: TABLE_SCHEMA.timeToLiveAttribute,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      deletionProtection: true,
      removalPolicy: RemovalPolicy.RETAIN,
      globalSecondaryIndexes: tableIndexes(),
      // The guard is given per replica (ReplicaTableProps.resourcePolicy; the feature flag
      // @aws-cdk/aws-dynamodb:resourcePolicyPerReplica keeps the primary's from being copied to it): the recovery
      // replica's names the recovery stack's roles, added by guardReplica once that stack is built.
      replicas: [
        {
          region: role.otherRegion,
          deletionProtection: true,
          ...(role.settings.replicaGuard ? { resourcePolicy: replicaPolicyOf(stack) } : {}),
        },
      ],
      ...(key === undefined || recoveryKey === undefined
        ? {}
        : { encryption: TableEncryptionV2.customerManagedKey(key, { [role.otherRegion]: recoveryKey }) }),
    });
  }
  const arn = stack.formatArn({ service: 'dynamodb', resource: 'table', resourceName: tableName });
  const described = awsCall(
    stack,
    'ReplicaStream',
    sdkCall('DynamoDB', 'describeTable', { TableName: tableName }, `${tableName}-stream`, {
      outputPaths: ['Table.LatestStreamArn'],
    }),
    [new PolicyStatement({ actions: ['dynamodb:DescribeTable'], resources: [arn] })],
  );
  return Table.fromTableAttributes(stack, 'Table', {
    tableName,
    tableStreamArn: described.getResponseField('Table.LatestStreamArn'),
    ...(key === undefined ? {} : { encryptionKey: key }),
    grantIndexPermissions: true,
  });
}

const replicaPolicies = new WeakMap<Stack, PolicyDocument>();
const replicaPolicyOf = (stack: Stack) => {
  const policy = replicaPolicies.get(stack) ?? new PolicyDocument();
  replicaPolicies.set(stack, policy);
  return policy;
};

/**
 * A recovery stack's roles by fixed names, `<stack>-<logical id>` (cut to IAM's 64 characters, keeping the logical
 * id's hash): the primary's stack, which owns the replica and its policy, must name them, and a reference across
 * regions is not a CloudFormation export. A fixed name, not a pattern such as `notifier-<stage>-recovery-*`, because
 * anyone allowed iam:CreateRole could create a role matching a pattern and write items. The name is as stable as the
 * logical id (a change to either replaces the role), and starts with the stack's name like every other notifier role.
 */
export function fixRoleNames(roles: readonly IRole[]): void {
  for (const role of roles) {
    const cfn = role.node.defaultChild as CfnRole | undefined;
    // Without a name given, CDK's L1 holds a token CloudFormation fills with a generated name.
    if (cfn !== undefined && (cfn.roleName === undefined || Token.isUnresolved(cfn.roleName))) {
      const stack = Stack.of(role);
      const id = stack.getLogicalId(cfn);
      const room = IAM_ROLE_NAME_MAX - stack.stackName.length - 1;
      cfn.roleName = `${stack.stackName}-${id.length <= room ? id : `${id.slice(0, room - 8)}${id.slice(-8)}`}`;
    }
  }
}
const IAM_ROLE_NAME_MAX = 64;

/** The recovery stack's side of the replica's guard: its table (whose writers it granted) and its break glass. */
export interface ReplicaWriters {
  readonly table: ITable;
  readonly breakGlass: IRole;
  /** The primary's roles that write the recovery replica too (its operator: reconcile after a failback). */
  readonly fromPrimary?: readonly IRole[];
}

/**
 * The recovery replica's guard, as the primary's table has it (lib/table.ts guardTableWrites): item writes by the
 * recovery stack's writers, DynamoDB's replication role and break glass (either region's); its policy changed only by
 * break glass or the primary's deploy (whose CloudFormation puts it). Settings `replicaGuard: false` leave it off for
 * the one deploy that creates the replica (AWS: a replica and its policy cannot be created in one stack update).
 */
export function guardReplica(primary: Stack, primaryBreakGlass: IRole, recovery: ReplicaWriters): void {
  const policy = replicaPolicies.get(primary);
  if (policy === undefined) return;
  const arnOf = (role: IRole) => {
    const name = (role.node.defaultChild as CfnRole | undefined)?.roleName;
    if (name === undefined || Token.isUnresolved(name))
      throw new Error(`${role.node.path}: a recovery role the replica's guard names needs a fixed name`);
    return primary.formatArn({ service: 'iam', region: '', resource: 'role', resourceName: name });
  };
  const writers = () => [
    ...tableWriters(recovery.table).map(arnOf),
    ...(recovery.fromPrimary ?? []).map((r) => r.roleArn),
    replicationRoleArn(primary),
  ];
  policy.addStatements(...tableGuard(primary, writers, [primaryBreakGlass.roleArn, arnOf(recovery.breakGlass)]));
}

/** This region's fence table and its first state (primary ACTIVE at epoch 1, recovery FENCED at 0), if absent. */
export function createFence(stack: Stack, prefix: string, key: IKey | undefined, role: RegionRole): Table {
  const table = new Table(stack, 'FenceTable', {
    tableName: fenceTableName(prefix),
    partitionKey: { name: FENCE_TABLE_SCHEMA.partitionKey, type: AttributeType.STRING },
    billingMode: BillingMode.PAY_PER_REQUEST,
    pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
    deletionProtection: true,
    removalPolicy: RemovalPolicy.RETAIN,
    ...(key === undefined ? {} : { encryption: TableEncryption.CUSTOMER_MANAGED, encryptionKey: key }),
  });
  const active = role.kind === 'primary';
  const control: FenceControl & { pk: string } = {
    pk: FENCE_CONTROL_KEY,
    region: role.region,
    state: active ? 'ACTIVE' : 'FENCED',
    epoch: active ? 1 : 0,
    since: 0,
    by: 'stack',
    reason: 'initial',
    mode: 'INITIAL',
  };
  const shards = Array.from({ length: fenceShardCount(role.peakNotificationsPerSecond) }, (_, n) => ({
    pk: fenceShardKey(n),
    state: control.state,
    epoch: control.epoch,
  }));
  // Every item conditional on its absence, in one transaction: a redeploy, or a stack re-created over a retained
  // table, never moves a live fence (the cancelled transaction is the expected answer then).
  const put = (item: object) => ({
    Put: { TableName: table.tableName, Item: marshall(item), ConditionExpression: 'attribute_not_exists(pk)' },
  });
  const initial = awsCall(
    stack,
    'FenceInitialState',
    sdkCall(
      'DynamoDB',
      'transactWriteItems',
      { TransactItems: [control, ...shards].map(put) },
      `${prefix}-fence-initial`,
      {
        ignoreErrorCodesMatching: 'TransactionCanceledException',
      },
    ),
    [new PolicyStatement({ actions: ['dynamodb:PutItem'], resources: [table.tableArn] })],
  );
  initial.node.addDependency(table);
  // Under a customer key the write goes through it: what a function writing a table gets (lib/notifier-function.ts
  // useTable), no ReEncrypt or wildcard GenerateDataKey* (cdk-nag AwsSolutions-IAM5).
  if (key !== undefined) {
    initial.grantPrincipal.addToPrincipalPolicy(
      new PolicyStatement({ actions: ['kms:Decrypt', 'kms:GenerateDataKey'], resources: [key.keyArn] }),
    );
  }
  acknowledgeFenceTable(table, key !== undefined);
  return table;
}

export interface RegionalFunctions {
  readonly ingest: NotifierFunction;
  readonly dispatch: NotifierFunction;
  readonly sweeper: NotifierFunction;
  readonly ingestMapping: CfnEventSourceMapping;
}

/**
 * The ingest mapping's ARN as IAM names it, `arn:<partition>:lambda:<region>:<account>:event-source-mapping:<UUID>`
 * (a colon before the UUID: https://docs.aws.amazon.com/service-authorization/latest/reference/list_awslambda.html),
 * so a role may switch that mapping and no other.
 */
export const ingestMappingArn = (stack: Stack, mapping: CfnEventSourceMapping) =>
  stack.formatArn({
    service: 'lambda',
    resource: 'event-source-mapping',
    resourceName: mapping.ref,
    arnFormat: ArnFormat.COLON_RESOURCE_NAME,
  });

/** Tells each function its fence (FENCE_TABLE_NAME) and grants exactly what the fence, the keeper and ingest need. */
export function fenceFunctions(stack: Stack, table: ITable, fence: Table, role: RegionRole, f: RegionalFunctions) {
  const shards = fenceShardCount(role.peakNotificationsPerSecond);
  const base: RegionEnvironment = {
    FENCE_TABLE_NAME: fence.tableName,
    FENCE_SHARDS: String(shards),
    FAILOVER_CLOCK_SKEW_SECONDS: String(role.settings.failoverClockSkewSeconds),
  };
  for (const fn of [f.ingest, f.dispatch, f.sweeper]) {
    for (const [k, v] of Object.entries(base)) fn.addEnvironment(k, v);
    // The claim's CONTROL and the send's shard: consistent reads of this region's fence only.
    fn.useTable(fence, ['dynamodb:GetItem']);
  }
  // Ingest: an event's inbox items of every epoch (INBOX, INBOX#E<n>), one consistent Query on its partition.
  f.ingest.useTable(table, ['dynamodb:GetItem', 'dynamodb:Query']);
  lookUpInOtherRegion(stack, role, f.ingest);
  // The keeper: the other region's CONTROL, read there; its own fence written FENCED; its intake disabled; its beat.
  const otherFence = fenceTableName(role.otherPrefix);
  f.sweeper.addEnvironment('OTHER_REGION', role.otherRegion);
  f.sweeper.addEnvironment('OTHER_FENCE_TABLE_NAME', otherFence);
  f.sweeper.addEnvironment('INGEST_MAPPING_ID', f.ingestMapping.ref);
  f.sweeper.useTable(fence, ['dynamodb:PutItem']);
  f.sweeper.addToRolePolicy(
    new PolicyStatement({
      actions: ['dynamodb:GetItem'],
      resources: [
        stack.formatArn({ service: 'dynamodb', region: role.otherRegion, resource: 'table', resourceName: otherFence }),
      ],
    }),
  );
  f.sweeper.addToRolePolicy(
    new PolicyStatement({
      actions: ['lambda:UpdateEventSourceMapping'],
      resources: [ingestMappingArn(stack, f.ingestMapping)],
    }),
  );
  f.sweeper.useTable(table, ['dynamodb:PutItem'], { leadingKeys: ['HEARTBEAT#*'] });
  // Only the active region takes events (settings `regions.active`): the other's mapping is created disabled until a
  // promotion enables it. The group id is the same in both, so the recovery region resumes from the offsets MSK
  // Replicator translated (docs/regions.md "Events read again").
  if (role.region !== role.settings.regions.active) f.ingestMapping.enabled = false;
}

/**
 * Ingest's look-up in the other region once its old region is reconciled (functions/ingest/peer-lookup.ts): the same
 * Query on the other replica of the global table (same name there) and a consistent read of that region's CONTROL —
 * reads of those two tables only, never a write, nothing else there. The replica's guard denies item writes and policy
 * changes only (lib/table.ts tableGuard), so it lets this read through. Under a customer key the other replica is
 * read through that region's key: Decrypt only.
 */
function lookUpInOtherRegion(stack: Stack, role: RegionRole, ingest: NotifierFunction): void {
  const there = (resourceName: string) =>
    stack.formatArn({ service: 'dynamodb', region: role.otherRegion, resource: 'table', resourceName });
  const table = globalTableName(role.primaryPrefix);
  const fence = fenceTableName(role.otherPrefix);
  ingest.addEnvironment('OTHER_REGION', role.otherRegion);
  ingest.addEnvironment('OTHER_FENCE_TABLE_NAME', fence);
  ingest.addEnvironment('OTHER_TABLE_NAME', table);
  ingest.addToRolePolicy(new PolicyStatement({ actions: ['dynamodb:Query'], resources: [there(table)] }));
  ingest.addToRolePolicy(new PolicyStatement({ actions: ['dynamodb:GetItem'], resources: [there(fence)] }));
  if (role.otherKeyArn !== undefined) {
    ingest.addToRolePolicy(new PolicyStatement({ actions: ['kms:Decrypt'], resources: [role.otherKeyArn] }));
  }
}

/**
 * The alarms of a stage in two regions: replication behind (AWS/DynamoDB ReplicationLatency, per receiving region), a
 * fenced region trying to send (FencedSendAttempts, the fenced sender's count), the keeper fencing this region
 * (SelfDemoted) or seeing both active (RegionsBothActive), the other region's heartbeat stale here (PeerHeartbeatStale).
 * Runbook: docs/operations.md "Two regions".
 */
export function alarmOnRegions(observability: Observability, metricNamespace: string, table: ITable, role: RegionRole) {
  // As the functions publish them (Powertools' service dimension): an alarm without it would watch a metric nobody
  // writes, and never fire.
  const ours = (metricName: MetricName) =>
    new Metric({
      namespace: metricNamespace,
      metricName,
      dimensionsMap: { service: SERVICE_NAME },
      statistic: 'Sum',
      period: Duration.minutes(1),
    });
  observability.alarm(
    'FencedSendAttempts',
    ours('FencedSendAttempts'),
    `A send in ${role.region} was stopped by the fence: this region is not active, yet a notice reached its dispatch. Nothing was sent (docs/operations.md "Two regions").`,
  );
  observability.alarm(
    'SelfDemoted',
    ours('SelfDemoted'),
    `${role.region} saw ${role.otherRegion} active at a higher epoch and fenced itself: sends and intake stopped here (docs/operations.md "Two regions").`,
  );
  observability.alarm(
    'RegionsBothActive',
    ours('RegionsBothActive'),
    `Both regions say ACTIVE and ${role.region} has the higher epoch: the other fences itself when it can see this one (docs/operations.md "Two regions").`,
  );
  observability.alarm(
    'PeerLookupsUnanswered',
    ours('PeerLookupsUnanswered'),
    `Ingest in ${role.region} could not ask ${role.otherRegion} whether it took an event read again: the event is held, not sent, and waits for ops reconcile or ops held (docs/regions.md "Runbook").`,
  );
  // The failover runbook's first signal, in the region that would take over: published every minute by its keeper, 1
  // when the other region's heartbeat is stale. Missing minutes breach: a keeper that does not run cannot see either.
  observability.alarm(
    'PeerHeartbeatStale',
    ours('PeerHeartbeatStale').with({ statistic: 'Maximum' }),
    `${role.otherRegion}'s last heartbeat in ${role.region}'s replica is older than 90 s in 3 of 5 minutes (or ${role.region}'s keeper has not run): ${role.otherRegion} is down or its replication is — the runbook: confirm, decide (docs/regions.md "Runbook").`,
    1,
    { datapoints: 3, periods: 5, missing: TreatMissingData.BREACHING },
  );
  // Published in the region that sends the writes, per receiving region: 60 s sustained is the design's threshold.
  observability.alarm(
    'ReplicationLatency',
    new Metric({
      namespace: 'AWS/DynamoDB',
      metricName: 'ReplicationLatency',
      dimensionsMap: { TableName: table.tableName, ReceivingRegion: role.otherRegion },
      statistic: 'Maximum',
      period: Duration.minutes(1),
    }),
    `Writes in ${role.region} reach ${role.otherRegion} more than 60 s late: a failover now would hold more notices (docs/operations.md "Two regions").`,
    60_000,
    SUSTAINED,
  );
}

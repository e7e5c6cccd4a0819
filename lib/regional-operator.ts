/**
 * The operator function of a stage in two regions runs the region commands for its own region (docs/regions.md
 * "Runbook"; functions/operator-api/region-commands.ts): told its fence and the other region's, its ingest mapping,
 * the placement and timeouts the commands use; allowed exactly what they do — its own fence read and written, the other
 * region's fence read, the successors' sweep index queried, its own ingest mapping switched, and (reconcile) the other
 * region's replica read and its records settled there.
 */
import { type Stack, Token } from 'aws-cdk-lib';
import type { ITable, Table } from 'aws-cdk-lib/aws-dynamodb';
import { type CfnRole, type IRole, PolicyStatement, Role } from 'aws-cdk-lib/aws-iam';
import type { CfnEventSourceMapping } from 'aws-cdk-lib/aws-lambda';
import type { PlacementEnvironment } from '../functions/contracts/environment.ts';
import type { RegionOperatorEnvironment } from '../functions/contracts/region-operator-environment.ts';
import { PEER_SETTLE_ATTRIBUTES, TABLE_SCHEMA } from '../functions/contracts/table-schema.ts';
import { fenceShardCount } from '../functions/domain/fence.ts';
import { eventPk } from '../functions/domain/keys.ts';
import type { NotifierFunction } from './notifier-function.ts';
import { fenceTableName, globalTableName, ingestMappingArn, type RegionRole } from './regional.ts';
import { recordTableWriter } from './table.ts';

export interface RegionOperatorParts {
  readonly operator: NotifierFunction;
  readonly ingest: NotifierFunction;
  readonly dispatch: NotifierFunction;
  readonly ingestMapping: CfnEventSourceMapping;
  readonly placementEnv: PlacementEnvironment;
}

const seconds = (fn: NotifierFunction) => String(fn.timeout?.toSeconds() ?? 30);

/** This region's operator function: the region commands' environment and permissions, for this region only. */
export function operateRegion(stack: Stack, table: ITable, fence: Table, role: RegionRole, p: RegionOperatorParts) {
  const otherFence = fenceTableName(role.otherPrefix);
  const environment: RegionOperatorEnvironment = {
    FENCE_TABLE_NAME: fence.tableName,
    FENCE_SHARDS: String(fenceShardCount(role.peakNotificationsPerSecond)),
    FAILOVER_CLOCK_SKEW_SECONDS: String(role.settings.failoverClockSkewSeconds),
    OTHER_REGION: role.otherRegion,
    OTHER_FENCE_TABLE_NAME: otherFence,
    INGEST_MAPPING_ID: p.ingestMapping.ref,
    ...p.placementEnv,
    INGEST_TIMEOUT_SECONDS: seconds(p.ingest),
    DISPATCH_TIMEOUT_SECONDS: seconds(p.dispatch),
    FAILOVER_SECOND_COPY: role.settings.failoverSecondCopy.join(','),
    FAILOVER_LOOKUP_MINUTES: String(role.settings.failoverLookupMinutes),
  };
  for (const [k, v] of Object.entries(environment)) if (v !== undefined) p.operator.addEnvironment(k, v);
  // Its own fence: read, promoted (ACTIVE), demoted (FENCED), and what a demotion or reconciliation notes on it.
  p.operator.useTable(fence, ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem']);
  // The other region's fence: read only (the preview shows it; reconcile checks the old region is demoted there).
  p.operator.addToRolePolicy(
    new PolicyStatement({
      actions: ['dynamodb:GetItem'],
      resources: [
        stack.formatArn({ service: 'dynamodb', region: role.otherRegion, resource: 'table', resourceName: otherFence }),
      ],
    }),
  );
  // What is unfinished, and the successors waiting: the sweep index (the items themselves it reads and writes already).
  p.operator.useTable(table, ['dynamodb:Query'], { index: TABLE_SCHEMA.sweepIndex.indexName });
  // Promote enables this region's ingest mapping, demote disables it: that mapping only.
  p.operator.addToRolePolicy(
    new PolicyStatement({
      actions: ['lambda:UpdateEventSourceMapping'],
      resources: [ingestMappingArn(stack, p.ingestMapping)],
    }),
  );
}

/** One region's stack as the other's operator reaches it. */
export interface OperatorSide {
  readonly stack: Stack;
  readonly region: string;
  readonly operatorRole: IRole;
  readonly kmsKeyArn?: string | undefined;
}

/**
 * Reconcile runs in the active region and settles the old region's records in the old region's replica (a write
 * made there, so its condition is judged where the record lives: docs/regions.md "ops demote and ops reconcile"):
 * each operator may read, and conditionally write, the other region's replica — and each replica's guard lets it.
 * The recovery operator's role has a fixed name (lib/regional.ts fixRoleNames), so the primary's guard names it.
 */
export function operatorsReachEachOther(primaryPrefix: string, primary: OperatorSide, recovery: OperatorSide): void {
  const tableName = globalTableName(primaryPrefix);
  for (const [own, peer] of [
    [primary, recovery],
    [recovery, primary],
  ] as const) {
    const replica = own.stack.formatArn({
      service: 'dynamodb',
      region: peer.region,
      resource: 'table',
      resourceName: tableName,
    });
    own.operatorRole.addToPrincipalPolicy(
      new PolicyStatement({ actions: ['dynamodb:GetItem', 'dynamodb:Query'], resources: [replica] }),
    );
    // Writes there: reconcile's conditional moves of notification items, nothing else. Never a put (a successor is
    // created in its own region), only event partitions, only the attributes a move touches, and an answer that
    // returns no other attribute (ALL_OLD / ALL_NEW would): IAM's attribute-level control for UpdateItem.
    own.operatorRole.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ['dynamodb:UpdateItem'],
        resources: [replica],
        conditions: {
          'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [eventPk('*')] },
          'ForAllValues:StringEquals': { 'dynamodb:Attributes': [...PEER_SETTLE_ATTRIBUTES] },
          StringEqualsIfExists: { 'dynamodb:ReturnValues': ['NONE', 'UPDATED_OLD', 'UPDATED_NEW'] },
        },
      }),
    );
    own.operatorRole.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ['dynamodb:Query'],
        resources: [`${replica}/index/${TABLE_SCHEMA.sweepIndex.indexName}`],
      }),
    );
    if (peer.kmsKeyArn !== undefined) {
      own.operatorRole.addToPrincipalPolicy(
        new PolicyStatement({ actions: ['kms:Decrypt', 'kms:GenerateDataKey'], resources: [peer.kmsKeyArn] }),
      );
    }
  }
}

/** The recovery operator's role, by its fixed name, as the primary's stack names it in its table's guard. */
export function recoveryOperatorWrites(primary: Stack, primaryTable: ITable, recoveryOperator: IRole): void {
  const name = (recoveryOperator.node.defaultChild as CfnRole | undefined)?.roleName;
  if (name === undefined || Token.isUnresolved(name)) {
    throw new Error(`${recoveryOperator.node.path}: the recovery operator's role needs a fixed name`);
  }
  recordTableWriter(primaryTable, Role.fromRoleName(primary, 'RecoveryOperatorRole', name));
}

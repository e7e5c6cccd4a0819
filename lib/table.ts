/**
 * The one table (functions/contracts/table-schema.ts is its one definition; the local run builds it from there too):
 * on demand, its stream the dispatch triggers read, TTL, point-in-time recovery, deletion protection, retained — and a
 * resource policy that lets nobody but the stack's functions (and break glass) write an item.
 */
import { Lazy, RemovalPolicy, Stack } from 'aws-cdk-lib';
import {
  AttributeType,
  BillingMode,
  type GlobalSecondaryIndexProps,
  type GlobalSecondaryIndexPropsV2,
  ProjectionType,
  StreamViewType,
  Table,
  TableEncryption,
  TableV2,
} from 'aws-cdk-lib/aws-dynamodb';
import { AnyPrincipal, Effect, type IRole, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import { TABLE_SCHEMA } from '../functions/contracts/table-schema.ts';
import { deployRoleArn, onlyBreakGlassOrDeployChangesThePolicy } from './evidence-key.ts';

/**
 * What a table of the stack that holds customers' records keeps (the main table, the evidence index's): keys `pk`/`sk`,
 * on demand, TTL, point-in-time recovery, deletion protection, retained when the stack goes, the bank's key if given.
 */
export function keptTableProps(
  key: IKey | undefined,
  schema: { partitionKey: string; sortKey: string; timeToLiveAttribute: string },
) {
  return {
    partitionKey: { name: schema.partitionKey, type: AttributeType.STRING },
    sortKey: { name: schema.sortKey, type: AttributeType.STRING },
    billingMode: BillingMode.PAY_PER_REQUEST,
    timeToLiveAttribute: schema.timeToLiveAttribute,
    pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
    deletionProtection: true,
    removalPolicy: RemovalPolicy.RETAIN,
    ...(key === undefined ? {} : { encryption: TableEncryption.CUSTOMER_MANAGED, encryptionKey: key }),
  };
}

export function createTable(stack: Stack, key: IKey | undefined): Table {
  const table = new Table(stack, 'Table', {
    ...keptTableProps(key, TABLE_SCHEMA),
    stream: StreamViewType.NEW_AND_OLD_IMAGES,
  });
  for (const index of tableIndexes()) table.addGlobalSecondaryIndex(index);
  return table;
}

/** Every DynamoDB action that writes an item (PartiQL's included). */
export const ITEM_WRITE_ACTIONS = [
  'dynamodb:PutItem',
  'dynamodb:UpdateItem',
  'dynamodb:DeleteItem',
  'dynamodb:BatchWriteItem',
  'dynamodb:TransactWriteItems',
  'dynamodb:PartiQLInsert',
  'dynamodb:PartiQLUpdate',
  'dynamodb:PartiQLDelete',
] as const;

/** The calls that change or remove the table's resource policy (the guard below). */
export const TABLE_POLICY_ACTIONS = ['dynamodb:PutResourcePolicy', 'dynamodb:DeleteResourcePolicy'] as const;

const writersOf = new WeakMap<object, Set<IRole>>();

/** A role the stack granted an item write on the table (lib/notifier-function.ts useTable): one the guard lets write. */
export function recordTableWriter(table: object, role: IRole): void {
  const writers = writersOf.get(table) ?? new Set<IRole>();
  writers.add(role);
  writersOf.set(table, writers);
}

/** The roles the stack granted an item write on this table, in the order they were granted. */
export const tableWriters = (table: object): readonly IRole[] => [...(writersOf.get(table) ?? [])];

/**
 * The role DynamoDB replicates a global table's writes with, in every region (AWS: denying it an action of its policy
 * stops replication, and a replica left so for 20 hours becomes a table of its own:
 * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/globaltables-security.html).
 */
export const replicationRoleArn = (stack: Stack) =>
  stack.formatArn({
    service: 'iam',
    region: '',
    resource: 'role',
    resourceName: 'aws-service-role/replication.dynamodb.amazonaws.com/AWSServiceRoleForDynamoDBReplication',
  });

/**
 * Nobody writes an item but the functions the stack granted it and break glass, whatever their IAM policy says (an
 * account administrator, a broad deploy role): an item written by hand would be sent by the stream (a notification),
 * resent (a FAILED item turned PENDING) or approved as forged (a proposal). Reads, the stream, TTL deletions,
 * CloudFormation's table updates and restores (point in time or AWS Backup: each restores into a new table) are not
 * item writes of this table, and stay as they are. `*` is this table (its own ARN would be a circular reference).
 * The global table of a stage in two regions carries it too, on each replica (lib/regional.ts guardReplica).
 */
export function guardTableWrites(table: Table | TableV2, breakGlass: readonly string[]): void {
  // A global table's replicas receive each other's writes through DynamoDB's replication role: never denied.
  const replication = table instanceof TableV2 ? [replicationRoleArn(Stack.of(table))] : [];
  const writers = () => [...tableWriters(table).map((r) => r.roleArn), ...replication];
  for (const statement of tableGuard(Stack.of(table), writers, breakGlass)) table.addToResourcePolicy(statement);
}

/**
 * The guard's statements: item writes by `writers` and `breakGlass` only (read when the template is written, after
 * every grant), and the policy itself changed only by break glass or the deploy of `stack`.
 */
export function tableGuard(stack: Stack, writers: () => string[], breakGlass: readonly string[]): PolicyStatement[] {
  // The guard itself (and this statement) changes only by break glass or this stack's deploy, as the evidence key's
  // policy does. Without a known deploy role, CloudFormation would act as whoever deploys: denying them would lock
  // later deploys out of the table's policy, so the guard is then left to the protection watch, which reports every
  // change (the account root may delete a table's policy whatever it says: the watch is needed in any case).
  const deployer = deployRoleArn(stack);
  return [
    ...(deployer === undefined
      ? []
      : [onlyBreakGlassOrDeployChangesThePolicy(TABLE_POLICY_ACTIONS, breakGlass, deployer)]),
    new PolicyStatement({
      sid: 'OnlyTheStacksFunctionsWriteItems',
      effect: Effect.DENY,
      principals: [new AnyPrincipal()],
      actions: [...ITEM_WRITE_ACTIONS],
      resources: ['*'],
      conditions: {
        ArnNotEquals: { 'aws:PrincipalArn': Lazy.list({ produce: () => [...writers(), ...breakGlass] }) },
      },
    }),
  ];
}

/** The table's indexes, one list for the table of a stage in one region and the global table of a stage in two. */
export function tableIndexes(): (GlobalSecondaryIndexProps & GlobalSecondaryIndexPropsV2)[] {
  const schema = TABLE_SCHEMA;
  return [
    {
      indexName: schema.sweepIndex.indexName,
      partitionKey: { name: schema.sweepIndex.partitionKey, type: AttributeType.STRING },
      sortKey: { name: schema.sweepIndex.sortKey, type: AttributeType.NUMBER },
      projectionType: ProjectionType.INCLUDE,
      nonKeyAttributes: [...schema.sweepIndex.nonKeyAttributes],
    },
    // SNS's delivery status names the message, not the notification: the feedback function finds it here.
    {
      indexName: schema.messageIndex.indexName,
      partitionKey: { name: schema.messageIndex.partitionKey, type: AttributeType.STRING },
      projectionType: ProjectionType.KEYS_ONLY,
    },
    // One customer's events without a scan (ops customer / export / erase): a sparse keys-only index on inbox items.
    {
      indexName: schema.userIndex.indexName,
      partitionKey: { name: schema.userIndex.partitionKey, type: AttributeType.STRING },
      sortKey: { name: schema.userIndex.sortKey, type: AttributeType.STRING },
      projectionType: ProjectionType.KEYS_ONLY,
    },
    {
      indexName: schema.incidentIndex.indexName,
      partitionKey: { name: schema.incidentIndex.partitionKey, type: AttributeType.STRING },
      sortKey: { name: schema.incidentIndex.sortKey, type: AttributeType.STRING },
      projectionType: ProjectionType.ALL,
    },
  ];
}

/**
 * Every change to what protects the evidence reaches the operators (the alarm topic), whoever makes it: the deny
 * statements and Object Lock of the evidence store are only as good as the bucket policy, its configuration and the
 * key behind them, and the account's root can change a bucket policy whatever it says. EventBridge rules on the
 * CloudTrail management events of this region (docs/deploy.md: a trail must record management events) match:
 * - the evidence and access-log buckets: policy put or deleted, Object Lock configuration, lifecycle, versioning,
 *   replication, encryption, logging, public access block;
 * - the evidence key, and the keys of the alarm topic and of the logs: deletion scheduled or cancelled, disabled or
 *   enabled, rotation turned off, policy put;
 * - the break-glass role assumed, and the evidence-reader role (through this region's STS endpoint; the global
 *   endpoint logs in us-east-1);
 * - the watch's own route to a person: any protection rule or its targets, the alarm topic and its subscriptions, the
 *   report queue, the region's trails — and a second rule watches the rule that watches those;
 * - the functions that write evidence and send, outside a deploy of this stack (lib/protection-watch-functions.ts);
 * - a direct invoke of the operator, console or ingest function, from the trail's data events
 *   (lib/protection-watch-invokes.ts).
 * Each reaches the topic as one line saying what changed, on what, and who did it, and, with `securityEventBusArn`,
 * the security account's event bus as the CloudTrail event itself: a report the account's own administrators cannot
 * take back. The alarm path's keys (and the backup vault's) and the topic's deletion and policy are, like the
 * evidence protections, the break-glass role's or a deploy's alone.
 */

import { Duration, Stack, Validations } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import {
  type CfnRule,
  EventField,
  type EventPattern,
  type IRuleTarget,
  Rule,
  RuleTargetInput,
} from 'aws-cdk-lib/aws-events';
import { AnyPrincipal, Effect, PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { Key } from 'aws-cdk-lib/aws-kms';
import type { Bucket } from 'aws-cdk-lib/aws-s3';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { deployRoleArn, KEY_DESTRUCTION_ACTIONS } from './evidence-key.ts';
import { logsKeyOf } from './logs-key.ts';
import type { Observability } from './observability.ts';
import type { IAM_EVENT_SOURCE, WATCHED_EVENT_SOURCES } from './watched-event-sources.ts';

/** CloudTrail's event names for the bucket settings the evidence store's protections rest on. */
export const WATCHED_BUCKET_EVENTS = [
  'PutBucketPolicy',
  'DeleteBucketPolicy',
  'PutObjectLockConfiguration',
  'PutBucketLifecycle',
  'DeleteBucketLifecycle',
  'PutBucketVersioning',
  'PutBucketReplication',
  'DeleteBucketReplication',
  'PutBucketEncryption',
  'DeleteBucketEncryption',
  'PutBucketLogging',
  'PutBucketPublicAccessBlock',
  'DeleteBucketPublicAccessBlock',
] as const;
/** CloudTrail's event names for the evidence key's life and policy. */
export const WATCHED_KEY_EVENTS = [
  'ScheduleKeyDeletion',
  'CancelKeyDeletion',
  'DisableKey',
  'EnableKey',
  'DisableKeyRotation',
  'PutKeyPolicy',
] as const;

/** CloudTrail's event names for a change of the table's resource policy: the guard on who writes items. */
export const WATCHED_TABLE_EVENTS = ['PutResourcePolicy', 'DeleteResourcePolicy'] as const;

/** EventBridge's event names for a rule's life: disabled, deleted, re-patterned, its targets removed or replaced. */
export const WATCHED_RULE_EVENTS = ['DisableRule', 'DeleteRule', 'PutRule', 'PutTargets', 'RemoveTargets'] as const;
/** The way a report reaches a person: the alarm topic, its subscriptions, the report queue, the trail itself. */
export const WATCHED_TOPIC_EVENTS = ['DeleteTopic', 'SetTopicAttributes', 'RemovePermission', 'AddPermission'] as const;
export const WATCHED_SUBSCRIPTION_EVENTS = ['Unsubscribe', 'SetSubscriptionAttributes'] as const;
export const WATCHED_QUEUE_EVENTS = ['PurgeQueue', 'DeleteQueue', 'SetQueueAttributes'] as const;
export const WATCHED_TRAIL_EVENTS = [
  'StopLogging',
  'DeleteTrail',
  'UpdateTrail',
  'PutEventSelectors',
  'PutAdvancedEventSelectors',
] as const;
/** What would silence the alarm topic outright: the topic policy refuses it to all but break glass and a deploy. */
const TOPIC_GUARDED_ACTIONS = ['sns:DeleteTopic', 'sns:SetTopicAttributes', 'sns:RemovePermission'];

/**
 * The state of every protection rule. A rule that is merely ENABLED receives no read-only management event, and
 * CloudTrail records sts:AssumeRole as read-only: the break-glass rule would never fire. EventBridge delivers
 * read-only management events at no charge, and only to rules whose pattern matches them.
 */
export const ALL_MANAGEMENT_EVENTS = 'ENABLED_WITH_ALL_CLOUDTRAIL_MANAGEMENT_EVENTS';

export interface ProtectionWatchProps {
  readonly prefix: string;
  readonly buckets: readonly Bucket[];
  readonly key: Key;
  readonly breakGlassRole: Role;
  readonly readerRole: Role;
  readonly observability: Observability;
  /** Keys guarded and watched like the alarm path's: destroyed or re-policied by break glass or a deploy alone. */
  readonly guardedKeys?: readonly Key[];
  /** Keys guarded by their own policy (the audit seal's) and watched like the evidence key. */
  readonly watchedKeys?: readonly Key[];
  /** The table whose resource policy guards who writes items (lib/table.ts): each change to it is reported. */
  readonly table?: ITable;
  /** The evidence index's own table, guarded the same way (lib/evidence-index-table.ts): each change reported too. */
  readonly evidenceIndexTable?: ITable;
  /** The evidence spool's own table, guarded the same way (lib/evidence-spool-table.ts): each change reported too. */
  readonly evidenceSpoolTable?: ITable;
  /** Another account's EventBridge bus every report also goes to (settings `securityEventBusArn`). */
  readonly securityEventBusArn?: string | undefined;
}

export const WHO = EventField.fromPath('$.detail.userIdentity.arn');
export const WHAT = EventField.fromPath('$.detail.eventName');
export const CHECK =
  'Check it was a reviewed deploy or a break-glass action (docs/operations.md "Evidence protections").';

/** A service whose CloudTrail events the watch reads: `npm run smoke` checks a trail records them all. */
type Source = (typeof WATCHED_EVENT_SOURCES)[number] | typeof IAM_EVENT_SOURCE;
type WatchedService = Source extends `${infer S}.amazonaws.com` ? S : never;

/** A CloudTrail management event of a service's API: these calls, with these request parameters if given. */
export function call(
  service: WatchedService,
  eventNames: readonly unknown[],
  requestParameters?: Record<string, unknown>,
) {
  return {
    source: [`aws.${service}`],
    'detail-type': ['AWS API Call via CloudTrail'],
    detail: {
      eventSource: [`${service}.amazonaws.com`],
      eventName: [...eventNames],
      ...(requestParameters === undefined ? {} : { requestParameters }),
    },
  };
}

/** A rule changed: named in `name` (PutRule, DisableRule, DeleteRule) or in `rule` (PutTargets, RemoveTargets). */
const ruleChanges = (match: unknown[]) => [
  call('events', WATCHED_RULE_EVENTS, { name: match }),
  call('events', WATCHED_RULE_EVENTS, { rule: match }),
];

export class ProtectionWatch extends Construct {
  readonly rules: Rule[] = [];
  /** Reports EventBridge could not publish to the topic after its retries: kept 14 days, alarmed. */
  readonly deadLetters: Queue;
  /** `<stage>-protection`: every rule's name starts with it, and the topic accepts no other EventBridge rule. */
  private readonly prefix: string;
  /** The role the rules put their events on the security account's bus with, when there is one. */
  private readonly forwarder: Role | undefined;

  constructor(
    scope: Construct,
    id: string,
    private readonly props: ProtectionWatchProps,
  ) {
    super(scope, id);
    this.prefix = `${props.prefix}-protection`;
    // The topic accepts these rules (named <prefix>-protection-…) and no other EventBridge rule.
    props.observability.allowPublishFrom('EvidenceProtectionChanges', 'events.amazonaws.com', `rule/${this.prefix}-*`);
    this.deadLetters = this.reportQueue();
    this.forwarder = this.forwardingRole();
    this.rule(
      'Buckets',
      'changes to the evidence and access-log buckets',
      call('s3', WATCHED_BUCKET_EVENTS, { bucketName: props.buckets.map((b) => b.bucketName) }),
      `${WHAT} on evidence bucket ${EventField.fromPath('$.detail.requestParameters.bucketName')} by ${WHO}: a protection of the evidence changed. ${CHECK}`,
    );
    // The evidence key, and the keys the alarms and the logs are encrypted with: disabling either silences every
    // alarm and report, or every log line, at once.
    // The backup vault's key too: disabling it makes every recovery point unreadable.
    const alarmPathKeys = [props.observability.alarmKey, logsKeyOf(this), ...(props.guardedKeys ?? [])].filter(
      (k) => k !== undefined,
    );
    const keys = call('kms', WATCHED_KEY_EVENTS);
    this.rule(
      'Key',
      'changes to the evidence and audit-seal keys and the keys of the alarm topic, the logs and the backups',
      {
        ...keys,
        detail: {
          ...keys.detail,
          resources: { ARN: [props.key, ...(props.watchedKeys ?? []), ...alarmPathKeys].map((k) => k.keyArn) },
        },
      },
      `${WHAT} on key ${EventField.fromPath('$.detail.requestParameters.keyId')} by ${WHO}: the evidence, the audit seal, the alarms, the logs or the backups depend on it. ${CHECK}`,
    );
    if (props.table !== undefined) {
      this.rule(
        'TablePolicy',
        "changes to the table's resource policy",
        call('dynamodb', WATCHED_TABLE_EVENTS, { resourceArn: [props.table.tableArn] }),
        `${WHAT} on table ${EventField.fromPath('$.detail.requestParameters.resourceArn')} by ${WHO}: the table's policy keeps everyone but the stack's functions from writing items (an item written by hand is sent). ${CHECK}`,
      );
    }
    if (props.evidenceIndexTable !== undefined) {
      this.rule(
        'IndexPolicy',
        "changes to the evidence index table's resource policy",
        call('dynamodb', WATCHED_TABLE_EVENTS, { resourceArn: [props.evidenceIndexTable.tableArn] }),
        `${WHAT} on the evidence index table ${EventField.fromPath('$.detail.requestParameters.resourceArn')} by ${WHO}: its policy keeps everyone but dispatch and the sweeper from writing its entries (an entry written or deleted by hand points a dispute at other evidence, or hides a send from a customer's export). ${CHECK}`,
      );
    }
    if (props.evidenceSpoolTable !== undefined) {
      this.rule(
        'SpoolPolicy',
        "changes to the evidence spool table's resource policy",
        call('dynamodb', WATCHED_TABLE_EVENTS, { resourceArn: [props.evidenceSpoolTable.tableArn] }),
        `${WHAT} on the evidence spool table ${EventField.fromPath('$.detail.requestParameters.resourceArn')} by ${WHO}: its policy keeps everyone but dispatch, feedback and the sweeper from writing its items (an item written by hand is rolled into the locked store as evidence). ${CHECK}`,
      );
    }
    this.watchRoute();
    this.guardAlarmPath(alarmPathKeys);
    props.observability.alarm(
      'ProtectionReportsUndelivered',
      this.deadLetters.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(1), statistic: 'Maximum' }),
      'A change to the evidence protections could not be reported to the alarm topic: read the reports in the protection dead-letter queue, and check the topic and its key policy (docs/operations.md "Evidence protections").',
    );
    const person = EventField.fromPath('$.detail.requestParameters.sourceIdentity');
    this.rule(
      'BreakGlass',
      'the evidence break-glass role assumed',
      call('sts', ['AssumeRole'], { roleArn: [props.breakGlassRole.roleArn] }),
      `the evidence break-glass role was assumed by ${WHO} (source identity ${person}): it may disable the evidence key and change the evidence protections (docs/operations.md "Evidence protections").`,
    );
    // A notice, not an alarm (one topic today): the readers are named, and every read is in the access logs.
    this.rule(
      'Readers',
      'the evidence-reader role assumed',
      call('sts', ['AssumeRole'], { roleArn: [props.readerRole.roleArn] }),
      `notice: the evidence-reader role was assumed by ${WHO} (source identity ${person}): it decrypts what customers received. Expected when a named reader answers a dispute (docs/operations.md "Evidence protections").`,
    );
  }

  /**
   * The role EventBridge puts the reports on the security account's bus with: events:PutEvents on that bus alone,
   * for these rules of this account alone. The bus's own policy must let this account (or this role) put events.
   */
  private forwardingRole(): Role | undefined {
    const bus = this.props.securityEventBusArn;
    if (bus === undefined) return undefined;
    const { partition, region, account } = Stack.of(this);
    const role = new Role(this, 'ForwardRole', {
      assumedBy: new ServicePrincipal('events.amazonaws.com', {
        conditions: {
          StringEquals: { 'aws:SourceAccount': account },
          ArnLike: { 'aws:SourceArn': `arn:${partition}:events:${region}:${account}:rule/${this.prefix}-*` },
        },
      }),
      description: `${this.props.prefix}: puts every protection report on the security account's event bus`,
    });
    role.addToPrincipalPolicy(new PolicyStatement({ actions: ['events:PutEvents'], resources: [bus] }));
    return role;
  }

  /** Where a report EventBridge could not deliver (for a day, with its retries) waits: alarmed. */
  private reportQueue(): Queue {
    const { partition, region, account } = Stack.of(this);
    const queue = new Queue(this, 'DeadLetters', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    queue.addToResourcePolicy(
      new PolicyStatement({
        principals: [new ServicePrincipal('events.amazonaws.com')],
        actions: ['sqs:SendMessage'],
        resources: [queue.queueArn],
        conditions: {
          ArnLike: { 'aws:SourceArn': `arn:${partition}:events:${region}:${account}:rule/${this.prefix}-*` },
        },
      }),
    );
    for (const id of ['AwsSolutions-SQS3', 'Serverless-SQSRedrivePolicy']) {
      Validations.of(queue).acknowledge({
        id,
        reason:
          'This queue is itself the dead-letter queue of the rules that report changes to the evidence protections.',
      });
    }
    return queue;
  }

  /**
   * A rule that reports each event it matches to the alarm topic as one line. The topic's own policy allows these
   * rules; the target adds nothing. A report EventBridge cannot deliver waits in the dead-letter queue.
   */
  rule(name: string, description: string, eventPattern: EventPattern, text: string): Rule {
    const topic = this.props.observability.topic;
    const target: IRuleTarget = {
      bind: () => ({
        arn: topic.topicArn,
        input: RuleTargetInput.fromText(`${this.props.prefix}: ${text}`),
        deadLetterConfig: { arn: this.deadLetters.queueArn },
        retryPolicy: { maximumRetryAttempts: 185, maximumEventAgeInSeconds: 86_400 },
      }),
    };
    const bus = this.props.securityEventBusArn;
    const forwarder = this.forwarder;
    // The CloudTrail event itself, for the security account's own tooling (EventBridge retries a bus target by
    // itself; a retry policy is not accepted there). What it cannot deliver waits in the same dead-letter queue.
    const forward: IRuleTarget[] =
      bus === undefined || forwarder === undefined
        ? []
        : [{ bind: () => ({ arn: bus, role: forwarder, deadLetterConfig: { arn: this.deadLetters.queueArn } }) }];
    const r = new Rule(this, name, {
      ruleName: `${this.prefix}-${name.toLowerCase()}`,
      description: `${this.props.prefix}: ${description}`,
      eventPattern,
      targets: [target, ...forward],
    });
    (r.node.defaultChild as CfnRule).state = ALL_MANAGEMENT_EVENTS;
    this.rules.push(r);
    return r;
  }

  /**
   * The watch itself, and its way to a person: any protection rule or its targets, the alarm topic and its
   * subscriptions, the report queue, and the trails every rule reads. A rule cannot report its own disabling, so a
   * second rule watches this one: whichever is disabled first, the other reports it.
   */
  private watchRoute(): void {
    const topic = this.props.observability.topic;
    const routeName = `${this.prefix}-route`;
    this.rule(
      'Route',
      'changes to the protection rules, the alarm topic, the report queue and the trail',
      {
        $or: [
          ...ruleChanges([{ prefix: `${this.prefix}-` }]),
          call('sns', WATCHED_TOPIC_EVENTS, { topicArn: [topic.topicArn] }),
          call('sns', WATCHED_SUBSCRIPTION_EVENTS, { subscriptionArn: [{ prefix: `${topic.topicArn}:` }] }),
          call('sqs', WATCHED_QUEUE_EVENTS, { queueUrl: [this.deadLetters.queueUrl] }),
          call('cloudtrail', WATCHED_TRAIL_EVENTS),
        ],
      } as EventPattern,
      `${WHAT} by ${WHO}: the watch over the evidence protections, or its way to you, changed (a protection rule, the alarm topic or a subscription to it, the report queue, or a trail). ${CHECK}`,
    );
    this.rule(
      'RouteWatch',
      'changes to the rule that watches the protection rules',
      { $or: ruleChanges([routeName]) } as EventPattern,
      `${WHAT} on ${routeName} by ${WHO}: the rule that watches the evidence protections changed. ${CHECK}`,
    );
  }

  /**
   * One DisableKey on the alarm topic's key would fail every alarm and every report at once, one on the logs' key
   * every log line, one on the backup vault's every recovery point, and one DeleteTopic or RemovePermission would
   * leave the alarms nowhere to go: these are the break-glass role's, or a deploy's, as the evidence store's
   * protections are.
   */
  private guardAlarmPath(keys: readonly Key[]): void {
    const { breakGlassRole, observability } = this.props;
    const allowed = [breakGlassRole.roleArn, deployRoleArn(Stack.of(this))].filter((a) => a !== undefined);
    const onlyThem = { ArnNotEquals: { 'aws:PrincipalArn': allowed } };
    const guarded = [...KEY_DESTRUCTION_ACTIONS, 'kms:PutKeyPolicy'];
    for (const key of keys) {
      key.addToResourcePolicy(
        new PolicyStatement({
          sid: 'OnlyBreakGlassOrThisStacksDeployDisablesOrDeletes',
          effect: Effect.DENY,
          principals: [new AnyPrincipal()],
          actions: guarded,
          resources: ['*'],
          conditions: onlyThem,
        }),
      );
    }
    breakGlassRole.addToPrincipalPolicy(
      new PolicyStatement({ actions: guarded, resources: keys.map((k) => k.keyArn) }),
    );
    observability.topic.addToResourcePolicy(
      new PolicyStatement({
        sid: 'OnlyBreakGlassOrThisStacksDeploySilencesTheTopic',
        effect: Effect.DENY,
        principals: [new AnyPrincipal()],
        actions: TOPIC_GUARDED_ACTIONS,
        resources: [observability.topic.topicArn],
        conditions: onlyThem,
      }),
    );
  }
}

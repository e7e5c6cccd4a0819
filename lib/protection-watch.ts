/**
 * Every change to what protects the evidence reaches the operators (the alarm topic), whoever makes it: the deny
 * statements and Object Lock of the evidence store are only as good as the bucket policy, its configuration and the
 * key behind them, and the account's root can change a bucket policy whatever it says. EventBridge rules on the
 * CloudTrail management events of this region (docs/deploy.md: a trail must record management events) match:
 * - the evidence and access-log buckets: policy put or deleted, Object Lock configuration, lifecycle, versioning,
 *   replication, encryption, logging, public access block;
 * - the evidence key, and the keys of the alarm topic and of the logs: deletion scheduled or cancelled, disabled or
 *   enabled, rotation turned off, policy put;
 * - the break-glass role assumed (through this region's STS endpoint; the global endpoint logs in us-east-1);
 * - the watch's own route to a person: any protection rule or its targets, the alarm topic and its subscriptions, the
 *   report queue, the region's trails — and a second rule watches the rule that watches those.
 * Each reaches the topic as one line saying what changed, on what, and who did it. The alarm path's keys and the
 * topic's deletion and policy are, like the evidence protections, the break-glass role's or a deploy's alone.
 */

import { Duration, Stack, Validations } from 'aws-cdk-lib';
import {
  type CfnRule,
  EventField,
  type EventPattern,
  type IRuleTarget,
  Rule,
  RuleTargetInput,
} from 'aws-cdk-lib/aws-events';
import { AnyPrincipal, Effect, PolicyStatement, type Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { Key } from 'aws-cdk-lib/aws-kms';
import type { Bucket } from 'aws-cdk-lib/aws-s3';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { deployRoleArn, KEY_DESTRUCTION_ACTIONS } from './evidence-key.ts';
import { logsKeyOf } from './logs-key.ts';
import type { Observability } from './observability.ts';

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
  readonly observability: Observability;
}

export class ProtectionWatch extends Construct {
  readonly rules: Rule[] = [];
  /** Reports EventBridge could not publish to the topic after its retries: kept 14 days, alarmed. */
  readonly deadLetters: Queue;

  constructor(scope: Construct, id: string, props: ProtectionWatchProps) {
    super(scope, id);
    const prefix = `${props.prefix}-protection`;
    // The topic accepts these rules (named <prefix>-protection-…) and no other EventBridge rule.
    props.observability.allowPublishFrom('EvidenceProtectionChanges', 'events.amazonaws.com', `rule/${prefix}-*`);
    const topic = props.observability.topic;
    const { partition, region, account } = Stack.of(this);
    this.deadLetters = new Queue(this, 'DeadLetters', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    this.deadLetters.addToResourcePolicy(
      new PolicyStatement({
        principals: [new ServicePrincipal('events.amazonaws.com')],
        actions: ['sqs:SendMessage'],
        resources: [this.deadLetters.queueArn],
        conditions: { ArnLike: { 'aws:SourceArn': `arn:${partition}:events:${region}:${account}:rule/${prefix}-*` } },
      }),
    );
    for (const id of ['AwsSolutions-SQS3', 'Serverless-SQSRedrivePolicy']) {
      Validations.of(this.deadLetters).acknowledge({
        id,
        reason:
          'This queue is itself the dead-letter queue of the rules that report changes to the evidence protections.',
      });
    }
    const deadLetterConfig = { arn: this.deadLetters.queueArn };
    const retryPolicy = { maximumRetryAttempts: 185, maximumEventAgeInSeconds: 86_400 };
    const who = EventField.fromPath('$.detail.userIdentity.arn');
    const what = EventField.fromPath('$.detail.eventName');
    // The topic's own policy allows these rules (above); the target adds nothing. A report EventBridge cannot deliver
    // (for a day, with its retries) waits in the dead-letter queue, which is alarmed.
    const toTopic = (text: string): IRuleTarget => ({
      bind: () => ({ arn: topic.topicArn, input: RuleTargetInput.fromText(text), deadLetterConfig, retryPolicy }),
    });
    const rule = (name: string, description: string, eventPattern: EventPattern, text: string) => {
      const r = new Rule(this, name, {
        ruleName: `${prefix}-${name.toLowerCase()}`,
        description: `${props.prefix}: ${description}`,
        eventPattern,
        targets: [toTopic(`${props.prefix}: ${text}`)],
      });
      (r.node.defaultChild as CfnRule).state = ALL_MANAGEMENT_EVENTS;
      this.rules.push(r);
      return r;
    };
    const trail = ['AWS API Call via CloudTrail'];
    const call = (service: string, eventNames: readonly string[], requestParameters?: Record<string, unknown>) => ({
      source: [`aws.${service}`],
      'detail-type': trail,
      detail: {
        eventSource: [`${service}.amazonaws.com`],
        eventName: [...eventNames],
        ...(requestParameters === undefined ? {} : { requestParameters }),
      },
    });
    // A rule is named in `name` (PutRule, DisableRule, DeleteRule) or in `rule` (PutTargets, RemoveTargets).
    const ruleChanges = (match: unknown[]) => [
      call('events', WATCHED_RULE_EVENTS, { name: match }),
      call('events', WATCHED_RULE_EVENTS, { rule: match }),
    ];
    rule(
      'Buckets',
      'changes to the evidence and access-log buckets',
      {
        source: ['aws.s3'],
        detailType: trail,
        detail: {
          eventSource: ['s3.amazonaws.com'],
          eventName: [...WATCHED_BUCKET_EVENTS],
          requestParameters: { bucketName: props.buckets.map((b) => b.bucketName) },
        },
      },
      `${what} on evidence bucket ${EventField.fromPath('$.detail.requestParameters.bucketName')} by ${who}: a protection of the evidence changed. Check it was a reviewed deploy or a break-glass action (docs/operations.md "Evidence protections").`,
    );
    // The evidence key, and the keys the alarms and the logs are encrypted with: disabling either silences every
    // alarm and report, or every log line, at once.
    const alarmPathKeys = [props.observability.alarmKey, logsKeyOf(this)].filter((k) => k !== undefined);
    rule(
      'Key',
      'changes to the evidence key and the keys of the alarm topic and the logs',
      {
        source: ['aws.kms'],
        detailType: trail,
        detail: {
          eventSource: ['kms.amazonaws.com'],
          eventName: [...WATCHED_KEY_EVENTS],
          resources: { ARN: [props.key, ...alarmPathKeys].map((k) => k.keyArn) },
        },
      },
      `${what} on key ${EventField.fromPath('$.detail.requestParameters.keyId')} by ${who}: the evidence, the alarms or the logs depend on it. Check it was a reviewed deploy or a break-glass action (docs/operations.md "Evidence protections").`,
    );
    // The watch itself, and its way to a person: any protection rule or its targets, the alarm topic and its
    // subscriptions, the report queue, and the trail every rule reads. A rule cannot report its own disabling, so a
    // second rule watches this one: whichever is disabled first, the other reports it.
    const routeName = `${prefix}-route`;
    rule(
      'Route',
      'changes to the protection rules, the alarm topic, the report queue and the trail',
      {
        $or: [
          ...ruleChanges([{ prefix: `${prefix}-` }]),
          call('sns', WATCHED_TOPIC_EVENTS, { topicArn: [topic.topicArn] }),
          call('sns', WATCHED_SUBSCRIPTION_EVENTS, { subscriptionArn: [{ prefix: `${topic.topicArn}:` }] }),
          call('sqs', WATCHED_QUEUE_EVENTS, { queueUrl: [this.deadLetters.queueUrl] }),
          call('cloudtrail', WATCHED_TRAIL_EVENTS),
        ],
      } as EventPattern,
      `${what} by ${who}: the watch over the evidence protections, or its way to you, changed (a protection rule, the alarm topic or a subscription to it, the report queue, or a trail). Check it was a reviewed deploy or a break-glass action (docs/operations.md "Evidence protections").`,
    );
    rule(
      'RouteWatch',
      'changes to the rule that watches the protection rules',
      { $or: ruleChanges([routeName]) } as EventPattern,
      `${what} on ${routeName} by ${who}: the rule that watches the evidence protections changed. Check it was a reviewed deploy or a break-glass action (docs/operations.md "Evidence protections").`,
    );
    this.guardAlarmPath(props.breakGlassRole, props.observability, alarmPathKeys);
    props.observability.alarm(
      'ProtectionReportsUndelivered',
      this.deadLetters.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(1), statistic: 'Maximum' }),
      'A change to the evidence protections could not be reported to the alarm topic: read the reports in the protection dead-letter queue, and check the topic and its key policy (docs/operations.md "Evidence protections").',
    );
    rule(
      'BreakGlass',
      'the evidence break-glass role assumed',
      {
        source: ['aws.sts'],
        detailType: trail,
        detail: {
          eventSource: ['sts.amazonaws.com'],
          eventName: ['AssumeRole'],
          requestParameters: { roleArn: [props.breakGlassRole.roleArn] },
        },
      },
      `the evidence break-glass role was assumed by ${who}: it may disable the evidence key and change the evidence protections (docs/operations.md "Evidence protections").`,
    );
  }

  /**
   * One DisableKey on the alarm topic's key would fail every alarm and every report at once, one on the logs' key
   * every log line, and one DeleteTopic or RemovePermission would leave the alarms nowhere to go: these are the
   * break-glass role's, or a deploy's, as the evidence store's protections are.
   */
  private guardAlarmPath(breakGlassRole: Role, observability: Observability, keys: readonly Key[]): void {
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

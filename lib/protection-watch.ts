/**
 * Every change to what protects the evidence reaches the operators (the alarm topic), whoever makes it: the deny
 * statements and Object Lock of the evidence store are only as good as the bucket policy, its configuration and the
 * key behind them, and the account's root can change a bucket policy whatever it says. EventBridge rules on the
 * CloudTrail management events of this region (docs/deploy.md: a trail must record management events) match:
 * - the evidence and access-log buckets: policy put or deleted, Object Lock configuration, lifecycle, versioning,
 *   replication, encryption, logging, public access block;
 * - the evidence key: deletion scheduled or cancelled, disabled or enabled, rotation turned off, policy put;
 * - the break-glass role assumed (through this region's STS endpoint; the global endpoint logs in us-east-1).
 * Each reaches the topic as one line saying what changed, on what, and who did it.
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
import { PolicyStatement, type Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { Key } from 'aws-cdk-lib/aws-kms';
import type { Bucket } from 'aws-cdk-lib/aws-s3';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
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
    rule(
      'Key',
      'changes to the evidence key',
      {
        source: ['aws.kms'],
        detailType: trail,
        detail: {
          eventSource: ['kms.amazonaws.com'],
          eventName: [...WATCHED_KEY_EVENTS],
          resources: { ARN: [props.key.keyArn] },
        },
      },
      `${what} on the evidence key by ${who}: without this key no evidence can be read. Check it was a reviewed deploy or a break-glass action (docs/operations.md "Evidence protections").`,
    );
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
}

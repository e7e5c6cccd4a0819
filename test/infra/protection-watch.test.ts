/**
 * The watch over the evidence protections, and its way to a person, read from the synthesized templates: CloudTrail
 * events matched against the rules' patterns as EventBridge matches them (test/support/event-pattern.ts), and the
 * alarm path's key and topic policies evaluated as AWS evaluates them (test/support/policy-eval.ts). Whoever could
 * quietly disable a rule, unsubscribe the pager, purge the report queue, stop the trail or disable the key the alarms
 * are encrypted with could then change any protection unseen.
 */
import { describe, expect, it } from 'vitest';
import { cloudTrailEvent, matchesPattern } from '../support/event-pattern.ts';
import { allows, denies, type Principal, type Request } from '../support/policy-eval.ts';
import { PRODUCTION_LIKE, readTemplate } from '../support/synth.ts';

function read(file: string) {
  const { stack, resolve, all, one, statementsOf } = readTemplate(file);
  const rules = all
    .filter(([id, r]) => r.Type === 'AWS::Events::Rule' && id.startsWith('ProtectionWatch'))
    .map(([, r]) => ({
      name: String(r.Properties.Name),
      pattern: resolve(r.Properties.EventPattern) as Record<string, unknown>,
    }));
  const account = stack.account;
  const prefix = stack.stackName;
  return {
    stack,
    prefix,
    one,
    statementsOf,
    /** The names of the protection rules an event reaches. */
    reportedBy: (event: Record<string, unknown>) =>
      rules.filter((r) => matchesPattern(r.pattern, event)).map((r) => r.name),
    who: {
      admin: { arn: `arn:aws:iam::${account}:role/Admin`, account },
      breakGlass: { arn: `arn:${one('AWS::IAM::Role', 'EvidenceBreakGlassRole')[0]}`, account },
      deployer: { arn: `arn:aws:iam::${account}:role/cdk-hnb659fds-cfn-exec-role-${account}-${stack.region}`, account },
      root: { arn: `arn:aws:iam::${account}:root`, account },
    } satisfies Record<string, Principal>,
  };
}

const ask = (principal: Principal, action: string, resource: string): Request => ({
  principal,
  action,
  resource,
  context: { 'aws:SecureTransport': 'true', 'aws:PrincipalArn': principal.arn },
});

describe.each([
  ['the example settings', read('examples/settings.example.json')],
  ["a bank's production settings", read(PRODUCTION_LIKE)],
])('the protection watch, %s', (_name, s) => {
  const [topicId] = s.one('AWS::SNS::Topic', 'ObservabilityAlarmTopic');
  const [queueId] = s.one('AWS::SQS::Queue', 'ProtectionWatchDeadLetters');
  const topicArn = `ref:${topicId}`;
  const rule = (name: string) => `${s.prefix}-protection-${name}`;

  it('a change to any protection rule or its targets, the alarm topic or a subscription to it, the report queue or a trail is reported', () => {
    const events = {
      'a protection rule disabled': cloudTrailEvent('events', 'DisableRule', { name: rule('buckets') }),
      'a protection rule deleted': cloudTrailEvent('events', 'DeleteRule', { name: rule('key') }),
      'its pattern changed': cloudTrailEvent('events', 'PutRule', { name: rule('breakglass') }),
      'its target removed': cloudTrailEvent('events', 'RemoveTargets', { rule: rule('key'), ids: ['Target0'] }),
      'its target replaced': cloudTrailEvent('events', 'PutTargets', { rule: rule('buckets') }),
      'the pager unsubscribed': cloudTrailEvent('sns', 'Unsubscribe', { subscriptionArn: `${topicArn}:3f2a` }),
      'a filter on the pager': cloudTrailEvent('sns', 'SetSubscriptionAttributes', {
        subscriptionArn: `${topicArn}:3f2a`,
        attributeName: 'FilterPolicy',
      }),
      'the topic deleted': cloudTrailEvent('sns', 'DeleteTopic', { topicArn }),
      'the topic re-keyed': cloudTrailEvent('sns', 'SetTopicAttributes', { topicArn, attributeName: 'KmsMasterKeyId' }),
      'the report queue purged': cloudTrailEvent('sqs', 'PurgeQueue', { queueUrl: `ref:${queueId}` }),
      'the report queue deleted': cloudTrailEvent('sqs', 'DeleteQueue', { queueUrl: `ref:${queueId}` }),
      'the trail stopped': cloudTrailEvent('cloudtrail', 'StopLogging', { name: 'org-trail' }),
      'the trail deleted': cloudTrailEvent('cloudtrail', 'DeleteTrail', { name: 'org-trail' }),
      'management events left out': cloudTrailEvent('cloudtrail', 'PutEventSelectors', { trailName: 'org-trail' }),
    };
    for (const [what, event] of Object.entries(events)) {
      expect(s.reportedBy(event), what).not.toEqual([]);
    }
    // Another team's rule, topic or queue is theirs: not reported.
    expect(s.reportedBy(cloudTrailEvent('events', 'DisableRule', { name: 'payments-nightly' }))).toEqual([]);
    expect(s.reportedBy(cloudTrailEvent('sns', 'DeleteTopic', { topicArn: 'arn:aws:sns:x:1:other' }))).toEqual([]);
    expect(s.reportedBy(cloudTrailEvent('sqs', 'PurgeQueue', { queueUrl: 'https://sqs/other' }))).toEqual([]);
  });

  it('no rule is disabled unseen: the rule that watches the protection rules is itself watched by a second', () => {
    const reporters = s.reportedBy(cloudTrailEvent('events', 'DisableRule', { name: rule('buckets') }));
    expect(reporters).not.toEqual([]);
    for (const name of reporters) {
      // Disabling the rule that reported is seen by another.
      const others = s.reportedBy(cloudTrailEvent('events', 'DisableRule', { name })).filter((n) => n !== name);
      expect(others, `disabling ${name}`).not.toEqual([]);
      const removed = s.reportedBy(cloudTrailEvent('events', 'RemoveTargets', { rule: name }));
      expect(
        removed.filter((n) => n !== name),
        `removing ${name}'s target`,
      ).not.toEqual([]);
    }
  });

  it("a change to the alarm topic's key or the logs' key is reported with the evidence key's", () => {
    for (const prefix of ['ObservabilityAlarmTopicKey', 'LogsKey', 'EvidenceKey']) {
      const keyArn = `arn:${s.one('AWS::KMS::Key', prefix)[0]}`;
      for (const eventName of ['DisableKey', 'ScheduleKeyDeletion', 'PutKeyPolicy']) {
        const event = cloudTrailEvent('kms', eventName, { keyId: keyArn }, [{ ARN: keyArn, type: 'AWS::KMS::Key' }]);
        expect(s.reportedBy(event), `${eventName} on ${prefix}`).not.toEqual([]);
      }
    }
  });

  it("the alarm path's keys are disabled, deleted or re-policied only by the break-glass role or a deploy: nobody silences every alarm and report with one DisableKey", () => {
    for (const prefix of ['ObservabilityAlarmTopicKey', 'LogsKey']) {
      const policy = s.statementsOf(s.one('AWS::KMS::Key', prefix)[1].Properties.KeyPolicy);
      for (const action of ['kms:DisableKey', 'kms:ScheduleKeyDeletion', 'kms:PutKeyPolicy']) {
        expect(allows(policy, ask(s.who.admin, action, '*')), `${action} on ${prefix} by an administrator`).toBe(false);
        expect(allows(policy, ask(s.who.root, action, '*')), `${action} on ${prefix} by root`).toBe(false);
        expect(allows(policy, ask(s.who.breakGlass, action, '*')), `${action} on ${prefix} by break glass`).toBe(true);
        expect(allows(policy, ask(s.who.deployer, action, '*')), `${action} on ${prefix} by the deploy`).toBe(true);
      }
      // Administration that weakens nothing stays with the account.
      expect(allows(policy, ask(s.who.admin, 'kms:EnableKeyRotation', '*')), prefix).toBe(true);
    }
  });

  it('the alarm topic is deleted, re-keyed or stripped of a permission only by the break-glass role or a deploy', () => {
    const policy = s.one('AWS::SNS::TopicPolicy', 'ObservabilityAlarmTopicPolicy')[1];
    const statements = s.statementsOf(policy.Properties.PolicyDocument);
    for (const action of ['sns:DeleteTopic', 'sns:SetTopicAttributes', 'sns:RemovePermission']) {
      expect(denies(statements, ask(s.who.admin, action, topicArn)), `${action} by an administrator`).toBe(true);
      expect(denies(statements, ask(s.who.breakGlass, action, topicArn)), `${action} by break glass`).toBe(false);
      expect(denies(statements, ask(s.who.deployer, action, topicArn)), `${action} by the deploy`).toBe(false);
    }
    expect(denies(statements, ask(s.who.admin, 'sns:Subscribe', topicArn))).toBe(false);
  });
});

/**
 * The watch over the evidence protections, and its way to a person, read from the synthesized templates: CloudTrail
 * events matched against the rules' patterns as EventBridge matches them (test/support/event-pattern.ts), and the
 * alarm path's key and topic policies evaluated as AWS evaluates them (test/support/policy-eval.ts). Whoever could
 * quietly disable a rule, unsubscribe the pager, purge the report queue, stop the trail or disable the key the alarms
 * are encrypted with could then change any protection unseen.
 */
import { Annotations, Match } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { parseSettings } from '../../lib/settings.ts';
import { byCloudFormationAs, cloudTrailEvent, matchesPattern } from '../support/event-pattern.ts';
import { allows, denies, type Principal, type Request, resolver } from '../support/policy-eval.ts';
import { EXAMPLE_ONE_REGION, PRODUCTION_LIKE, readTemplate } from '../support/synth.ts';
import production from './fixtures/settings.production.json' with { type: 'json' };

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
    all,
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
  ['the example settings', read(EXAMPLE_ONE_REGION)],
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

  it("a change to the evidence index table's policy is reported as the main table's is, and only break glass or the deploy may make it", () => {
    const [indexId, index] = s.one('AWS::DynamoDB::Table', 'EvidenceIndexTable');
    const [tableId] =
      s.all.find(([id, r]) => r.Type === 'AWS::DynamoDB::Table' && !id.startsWith('EvidenceIndex')) ?? [];
    const policyChange = (eventName: string, resourceArn: string) =>
      cloudTrailEvent('dynamodb', eventName, { resourceArn }, [{ ARN: resourceArn }]);
    for (const eventName of ['PutResourcePolicy', 'DeleteResourcePolicy']) {
      expect(s.reportedBy(policyChange(eventName, `arn:${indexId}`)), eventName).toEqual([rule('indexpolicy')]);
      expect(s.reportedBy(policyChange(eventName, `arn:${tableId}`)), eventName).toEqual([rule('tablepolicy')]);
    }
    // Another team's table is theirs; reading the policy changes nothing.
    expect(s.reportedBy(policyChange('PutResourcePolicy', 'arn:aws:dynamodb:ap-northeast-1:1:table/payments'))).toEqual(
      [],
    );
    expect(s.reportedBy(policyChange('GetResourcePolicy', `arn:${indexId}`))).toEqual([]);
    // The guard the watch backs: the policy changed, or an entry written, by nobody but break glass and the deploy.
    const guard = s.statementsOf((index.Properties.ResourcePolicy as { PolicyDocument: unknown }).PolicyDocument);
    for (const action of ['dynamodb:PutResourcePolicy', 'dynamodb:DeleteResourcePolicy']) {
      expect(denies(guard, ask(s.who.admin, action, '*')), `${action} by an administrator`).toBe(true);
      expect(denies(guard, ask(s.who.breakGlass, action, '*')), `${action} by break glass`).toBe(false);
      expect(denies(guard, ask(s.who.deployer, action, '*')), `${action} by the deploy`).toBe(false);
    }
    for (const action of ['dynamodb:PutItem', 'dynamodb:BatchWriteItem', 'dynamodb:DeleteItem']) {
      expect(denies(guard, ask(s.who.admin, action, '*')), `${action} by an administrator`).toBe(true);
    }
  });
});

describe("the functions that write evidence and send, a bank's production settings", () => {
  const s = read(PRODUCTION_LIKE);
  const { stack } = readTemplate(PRODUCTION_LIKE);
  const fn = (prefix: string) => `ref:${s.one('AWS::Lambda::Function', prefix)[0]}`;
  const arnOf = (name: string) => `arn:aws:lambda:${stack.region}:${stack.account}:function:${name}`;
  const deployRole = s.who.deployer.arn;
  const FUNCTIONS = ['Ingest', 'Dispatch', 'Sweeper', 'DeliveryFeedbackFunction', 'SmokeProducerFunction', 'Operator'];
  const lambda = (eventName: string, params: Record<string, unknown>, more = {}) =>
    cloudTrailEvent('lambda', eventName, params, [], more);

  it('a change to what a function runs, who may invoke it or whether it runs is reported, however the function is named', () => {
    for (const prefix of FUNCTIONS) {
      const name = fn(prefix);
      for (const functionName of [name, arnOf(name), `${stack.account}:function:${name}`, `${arnOf(name)}:live`]) {
        for (const eventName of [
          'UpdateFunctionCode20150331v2',
          'UpdateFunctionConfiguration20150331v2',
          'AddPermission20150331v2',
          'RemovePermission20150331v2',
          'PutFunctionConcurrency20171031',
          'DeleteFunction20150331',
          'CreateFunctionUrlConfig20211031',
          'PutFunctionEventInvokeConfig',
          'CreateEventSourceMapping20150331',
        ]) {
          expect(s.reportedBy(lambda(eventName, { functionName })), `${eventName} on ${functionName}`).toEqual([
            'notifier-prod-protection-functions',
          ]);
        }
      }
    }
    // Another team's function, and reading one's own, are theirs.
    expect(s.reportedBy(lambda('UpdateFunctionCode20150331v2', { functionName: 'payments-nightly' }))).toEqual([]);
    expect(s.reportedBy(lambda('GetFunction20150331v2', { functionName: fn('Dispatch') }))).toEqual([]);
  });

  it("a deploy of this stack is not reported; CloudFormation with anyone else's credentials is", () => {
    const update = (userIdentity: Record<string, unknown>) =>
      s.reportedBy(lambda('UpdateFunctionCode20150331v2', { functionName: fn('Dispatch') }, { userIdentity }));
    expect(update(byCloudFormationAs(deployRole))).toEqual([]);
    // A stack of someone's own, deployed with their own role or credentials.
    expect(update(byCloudFormationAs(`arn:aws:iam::${stack.account}:role/Admin`))).not.toEqual([]);
    expect(
      update({
        type: 'IAMUser',
        arn: `arn:aws:iam::${stack.account}:user/ops`,
        invokedBy: 'cloudformation.amazonaws.com',
      }),
    ).not.toEqual([]);
    expect(update({ type: 'Root', arn: `arn:aws:iam::${stack.account}:root` })).not.toEqual([]);
    // The deploy role used by hand, not through CloudFormation (it trusts CloudFormation alone, but still).
    const byHand = { ...byCloudFormationAs(deployRole), invokedBy: undefined };
    expect(update(JSON.parse(JSON.stringify(byHand)))).not.toEqual([]);
  });

  it('a trigger of the functions changed, deleted or pointed elsewhere is reported', () => {
    const mappings = s.all.filter(([, r]) => r.Type === 'AWS::Lambda::EventSourceMapping').map(([id]) => `ref:${id}`);
    // The MSK trigger, dispatch's routine and urgent stream triggers, the feedback function's queue of SES events.
    expect(mappings.length).toBe(4);
    for (const uUID of mappings) {
      for (const eventName of ['UpdateEventSourceMapping20150331', 'DeleteEventSourceMapping20150331']) {
        expect(s.reportedBy(lambda(eventName, { uUID, enabled: false })), `${eventName} ${uUID}`).toEqual([
          'notifier-prod-protection-triggers',
        ]);
      }
      // Pointed at a function of someone else's: the request names our mapping.
      expect(
        s.reportedBy(
          lambda(
            'UpdateEventSourceMapping20150331',
            { uUID, functionName: 'elsewhere' },
            {
              responseElements: { functionArn: arnOf('elsewhere') },
            },
          ),
        ),
      ).not.toEqual([]);
      expect(
        s.reportedBy(
          lambda('UpdateEventSourceMapping20150331', { uUID }, { userIdentity: byCloudFormationAs(deployRole) }),
        ),
      ).toEqual([]);
    }
    expect(s.reportedBy(lambda('DeleteEventSourceMapping20150331', { uUID: 'not-ours' }))).toEqual([]);
  });

  it("a function created or reconfigured with a sender's role is reported: with that role it could write send records", () => {
    for (const prefix of [
      'DispatchRole',
      'SweeperRole',
      'DeliveryFeedbackFunctionRole',
      'IngestRole',
      'OperatorRole',
    ]) {
      const role = `arn:${s.one('AWS::IAM::Role', prefix)[0]}`;
      for (const eventName of ['CreateFunction20150331', 'UpdateFunctionConfiguration20150331v2']) {
        expect(s.reportedBy(lambda(eventName, { functionName: 'forger', role })), `${eventName} ${prefix}`).toEqual([
          'notifier-prod-protection-functionroles',
        ]);
      }
    }
    const own = `arn:aws:iam::${stack.account}:role/payments-nightly`;
    expect(s.reportedBy(lambda('CreateFunction20150331', { functionName: 'payments', role: own }))).toEqual([]);
  });

  it("IAM changes to the stack's roles are IAM events, delivered in us-east-1 alone: not watched from here, and the synth says so", () => {
    const roleName = `ref:${s.one('AWS::IAM::Role', 'DispatchRole')[0]}`;
    expect(s.reportedBy(cloudTrailEvent('iam', 'PutRolePolicy', { roleName }))).toEqual([]);
    const warnings = Annotations.fromStack(stack).findWarning(
      '*',
      Match.stringLikeRegexp('not watched from ap-northeast-1'),
    );
    expect(warnings).toHaveLength(1);
  });
});

describe('a stack in us-east-1', () => {
  const east = readTemplate(EXAMPLE_ONE_REGION, {
    mskClusterArn: 'arn:aws:kafka:us-east-1:123456789012:cluster/bank-events/11111111-2222-3333-4444-555555555555-1',
    pushPlatformApplicationArns: 'arn:aws:sns:us-east-1:123456789012:app/GCM/bank-app',
  });
  const rules = east.all
    .filter(([id, r]) => r.Type === 'AWS::Events::Rule' && id.startsWith('ProtectionWatch'))
    .map(([, r]) => east.resolve(r.Properties.EventPattern) as Record<string, unknown>);
  const reported = (event: Record<string, unknown>) => rules.some((p) => matchesPattern(p, event));
  const roleName = (prefix: string) => `ref:${east.one('AWS::IAM::Role', prefix)[0]}`;

  it("IAM changes to the senders', the reader's and break glass's roles are reported there, outside a deploy", () => {
    for (const prefix of [
      'DispatchRole',
      'DeliveryFeedbackFunctionRole',
      'OperatorRole',
      'EvidenceReaderRole',
      'EvidenceBreakGlassRole',
    ]) {
      for (const eventName of [
        'PutRolePolicy',
        'AttachRolePolicy',
        'UpdateAssumeRolePolicy',
        'DeleteRolePermissionsBoundary',
      ]) {
        expect(
          reported(cloudTrailEvent('iam', eventName, { roleName: roleName(prefix) })),
          `${eventName} ${prefix}`,
        ).toBe(true);
      }
    }
    const deployer = 'arn:aws:iam::123456789012:role/cdk-hnb659fds-cfn-exec-role-123456789012-us-east-1';
    const deploy = cloudTrailEvent('iam', 'PutRolePolicy', { roleName: roleName('DispatchRole') }, [], {
      userIdentity: byCloudFormationAs(deployer),
    });
    expect(reported(deploy)).toBe(false);
    expect(reported(cloudTrailEvent('iam', 'PutRolePolicy', { roleName: 'payments-nightly' }))).toBe(false);
  });
});

describe("the backup vault's key, a bank's production settings", () => {
  const s = read(PRODUCTION_LIKE);
  const [keyId, key] = s.one('AWS::KMS::Key', 'BackupVaultKey');
  const policy = s.statementsOf(key.Properties.KeyPolicy);
  const viaBackup = { 'kms:ViaService': 'backup.ap-northeast-1.amazonaws.com' };
  const kms = (who: Principal, action: string, context: Record<string, string> = {}) =>
    allows(policy, { ...ask(who, action, '*'), context: { ...ask(who, action, '*').context, ...context } });

  it('administration without use: nobody decrypts a recovery point but through AWS Backup', () => {
    expect(kms(s.who.admin, 'kms:Decrypt')).toBe(false);
    expect(kms(s.who.admin, 'kms:GenerateDataKey')).toBe(false);
    expect(kms(s.who.admin, 'kms:Decrypt', viaBackup)).toBe(true);
    expect(kms(s.who.admin, 'kms:EnableKeyRotation')).toBe(true);
  });

  it('deleted, disabled or re-policied only by break glass or a deploy; grants only for AWS services', () => {
    for (const action of ['kms:ScheduleKeyDeletion', 'kms:DisableKey', 'kms:DisableKeyRotation', 'kms:PutKeyPolicy']) {
      expect(kms(s.who.admin, action), `${action} by an administrator`).toBe(false);
      expect(kms(s.who.root, action), `${action} by root`).toBe(false);
      expect(kms(s.who.breakGlass, action), `${action} by break glass`).toBe(true);
      expect(kms(s.who.deployer, action), `${action} by the deploy`).toBe(true);
    }
    expect(
      denies(policy, {
        ...ask(s.who.admin, 'kms:CreateGrant', '*'),
        context: { 'kms:GrantIsForAWSResource': 'false' },
      }),
    ).toBe(true);
    expect(kms(s.who.admin, 'kms:CreateGrant', { 'kms:GrantIsForAWSResource': 'true' })).toBe(true);
  });

  it('watched like the others: disabling it, scheduling its deletion or putting its policy is reported', () => {
    const arn = `arn:${keyId}`;
    for (const eventName of ['DisableKey', 'ScheduleKeyDeletion', 'PutKeyPolicy']) {
      const event = cloudTrailEvent('kms', eventName, { keyId: arn }, [{ ARN: arn, type: 'AWS::KMS::Key' }]);
      expect(s.reportedBy(event), eventName).toEqual(['notifier-prod-protection-key']);
    }
  });
});

describe('reports that leave the account', () => {
  const prod = readTemplate(PRODUCTION_LIKE);
  const plain = readTemplate(EXAMPLE_ONE_REGION);
  const rulesOf = (t: typeof prod) =>
    t.all.filter(([id, r]) => r.Type === 'AWS::Events::Rule' && id.startsWith('ProtectionWatch')).map(([, r]) => r);

  it("every protection report also goes, as the CloudTrail event, to the security account's bus, with a role that may put events there alone", () => {
    const [roleId, role] = prod.one('AWS::IAM::Role', 'ProtectionWatchForwardRole');
    const rules = rulesOf(prod);
    expect(rules.length).toBeGreaterThan(8);
    for (const r of rules) {
      const targets = r.Properties.Targets as {
        Arn: unknown;
        RoleArn?: unknown;
        Input?: unknown;
        DeadLetterConfig?: unknown;
      }[];
      const bus = targets.find((t) => t.Arn === production.securityEventBusArn);
      expect(bus, String(r.Properties.Name)).toBeDefined();
      expect(prod.resolve(bus?.RoleArn)).toBe(`arn:${roleId}`);
      expect(bus?.Input).toBeUndefined();
      expect(bus?.DeadLetterConfig).toBeDefined();
    }
    const trust = prod.statementsOf(role.Properties.AssumeRolePolicyDocument);
    const rule = { service: 'events.amazonaws.com' };
    const from = (account: string) => ({
      principal: rule,
      action: 'sts:AssumeRole',
      resource: '*',
      context: {
        'aws:SourceAccount': account,
        'aws:SourceArn': `arn:aws:events:ap-northeast-1:${account}:rule/notifier-prod-protection-key`,
      },
    });
    expect(allows(trust, from('210987654321'))).toBe(true);
    expect(allows(trust, from('999999999999'))).toBe(false);
    const policy = prod.all
      .filter(([id, x]) => x.Type === 'AWS::IAM::Policy' && id.startsWith('ProtectionWatchForwardRole'))
      .flatMap(([, x]) => prod.statementsOf(x.Properties.PolicyDocument));
    expect(policy).toEqual([
      expect.objectContaining({
        Effect: 'Allow',
        Action: 'events:PutEvents',
        Resource: production.securityEventBusArn,
      }),
    ]);
    // Without the setting, the reports stay on the topic.
    for (const r of rulesOf(plain)) expect(r.Properties.Targets).toHaveLength(1);
  });

  it("the bus must be another account's: a copy this account's administrators can delete is no copy", () => {
    const bus = 'arn:aws:events:ap-northeast-1:210987654321:event-bus/security';
    expect(() =>
      parseSettings(
        (k) => ({ ...production, securityEventBusArn: bus })[k as 'stage'],
        Date.parse('2026-12-02T00:00:00Z'),
      ),
    ).toThrow(/"securityEventBusArn" must be a bus of another account than the stack's/);
  });
});

describe('every protection rule fits EventBridge', () => {
  it('its pattern stays within the default 2,048 characters, with every name and ARN at its longest', () => {
    for (const file of [EXAMPLE_ONE_REGION, PRODUCTION_LIKE]) {
      const { all, stack } = readTemplate(file);
      // Refs at a 64-character name (Lambda's and IAM's maximum), ARNs at a 64-character name in a long ARN.
      const longest = (v: unknown): unknown => {
        if (Array.isArray(v)) return v.map(longest);
        if (v === null || typeof v !== 'object') return v;
        const o = v as Record<string, unknown>;
        if ('Ref' in o)
          return String(o.Ref).startsWith('AWS::') ? resolver(stack.account, stack.region)(o) : 'n'.repeat(64);
        if ('Fn::GetAtt' in o) return `arn:aws:lambda:ap-southeast-4:${stack.account}:function:${'n'.repeat(64)}`;
        if ('Fn::Join' in o) {
          const [sep, parts] = o['Fn::Join'] as [string, unknown[]];
          return parts.map((p) => String(longest(p))).join(sep);
        }
        return Object.fromEntries(Object.entries(o).map(([k, x]) => [k, longest(x)]));
      };
      for (const [id, r] of all.filter(([, x]) => x.Type === 'AWS::Events::Rule' && x.Properties.EventPattern)) {
        expect(JSON.stringify(longest(r.Properties.EventPattern)).length, `${file} ${id}`).toBeLessThanOrEqual(2048);
      }
    }
  });
});

/**
 * Every alarm reaches a person: for each alarm in the synthesized template, follow each action to its SNS topic, the
 * topic's resource policy and, when the topic is encrypted, its KMS key's policy, and evaluate them as AWS would for
 * CloudWatch publishing that alarm's notification (the service principal cloudwatch.amazonaws.com, aws:SourceAccount
 * the stack's account, aws:SourceArn the alarm's ARN, over TLS). A topic policy replaces SNS's default policy, so
 * without an explicit Allow the alarm goes to ALARM and its action fails ("no resource-based policy allows the
 * SNS:Publish action"); an AWS managed key (alias/aws/sns) cannot be used by CloudWatch at all.
 *
 * Run on the example settings and on a production-like settings file, with the topic encrypted (the default) and not.
 */
import { describe, expect, it } from 'vitest';
import { allows, list, type Request, resolver, type Statement } from '../support/policy-eval.ts';
import {
  EXAMPLE_ONE_REGION,
  PRODUCTION_LIKE,
  type TemplateResource as Resource,
  synthTemplate,
  type SynthesizedTemplate as Template,
} from '../support/synth.ts';

/** The request CloudWatch makes when it publishes an alarm's notification (or uses the topic's key for it). */
const fromCloudWatch = (action: string, resource: string, context: Request['context']): Request => ({
  principal: { service: 'cloudwatch.amazonaws.com' },
  action,
  resource,
  context,
});

interface AlarmPath {
  readonly alarm: string;
  readonly topic: string;
  readonly publish: boolean;
  /** undefined: the topic is not encrypted. */
  readonly key?: { readonly id: string; readonly decrypt: boolean; readonly generateDataKey: boolean };
}

/** Follows every alarm action of the template to its topic, its policy and its key. */
function alarmPaths(template: Template, account: string, region: string): AlarmPath[] {
  const resolve = resolver(account, region);
  const resources = Object.entries(template.Resources);
  const paths: AlarmPath[] = [];
  for (const [, alarm] of resources.filter(([, r]) => r.Type === 'AWS::CloudWatch::Alarm')) {
    const name = String(alarm.Properties.AlarmName);
    const actions = list(alarm.Properties.AlarmActions).map((a) => String(resolve(a)));
    if (actions.length === 0) throw new Error(`alarm ${name} has no action: it reaches nobody`);
    for (const action of actions) {
      const topicId = /^ref:(.+)$/.exec(action)?.[1];
      if (topicId === undefined || template.Resources[topicId]?.Type !== 'AWS::SNS::Topic') {
        throw new Error(`alarm ${name} acts on ${action}, not on a topic of this stack`);
      }
      const topicArn = `ref:${topicId}`;
      const statements = resources
        .filter(([, r]) => r.Type === 'AWS::SNS::TopicPolicy')
        .filter(([, r]) => list(resolve(r.Properties.Topics)).includes(topicArn))
        .flatMap(([, r]) => list((resolve(r.Properties.PolicyDocument) as { Statement: unknown }).Statement))
        .map((s) => s as Statement);
      const context = {
        'aws:SourceAccount': account,
        'aws:SourceArn': `arn:aws:cloudwatch:${region}:${account}:alarm:${name}`,
        'aws:SecureTransport': 'true',
      };
      const request = fromCloudWatch('sns:Publish', topicArn, context);
      // Without any topic policy SNS's default policy applies, which names the account, not CloudWatch's principal.
      const publish = statements.length > 0 && allows(statements, request);
      const masterKey = template.Resources[topicId]?.Properties.KmsMasterKeyId;
      let key: AlarmPath['key'];
      if (masterKey !== undefined) {
        const keyRef = String(resolve(masterKey));
        const keyId = /^(?:ref|arn):(.+)$/.exec(keyRef)?.[1];
        const keyResource = keyId === undefined ? undefined : template.Resources[keyId];
        if (keyResource?.Type !== 'AWS::KMS::Key') {
          // alias/aws/sns or a key of another stack: CloudWatch cannot be granted it here.
          key = { id: keyRef, decrypt: false, generateDataKey: false };
        } else {
          const keyStatements = list(
            (resolve(keyResource.Properties.KeyPolicy) as { Statement: unknown }).Statement,
          ) as Statement[];
          const kms = (action: string) => allows(keyStatements, fromCloudWatch(action, '*', context));
          key = { id: keyId as string, decrypt: kms('kms:Decrypt'), generateDataKey: kms('kms:GenerateDataKey') };
        }
      }
      paths.push({ alarm: name, topic: topicId, publish, ...(key === undefined ? {} : { key }) });
    }
  }
  return paths;
}

const blocked = (paths: AlarmPath[]) =>
  paths
    .filter((p) => !p.publish || (p.key !== undefined && !(p.key.decrypt && p.key.generateDataKey)))
    .map((p) => `${p.alarm} → ${p.topic}${p.publish ? '' : ' (publish refused)'}${p.key ? ` key ${p.key.id}` : ''}`);

describe('every alarm can reach its topic: CloudWatch may publish, and use the key', () => {
  it.each([
    ['the example settings', EXAMPLE_ONE_REGION, {}],
    ['the example settings, topic not encrypted', EXAMPLE_ONE_REGION, { encryptAlarmTopic: 'false' }],
    ['a production-like settings file', PRODUCTION_LIKE, {}],
  ])('%s', (_name, file, overrides) => {
    const { template, stack } = synthTemplate(file, overrides);
    const paths = alarmPaths(template, stack.account, stack.region);
    expect(paths.length).toBeGreaterThan(20);
    expect(blocked(paths)).toEqual([]);
  });

  it('the walk itself refuses what AWS refuses: a Deny-only policy, another account, a missing key grant', () => {
    const topic = { Type: 'AWS::SNS::Topic', Properties: {} };
    const alarm = { Type: 'AWS::CloudWatch::Alarm', Properties: { AlarmName: 'a', AlarmActions: [{ Ref: 'T' }] } };
    const policy = (statements: Statement[]) => ({
      Type: 'AWS::SNS::TopicPolicy',
      Properties: { Topics: [{ Ref: 'T' }], PolicyDocument: { Statement: statements } },
    });
    const tlsDeny: Statement = {
      Effect: 'Deny',
      Principal: '*',
      Action: 'sns:Publish',
      Resource: { Ref: 'T' } as unknown as string,
      Condition: { Bool: { 'aws:SecureTransport': 'false' } },
    };
    const allowFrom = (account: string): Statement => ({
      Effect: 'Allow',
      Principal: { Service: 'cloudwatch.amazonaws.com' },
      Action: 'sns:Publish',
      Resource: { Ref: 'T' } as unknown as string,
      Condition: { StringEquals: { 'aws:SourceAccount': account } },
    });
    const walk = (resources: Record<string, Resource>) =>
      alarmPaths({ Resources: { A: alarm, T: topic, ...resources } }, '111111111111', 'eu-west-1');
    expect(walk({ P: policy([tlsDeny]) })[0]?.publish).toBe(false);
    expect(walk({ P: policy([tlsDeny, allowFrom('222222222222')]) })[0]?.publish).toBe(false);
    expect(walk({ P: policy([tlsDeny, allowFrom('111111111111')]) })[0]?.publish).toBe(true);
    const encrypted = { ...topic, Properties: { KmsMasterKeyId: 'alias/aws/sns' } };
    expect(walk({ T: encrypted, P: policy([allowFrom('111111111111')]) })[0]?.key).toMatchObject({ decrypt: false });
  });
});

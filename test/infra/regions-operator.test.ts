/**
 * The operator function of a stage in two regions runs promote, demote and reconcile for its own region
 * (lib/regional-operator.ts): told its fence, the other region's and its ingest mapping; allowed its own fence read and
 * written, the other's read only, its own ingest mapping switched and no other, the other region's replica read and
 * settled (reconcile), never an item deleted there. A stage in one region's operator has none of it.
 */
import { App } from 'aws-cdk-lib';
import { describe, expect, it } from 'vitest';
import { createNotifierStacks } from '../../lib/notifier-app.ts';
import { allows, type Request, resolver, type Statement } from '../support/policy-eval.ts';
import { EXAMPLE_ONE_REGION, synthTemplate, type TemplateResource } from '../support/synth.ts';

type Template = { Resources: Record<string, TemplateResource> };
const ACCOUNT = '123456789012';
const [PRIMARY, RECOVERY] = ['ap-northeast-1', 'ap-northeast-3'];

function synth() {
  const app = new App({
    context: { settingsFile: 'examples/settings.example.json', 'aws:cdk:bundling-stacks': [] },
  });
  const { primary, recovery } = createNotifierStacks(app);
  const assembly = app.synth();
  if (recovery === undefined) throw new Error('the example names a recovery region');
  const of = (name: string) => assembly.getStackByName(name).template as Template;
  return { p: of(primary.stackName), r: of(recovery.stackName) };
}

const entries = (t: Template) => Object.entries(t.Resources);
const fnOf = (t: Template, prefix: string) => {
  const found = entries(t).find(([id, r]) => r.Type === 'AWS::Lambda::Function' && id.startsWith(prefix));
  if (found === undefined) throw new Error(`no function ${prefix}`);
  return found[1];
};
const envOf = (t: Template, prefix: string) =>
  (fnOf(t, prefix).Properties.Environment as { Variables: Record<string, unknown> }).Variables;
/** Every statement the function's role holds, resolved as CloudFormation would in `region`. */
const statementsOf = (t: Template, prefix: string, region: string): Statement[] => {
  const role = (fnOf(t, prefix).Properties.Role as { 'Fn::GetAtt': string[] })['Fn::GetAtt'][0] as string;
  const resolve = resolver(ACCOUNT, region);
  return (
    entries(t)
      .filter(([, r]) => r.Type === 'AWS::IAM::Policy' && JSON.stringify(r.Properties.Roles).includes(`"${role}"`))
      .flatMap(([, r]) => (resolve(r.Properties.PolicyDocument) as { Statement: Statement[] }).Statement)
      // An identity policy's statements are the role's own: they apply to it as if they named it.
      .map((s) => ({ ...s, Principal: '*' }))
  );
};
const may = (statements: Statement[], action: string, resource: string) =>
  allows(statements, { principal: { arn: 'operator', account: ACCOUNT }, action, resource, context: {} });

const table = (region: string, name: string) => `arn:aws:dynamodb:${region}:${ACCOUNT}:table/${name}`;
const mapping = (region: string, uuid: string) => `arn:aws:lambda:${region}:${ACCOUNT}:event-source-mapping:${uuid}`;

describe('the operator function of each region, for the region commands', () => {
  const { p, r } = synth();
  const sides = [
    { t: p, region: PRIMARY, other: RECOVERY, otherFence: 'notifier-example-recovery-fence' },
    { t: r, region: RECOVERY, other: PRIMARY, otherFence: 'notifier-example-fence' },
  ];

  it('is told its fence, the other region and its fence, its own ingest mapping, the placement, the timeouts demote waits out and the channel policies', () => {
    for (const { t, other, otherFence } of sides) {
      expect(envOf(t, 'Operator')).toMatchObject({
        FENCE_TABLE_NAME: { Ref: expect.stringMatching(/^FenceTable/) },
        OTHER_REGION: other,
        OTHER_FENCE_TABLE_NAME: otherFence,
        INGEST_MAPPING_ID: { Ref: 'IngestKafkaMapping' },
        SWEEP_SHARDS: envOf(t, 'Ingest').SWEEP_SHARDS,
        INGEST_TIMEOUT_SECONDS: String(fnOf(t, 'Ingest').Properties.Timeout),
        DISPATCH_TIMEOUT_SECONDS: String(fnOf(t, 'Dispatch').Properties.Timeout),
        FAILOVER_LOOKUP_MINUTES: '60',
        // An original still sending is resolved by reconcile as the sweeper would: the same channel policies.
        CHANNEL_POLICIES: envOf(t, 'Dispatch').CHANNEL_POLICIES,
      });
      expect(envOf(t, 'Operator').CHANNEL_POLICIES).toEqual(expect.stringContaining('EMAIL='));
    }
  });

  it('may switch its own ingest mapping and no other, by the ARN IAM names it with (a colon before the UUID)', () => {
    for (const { t, region, other } of sides) {
      const ops = statementsOf(t, 'Operator', region);
      const own = mapping(region, 'ref:IngestKafkaMapping');
      expect(may(ops, 'lambda:UpdateEventSourceMapping', own)).toBe(true);
      expect(may(ops, 'lambda:UpdateEventSourceMapping', mapping(region, '1f2e3d4c-0000-4000-8000-000000000000'))).toBe(
        false,
      );
      expect(may(ops, 'lambda:UpdateEventSourceMapping', mapping(other, 'ref:IngestKafkaMapping'))).toBe(false);
      expect(may(ops, 'lambda:DeleteEventSourceMapping', own)).toBe(false);
      // The keeper's own switch (it disables the intake of a region that fenced itself) is named the same way.
      expect(may(statementsOf(t, 'Sweeper', region), 'lambda:UpdateEventSourceMapping', own)).toBe(true);
    }
  });

  it("reads and writes its own fence, and only reads the other region's", () => {
    for (const { t, region, other, otherFence } of sides) {
      const ops = statementsOf(t, 'Operator', region);
      const fenceId = entries(t).find(([id, x]) => x.Type === 'AWS::DynamoDB::Table' && id.startsWith('FenceTable'));
      const ownFence = `arn:${fenceId?.[0]}`;
      for (const action of ['GetItem', 'PutItem', 'UpdateItem']) {
        expect(may(ops, `dynamodb:${action}`, ownFence), action).toBe(true);
      }
      expect(may(ops, 'dynamodb:GetItem', table(other, otherFence))).toBe(true);
      for (const action of ['PutItem', 'UpdateItem', 'DeleteItem']) {
        expect(may(ops, `dynamodb:${action}`, table(other, otherFence)), action).toBe(false);
      }
    }
  });

  it("reaches the other region's replica to settle the old region's records: reads and conditional writes, never a delete", () => {
    for (const { t, region, other } of sides) {
      const ops = statementsOf(t, 'Operator', region);
      const replica = table(other, 'notifier-example-notifications');
      for (const action of ['GetItem', 'Query']) {
        expect(may(ops, `dynamodb:${action}`, replica), action).toBe(true);
      }
      expect(may(ops, 'dynamodb:Query', `${replica}/index/sweep`)).toBe(true);
      expect(may(ops, 'dynamodb:DeleteItem', replica)).toBe(false);
      expect(may(ops, 'dynamodb:Scan', replica)).toBe(false);
    }
  });
});

describe("the operator's writes in the other region's replica", () => {
  const { p, r } = synth();
  const sides = [
    { t: p, region: PRIMARY, other: RECOVERY },
    { t: r, region: RECOVERY, other: PRIMARY },
  ];
  // Reconcile's move of an original (DynamoSuccessorStore.move): the key, the condition's attributes, what it sets.
  const move = {
    'dynamodb:LeadingKeys': ['EVENT#trf-1'],
    'dynamodb:Attributes': ['pk', 'sk', 'status', 'epoch', 'updatedAt', 'handedOverTo', 'sweepKey', 'sweepAt'],
  };
  const write = (ops: Statement[], action: string, resource: string, context: Request['context']) =>
    allows(ops, { principal: { arn: 'operator', account: ACCOUNT }, action, resource, context });

  it('lets reconcile move a notification item there, and nothing else: no put, no other partition, no other attribute, no whole item returned', () => {
    for (const { t, region, other } of sides) {
      const ops = statementsOf(t, 'Operator', region);
      const replica = table(other, 'notifier-example-notifications');
      expect(write(ops, 'dynamodb:UpdateItem', replica, move), 'a move').toBe(true);
      expect(write(ops, 'dynamodb:UpdateItem', replica, { ...move, 'dynamodb:ReturnValues': 'NONE' })).toBe(true);
      expect(write(ops, 'dynamodb:PutItem', replica, move), 'a put').toBe(false);
      const inbox = { ...move, 'dynamodb:LeadingKeys': ['USER#u-42'] };
      expect(write(ops, 'dynamodb:UpdateItem', replica, inbox), 'a preference or suppression partition').toBe(false);
      const recipient = { ...move, 'dynamodb:Attributes': [...move['dynamodb:Attributes'], 'recipient'] };
      expect(write(ops, 'dynamodb:UpdateItem', replica, recipient), "rewriting a notice's recipient").toBe(false);
      const whole = { ...move, 'dynamodb:ReturnValues': 'ALL_NEW' };
      expect(write(ops, 'dynamodb:UpdateItem', replica, whole), 'the whole item returned').toBe(false);
    }
  });
});

describe('who may run the region commands', () => {
  const { p, r } = synth();
  const DR = 'arn:aws:iam::123456789012:role/notifier-dr-operators';
  const SUPPORT = 'arn:aws:iam::123456789012:role/notifier-support';
  /** The operator API's resource policy; the callers' own IAM policies are taken to allow the API (same account). */
  const invoke = (t: Template, region: string, principal: string, path: string) => {
    const api = entries(t).find(([, x]) => x.Type === 'AWS::ApiGateway::RestApi')?.[1];
    const policy = resolver(ACCOUNT, region)(api?.Properties.Policy) as { Statement: Statement[] };
    const callersOwn: Statement = { Effect: 'Allow', Principal: '*', Action: 'execute-api:Invoke', Resource: '*' };
    return allows([...policy.Statement, callersOwn], {
      principal: { arn: principal, account: ACCOUNT },
      action: 'execute-api:Invoke',
      resource: `execute-api:/ops/${path}`,
      context: { 'aws:PrincipalArn': principal },
    });
  };

  it('each region’s operator API refuses promote, demote and reconcile to every role but the ones the settings name; the other routes stay open to IAM', () => {
    for (const [t, region] of [
      [p, PRIMARY],
      [r, RECOVERY],
    ] as const) {
      for (const command of ['promote', 'demote', 'reconcile']) {
        for (const step of ['preview', 'confirm']) {
          expect(invoke(t, region, DR, `POST/regions/${command}/${step}`), `${command} by the DR role`).toBe(true);
          expect(invoke(t, region, SUPPORT, `POST/regions/${command}/${step}`), `${command} by support`).toBe(false);
        }
      }
      expect(invoke(t, region, SUPPORT, 'POST/actions/resend/preview'), 'a resend by support').toBe(true);
    }
  });

  it('a stage in two regions without regionCommandPrincipals does not synthesize, and says why', () => {
    const app = new App({
      context: {
        settingsFile: 'examples/settings.example.json',
        regionCommandPrincipals: [],
        'aws:cdk:bundling-stacks': [],
      },
    });
    expect(() => createNotifierStacks(app)).toThrow(/regionCommandPrincipals: name the IAM role ARNs/);
  });
});

describe('the operator function of a stage in one region', () => {
  it('has no region commands: no fence, no mapping to switch', () => {
    const { template } = synthTemplate(EXAMPLE_ONE_REGION);
    const t = template as unknown as Template;
    expect(envOf(t, 'Operator').FENCE_TABLE_NAME).toBeUndefined();
    expect(envOf(t, 'Operator').INGEST_MAPPING_ID).toBeUndefined();
    const ops = statementsOf(t, 'Operator', PRIMARY);
    expect(ops.some((s) => JSON.stringify(s.Action).includes('EventSourceMapping'))).toBe(false);
  });

  it("reads the stage's channel policies as dispatch has them: a resend's preview says what a second copy means", () => {
    const { template } = synthTemplate(EXAMPLE_ONE_REGION);
    const t = template as unknown as Template;
    expect(envOf(t, 'Operator').CHANNEL_POLICIES).toEqual(envOf(t, 'Dispatch').CHANNEL_POLICIES);
    expect(envOf(t, 'Operator').CHANNEL_POLICIES).toEqual(expect.stringContaining('SMS='));
  });
});

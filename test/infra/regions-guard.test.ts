/**
 * The table's guard on a stage in two regions (docs/regions.md "The stack for two regions"): each replica of the
 * global table lets only its own region's functions, DynamoDB's replication and break glass write items; its policy
 * changes only by break glass or the primary's deploy (whose CloudFormation puts both); each region reports every
 * change to its own replica's policy.
 */
import { App, Stack } from 'aws-cdk-lib';
import { type CfnRole, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import { describe, expect, it } from 'vitest';
import { createNotifierStacks } from '../../lib/notifier-app.ts';
import { fixRoleNames } from '../../lib/regional.ts';
import { denies, resolver, type Statement } from '../support/policy-eval.ts';
import type { SynthesizedTemplate, TemplateResource } from '../support/synth.ts';

const ACCOUNT = '123456789012';
const [PRIMARY, RECOVERY] = ['ap-northeast-1', 'ap-northeast-3'];
const REPLICATION = `arn:aws:iam::${ACCOUNT}:role/aws-service-role/replication.dynamodb.amazonaws.com/AWSServiceRoleForDynamoDBReplication`;
const ADMIN = `arn:aws:iam::${ACCOUNT}:role/Admin`;
const deployer = (region: string) => `arn:aws:iam::${ACCOUNT}:role/cdk-hnb659fds-cfn-exec-role-${ACCOUNT}-${region}`;

function synth(overrides: Record<string, unknown> = {}) {
  const app = new App({
    context: { settingsFile: 'examples/settings.example.json', ...overrides, 'aws:cdk:bundling-stacks': [] },
  });
  const { primary, recovery } = createNotifierStacks(app);
  const assembly = app.synth();
  const of = (name: string | undefined) => assembly.getStackByName(String(name)).template as SynthesizedTemplate;
  return { p: of(primary.stackName), r: of(recovery?.stackName) };
}

const resources = (t: SynthesizedTemplate) => Object.entries(t.Resources) as [string, TemplateResource][];
type Replica = { Region: string; ResourcePolicy?: { PolicyDocument: unknown } };
const replicasOf = (p: SynthesizedTemplate) => {
  const [, table] = resources(p).find(([, r]) => r.Type === 'AWS::DynamoDB::GlobalTable') as [string, TemplateResource];
  return table.Properties.Replicas as Replica[];
};
const policyOf = (p: SynthesizedTemplate, region: string) => {
  const replica = replicasOf(p).find((r) => r.Region === region);
  return (resolver(ACCOUNT, region)(replica?.ResourcePolicy?.PolicyDocument) as { Statement: Statement[] } | undefined)
    ?.Statement;
};
/** A role of the template: by the name it is given (the recovery stack's), else by its logical id as resolved. */
const roleArn = (t: SynthesizedTemplate, prefix: string) => {
  const [id, role] = resources(t).find(([i, r]) => r.Type === 'AWS::IAM::Role' && i.startsWith(prefix)) ?? [];
  if (id === undefined || role === undefined) throw new Error(`no role ${prefix}`);
  const name = role.Properties.RoleName;
  return typeof name === 'string' ? `arn:aws:iam::${ACCOUNT}:role/${name}` : `arn:${id}`;
};
const refused = (statements: Statement[] | undefined, who: string, action: string) =>
  denies(statements ?? [], {
    principal: { arn: who, account: ACCOUNT },
    action,
    resource: '*',
    context: { 'aws:PrincipalArn': who },
  });

const WRITES = ['PutItem', 'UpdateItem', 'DeleteItem', 'BatchWriteItem', 'TransactWriteItems', 'PartiQLInsert'];
const WRITERS = ['IngestRole', 'DispatchRole', 'SweeperRole', 'OperatorRole', 'DeliveryFeedbackFunctionRole'];

describe("the global table's guard, on both replicas", () => {
  const { p, r } = synth();
  const primaryPolicy = policyOf(p, PRIMARY);
  const recoveryPolicy = policyOf(p, RECOVERY);

  it("each replica lets only its own region's functions, the other region's operator, DynamoDB's replication and break glass write items", () => {
    for (const action of WRITES.map((w) => `dynamodb:${w}`)) {
      for (const [policy, own, other] of [
        [primaryPolicy, p, r],
        [recoveryPolicy, r, p],
      ] as const) {
        for (const writer of [...WRITERS, 'EvidenceBreakGlassRole']) {
          expect(refused(policy, roleArn(own, writer), action), `${action} by its own ${writer}`).toBe(false);
          // The other region's functions write their own replica only: here they are refused — but its operator,
          // whose reconcile settles the old region's records where they live.
          if (writer !== 'EvidenceBreakGlassRole') {
            const allowed = writer === 'OperatorRole';
            expect(refused(policy, roleArn(other, writer), action), `${action} by the other ${writer}`).toBe(!allowed);
          }
        }
        expect(refused(policy, REPLICATION, action), `${action} by DynamoDB's replication`).toBe(false);
        expect(refused(policy, ADMIN, action), `${action} by an administrator`).toBe(true);
        expect(refused(policy, roleArn(own, 'EvidenceReaderRole'), action), `${action} by the reader`).toBe(true);
      }
      // Break glass of either region may write the recovery replica (the primary's may be all that is left).
      expect(refused(recoveryPolicy, roleArn(p, 'EvidenceBreakGlassRole'), action)).toBe(false);
    }
    expect(refused(recoveryPolicy, ADMIN, 'dynamodb:GetItem')).toBe(false);
  });

  it("each replica lets the other region's ingest read it (its look-up of events read again), and write nothing", () => {
    for (const [policy, other] of [
      [primaryPolicy, r],
      [recoveryPolicy, p],
    ] as const) {
      const ingest = roleArn(other, 'IngestRole');
      expect(refused(policy, ingest, 'dynamodb:Query'), 'Query by the other region').toBe(false);
      expect(refused(policy, ingest, 'dynamodb:GetItem'), 'GetItem by the other region').toBe(false);
      expect(refused(policy, ingest, 'dynamodb:PutItem'), 'PutItem by the other region').toBe(true);
    }
  });

  it("the recovery stack's writers have fixed names, so a role merely named like them is still refused", () => {
    for (const writer of [...WRITERS, 'EvidenceBreakGlassRole']) {
      // The stack's name first, as every notifier role (an SCP on `role/notifier-*` covers them).
      expect(roleArn(r, writer)).toMatch(
        /^arn:aws:iam::123456789012:role\/notifier-example-recovery-[A-Za-z]+[0-9A-F]{8}$/,
      );
    }
    const lookalike = `arn:aws:iam::${ACCOUNT}:role/notifier-example-recovery-IngestRole00000000`;
    expect(refused(recoveryPolicy, lookalike, 'dynamodb:PutItem')).toBe(true);
  });

  it("each replica's policy changes only by break glass or the primary's deploy, and each region reports its own replica's changes", () => {
    for (const [policy, own] of [
      [primaryPolicy, p],
      [recoveryPolicy, r],
    ] as const) {
      for (const action of ['dynamodb:PutResourcePolicy', 'dynamodb:DeleteResourcePolicy']) {
        expect(refused(policy, ADMIN, action), action).toBe(true);
        expect(refused(policy, roleArn(own, 'OperatorRole'), action), action).toBe(true);
        // The primary's CloudFormation puts both replicas' policies: its execution role, not the recovery's.
        expect(refused(policy, deployer(PRIMARY), action), action).toBe(false);
        expect(refused(policy, deployer(RECOVERY), action), action).toBe(true);
        expect(refused(policy, roleArn(own, 'EvidenceBreakGlassRole'), action), action).toBe(false);
      }
    }
    // The primary's names its replica by the global table's Arn (that of the replica in the stack's region); the
    // recovery's by its fixed name in its own region, where DynamoDB logs the calls on it.
    for (const [t, region, arn] of [
      [p, PRIMARY, 'arn:GlobalTable'],
      [r, RECOVERY, `arn:aws:dynamodb:${RECOVERY}:${ACCOUNT}:table/notifier-example-notifications`],
    ] as const) {
      const watched = resources(t)
        .filter(([id, x]) => x.Type === 'AWS::Events::Rule' && id.startsWith('ProtectionWatchTablePolicy'))
        .map(([, x]) => JSON.stringify(resolver(ACCOUNT, region)(x.Properties.EventPattern)));
      expect(watched, region).toEqual([expect.stringContaining(arn)]);
      expect(watched[0]).toContain('PutResourcePolicy');
    }
  });

  it("a fixed name fits IAM's 64 characters for the longest stage, keeping the logical id's hash", () => {
    const stack = new Stack(new App(), 'notifier-abcdefghijklmnopqrst-recovery');
    const role = new Role(new Construct(stack, 'DeliveryFeedback'), 'FunctionRole', {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
    });
    fixRoleNames([role]);
    const name = (role.node.defaultChild as CfnRole).roleName as string;
    expect(name).toMatch(/^notifier-abcdefghijklmnopqrst-recovery-DeliveryFeedbackF[0-9A-F]{8}$/);
    expect(name).toHaveLength(64);
  });

  it('replicaGuard false leaves the recovery replica without a policy (the deploy that creates it), the primary guarded', () => {
    const off = synth({ replicaGuard: 'false' });
    expect(policyOf(off.p, RECOVERY)).toBeUndefined();
    expect(refused(policyOf(off.p, PRIMARY), ADMIN, 'dynamodb:PutItem')).toBe(true);
  });
});

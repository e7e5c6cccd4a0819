/**
 * The evidence index's own table (lib/evidence-index-table.ts), on the example settings and a bank's production
 * settings: Standard-IA, point-in-time recovery, deletion protection, retained, under the bank's key where given; outside
 * the AWS Backup plan (which selects the main table alone); written only by dispatch and the sweeper (BatchWriteItem,
 * UpdateItem: no delete, no read), read only by the operator function, the console and the evidence reader — nobody
 * else writes an item, whatever their IAM policy says; each told its name. In a stage of two regions, a table per
 * region beside its evidence bucket, never replicated.
 */
import { App } from 'aws-cdk-lib';
import { describe, expect, it } from 'vitest';
import { createNotifierStacks } from '../../lib/notifier-app.ts';
import { allows, denies, type Principal, type Request } from '../support/policy-eval.ts';
import { EXAMPLE_ONE_REGION, PRODUCTION_LIKE, readTemplate, type TemplateResource } from '../support/synth.ts';
import production from './fixtures/settings.production.json' with { type: 'json' };

function read(file: string) {
  const t = readTemplate(file);
  const [tableId, table] = t.one('AWS::DynamoDB::Table', 'EvidenceIndexTable');
  const roleOf = (fnPrefix: string) => {
    const [, fn] = t.one('AWS::Lambda::Function', fnPrefix);
    return (fn.Properties.Role as { 'Fn::GetAtt': string[] })['Fn::GetAtt'][0] as string;
  };
  /** What a role holds: the AWS::IAM::Policy resources attached to it (and its inline policies). */
  const statementsOfRole = (roleId: string) => {
    const role = t.template.Resources[roleId] as TemplateResource;
    const inline = ((role.Properties.Policies as { PolicyDocument: unknown }[] | undefined) ?? []).flatMap((p) =>
      t.statementsOf(p.PolicyDocument),
    );
    const attached = t.all
      .filter(([, p]) => p.Type === 'AWS::IAM::Policy' && JSON.stringify(p.Properties.Roles).includes(`"${roleId}"`))
      .flatMap(([, p]) => t.statementsOf(p.Properties.PolicyDocument));
    // An identity policy names no principal: it is the role's own.
    return [...inline, ...attached].map((st) => ({ ...st, Principal: '*' as const }));
  };
  const envOf = (fnPrefix: string) =>
    (t.one('AWS::Lambda::Function', fnPrefix)[1].Properties.Environment as { Variables: Record<string, unknown> })
      .Variables;
  return { ...t, tableId, table, roleOf, statementsOfRole, envOf };
}

const ask = (principal: Principal, action: string, resource: string): Request => ({
  principal,
  action,
  resource,
  context: { 'aws:SecureTransport': 'true', 'aws:PrincipalArn': principal.arn },
});
const WRITES = ['dynamodb:BatchWriteItem', 'dynamodb:UpdateItem'];
const ITEM_CHANGES = [...WRITES, 'dynamodb:PutItem', 'dynamodb:DeleteItem'];

describe.each([
  ['the example settings', EXAMPLE_ONE_REGION, false],
  ["a bank's production settings", PRODUCTION_LIKE, true],
])('the evidence index table, %s', (_name, file, production_) => {
  const s = read(file);
  const arn = `arn:${s.tableId}`;

  it('Standard-IA, on demand, TTL on expiresAt, point-in-time recovery, deletion protection, retained; no stream', () => {
    expect(s.table.DeletionPolicy).toBe('Retain');
    expect((s.table as { UpdateReplacePolicy?: string }).UpdateReplacePolicy).toBe('Retain');
    expect(s.table.Properties).toMatchObject({
      TableClass: 'STANDARD_INFREQUENT_ACCESS',
      BillingMode: 'PAY_PER_REQUEST',
      DeletionProtectionEnabled: true,
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      TimeToLiveSpecification: { AttributeName: 'expiresAt', Enabled: true },
    });
    expect(s.table.Properties.StreamSpecification).toBeUndefined();
  });

  it("encrypted as the main table is: under the bank's key where the settings give one", () => {
    const [, main] = s.one('AWS::DynamoDB::Table', 'Table');
    expect(s.table.Properties.SSESpecification).toEqual(main.Properties.SSESpecification);
    if (production_) {
      expect(s.table.Properties.SSESpecification).toMatchObject({
        SSEEnabled: true,
        KMSMasterKeyId: production.kmsKeyArn,
      });
    }
  });

  it('outside the AWS Backup plan: the plan selects the main table alone', () => {
    const selections = s.all.filter(([, r]) => r.Type === 'AWS::Backup::BackupSelection');
    expect(selections).toHaveLength(production_ ? 1 : 0);
    for (const [, selection] of selections) {
      const selected = JSON.stringify(selection.Properties);
      expect(selected).toMatch(/"Fn::GetAtt":\["Table[0-9A-F]+","Arn"\]/);
      expect(selected).not.toContain(s.tableId);
    }
  });

  it('dispatch and the sweeper write it (BatchWriteItem, UpdateItem) and neither read nor delete; the readers only Query', () => {
    for (const writer of ['Dispatch', 'Sweeper']) {
      const role = s.statementsOfRole(s.roleOf(writer));
      const me = { arn: `arn:${s.roleOf(writer)}`, account: s.stack.account };
      for (const action of WRITES) expect(allows(role, ask(me, action, arn)), `${writer} ${action}`).toBe(true);
      for (const action of ['dynamodb:DeleteItem', 'dynamodb:Query', 'dynamodb:Scan', 'dynamodb:PutItem']) {
        expect(allows(role, ask(me, action, arn)), `${writer} ${action}`).toBe(false);
      }
    }
    const readers = [
      ['Operator', s.statementsOfRole(s.roleOf('Operator'))],
      ['EvidenceReaderRole', s.statementsOfRole(s.one('AWS::IAM::Role', 'EvidenceReaderRole')[0])],
      ...(production_ ? [['ConsoleApi', s.statementsOfRole(s.roleOf('SupportConsoleApiFunction'))] as const] : []),
    ] as const;
    for (const [who, role] of readers) {
      const me = { arn: `arn:${who}`, account: s.stack.account };
      expect(allows(role, ask(me, 'dynamodb:Query', arn)), `${who} Query`).toBe(true);
      for (const action of [...ITEM_CHANGES, 'dynamodb:Scan']) {
        expect(allows(role, ask(me, action, arn)), `${who} ${action}`).toBe(false);
      }
    }
    for (const other of ['Ingest', 'DeliveryFeedbackFunction']) {
      const role = s.statementsOfRole(s.roleOf(other));
      const me = { arn: `arn:${s.roleOf(other)}`, account: s.stack.account };
      for (const action of [...ITEM_CHANGES, 'dynamodb:Query']) {
        expect(allows(role, ask(me, action, arn)), `${other} ${action}`).toBe(false);
      }
    }
  });

  it("nobody else writes an item, whatever their IAM policy says: the table's policy denies it to an administrator", () => {
    const policy = s.statementsOf(
      (s.table.Properties.ResourcePolicy as { PolicyDocument: unknown } | undefined)?.PolicyDocument,
    );
    const admin = { arn: `arn:aws:iam::${s.stack.account}:role/Admin`, account: s.stack.account };
    for (const action of ITEM_CHANGES) expect(denies(policy, ask(admin, action, '*')), action).toBe(true);
    const dispatch = { arn: `arn:${s.roleOf('Dispatch')}`, account: s.stack.account };
    expect(denies(policy, ask(dispatch, 'dynamodb:BatchWriteItem', '*'))).toBe(false);
  });

  it('each function that uses it is told its name', () => {
    const functions = ['Dispatch', 'Sweeper', 'Operator', ...(production_ ? ['SupportConsoleApiFunction'] : [])];
    for (const fn of functions) {
      expect(s.envOf(fn).EVIDENCE_INDEX_TABLE_NAME, fn).toEqual({ Ref: s.tableId });
    }
    expect(s.envOf('DeliveryFeedbackFunction').EVIDENCE_INDEX_TABLE_NAME).toBeUndefined();
  });
});

describe('the evidence index in a stage of two regions', () => {
  it('a table of its own in each region, beside that region’s evidence bucket: not a global table', () => {
    const app = new App({
      context: { settingsFile: 'examples/settings.example.json', 'aws:cdk:bundling-stacks': [] },
    });
    const { primary, recovery } = createNotifierStacks(app);
    const assembly = app.synth();
    for (const stack of [primary, recovery]) {
      if (stack === undefined) throw new Error('the example names a recovery region');
      const resources = Object.entries(
        (assembly.getStackByName(stack.stackName).template as { Resources: Record<string, TemplateResource> })
          .Resources,
      );
      const index = resources.filter(([id, r]) => r.Type === 'AWS::DynamoDB::Table' && id.startsWith('EvidenceIndex'));
      expect(index, stack.stackName).toHaveLength(1);
      expect(index[0]?.[1].Properties.TableClass).toBe('STANDARD_INFREQUENT_ACCESS');
      expect(resources.filter(([id]) => id.startsWith('EvidenceIndex') && id.includes('Global'))).toEqual([]);
    }
  });
});

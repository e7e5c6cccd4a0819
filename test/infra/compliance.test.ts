/**
 * Rule sets nobody on the team wrote, on the two templates a bank would read: the example settings, and a bank's
 * production settings (its own KMS key, an alarm address, a Confluent registry with a secret, the S3 endpoint,
 * reserved dispatch concurrency, replication to a log-archive account, backup, the VPC). cdk-nag's AwsSolutions,
 * Serverless, PCI DSS 3.2.1, NIST 800-53 r5 and HIPAA packs, and Control Tower's proactive controls run by
 * cfn-guard (@cdklabs/cdk-validator-cfnguard, its own binary, offline) through CDK's validation, as `cdk synth`
 * runs them (bin/notifier.ts): zero findings without an acknowledgement in lib/, and every acknowledgement gives a
 * reason, not a shrug.
 */
import { App, Validations } from 'aws-cdk-lib';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Bucket } from 'aws-cdk-lib/aws-s3';
import {
  AwsSolutionsChecks,
  HIPAASecurityChecks,
  type NagPack,
  NIST80053R5Checks,
  PCIDSS321Checks,
  ServerlessChecks,
} from 'cdk-nag';
import type { IConstruct } from 'constructs';
import { describe, expect, it } from 'vitest';
import { addRuleSets, openFindings } from '../../lib/compliance.ts';
import { logsKeyOf } from '../../lib/logs-key.ts';
import { createNotifierStack, createNotifierStacks } from '../../lib/notifier-app.ts';
import { EXAMPLE_ONE_REGION, PRODUCTION_LIKE, PRODUCTION_TWO_REGIONS } from '../support/synth.ts';

const TEMPLATES = [
  ['the example settings', 'examples/settings.example.json'],
  ["a bank's production settings", PRODUCTION_LIKE],
  ["a bank's production settings in two regions", PRODUCTION_TWO_REGIONS],
] as const;
const PACKS: [string, () => NagPack][] = [
  ['AwsSolutions', () => new AwsSolutionsChecks()],
  ['Serverless', () => new ServerlessChecks()],
  ['PCI DSS 3.2.1', () => new PCIDSS321Checks()],
  ['NIST 800-53 r5', () => new NIST80053R5Checks()],
  ['HIPAA Security', () => new HIPAASecurityChecks()],
];

const appOf = (file: string) => new App({ context: { settingsFile: file, 'aws:cdk:bundling-stacks': [] } });

/** Every acknowledgement recorded in the construct tree: rule id, where, and why. */
function acknowledgements(root: IConstruct): { id: string; path: string; reason: string }[] {
  return root.node
    .findAll()
    .flatMap((c) =>
      c.node.metadata
        .filter((m) => m.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY)
        .flatMap((m) =>
          Object.entries(m.data as Record<string, string>).map(([id, reason]) => ({ id, path: c.node.path, reason })),
        ),
    );
}

describe.each(TEMPLATES)('%s', (_name, file) => {
  const app = appOf(file);
  const { primary: stack, recovery } = createNotifierStacks(app);

  it.each(PACKS)('cdk-nag %s: zero unacknowledged findings, in each region the settings name', (_pack, pack) => {
    for (const scope of recovery === undefined ? [stack] : [stack, recovery]) {
      const report = pack().validateScope(scope);
      expect(report.violations.map((v) => `${v.ruleName}: ${JSON.stringify(v.violatingResources)}`)).toEqual([]);
    }
  });

  it("every rule set as `cdk synth` runs them, Control Tower's proactive controls (cfn-guard) included: nothing open", () => {
    const checked = appOf(file);
    createNotifierStack(checked);
    addRuleSets(checked);
    const assembly = checked.synth();
    expect(openFindings(assembly)).toEqual([]);
    // The example names a recovery region: two stacks, cfn-guard over each, with the guard on both replicas.
    const stacks = assembly.stacks.map(
      (s) =>
        s.template as {
          Resources: Record<string, { Type: string; Properties: { Replicas?: { ResourcePolicy?: unknown }[] } }>;
        },
    );
    expect(stacks).toHaveLength(file === PRODUCTION_LIKE ? 1 : 2);
    const globalTables = stacks.flatMap((t) =>
      Object.values(t.Resources).filter((r) => r.Type === 'AWS::DynamoDB::GlobalTable'),
    );
    for (const table of globalTables) {
      for (const replica of table.Properties.Replicas ?? []) expect(replica.ResourcePolicy).toBeDefined();
    }
    expect(globalTables).toHaveLength(file === PRODUCTION_LIKE ? 0 : 1);
  }, 360_000);

  it('every acknowledgement says why in words an auditor can check, never "not needed"', () => {
    const acks = acknowledgements(app);
    expect(acks.length).toBeGreaterThan(40);
    for (const a of acks) {
      expect(a.reason.length, `${a.id} at ${a.path}`).toBeGreaterThan(60);
      expect(a.reason, `${a.id} at ${a.path}`).not.toMatch(/\b(not needed|n\/a|todo|tbd|ignore)\b/i);
    }
  });
});

// One stack is enough to prove the check bites: the example as a stage in one region.
describe('the check bites', () => {
  it('a resource without the controls fails the synth, naming each rule set and the resource', () => {
    const app = appOf(EXAMPLE_ONE_REGION);
    const stack = createNotifierStack(app);
    // A bucket with none of the controls: no logging, no versioning, no Object Lock, no KMS, no TLS-only policy.
    new Bucket(stack, 'Careless');
    addRuleSets(app);
    // One synth (each runs every rule set, cfn-guard included: minutes on a loaded two-core machine), its error read twice.
    let refused = '';
    try {
      app.synth();
    } catch (e) {
      refused = String((e as Error).message);
    }
    expect(refused).toMatch(
      /notifier-example\/Careless[\s\S]*CT\.S3\.PR\.2|CT\.S3\.PR\.2[\s\S]*notifier-example\/Careless/,
    );
    expect(refused).toMatch(/PCI\.DSS\.321/);
  }, 360_000);

  it('a finding only Control Tower reports is still open: the synth reads the report itself', () => {
    const app = appOf(EXAMPLE_ONE_REGION);
    const stack = createNotifierStack(app);
    // Encrypted (cdk-nag is content) but kept a week: CT.CLOUDWATCH.PR.2 alone, and CDK would let it pass.
    new LogGroup(stack, 'ShortLived', { retention: RetentionDays.ONE_WEEK, encryptionKey: logsKeyOf(stack) });
    addRuleSets(app);
    expect(openFindings(app.synth())).toEqual([
      expect.stringMatching(
        /^cdk-validator-cfnguard cloudwatch_log_group_retention_period_check at notifier-example\/ShortLived/,
      ),
    ]);
  }, 360_000);
});

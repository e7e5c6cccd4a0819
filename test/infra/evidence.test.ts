/**
 * The evidence store as synthesized: Object Lock with the retention and mode the settings name, SSE-KMS under a
 * rotated key (or the stack's own key), versioning, a lifecycle that ends with the retention, a policy nobody can
 * bypass, write-once grants for the three functions that write evidence, and the output the ops CLI reads.
 */
import { App } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { EVIDENCE_ENVIRONMENT } from '../../functions/contracts/environment.ts';
import { SPOOL_SHARDS } from '../../functions/domain/evidence-spool.ts';
import { createNotifierStack } from '../../lib/notifier-app.ts';
import { EXAMPLE_ONE_REGION } from '../support/synth.ts';

type Resource = { Type: string; Properties: Record<string, unknown>; DeletionPolicy?: string };
type Statement = { Action: string | string[]; Resource?: unknown; Effect: string; Condition?: unknown };

function synth(overrides: Record<string, unknown> = {}) {
  const app = new App({
    context: { settingsFile: EXAMPLE_ONE_REGION, ...overrides, 'aws:cdk:bundling-stacks': [] },
  });
  const template = Template.fromStack(createNotifierStack(app));
  const json = template.toJSON() as { Resources: Record<string, Resource>; Outputs: Record<string, unknown> };
  const evidenceBucket = () => {
    const found = Object.entries(json.Resources).find(
      ([, r]) => r.Type === 'AWS::S3::Bucket' && r.Properties.ObjectLockEnabled === true,
    );
    if (found === undefined) throw new Error('no Object Lock bucket');
    return found;
  };
  const envOf = (prefix: string) => {
    const fn = Object.entries(json.Resources).find(
      ([id, r]) => r.Type === 'AWS::Lambda::Function' && id.startsWith(prefix),
    );
    return ((fn?.[1].Properties.Environment as { Variables: Record<string, unknown> }) ?? { Variables: {} }).Variables;
  };
  const statementsOf = (prefix: string): Statement[] => {
    const fn = Object.entries(json.Resources).find(
      ([id, r]) => r.Type === 'AWS::Lambda::Function' && id.startsWith(prefix),
    );
    if (fn === undefined) throw new Error(`no function ${prefix}`);
    const role = (fn[1].Properties.Role as { 'Fn::GetAtt': string[] })['Fn::GetAtt'][0];
    return Object.values(json.Resources)
      .filter((r) => r.Type === 'AWS::IAM::Policy' && JSON.stringify(r.Properties.Roles).includes(String(role)))
      .flatMap((r) => (r.Properties.PolicyDocument as { Statement: Statement[] }).Statement);
  };
  return { template, json, evidenceBucket, envOf, statementsOf };
}

const base = synth();

describe('the evidence store', () => {
  it('locks every object for the retention (GOVERNANCE by default), versioned, encrypted with a rotated key, retained', () => {
    const [id, bucket] = base.evidenceBucket();
    expect(bucket.DeletionPolicy).toBe('Retain');
    expect(bucket.Properties).toMatchObject({
      ObjectLockEnabled: true,
      ObjectLockConfiguration: {
        ObjectLockEnabled: 'Enabled',
        Rule: { DefaultRetention: { Mode: 'GOVERNANCE', Days: EVIDENCE_ENVIRONMENT.EVIDENCE_RETENTION_DAYS.default } },
      },
      VersioningConfiguration: { Status: 'Enabled' },
      PublicAccessBlockConfiguration: { BlockPublicAcls: true, RestrictPublicBuckets: true },
      BucketEncryption: {
        ServerSideEncryptionConfiguration: [
          { BucketKeyEnabled: true, ServerSideEncryptionByDefault: { SSEAlgorithm: 'aws:kms' } },
        ],
      },
    });
    base.template.hasResourceProperties('AWS::KMS::Key', { EnableKeyRotation: true });
    expect(id).toMatch(/^Evidence/);
  });

  it('expires an object the day after its retention ends, never before', () => {
    const [, bucket] = base.evidenceBucket();
    expect(bucket.Properties.LifecycleConfiguration).toEqual({
      Rules: [
        {
          Id: 'expire-after-the-retention',
          Status: 'Enabled',
          ExpirationInDays: EVIDENCE_ENVIRONMENT.EVIDENCE_RETENTION_DAYS.default + 1,
          NoncurrentVersionExpiration: { NoncurrentDays: 1 },
          AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 },
        },
        { Id: 'remove-expired-delete-markers', Status: 'Enabled', ExpiredObjectDeleteMarker: true },
      ],
    });
  });

  it('takes the retention and COMPLIANCE mode from the settings', () => {
    const s = synth({ evidenceRetentionDays: '3650', evidenceLockMode: 'COMPLIANCE' });
    const [, bucket] = s.evidenceBucket();
    expect(bucket.Properties.ObjectLockConfiguration).toMatchObject({
      Rule: { DefaultRetention: { Mode: 'COMPLIANCE', Days: 3650 } },
    });
    expect(s.envOf('Dispatch')).toMatchObject({ EVIDENCE_LOCK_MODE: 'COMPLIANCE', EVIDENCE_RETENTION_DAYS: '3650' });
    expect(() => synth({ evidenceLockMode: 'LEGAL_HOLD' })).toThrow(/evidenceLockMode/);
  });

  it('denies bypassing the retention to every principal, and refuses plain HTTP', () => {
    const [bucketId] = base.evidenceBucket();
    const policy = Object.values(base.json.Resources).find(
      (r) => r.Type === 'AWS::S3::BucketPolicy' && JSON.stringify(r.Properties.Bucket).includes(bucketId),
    );
    if (policy === undefined) throw new Error('no policy on the evidence bucket');
    const statements = (policy.Properties.PolicyDocument as { Statement: Statement[] }).Statement;
    expect(statements).toContainEqual(
      expect.objectContaining({ Effect: 'Deny', Action: 's3:BypassGovernanceRetention', Principal: { AWS: '*' } }),
    );
    expect(statements).toContainEqual(
      expect.objectContaining({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
    );
  });

  it("has a key of its own even when the bank's table key is given: administering one never opens the other", () => {
    const key = 'arn:aws:kms:ap-northeast-1:123456789012:key/cccccccc-1111-2222-3333-dddddddddddd';
    for (const s of [base, synth({ kmsKeyArn: key })]) {
      const [, bucket] = s.evidenceBucket();
      expect(bucket.Properties.BucketEncryption).toMatchObject({
        ServerSideEncryptionConfiguration: [
          {
            ServerSideEncryptionByDefault: {
              KMSMasterKeyID: { 'Fn::GetAtt': [expect.stringMatching(/^EvidenceKey/), 'Arn'] },
            },
          },
        ],
      });
      expect(JSON.stringify(bucket.Properties.BucketEncryption)).not.toContain(key);
    }
  });

  it('dispatch, the sweeper and the feedback function may write evidence once, and no function may read or delete it', () => {
    for (const fn of ['Dispatch', 'Sweeper', 'DeliveryFeedbackFunction']) {
      const s3 = base.statementsOf(fn).filter((st) => [st.Action].flat().some((a) => a.startsWith('s3:')));
      expect([...new Set(s3.flatMap((st) => [st.Action].flat()))].sort(), fn).toEqual([
        's3:PutObject',
        's3:PutObjectRetention',
      ]);
      // Batches of records; dispatch nothing else of the bucket. The feedback function also appends a report on a
      // send from before batches under that send (sends/), never a customer's pointer; the sweeper fills gaps of
      // every layout.
      const resources = JSON.stringify(s3.map((st) => st.Resource));
      expect(resources, fn).toContain('/batches/*');
      const legacy: Record<string, string[]> = {
        Dispatch: [],
        Sweeper: ['/sends/*', '/users/*'],
        DeliveryFeedbackFunction: ['/sends/*'],
      };
      for (const prefix of ['/sends/*', '/users/*']) {
        if (legacy[fn]?.includes(prefix)) expect(resources, fn).toContain(prefix);
        else expect(resources, fn).not.toContain(prefix);
      }
      expect(resources, fn).not.toContain('"/*"');
      expect(base.envOf(fn), fn).toMatchObject({
        EVIDENCE_BUCKET: { Ref: expect.stringMatching(/^EvidenceBucket/) },
        EVIDENCE_LOCK_MODE: 'GOVERNANCE',
        EVIDENCE_RETENTION_DAYS: String(EVIDENCE_ENVIRONMENT.EVIDENCE_RETENTION_DAYS.default),
      });
    }
    // Only the evidence reader and the operator function read (that one is tested below), and only the break-glass
    // role may change the protections (test/infra/evidence-protection.test.ts); no function reads or deletes.
    const all = Object.entries(base.json.Resources)
      .filter(([id, r]) => r.Type === 'AWS::IAM::Policy' && !/^(Evidence(Reader|BreakGlass)|Operator)Role/.test(id))
      .flatMap(([, r]) => (r.Properties.PolicyDocument as { Statement: Statement[] }).Statement)
      .filter((st) => JSON.stringify(st.Resource ?? '').includes('EvidenceBucket'));
    for (const st of all) {
      for (const a of [st.Action].flat()) expect(['s3:PutObject', 's3:PutObjectRetention']).toContain(a);
    }
  });

  it("dispatch may put only evidence gaps, batch intents and spooled records (and delete its intents) besides its updates; the sweeper may query and delete only them, put a gap, query and put the spool's own table, and drain the main table's earlier spool", () => {
    const on = (fn: string, leadingKey: string) =>
      base
        .statementsOf(fn)
        .filter((st) => JSON.stringify(st.Condition ?? '').includes(leadingKey))
        .flatMap((st) => [st.Action].flat())
        .sort();
    expect(on('Dispatch', 'EVIDENCE_GAP#*')).toEqual(['dynamodb:PutItem']);
    expect(on('Dispatch', 'EVIDENCE_BATCH#*')).toEqual(['dynamodb:DeleteItem', 'dynamodb:PutItem']);
    expect(on('Sweeper', 'EVIDENCE_GAP#*')).toEqual(['dynamodb:DeleteItem', 'dynamodb:PutItem', 'dynamodb:Query']);
    expect(on('Sweeper', 'EVIDENCE_BATCH#*')).toEqual(['dynamodb:DeleteItem', 'dynamodb:Query']);
    expect(on('DeliveryFeedbackFunction', 'EVIDENCE_GAP#*')).toEqual(['dynamodb:PutItem']);
    // The spool is a table of its own (lib/evidence-spool-table.ts): writers put there, nothing else.
    const onSpool = (fn: string) =>
      base
        .statementsOf(fn)
        .filter((st) => String(JSON.stringify(st.Resource)).includes('EvidenceSpoolTable'))
        .flatMap((st) => [st.Action].flat())
        .sort();
    expect(onSpool('Dispatch')).toEqual(['dynamodb:PutItem']);
    expect(onSpool('DeliveryFeedbackFunction')).toEqual(['dynamodb:PutItem']);
    expect(onSpool('Sweeper')).toEqual(['dynamodb:PutItem', 'dynamodb:Query']);
    // A court-ordered erasure (docs/operations.md "Break glass"): the customer's spooled records found and deleted.
    const breakGlassOnSpool = Object.entries(base.json.Resources)
      .filter(([id, r]) => r.Type === 'AWS::IAM::Policy' && id.startsWith('EvidenceBreakGlassRole'))
      .flatMap(([, r]) => (r.Properties.PolicyDocument as { Statement: Statement[] }).Statement)
      .filter((st) => String(JSON.stringify(st.Resource)).includes('EvidenceSpoolTable'))
      .flatMap((st) => [st.Action].flat())
      .sort();
    expect(breakGlassOnSpool).toEqual(['dynamodb:DeleteItem', 'dynamodb:Query']);
    expect(on('Dispatch', 'EVIDENCE_SPOOL#*')).toEqual([]);
    expect(on('DeliveryFeedbackFunction', 'EVIDENCE_SPOOL#*')).toEqual([]);
    // The main table's spool, where an earlier version put items without a TTL: read, rolled, deleted once rolled.
    expect(on('Sweeper', 'EVIDENCE_SPOOL#*')).toEqual([
      'dynamodb:BatchWriteItem',
      'dynamodb:PutItem',
      'dynamodb:Query',
    ]);
  });

  it("the spool's writers (dispatch, feedback) may put items in its partitions alone, never its cursor; the sweeper may write the cursor", () => {
    const spoolStatements = (fn: string) =>
      base.statementsOf(fn).filter((st) => String(JSON.stringify(st.Resource)).includes('EvidenceSpoolTable'));
    const partitions = Array.from({ length: SPOOL_SHARDS }, (_, s) => `EVIDENCE_SPOOL#${s}`);
    for (const writer of ['Dispatch', 'DeliveryFeedbackFunction']) {
      const puts = spoolStatements(writer).filter((st) => [st.Action].flat().includes('dynamodb:PutItem'));
      expect(puts).toHaveLength(1);
      expect(puts[0]?.Condition).toEqual({ 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': partitions } });
      // No pattern of the condition matches the cursor's key (IAM wildcards: * and ?).
      const iamLike = (pattern: string) => new RegExp(`^${pattern.replace(/[*]/g, '.*').replace(/[?]/g, '.')}$`);
      expect(partitions.some((k) => iamLike(k).test('EVIDENCE_SPOOL#ROLLED'))).toBe(false);
    }
    // The roll-up's PutItem on the spool table carries no key condition: it writes the cursor and sets bad items aside.
    const sweeperPuts = spoolStatements('Sweeper').filter((st) => [st.Action].flat().includes('dynamodb:PutItem'));
    expect(sweeperPuts.length).toBeGreaterThan(0);
    expect(sweeperPuts.some((st) => st.Condition === undefined)).toBe(true);
  });

  it('names the bucket in the outputs', () => {
    base.template.hasOutput('EvidenceBucketName', { Value: { Ref: Match.stringLikeRegexp('^EvidenceBucket') } });
  });
});

/**
 * What the account itself enforces for the evidence store, read from the synthesized templates and evaluated as AWS
 * evaluates the policies (test/support/policy-eval.ts): written once and never deleted or hidden, a lock no writer
 * can stretch, protections only the break-glass role or a deploy of this stack may change — each change reported —
 * a key of its own that administrators cannot read with, a read audit nobody can delete, and, where the bank turns
 * them on, replication to a log-archive account and a locked, copied backup of the table.
 */
import { describe, expect, it } from 'vitest';
import { EVIDENCE_ENVIRONMENT } from '../../functions/contracts/environment.ts';
import { PROTECTION_ACTIONS } from '../../lib/evidence-store.ts';
import { WATCHED_BUCKET_EVENTS, WATCHED_KEY_EVENTS } from '../../lib/protection-watch.ts';
import { allows, denies, type Principal, type Request } from '../support/policy-eval.ts';
import { EXAMPLE_ONE_REGION, PRODUCTION_LIKE, readTemplate } from '../support/synth.ts';
import production from './fixtures/settings.production.json' with { type: 'json' };

const EXAMPLE = EXAMPLE_ONE_REGION;
const DAYS = EVIDENCE_ENVIRONMENT.EVIDENCE_RETENTION_DAYS.default;

function read(file: string, overrides: Record<string, unknown> = {}) {
  const { stack, resolve, all, one, statementsOf } = readTemplate(file, overrides);
  const [bucketId] = one('AWS::S3::Bucket', 'EvidenceBucket');
  const [logsId] = one('AWS::S3::Bucket', 'EvidenceAccessLogs');
  const bucketPolicy = (id: string) => {
    const [, p] = all.find(
      ([, r]) => r.Type === 'AWS::S3::BucketPolicy' && JSON.stringify(r.Properties.Bucket).includes(id),
    ) ?? [undefined, undefined];
    if (p === undefined) throw new Error(`no policy on ${id}`);
    return p;
  };
  const [keyId, key] = one('AWS::KMS::Key', 'EvidenceKey');
  const roleArn = (prefix: string) => `arn:${one('AWS::IAM::Role', prefix)[0]}`;
  const account = stack.account;
  const deployer = `arn:aws:iam::${account}:role/cdk-hnb659fds-cfn-exec-role-${account}-${stack.region}`;
  return {
    stack,
    roleArn,
    all,
    one,
    resolve,
    statementsOf,
    bucketId,
    logsId,
    bucketPolicy,
    evidence: statementsOf(bucketPolicy(bucketId).Properties.PolicyDocument),
    logs: statementsOf(bucketPolicy(logsId).Properties.PolicyDocument),
    keyId,
    key,
    keyPolicy: statementsOf(key.Properties.KeyPolicy),
    who: {
      admin: { arn: `arn:aws:iam::${account}:role/Admin`, account },
      writer: { arn: `arn:${one('AWS::IAM::Role', 'DispatchRole')[0]}`, account },
      reader: { arn: roleArn('EvidenceReaderRole'), account },
      breakGlass: { arn: roleArn('EvidenceBreakGlassRole'), account },
      deployer: { arn: deployer, account },
      root: { arn: `arn:aws:iam::${account}:root`, account },
    } satisfies Record<string, Principal>,
  };
}

const example = read(EXAMPLE);
const prod = read(PRODUCTION_LIKE);
const object = (s: typeof example, key = 'sends/e-1/SMS/m-1.json') => `arn:${s.bucketId}/${key}`;
const ask = (principal: Principal, action: string, resource: string, context: Request['context'] = {}): Request => ({
  principal,
  action,
  resource,
  context: { 'aws:SecureTransport': 'true', 'aws:PrincipalArn': principal.arn, ...context },
});

describe.each([
  ['the example settings', example],
  ["a bank's production settings", prod],
])('the evidence store, %s', (_name, s) => {
  it('nobody deletes or hides a record: DeleteObject (a delete marker) and DeleteObjectVersion are denied to every principal, break glass included', () => {
    for (const who of Object.values(s.who)) {
      for (const action of ['s3:DeleteObject', 's3:DeleteObjectVersion']) {
        expect(denies(s.evidence, ask(who, action, object(s))), `${action} by ${who.arn}`).toBe(true);
      }
    }
    // Lifecycle expiry is no request anyone makes: it still ends a record the day after its retention.
    const bucket = s.one('AWS::S3::Bucket', 'EvidenceBucket')[1];
    expect(JSON.stringify(bucket.Properties.LifecycleConfiguration)).toContain(`"ExpirationInDays":${DAYS + 1}`);
  });

  it('a record is written once: a PUT without If-None-Match is denied; with it, the writer is not', () => {
    const put = (context: Request['context']) => ask(s.who.writer, 's3:PutObject', object(s), context);
    expect(denies(s.evidence, put({}))).toBe(true);
    expect(denies(s.evidence, put({ 's3:if-match': '"etag"' }))).toBe(true);
    expect(denies(s.evidence, put({ 's3:if-none-match': '*' }))).toBe(false);
    // The audit records the CLI writes, too.
    expect(denies(s.evidence, ask(s.who.reader, 's3:PutObject', object(s, 'audit/a.json')))).toBe(true);
  });

  it('a send record only by the functions that send, an audit record only by the operator and console functions as their own roles: no administrator and no person with the reader role adds forged evidence or a forged audit record', () => {
    const put = (who: Principal, key: string) =>
      denies(s.evidence, ask(who, 's3:PutObject', object(s, key), { 's3:if-none-match': '*' }));
    for (const key of ['sends/e-1/SMS/forged.json', 'users/u-1/e-1/SMS/forged.json']) {
      expect(put(s.who.admin, key), key).toBe(true);
      expect(put(s.who.reader, key), key).toBe(true);
      expect(put(s.who.breakGlass, key), key).toBe(true);
      expect(put(s.who.writer, key), key).toBe(false);
    }
    const audit = 'audit/2026-12-01T00:00:00.000Z-a.json';
    // The reader role is one people assume (those who answer disputes): it may not add a record under anyone's name.
    for (const who of [s.who.admin, s.who.writer, s.who.breakGlass, s.who.reader]) {
      expect(put(who, audit), who.arn).toBe(true);
      expect(put(who, 'audit/2026-12-01T00:00:00.000Z-a.outcome.json'), who.arn).toBe(true);
    }
    expect(put({ arn: s.roleArn('OperatorRole'), account: s.stack.account }, audit)).toBe(false);
    const [consoleFn] = s.all.filter(([id, r]) => r.Type === 'AWS::IAM::Role' && id.startsWith('SupportConsoleApi'));
    if (consoleFn !== undefined)
      expect(put({ arn: `arn:${consoleFn[0]}`, account: s.stack.account }, audit)).toBe(false);
    const exempt = s.evidence.find((st) => st.Sid === 'OnlyTheOperatorsFunctionsWriteAuditRecords');
    expect(exempt?.Condition?.ArnNotEquals?.['aws:PrincipalArn']).toHaveLength(consoleFn === undefined ? 1 : 2);
  });

  it("no writer can stretch a lock: another mode or a retention beyond the setting's (plus a day) is denied", () => {
    const lock = (mode: string, days: number) => ({
      's3:if-none-match': '*',
      's3:object-lock-mode': mode,
      's3:object-lock-remaining-retention-days': String(days),
    });
    for (const action of ['s3:PutObject', 's3:PutObjectRetention']) {
      const put = (ctx: Request['context']) => denies(s.evidence, ask(s.who.writer, action, object(s), ctx));
      expect(put(lock('GOVERNANCE', DAYS)), `${action} as set by the writers`).toBe(false);
      expect(put(lock('GOVERNANCE', DAYS + 1)), `${action} rounding`).toBe(false);
      expect(put(lock('GOVERNANCE', DAYS + 2)), `${action} a day too long`).toBe(true);
      expect(put(lock('GOVERNANCE', 36_500)), `${action} a century`).toBe(true);
      expect(put(lock('COMPLIANCE', DAYS)), `${action} COMPLIANCE in a GOVERNANCE store`).toBe(true);
      // Without lock headers the bucket's default applies: not denied (the audit records rely on it).
      expect(put({ 's3:if-none-match': '*' }), `${action} default retention`).toBe(false);
    }
    expect(denies(s.evidence, ask(s.who.breakGlass, 's3:BypassGovernanceRetention', object(s)))).toBe(true);
  });

  it('a legal hold, a lock without an end, is placed or lifted by the break-glass role alone: no writer or administrator keeps a record past every erasure order, or lifts the hold an investigation put', () => {
    for (const who of [s.who.admin, s.who.writer, s.who.reader, s.who.deployer, s.who.root]) {
      expect(denies(s.evidence, ask(who, 's3:PutObjectLegalHold', object(s))), who.arn).toBe(true);
    }
    expect(denies(s.evidence, ask(s.who.breakGlass, 's3:PutObjectLegalHold', object(s)))).toBe(false);
  });

  it('the protections change only by the break-glass role or a CloudFormation deploy of this stack; the policy outlives the stack', () => {
    for (const action of PROTECTION_ACTIONS) {
      const on = `arn:${s.bucketId}`;
      expect(denies(s.evidence, ask(s.who.admin, action, on)), `${action} by an administrator`).toBe(true);
      expect(denies(s.evidence, ask(s.who.writer, action, on)), `${action} by a function`).toBe(true);
      expect(denies(s.evidence, ask(s.who.breakGlass, action, on)), `${action} by break glass`).toBe(false);
      expect(denies(s.evidence, ask(s.who.deployer, action, on)), `${action} by the deploy`).toBe(false);
    }
    expect(s.bucketPolicy(s.bucketId).DeletionPolicy).toBe('Retain');
  });

  it('a key of its own: administrators manage it but cannot decrypt; writers only encrypt through S3; the reader alone decrypts, through S3', () => {
    const viaS3 = { 'kms:ViaService': `s3.${s.stack.region}.amazonaws.com` };
    const kms = (who: Principal, action: string, context: Request['context'] = {}) =>
      allows(s.keyPolicy, ask(who, action, '*', context));
    expect(kms(s.who.admin, 'kms:Decrypt', viaS3)).toBe(false);
    expect(kms(s.who.admin, 'kms:ReEncryptFrom')).toBe(false);
    expect(kms(s.who.admin, 'kms:EnableKeyRotation')).toBe(true);
    expect(kms(s.who.writer, 'kms:GenerateDataKey', viaS3)).toBe(true);
    expect(kms(s.who.writer, 'kms:GenerateDataKey')).toBe(false);
    expect(kms(s.who.writer, 'kms:Decrypt', viaS3)).toBe(false);
    expect(kms(s.who.reader, 'kms:Decrypt', viaS3)).toBe(true);
    expect(kms(s.who.reader, 'kms:Decrypt')).toBe(false);
    expect(s.key.DeletionPolicy).toBe('Retain');
    expect(s.key.Properties.EnableKeyRotation).toBe(true);
  });

  it('only the break-glass role may delete, disable or stop rotating the key; its policy changes only by break glass or a deploy', () => {
    for (const action of ['kms:ScheduleKeyDeletion', 'kms:DisableKey', 'kms:DisableKeyRotation']) {
      expect(allows(s.keyPolicy, ask(s.who.admin, action, '*')), `${action} by an administrator`).toBe(false);
      expect(allows(s.keyPolicy, ask(s.who.deployer, action, '*')), `${action} by the deploy`).toBe(false);
      expect(allows(s.keyPolicy, ask(s.who.breakGlass, action, '*')), `${action} by break glass`).toBe(true);
    }
    expect(allows(s.keyPolicy, ask(s.who.admin, 'kms:PutKeyPolicy', '*'))).toBe(false);
    expect(allows(s.keyPolicy, ask(s.who.deployer, 'kms:PutKeyPolicy', '*'))).toBe(true);
    expect(allows(s.keyPolicy, ask(s.who.breakGlass, 'kms:PutKeyPolicy', '*'))).toBe(true);
  });

  it('grants only for AWS services: nobody may hand Decrypt to a person through a grant', () => {
    const grant = (context: Request['context']) =>
      denies(s.keyPolicy, ask(s.who.admin, 'kms:CreateGrant', '*', context));
    expect(grant({ 'kms:GrantIsForAWSResource': 'false', 'aws:PrincipalIsAWSService': 'false' })).toBe(true);
    expect(grant({ 'kms:GrantIsForAWSResource': 'true' })).toBe(false);
    // Every key of the stack says so (Control Tower's CT.KMS.PR.3).
    for (const [id, k] of s.all.filter(([, r]) => r.Type === 'AWS::KMS::Key')) {
      expect(JSON.stringify(k.Properties.KeyPolicy), id).toContain('"kms:GrantIsForAWSResource":"false"');
    }
  });

  it('the read audit cannot be deleted: access logs versioned, no ACLs, every delete denied, kept as long as the evidence; the failed-batch bucket logs there too', () => {
    const logs = s.one('AWS::S3::Bucket', 'EvidenceAccessLogs')[1];
    expect(logs.Properties).toMatchObject({
      VersioningConfiguration: { Status: 'Enabled' },
      OwnershipControls: { Rules: [{ ObjectOwnership: 'BucketOwnerEnforced' }] },
    });
    expect(logs.Properties).not.toHaveProperty('AccessControl');
    for (const action of ['s3:DeleteObject', 's3:DeleteObjectVersion']) {
      expect(denies(s.logs, ask(s.who.admin, action, `arn:${s.logsId}/evidence/x`))).toBe(true);
    }
    // Log delivery is granted by policy, only for this account's buckets.
    expect(s.logs).toContainEqual(
      expect.objectContaining({ Effect: 'Allow', Principal: { Service: 'logging.s3.amazonaws.com' } }),
    );
    const failed = s.one('AWS::S3::Bucket', 'FailedIngestBatches')[1];
    expect(failed.Properties.LoggingConfiguration).toEqual({
      DestinationBucketName: { Ref: s.logsId },
      LogFilePrefix: 'failed-ingest-batches/',
    });
    expect(s.bucketPolicy(s.logsId).DeletionPolicy).toBe('Retain');
  });

  it("the read audit's settings change only by the break-glass role or a deploy: nobody else shortens its lifecycle, suspends its versioning or lifts its delete denial", () => {
    const on = `arn:${s.logsId}`;
    for (const action of PROTECTION_ACTIONS) {
      expect(denies(s.logs, ask(s.who.admin, action, on)), `${action} by an administrator`).toBe(true);
      expect(denies(s.logs, ask(s.who.writer, action, on)), `${action} by a function`).toBe(true);
      expect(denies(s.logs, ask(s.who.breakGlass, action, on)), `${action} by break glass`).toBe(false);
      expect(denies(s.logs, ask(s.who.deployer, action, on)), `${action} by the deploy`).toBe(false);
    }
    // The break-glass role's own policy reaches both buckets.
    const breakGlass = s.all
      .filter(([id, r]) => r.Type === 'AWS::IAM::Policy' && id.startsWith('EvidenceBreakGlassRole'))
      .flatMap(([, r]) => s.statementsOf(r.Properties.PolicyDocument));
    // (An identity policy names no principal: read as the role's own, with the role as its principal.)
    const own = breakGlass.map((st) => ({ ...st, Principal: { AWS: s.who.breakGlass.arn } }));
    for (const bucket of [s.bucketId, s.logsId]) {
      expect(allows(own, ask(s.who.breakGlass, 's3:PutLifecycleConfiguration', `arn:${bucket}`)), bucket).toBe(true);
    }
  });

  it('every change to the protections, and every use of the break-glass role, is reported to the alarm topic', () => {
    const rules = s.all.filter(([id, r]) => r.Type === 'AWS::Events::Rule' && id.startsWith('ProtectionWatch'));
    const patterns = rules.map(([, r]) => s.resolve(r.Properties.EventPattern) as Record<string, unknown>);
    expect(patterns).toContainEqual({
      source: ['aws.s3'],
      'detail-type': ['AWS API Call via CloudTrail'],
      detail: {
        eventSource: ['s3.amazonaws.com'],
        eventName: [...WATCHED_BUCKET_EVENTS],
        requestParameters: { bucketName: [`ref:${s.bucketId}`, `ref:${s.logsId}`] },
      },
    });
    expect(patterns).toContainEqual(
      expect.objectContaining({
        source: ['aws.kms'],
        detail: expect.objectContaining({
          eventName: [...WATCHED_KEY_EVENTS],
          resources: { ARN: expect.arrayContaining([`arn:${s.keyId}`]) },
        }),
      }),
    );
    expect(patterns).toContainEqual(
      expect.objectContaining({
        source: ['aws.sts'],
        detail: expect.objectContaining({ requestParameters: { roleArn: [s.who.breakGlass.arn] } }),
      }),
    );
    expect(WATCHED_BUCKET_EVENTS).toEqual(
      expect.arrayContaining(['PutBucketPolicy', 'DeleteBucketPolicy', 'PutObjectLockConfiguration']),
    );
    expect(WATCHED_KEY_EVENTS).toEqual(expect.arrayContaining(['ScheduleKeyDeletion', 'DisableKey', 'PutKeyPolicy']));
    // Each reaches the alarm topic, which EventBridge may publish to for these rules only (and use its key).
    const [topicId] = s.one('AWS::SNS::Topic', 'ObservabilityAlarmTopic');
    const topicPolicy = s.all
      .filter(([, r]) => r.Type === 'AWS::SNS::TopicPolicy')
      .flatMap(([, r]) => s.statementsOf(r.Properties.PolicyDocument));
    const [, topicKey] = s.one('AWS::KMS::Key', 'ObservabilityAlarmTopicKey');
    for (const [, r] of rules) {
      const name = String(r.Properties.Name);
      expect(name).toMatch(/^notifier-(example|prod)-protection-/);
      const [target] = r.Properties.Targets as { Arn: unknown; DeadLetterConfig: unknown }[];
      expect(s.resolve(target?.Arn)).toBe(`ref:${topicId}`);
      expect(target?.DeadLetterConfig).toEqual({
        Arn: { 'Fn::GetAtt': [expect.stringMatching(/^ProtectionWatchDeadLetters/), 'Arn'] },
      });
      const context = {
        'aws:SourceAccount': s.stack.account,
        'aws:SourceArn': `arn:aws:events:${s.stack.region}:${s.stack.account}:rule/${name}`,
      };
      const events = (action: string, resource: string) =>
        ask({ service: 'events.amazonaws.com' }, action, resource, context);
      expect(allows(topicPolicy, events('sns:Publish', `ref:${topicId}`)), name).toBe(true);
      expect(allows(s.statementsOf(topicKey.Properties.KeyPolicy), events('kms:GenerateDataKey', '*')), name).toBe(
        true,
      );
    }
    // Another account's rule may not publish.
    const foreign = ask({ service: 'events.amazonaws.com' }, 'sns:Publish', `ref:${topicId}`, {
      'aws:SourceAccount': '999999999999',
      'aws:SourceArn': 'arn:aws:events:ap-northeast-1:999999999999:rule/notifier-prod-protection-buckets',
    });
    expect(allows(topicPolicy, foreign)).toBe(false);
  });

  it('the break-glass role assumed is seen: CloudTrail records sts:AssumeRole as a read-only event, which a rule merely ENABLED never receives, so every protection rule takes all management events', () => {
    const rules = s.all.filter(([id, r]) => r.Type === 'AWS::Events::Rule' && id.startsWith('ProtectionWatch'));
    expect(rules.length).toBeGreaterThan(0);
    for (const [id, r] of rules) {
      expect(r.Properties.State, id).toBe('ENABLED_WITH_ALL_CLOUDTRAIL_MANAGEMENT_EVENTS');
    }
  });
});

describe('replication to a log-archive account (production settings)', () => {
  const r = production.evidenceReplication;

  it('every new object version is copied, with its lock, to the log-archive bucket under its key and ownership; delete markers are not', () => {
    const bucket = prod.one('AWS::S3::Bucket', 'EvidenceBucket')[1];
    const config = bucket.Properties.ReplicationConfiguration as { Role: unknown; Rules: Record<string, unknown>[] };
    expect(prod.resolve(config.Role)).toBe(`arn:${prod.one('AWS::IAM::Role', 'EvidenceReplicationRole')[0]}`);
    expect(config.Rules).toEqual([
      {
        Id: 'evidence-to-log-archive',
        Status: 'Enabled',
        Priority: 1,
        Filter: { Prefix: '' },
        DeleteMarkerReplication: { Status: 'Disabled' },
        SourceSelectionCriteria: { SseKmsEncryptedObjects: { Status: 'Enabled' } },
        Destination: {
          Bucket: r.destinationBucketArn,
          Account: r.destinationAccount,
          AccessControlTranslation: { Owner: 'Destination' },
          EncryptionConfiguration: { ReplicaKmsKeyID: r.destinationKmsKeyArn },
          Metrics: { Status: 'Enabled' },
        },
      },
    ]);
    expect(example.one('AWS::S3::Bucket', 'EvidenceBucket')[1].Properties).not.toHaveProperty(
      'ReplicationConfiguration',
    );
  });

  it('the replication role reads versions with their retention and writes replicas, nothing else; the evidence key lets it decrypt through S3 only', () => {
    const statements = prod.all
      .filter(([id, x]) => x.Type === 'AWS::IAM::Policy' && id.startsWith('EvidenceReplicationRole'))
      .flatMap(([, x]) => prod.statementsOf(x.Properties.PolicyDocument));
    const actions = statements.flatMap((st) => [st.Action].flat()).sort();
    expect(actions).toEqual(
      [
        's3:GetReplicationConfiguration',
        's3:ListBucket',
        's3:GetObjectVersionForReplication',
        's3:GetObjectVersionAcl',
        's3:GetObjectVersionTagging',
        's3:GetObjectRetention',
        's3:GetObjectLegalHold',
        's3:ReplicateObject',
        's3:ReplicateTags',
        's3:ObjectOwnerOverrideToBucketOwner',
        'kms:Decrypt',
        'kms:Encrypt',
        'kms:GenerateDataKey',
      ].sort(),
    );
    const replicator = {
      arn: `arn:${prod.one('AWS::IAM::Role', 'EvidenceReplicationRole')[0]}`,
      account: prod.stack.account,
    };
    const viaS3 = { 'kms:ViaService': `s3.${prod.stack.region}.amazonaws.com` };
    expect(allows(prod.keyPolicy, ask(replicator, 'kms:Decrypt', '*', viaS3))).toBe(true);
    expect(allows(prod.keyPolicy, ask(replicator, 'kms:Decrypt', '*'))).toBe(false);
  });

  it('a failed copy is alarmed', () => {
    const alarm = prod.all.find(
      ([, x]) =>
        x.Type === 'AWS::CloudWatch::Alarm' && x.Properties.AlarmName === 'notifier-prod-EvidenceReplicationFailed',
    )?.[1];
    expect(alarm?.Properties).toMatchObject({
      Namespace: 'AWS/S3',
      MetricName: 'OperationsFailedReplication',
      Threshold: 1,
    });
  });
});

describe('backup of the table (production settings)', () => {
  const b = production.backup;

  it('daily into a vault of its own under a compliance-mode lock (minimum the retention), deletion of recovery points denied, copied to another account', () => {
    const [, vault] = prod.one('AWS::Backup::BackupVault', 'BackupVault');
    expect(vault.DeletionPolicy).toBe('Retain');
    expect(vault.Properties).toMatchObject({
      BackupVaultName: 'notifier-prod-table',
      LockConfiguration: {
        MinRetentionDays: b.retentionDays,
        MaxRetentionDays: b.retentionDays + 1,
        ChangeableForDays: b.lockChangeableDays,
      },
      EncryptionKeyArn: { 'Fn::GetAtt': [expect.stringMatching(/^BackupVaultKey/), 'Arn'] },
    });
    const access = prod.statementsOf(vault.Properties.AccessPolicy);
    expect(denies(access, ask(prod.who.admin, 'backup:DeleteRecoveryPoint', '*'))).toBe(true);
    const [, plan] = prod.one('AWS::Backup::BackupPlan', 'BackupPlan');
    expect(plan.Properties.BackupPlan).toMatchObject({
      BackupPlanRule: [
        {
          RuleName: 'daily',
          ScheduleExpression: 'cron(0 3 * * ? *)',
          Lifecycle: { DeleteAfterDays: b.retentionDays },
          CopyActions: [
            { DestinationBackupVaultArn: b.copyToVaultArn, Lifecycle: { DeleteAfterDays: b.retentionDays } },
          ],
        },
      ],
    });
    const [, selection] = prod.one('AWS::Backup::BackupSelection', 'BackupPlanTable');
    expect(JSON.stringify(selection.Properties)).toMatch(/"Fn::GetAtt":\["Table[0-9A-F]+","Arn"\]/);
    expect(example.all.some(([, x]) => x.Type.startsWith('AWS::Backup::'))).toBe(false);
  });
});

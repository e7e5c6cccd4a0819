/**
 * The evidence store (docs/evidence-and-privacy.md): an S3 bucket where every send's evidence and the provider's
 * reports on it are written once and kept for the retention, whoever asks to delete, overwrite or hide them. What
 * enforces each promise, in the account and not only in our code:
 * - Written once, by the senders: the bucket policy denies a PUT without `If-None-Match` (S3's conditional-write
 *   key `s3:if-none-match`), so no writer can make a second version of a key (readers see versions anyway), and a
 *   send record or a customer's pointer written by anyone but the functions that send (no forged evidence).
 * - Never deleted or hidden: the policy denies s3:DeleteObject (a delete marker) and s3:DeleteObjectVersion to every
 *   principal; Object Lock (the bucket default plus an explicit retain-until per object) guards every version;
 *   s3:BypassGovernanceRetention is denied to every principal. Lifecycle expiry, which no bucket policy governs, ends
 *   an object the day after its retention.
 * - A lock no writer can stretch: the mode must be the stack's, and no retention may exceed the setting (plus a day
 *   of rounding) — neither a century in COMPLIANCE beyond any correction or erasure order; a legal hold (a lock
 *   without an end) only by the break-glass role.
 * - Protections only the break-glass role or a deploy of this stack may change (policy, Object Lock configuration,
 *   lifecycle, versioning, replication, encryption, logging, public access); the bucket policy outlives the stack.
 *   Every change is reported (lib/protection-watch.ts).
 * - A key of its own (lib/evidence-key.ts): administration without decrypt, writers that only encrypt, Decrypt for
 *   the evidence-reader role alone.
 * - Keys listed by the reader alone: a key names an event and a customer (sends/<eventId>/…, users/<userId>/…), so a
 *   listing tells who was told what even without the key; listing is denied to all but the evidence reader, S3's
 *   replication, break glass and a deploy of this stack (no function lists: the writers write, the gap filler writes).
 * - Reads audited: S3 server access logs go to a versioned, ACL-less bucket nobody may delete from, kept as long as
 *   the evidence (lib/access-log-bucket.ts), whose settings are protected like the store's; the failed-batch bucket
 *   logs there too.
 * - Optionally replicated to a log-archive account under its own lock and key (lib/evidence-replication.ts).
 * GOVERNANCE by default, COMPLIANCE where WORM is required (settings `evidenceLockMode`).
 */
import { Duration, Lazy, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import type { Metric } from 'aws-cdk-lib/aws-cloudwatch';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { AnyPrincipal, ArnPrincipal, Effect, PolicyStatement, Role } from 'aws-cdk-lib/aws-iam';
import type { Key } from 'aws-cdk-lib/aws-kms';
import { BlockPublicAccess, Bucket, BucketEncryption, type CfnBucket, ObjectLockRetention } from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import type { EvidenceEnvironment } from '../functions/contracts/environment.ts';
import type { EvidenceLockMode } from '../functions/domain/evidence.ts';
import { SPOOL_BELOW_RECORDS } from '../functions/domain/evidence-spool.ts';
import { createAccessLogBucket, denyDeletes } from './access-log-bucket.ts';
import { createAuditSealKey, grantSealing } from './audit-seal-key.ts';
import { createEvidenceKey, deployRoleArn, type EvidenceRoleAssumers } from './evidence-key.ts';
import { replicateEvidence } from './evidence-replication.ts';
import type { NotifierFunction } from './notifier-function.ts';
import type { EvidenceReplication } from './settings-protection.ts';

export interface EvidenceStoreProps {
  readonly prefix: string;
  readonly retentionDays: number;
  readonly lockMode: EvidenceLockMode;
  readonly replication?: EvidenceReplication | undefined;
  /** Who may assume the reader and the break-glass role (settings `evidenceReaders`, `breakGlassPrincipals`). */
  readonly assumers?: EvidenceRoleAssumers;
}

/**
 * Prefixes the functions write: batches of records (sends, and the reports on them under their send batch's prefix);
 * and, as before batches, send records with their reports and the customers' pointers to them (sends/, users/: the
 * sweeper still fills gaps written then, and feedback appends reports on sends made then).
 */
export type EvidencePrefix = 'batches' | 'sends' | 'users';

/** Bucket-level settings whose change would weaken what the store promises: the break-glass role's, or a deploy's. */
export const PROTECTION_ACTIONS = [
  's3:PutBucketPolicy',
  's3:DeleteBucketPolicy',
  's3:PutBucketObjectLockConfiguration',
  's3:PutLifecycleConfiguration',
  's3:PutBucketVersioning',
  's3:PutReplicationConfiguration',
  's3:PutEncryptionConfiguration',
  's3:PutBucketLogging',
  's3:PutBucketPublicAccessBlock',
] as const;

/** What lists the store's keys (s3:ListBucket also authorizes HeadBucket). */
export const LIST_ACTIONS = ['s3:ListBucket', 's3:ListBucketVersions', 's3:ListBucketMultipartUploads'] as const;

export class EvidenceStore extends Construct {
  readonly bucket: Bucket;
  readonly key: Key;
  /** Server access logs of the evidence store and the failed-batch bucket: who read what. */
  readonly accessLogs: Bucket;
  readonly readerRole: Role;
  readonly breakGlassRole: Role;
  /** The seal of every audit record (lib/audit-seal-key.ts). */
  readonly auditSealKey: Key;
  /** Failed copies to the log-archive account, when replication is on. */
  readonly replicationFailures: Metric | undefined;
  /** The roles grantWrite named: the only principals that may write send records and customers' pointers. */
  private readonly writers: string[] = [];
  /** Besides the reader, break glass and a deploy: who may list the keys (S3's replication role, when on). */
  private readonly listers: string[] = [];
  /** Who may write audit records: the operator function (grantOperator) and the console's (grantConsole); no person's role. */
  private readonly auditWriters: string[] = [];
  /** What names the store to a function that writes evidence: part of its environment (its contract's type). */
  readonly environment: EvidenceEnvironment;
  /** The spool's own table (lib/evidence-spool-table.ts), once `spoolIn` named it. */
  spoolTable: ITable | undefined = undefined;

  constructor(
    scope: Construct,
    id: string,
    private readonly props: EvidenceStoreProps,
  ) {
    super(scope, id);
    // First: it sets how log delivery is granted on this scope, which must have no children yet.
    this.accessLogs = createAccessLogBucket(this, 'AccessLogs', props.retentionDays);
    const { key, readerRole, breakGlassRole } = createEvidenceKey(this, props.prefix, props.assumers);
    this.key = key;
    this.readerRole = readerRole;
    this.breakGlassRole = breakGlassRole;
    this.auditSealKey = createAuditSealKey(this, readerRole, breakGlassRole);
    const days = Duration.days(props.retentionDays);
    this.bucket = new Bucket(this, 'Bucket', {
      serverAccessLogsBucket: this.accessLogs,
      serverAccessLogsPrefix: 'evidence/',
      encryption: BucketEncryption.KMS,
      encryptionKey: this.key,
      bucketKeyEnabled: true,
      enforceSSL: true,
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      versioned: true,
      objectLockEnabled: true,
      objectLockDefaultRetention:
        props.lockMode === 'COMPLIANCE' ? ObjectLockRetention.compliance(days) : ObjectLockRetention.governance(days),
      removalPolicy: RemovalPolicy.RETAIN,
      lifecycleRules: [
        {
          id: 'expire-after-the-retention',
          // A delete marker the day after the lock ends (S3 refuses to remove a locked version before that anyway).
          expiration: Duration.days(props.retentionDays + 1),
          noncurrentVersionExpiration: Duration.days(1),
          abortIncompleteMultipartUploadAfter: Duration.days(1),
        },
        { id: 'remove-expired-delete-markers', expiredObjectDeleteMarker: true },
      ],
    });
    this.environment = {
      EVIDENCE_BUCKET: this.bucket.bucketName,
      EVIDENCE_LOCK_MODE: props.lockMode,
      EVIDENCE_RETENTION_DAYS: String(props.retentionDays),
      // Dispatch and feedback invocations of fewer records spool them; the sweeper rolls a minute's into one object.
      EVIDENCE_SPOOL_BELOW: String(SPOOL_BELOW_RECORDS),
    };
    this.protect();
    this.replicationFailures =
      props.replication === undefined
        ? undefined
        : replicateEvidence(this, props.prefix, this.bucket, this.key, props.replication);
    const replicator = this.node.tryFindChild('ReplicationRole');
    if (replicator instanceof Role) this.listers.push(replicator.roleArn);
    this.grantReader();
    this.grantBreakGlass();
  }

  private protect(): void {
    const objects = [this.bucket.arnForObjects('*')];
    const deny = (sid: string, actions: string[], conditions?: Record<string, Record<string, unknown>>) =>
      this.bucket.addToResourcePolicy(
        new PolicyStatement({
          sid,
          effect: Effect.DENY,
          principals: [new AnyPrincipal()],
          actions,
          resources: objects,
          ...(conditions === undefined ? {} : { conditions }),
        }),
      );
    deny('NobodyBypassesTheRetention', ['s3:BypassGovernanceRetention']);
    denyDeletes(this.bucket, 'NobodyDeletesOrHidesEvidence');
    // Object Lock guards versions, not keys: a second PUT on a key would make a new current version. Every writer
    // sends If-None-Match: * (functions/stores/evidence-store.ts); a PUT without it is refused.
    deny('WrittenOnceOnly', ['s3:PutObject'], { Null: { 's3:if-none-match': 'true' } });
    // A record is evidence only if the functions that sent (or were told) wrote it: nobody else may add one, a batch
    // or a pointer, whatever their IAM policy says. Audit records (audit/*) are the operators' own.
    this.bucket.addToResourcePolicy(
      new PolicyStatement({
        sid: 'OnlyTheSendersWriteSendRecords',
        effect: Effect.DENY,
        principals: [new AnyPrincipal()],
        actions: ['s3:PutObject', 's3:PutObjectRetention'],
        resources: [
          this.bucket.arnForObjects('batches/*'),
          this.bucket.arnForObjects('sends/*'),
          this.bucket.arnForObjects('users/*'),
        ],
        conditions: { ArnNotEquals: { 'aws:PrincipalArn': Lazy.list({ produce: () => this.writers }) } },
      }),
    );
    // Audit records likewise: the operator function's and the console function's, each as its own role — never a role a
    // person assumes (the reader's), so no person can add a record under another's name; the seal also binds each
    // record to its key (functions/stores/audit-seal.ts).
    this.bucket.addToResourcePolicy(
      new PolicyStatement({
        sid: 'OnlyTheOperatorsFunctionsWriteAuditRecords',
        effect: Effect.DENY,
        principals: [new AnyPrincipal()],
        actions: ['s3:PutObject', 's3:PutObjectRetention'],
        resources: [this.bucket.arnForObjects('audit/*')],
        conditions: { ArnNotEquals: { 'aws:PrincipalArn': Lazy.list({ produce: () => this.auditWriters }) } },
      }),
    );
    deny('LockModeIsTheStacks', ['s3:PutObject', 's3:PutObjectRetention'], {
      Null: { 's3:object-lock-mode': 'false' },
      StringNotEquals: { 's3:object-lock-mode': this.props.lockMode },
    });
    // Writers set the retention from now (or the report's time), so at most the setting plus a day of rounding.
    deny('LockNoLongerThanTheRetention', ['s3:PutObject', 's3:PutObjectRetention'], {
      NumericGreaterThan: { 's3:object-lock-remaining-retention-days': String(this.props.retentionDays + 1) },
    });
    // A legal hold is a lock without an end: placing one outlasts every erasure order, lifting one lets the lifecycle
    // end a record an investigation holds. No writer needs it; a hold is a deliberate, reported act.
    deny('OnlyBreakGlassPlacesOrLiftsALegalHold', ['s3:PutObjectLegalHold'], {
      ArnNotEquals: { 'aws:PrincipalArn': [this.breakGlassRole.roleArn] },
    });
    const allowed = [this.breakGlassRole.roleArn, deployRoleArn(Stack.of(this))].filter((a) => a !== undefined);
    // CloudFormation's bucket handler reads the bucket (HeadBucket is authorized as s3:ListBucket): the deploy lists.
    this.bucket.addToResourcePolicy(
      new PolicyStatement({
        sid: 'OnlyTheReaderListsEvidence',
        effect: Effect.DENY,
        principals: [new AnyPrincipal()],
        actions: [...LIST_ACTIONS],
        resources: [this.bucket.bucketArn],
        conditions: {
          ArnNotEquals: {
            'aws:PrincipalArn': Lazy.list({ produce: () => [this.readerRole.roleArn, ...this.listers, ...allowed] }),
          },
        },
      }),
    );
    // The read audit too: whoever may change its lifecycle, versioning or policy may expire or delete it.
    for (const bucket of [this.bucket, this.accessLogs]) {
      bucket.addToResourcePolicy(
        new PolicyStatement({
          sid: 'OnlyBreakGlassOrThisStacksDeployChangesTheProtections',
          effect: Effect.DENY,
          principals: [new AnyPrincipal()],
          actions: [...PROTECTION_ACTIONS],
          resources: [bucket.bucketArn],
          conditions: { ArnNotEquals: { 'aws:PrincipalArn': allowed } },
        }),
      );
    }
    // The guarantees live in the policy: it stays when the stack goes, like the bucket.
    this.bucket.policy?.applyRemovalPolicy(RemovalPolicy.RETAIN);
  }

  /** The evidence reader: every version of every object; it writes nothing (actions are the operator function's). */
  private grantReader(): void {
    const role = this.readerRole;
    role.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ['s3:ListBucket', 's3:ListBucketVersions'],
        resources: [this.bucket.bucketArn],
      }),
    );
    role.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ['s3:GetObject', 's3:GetObjectVersion'],
        resources: [this.bucket.arnForObjects('*')],
      }),
    );
    role.addToPrincipalPolicy(new PolicyStatement({ actions: ['kms:Decrypt'], resources: [this.key.keyArn] }));
    const bucketId = Stack.of(this).getLogicalId(this.bucket.node.defaultChild as CfnBucket);
    Validations.of(role).acknowledge({
      id: `AwsSolutions-IAM5[Resource::<${bucketId}.Arn>/*]`,
      reason:
        'The evidence reader reads any record of the store (keys are per event, channel and message id); no write, no delete, no bypass (denied by the bucket policy to every principal).',
    });
  }

  /** The break-glass role: the key's destruction, the buckets' protections and legal holds, on these resources only. */
  private grantBreakGlass(): void {
    this.breakGlassRole.addToPrincipalPolicy(
      new PolicyStatement({ actions: ['s3:PutObjectLegalHold'], resources: [this.bucket.arnForObjects('*')] }),
    );
    const bucketId = Stack.of(this).getLogicalId(this.bucket.node.defaultChild as CfnBucket);
    Validations.of(this.breakGlassRole).acknowledge({
      id: `AwsSolutions-IAM5[Resource::<${bucketId}.Arn>/*]`,
      reason:
        'A legal hold is placed on the records an investigation names, any of the store; the bucket policy lets no other principal place or lift one, and every assumption of this role is reported.',
    });
    this.breakGlassRole.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ['kms:ScheduleKeyDeletion', 'kms:DisableKey', 'kms:DisableKeyRotation', 'kms:PutKeyPolicy'],
        resources: [this.key.keyArn],
      }),
    );
    this.breakGlassRole.addToPrincipalPolicy(
      new PolicyStatement({
        actions: [...PROTECTION_ACTIONS],
        resources: [this.bucket.bucketArn, this.accessLogs.bucketArn],
      }),
    );
  }

  /**
   * The operator function (lib/operator-api.ts): reads any record as the reader does (it shows evidence, exports a
   * customer's) and writes audit records — never send records or pointers (the bucket policy keeps those the senders').
   */
  /**
   * The console's function: writes and seals its audit records as its own role (reads go through the reader role:
   * lib/console.ts). Write-once under audit/ only; the bucket policy lets no other principal but the operator function.
   */
  grantConsole(fn: NotifierFunction): void {
    const role = fn.role as Role;
    this.auditWriters.push(role.roleArn);
    grantSealing(this.auditSealKey, role, 'ConsoleFunctionSeals');
    fn.addToRolePolicy(
      new PolicyStatement({
        actions: ['s3:PutObject', 's3:PutObjectRetention'],
        resources: [this.bucket.arnForObjects('audit/*')],
      }),
    );
    fn.addToRolePolicy(new PolicyStatement({ actions: ['kms:GenerateDataKey'], resources: [this.key.keyArn] }));
    const bucketId = Stack.of(this).getLogicalId(this.bucket.node.defaultChild as CfnBucket);
    Validations.of(role).acknowledge({
      id: `AwsSolutions-IAM5[Resource::<${bucketId}.Arn>/audit/*]`,
      reason:
        'The console function records every audited action (audit/<at>-<id>.json, written once); no read, no delete, no bypass (denied by the bucket policy to every principal).',
    });
  }

  grantOperator(fn: NotifierFunction): void {
    const role = fn.role as Role;
    this.listers.push(role.roleArn);
    this.auditWriters.push(role.roleArn);
    grantSealing(this.auditSealKey, role, 'OperatorFunctionSeals');
    fn.addToRolePolicy(
      new PolicyStatement({ actions: ['s3:ListBucket', 's3:ListBucketVersions'], resources: [this.bucket.bucketArn] }),
    );
    fn.addToRolePolicy(
      new PolicyStatement({
        actions: ['s3:GetObject', 's3:GetObjectVersion'],
        resources: [this.bucket.arnForObjects('*')],
      }),
    );
    fn.addToRolePolicy(
      new PolicyStatement({
        actions: ['s3:PutObject', 's3:PutObjectRetention'],
        resources: [this.bucket.arnForObjects('audit/*')],
      }),
    );
    fn.addToRolePolicy(
      new PolicyStatement({ actions: ['kms:Decrypt', 'kms:GenerateDataKey'], resources: [this.key.keyArn] }),
    );
    // The key policy names each principal that decrypts (the reader, and this function): through S3 only.
    this.key.addToResourcePolicy(
      new PolicyStatement({
        sid: 'OperatorFunctionDecryptsThroughS3',
        principals: [new ArnPrincipal(role.roleArn)],
        actions: ['kms:Decrypt'],
        resources: ['*'],
        conditions: { StringEquals: { 'kms:ViaService': `s3.${Stack.of(this).region}.amazonaws.com` } },
      }),
    );
    const bucketId = Stack.of(this).getLogicalId(this.bucket.node.defaultChild as CfnBucket);
    for (const [prefix, why] of [
      [
        '*',
        'The operator function shows and exports any record of the store (keys are per event, channel and message id)',
      ],
      ['audit/*', 'The operator function records every audited action (audit/<at>-<id>.json, written once)'],
    ]) {
      Validations.of(role).acknowledge({
        id: `AwsSolutions-IAM5[Resource::<${bucketId}.Arn>/${prefix}]`,
        reason: `${why}; no delete, no bypass (both denied by the bucket policy to every principal).`,
      });
    }
  }

  /** The spool's own table: named in `environment`, so every function that records or reads evidence finds it. */
  spoolIn(table: ITable): void {
    this.spoolTable = table;
    (this.environment as { EVIDENCE_SPOOL_TABLE_NAME?: string }).EVIDENCE_SPOOL_TABLE_NAME = table.tableName;
    // A court-ordered erasure removes the customer's spooled records too (docs/operations.md "Break glass"): found
    // by their keys' prefixes, deleted one by one. The table's guard lets no one else delete.
    this.breakGlassRole.addToPrincipalPolicy(
      new PolicyStatement({ actions: ['dynamodb:Query', 'dynamodb:DeleteItem'], resources: [table.tableArn] }),
    );
  }

  /** Write-once access for a function that records evidence, under the prefixes it writes (`environment` names the store). */
  grantWrite(fn: NotifierFunction, prefixes: readonly EvidencePrefix[]): void {
    this.writers.push((fn.role as Role).roleArn);
    fn.addToRolePolicy(
      new PolicyStatement({
        actions: ['s3:PutObject', 's3:PutObjectRetention'],
        resources: prefixes.map((p) => this.bucket.arnForObjects(`${p}/*`)),
      }),
    );
    fn.addToRolePolicy(new PolicyStatement({ actions: ['kms:GenerateDataKey'], resources: [this.key.keyArn] }));
    const bucketId = Stack.of(this).getLogicalId(this.bucket.node.defaultChild as CfnBucket);
    const keyedBy: Record<EvidencePrefix, string> = {
      batches: 'day and a random id per writing invocation (a batch of records)',
      sends: 'event, channel and provider message id',
      users: 'customer (a pointer to the send record), event, channel and provider message id',
    };
    for (const prefix of prefixes) {
      Validations.of(fn.role as Role).acknowledge({
        id: `AwsSolutions-IAM5[Resource::<${bucketId}.Arn>/${prefix}/*]`,
        reason: `Evidence objects under ${prefix}/ are keyed by ${keyedBy[prefix]}, known only when written; PutObject (write-once: the bucket policy refuses a PUT without If-None-Match) and PutObjectRetention only, no read, no delete.`,
      });
    }
  }
}

/**
 * The evidence store (docs/evidence-and-privacy.md): an S3 bucket where every send's evidence and the provider's
 * reports on it are written once and kept for the retention, whoever asks to delete them.
 * - SSE-KMS with a customer key (the stack's `kmsKeyArn`, else a key of its own with rotation on), bucket keys on.
 * - Versioning and Object Lock (the bucket default plus an explicit retain-until on each object, set by the writer).
 *   The mode is a setting: GOVERNANCE by default, with a bucket policy that denies s3:BypassGovernanceRetention to
 *   every principal, so shortening a retention takes a reviewed deploy that removes that statement (visible in
 *   CloudTrail and in the change), and a wrongly long first retention or a court-ordered erasure can still be
 *   honoured. COMPLIANCE is for a bank whose regulator demands WORM storage (SEC 17a-4(f)-style): then nobody,
 *   not even the account's root, can delete an object before its date — nor the bucket, nor the account's data.
 * - Lifecycle: when its retention ends an object gets a delete marker (expiration = retention + 1 day), its version
 *   goes a day later; objects stay in S3 Standard (a few KB each, under the 128 KB minimum that makes Infrequent
 *   Access or Glacier Instant Retrieval cheaper).
 * - Writers get s3:PutObject and s3:PutObjectRetention on objects and kms:GenerateDataKey on the key; nothing may
 *   delete. Readers (the ops CLI) need s3:ListBucket, s3:GetObject and kms:Decrypt: granted to nobody by the stack.
 */
import { Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import { AnyPrincipal, Effect, PolicyStatement, type Role } from 'aws-cdk-lib/aws-iam';
import { type IKey, Key } from 'aws-cdk-lib/aws-kms';
import { BlockPublicAccess, Bucket, BucketEncryption, type CfnBucket, ObjectLockRetention } from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import type { EvidenceEnvironment } from '../functions/contracts/environment.ts';
import type { EvidenceLockMode } from '../functions/domain/evidence.ts';
import type { NotifierFunction } from './notifier-function.ts';

export interface EvidenceStoreProps {
  /** The stack's customer key, when it has one; otherwise the store creates its own. */
  readonly key?: IKey | undefined;
  readonly retentionDays: number;
  readonly lockMode: EvidenceLockMode;
}

export class EvidenceStore extends Construct {
  readonly bucket: Bucket;
  readonly key: IKey;
  /** What names the store to a function that writes evidence: part of its environment (its contract's type). */
  readonly environment: EvidenceEnvironment;

  constructor(scope: Construct, id: string, props: EvidenceStoreProps) {
    super(scope, id);
    this.key =
      props.key ??
      new Key(this, 'Key', {
        description: 'notifier evidence store: the exact messages sent and what the providers reported',
        enableKeyRotation: true,
        // Deleting the key would make every object unreadable: the evidence outlives any stack change.
        removalPolicy: RemovalPolicy.RETAIN,
      });
    const days = Duration.days(props.retentionDays);
    // Who read or wrote which evidence object, kept as long as the evidence: S3 server access logs (a log target
    // must be SSE-S3: S3's logging service cannot use a customer key).
    const accessLogs = new Bucket(this, 'AccessLogs', {
      encryption: BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      removalPolicy: RemovalPolicy.RETAIN,
      lifecycleRules: [{ id: 'expire-with-the-evidence', expiration: Duration.days(props.retentionDays + 1) }],
    });
    Validations.of(accessLogs).acknowledge({
      id: 'AwsSolutions-S1',
      reason: 'This is the server access log bucket of the evidence store; logging it into itself would loop.',
    });
    this.bucket = new Bucket(this, 'Bucket', {
      serverAccessLogsBucket: accessLogs,
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
    };
    this.bucket.addToResourcePolicy(
      new PolicyStatement({
        sid: 'NobodyBypassesTheRetention',
        effect: Effect.DENY,
        principals: [new AnyPrincipal()],
        actions: ['s3:BypassGovernanceRetention'],
        resources: [this.bucket.arnForObjects('*')],
      }),
    );
  }

  /** Write-once access for a function that records evidence (its environment names the store: `environment`). */
  grantWrite(fn: NotifierFunction): void {
    fn.addToRolePolicy(
      new PolicyStatement({
        actions: ['s3:PutObject', 's3:PutObjectRetention'],
        // The send records and the customer's pointers to them (functions/domain/evidence.ts): nothing else.
        resources: [this.bucket.arnForObjects('sends/*'), this.bucket.arnForObjects('users/*')],
      }),
    );
    fn.addToRolePolicy(new PolicyStatement({ actions: ['kms:GenerateDataKey'], resources: [this.key.keyArn] }));
    const bucketId = Stack.of(this).getLogicalId(this.bucket.node.defaultChild as CfnBucket);
    for (const [prefix, keyedBy] of [
      ['sends', 'event'],
      ['users', 'customer (a pointer to the send record)'],
    ]) {
      Validations.of(fn.role as Role).acknowledge({
        id: `AwsSolutions-IAM5[Resource::<${bucketId}.Arn>/${prefix}/*]`,
        reason: `Evidence objects under ${prefix}/ are keyed by ${keyedBy}, channel and provider message id, known only at send time; PutObject (write-once by If-None-Match) and PutObjectRetention only, no read, no delete.`,
      });
    }
  }
}

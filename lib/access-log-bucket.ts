/**
 * The read audit of the evidence store and the failed-batch bucket: S3 server access logs (who read or wrote which
 * object, when, from where). A trail that can be deleted proves nothing, so the bucket is versioned, has no ACLs
 * (object ownership enforced: log delivery is granted by bucket policy, scoped to our buckets and account), and its
 * policy denies every delete to every principal; only the lifecycle, which no bucket policy governs, removes a log
 * once the evidence it describes is gone. SSE-S3: S3's log delivery does not write to a bucket under a customer key.
 * No Object Lock: S3 refuses server access logs into a bucket with a default retention.
 */
import { Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import { AnyPrincipal, Effect, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { BlockPublicAccess, Bucket, BucketEncryption, ObjectOwnership } from 'aws-cdk-lib/aws-s3';
import { S3_SERVER_ACCESS_LOGS_USE_BUCKET_POLICY } from 'aws-cdk-lib/cx-api';
import type { Construct } from 'constructs';

/** Every delete, of a key (a delete marker) or of a version, refused to every principal. */
export function denyDeletes(bucket: Bucket, sid: string): void {
  bucket.addToResourcePolicy(
    new PolicyStatement({
      sid,
      effect: Effect.DENY,
      principals: [new AnyPrincipal()],
      actions: ['s3:DeleteObject', 's3:DeleteObjectVersion'],
      resources: [bucket.arnForObjects('*')],
    }),
  );
}

/**
 * The access log bucket, in `scope` — which must have no children yet: log delivery is granted by bucket policy
 * (CDK's S3_SERVER_ACCESS_LOGS_USE_BUCKET_POLICY, set on that scope), never by the legacy LogDeliveryWrite ACL.
 */
export function createAccessLogBucket(scope: Construct, id: string, retentionDays: number): Bucket {
  scope.node.setContext(S3_SERVER_ACCESS_LOGS_USE_BUCKET_POLICY, true);
  const bucket = new Bucket(scope, id, {
    encryption: BucketEncryption.S3_MANAGED,
    enforceSSL: true,
    blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
    objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
    versioned: true,
    removalPolicy: RemovalPolicy.RETAIN,
    lifecycleRules: [
      {
        id: 'expire-with-the-evidence',
        expiration: Duration.days(retentionDays + 1),
        // A log overwritten by mistake keeps its first version as long as the logs themselves.
        noncurrentVersionExpiration: Duration.days(retentionDays + 1),
      },
    ],
  });
  denyDeletes(bucket, 'NobodyDeletesTheReadAudit');
  bucket.policy?.applyRemovalPolicy(RemovalPolicy.RETAIN);
  Validations.of(bucket).acknowledge({
    id: 'AwsSolutions-S1',
    reason:
      'This is the server access log bucket of the evidence store and the failed-batch bucket; logging it into itself would loop.',
  });
  return bucket;
}

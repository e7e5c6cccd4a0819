/**
 * Evidence replicated to a log-archive account (settings `evidenceReplication`): seven years of records must survive
 * the loss or compromise of this account and region. S3 replication copies every new object version, with its
 * Object Lock mode and retain-until date, to a bucket the log-archive account owns, under that account's key; the
 * destination bucket must have versioning and Object Lock on, and a policy that lets this role replicate into it
 * (docs/deploy.md "Evidence in a log-archive account"). Delete markers are not replicated (and nobody may make one
 * here), so the copy keeps what this account could hide. Replication metrics feed an alarm on every failed copy.
 */
import { Duration, Stack, Validations } from 'aws-cdk-lib';
import { Metric } from 'aws-cdk-lib/aws-cloudwatch';
import { ArnPrincipal, PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { Key } from 'aws-cdk-lib/aws-kms';
import type { Bucket, CfnBucket } from 'aws-cdk-lib/aws-s3';
import type { Construct } from 'constructs';
import type { EvidenceReplication } from './settings-protection.ts';

export const REPLICATION_RULE_ID = 'evidence-to-log-archive';

/** Sets up replication on the evidence bucket; answers the metric of failed copies, for the alarm. */
export function replicateEvidence(
  scope: Construct,
  prefix: string,
  bucket: Bucket,
  key: Key,
  r: EvidenceReplication,
): Metric {
  const stack = Stack.of(scope);
  const destinationRegion = r.destinationKmsKeyArn.split(':')[3] ?? stack.region;
  const destinationBucket = r.destinationBucketArn.slice(r.destinationBucketArn.lastIndexOf(':') + 1);
  // A fixed name: the log-archive account's bucket and key policies name it before the first deploy.
  const role = new Role(scope, 'ReplicationRole', {
    roleName: `${prefix}-evidence-replication`,
    assumedBy: new ServicePrincipal('s3.amazonaws.com', {
      conditions: { StringEquals: { 'aws:SourceAccount': stack.account } },
    }),
    description: `Replicates the evidence store to the log-archive account ${r.destinationAccount}`,
  });
  // What S3 replication reads (an Object Lock bucket's retention and legal hold too) and writes, nothing more.
  role.addToPrincipalPolicy(
    new PolicyStatement({
      actions: ['s3:GetReplicationConfiguration', 's3:ListBucket'],
      resources: [bucket.bucketArn],
    }),
  );
  role.addToPrincipalPolicy(
    new PolicyStatement({
      actions: [
        's3:GetObjectVersionForReplication',
        's3:GetObjectVersionAcl',
        's3:GetObjectVersionTagging',
        's3:GetObjectRetention',
        's3:GetObjectLegalHold',
      ],
      resources: [bucket.arnForObjects('*')],
    }),
  );
  role.addToPrincipalPolicy(
    new PolicyStatement({
      // No s3:ReplicateDelete: delete markers stay here.
      actions: ['s3:ReplicateObject', 's3:ReplicateTags', 's3:ObjectOwnerOverrideToBucketOwner'],
      resources: [`${r.destinationBucketArn}/*`],
    }),
  );
  role.addToPrincipalPolicy(
    new PolicyStatement({
      actions: ['kms:Decrypt'],
      resources: [key.keyArn],
      conditions: { StringEquals: { 'kms:ViaService': `s3.${stack.region}.amazonaws.com` } },
    }),
  );
  role.addToPrincipalPolicy(
    new PolicyStatement({
      actions: ['kms:Encrypt', 'kms:GenerateDataKey'],
      resources: [r.destinationKmsKeyArn],
      conditions: { StringEquals: { 'kms:ViaService': `s3.${destinationRegion}.amazonaws.com` } },
    }),
  );
  // The evidence key lets nobody but its reader decrypt: the replication role is named too, through S3 only.
  key.addToResourcePolicy(
    new PolicyStatement({
      sid: 'ReplicationDecryptsThroughS3',
      principals: [new ArnPrincipal(role.roleArn)],
      actions: ['kms:Decrypt'],
      resources: ['*'],
      conditions: { StringEquals: { 'kms:ViaService': `s3.${stack.region}.amazonaws.com` } },
    }),
  );
  const bucketId = stack.getLogicalId(bucket.node.defaultChild as CfnBucket);
  Validations.of(role).acknowledge(
    {
      id: `AwsSolutions-IAM5[Resource::<${bucketId}.Arn>/*]`,
      reason:
        'S3 replication copies every object version of the evidence bucket: it reads each one (and its retention and legal hold), nothing else.',
    },
    {
      id: `AwsSolutions-IAM5[Resource::${r.destinationBucketArn}/*]`,
      reason:
        "S3 replication writes each replica under the source object's key in the log-archive bucket; no delete is granted.",
    },
  );
  const cfn = bucket.node.defaultChild as CfnBucket;
  cfn.replicationConfiguration = {
    role: role.roleArn,
    rules: [
      {
        id: REPLICATION_RULE_ID,
        status: 'Enabled',
        priority: 1,
        filter: { prefix: '' },
        deleteMarkerReplication: { status: 'Disabled' },
        sourceSelectionCriteria: { sseKmsEncryptedObjects: { status: 'Enabled' } },
        destination: {
          bucket: r.destinationBucketArn,
          account: r.destinationAccount,
          accessControlTranslation: { owner: 'Destination' },
          encryptionConfiguration: { replicaKmsKeyId: r.destinationKmsKeyArn },
          metrics: { status: 'Enabled' },
        },
      },
    ],
  };
  return new Metric({
    namespace: 'AWS/S3',
    metricName: 'OperationsFailedReplication',
    dimensionsMap: {
      SourceBucket: bucket.bucketName,
      DestinationBucket: destinationBucket,
      RuleId: REPLICATION_RULE_ID,
    },
    statistic: 'Sum',
    period: Duration.minutes(5),
  });
}

/**
 * Where ingest's records come from: the MSK event source mapping, what it may do with ingest's role, the bucket its
 * failed batches are parked in, and the S3 gateway endpoint that bucket needs in the cluster's VPC.
 *
 * The mapping is added directly, not through CDK's ManagedKafkaEventSource, which attaches AWSLambdaMSKExecutionRole:
 * that policy lets the role write to every log group of the account (logs:* on "*") — SNS's delivery status groups
 * among them, whose entries the feedback function turns into suppressions. The statements the mapping needs are
 * granted inline instead: MSK cluster discovery on this cluster, and the EC2 network-interface actions for its
 * pollers in the cluster's VPC (which take no resource ARNs); logging is the function's own group only
 * (lib/notifier-function.ts).
 */
import { Duration, RemovalPolicy, type Stack } from 'aws-cdk-lib';
import { CfnVPCEndpoint } from 'aws-cdk-lib/aws-ec2';
import { AnyPrincipal, PolicyDocument, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import {
  type CfnEventSourceMapping,
  type IEventSourceDlq,
  type IFunction,
  MetricType,
  SourceAccessConfigurationType,
  StartingPosition,
} from 'aws-cdk-lib/aws-lambda';
import { BlockPublicAccess, Bucket, BucketEncryption } from 'aws-cdk-lib/aws-s3';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import type { NotifierFunction } from './notifier-function.ts';
import { kafkaResourceArns, type Settings } from './settings.ts';

/** The MSK mapping's logical id, fixed: CDK's default contains the topic (see where it is set). */
export const KAFKA_MAPPING_LOGICAL_ID = 'IngestKafkaMapping';

/** AWSLambdaMSKExecutionRole's EC2 actions: the mapping's network interfaces in the cluster's VPC. */
export const MSK_NETWORK_ACTIONS = [
  'ec2:CreateNetworkInterface',
  'ec2:DescribeNetworkInterfaces',
  'ec2:DescribeVpcs',
  'ec2:DeleteNetworkInterface',
  'ec2:DescribeSubnets',
  'ec2:DescribeSecurityGroups',
] as const;
/** Of those, the ones that act on a network interface (the rest describe, authorized on "*" only). */
const MSK_INTERFACE_ACTIONS = ['ec2:CreateNetworkInterface', 'ec2:DeleteNetworkInterface'];

export interface IngestSource {
  readonly failedBatches: Bucket;
  readonly mappingId: string;
}

export function createIngestSource(
  stack: Stack,
  ingest: NotifierFunction,
  s: Settings,
  key: IKey | undefined,
  accessLogs: Bucket,
): IngestSource {
  const kafka = kafkaResourceArns(s.mskClusterArn, s.topic, s.consumerGroupId);
  grantKafka(ingest, s, kafka);
  // Batches the mapping gives up on keep their full records in S3 (SQS/SNS destinations keep only metadata).
  // The records hold addresses and phone numbers: nothing outlives the inbox, after which a replay could resend;
  // every read of them is in the server access logs.
  const failedBatches = new Bucket(stack, 'FailedIngestBatches', {
    ...(key === undefined
      ? { encryption: BucketEncryption.S3_MANAGED }
      : { encryption: BucketEncryption.KMS, encryptionKey: key, bucketKeyEnabled: true }),
    enforceSSL: true,
    blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
    versioned: true,
    removalPolicy: RemovalPolicy.RETAIN,
    serverAccessLogsBucket: accessLogs,
    serverAccessLogsPrefix: 'failed-ingest-batches/',
    lifecycleRules: [
      {
        id: 'expire-with-the-inbox',
        expiration: Duration.days(s.inboxRetentionDays),
        // A version deleted or expired is gone a day later: the day is an undo window, not an archive.
        noncurrentVersionExpiration: Duration.days(1),
        abortIncompleteMultipartUploadAfter: Duration.days(1),
      },
      { id: 'remove-expired-delete-markers', expiredObjectDeleteMarker: true },
    ],
  });
  if (s.mskVpcId !== undefined && s.mskRouteTableIds !== undefined) {
    // The mapping writes failed batches from its network interfaces in the cluster's VPC, which needs a route to
    // S3 (AWS: "You must deploy a VPC endpoint for your on-failure destination service inside your Amazon MSK
    // cluster VPC"). A gateway endpoint is free, and it carries all S3 traffic of those route tables: its policy
    // allows the failed-batch bucket and nothing else, so the endpoint opens no path to any other bucket (and
    // other S3 traffic of those subnets needs an endpoint of the bank's own: docs/deploy.md).
    new CfnVPCEndpoint(stack, 'FailedBatchesS3Endpoint', {
      vpcId: s.mskVpcId,
      serviceName: `com.amazonaws.${stack.region}.s3`,
      vpcEndpointType: 'Gateway',
      routeTableIds: s.mskRouteTableIds,
      policyDocument: new PolicyDocument({
        statements: [
          new PolicyStatement({
            sid: 'FailedIngestBatchesOnly',
            principals: [new AnyPrincipal()],
            actions: ['s3:PutObject', 's3:ListBucket'],
            resources: [failedBatches.bucketArn, failedBatches.arnForObjects('*')],
            conditions: { StringEquals: { 'aws:PrincipalAccount': stack.account } },
          }),
        ],
      }),
    });
  }
  const mapping = ingest.addEventSourceMapping('KafkaMapping', {
    eventSourceArn: s.mskClusterArn,
    kafkaTopic: s.topic,
    kafkaConsumerGroupId: s.consumerGroupId,
    startingPosition: StartingPosition[s.startingPosition],
    ...(s.startingPositionTimestamp === undefined ? {} : { startingPositionTimestamp: s.startingPositionTimestamp }),
    batchSize: s.batchSize,
    maxBatchingWindow: Duration.seconds(s.batchingWindowSeconds),
    // Error-handling controls and metrics need provisioned pollers. The handler throws only on infrastructure
    // failure (never on bad input), and a retry is idempotent, so bounded retries then the S3 destination lose
    // nothing. No maxRecordAge: an old record is recorded as too old by ingest, not parked in S3.
    provisionedPollerConfig: { minimumPollers: 1, maximumPollers: s.kafkaMaxPollers },
    bisectBatchOnError: true,
    retryAttempts: 10,
    onFailure: putOnlyBucketDestination(failedBatches),
    supportS3OnFailureDestination: true,
    metricsConfig: { metrics: [MetricType.EVENT_COUNT, MetricType.ERROR_COUNT, MetricType.KAFKA_METRICS] },
    ...(s.kafkaScramSecretArn === undefined
      ? {}
      : {
          sourceAccessConfigurations: [
            { type: SourceAccessConfigurationType.SASL_SCRAM_512_AUTH, uri: s.kafkaScramSecretArn },
          ],
        }),
  });
  // A fixed id keeps the mapping one resource across updates whatever the topic. (Topic, cluster, consumer group and
  // starting position are create-only: changing them still replaces it, and the replacement is created first, so it
  // needs a consumer group id of its own: docs/deploy.md "Changing the source".)
  (mapping.node.defaultChild as CfnEventSourceMapping).overrideLogicalId(KAFKA_MAPPING_LOGICAL_ID);
  return { failedBatches, mappingId: mapping.eventSourceMappingId };
}

/** What the mapping does with ingest's role: read the topic as its group (IAM or SCRAM), find the brokers, poll. */
function grantKafka(ingest: NotifierFunction, s: Settings, kafka: ReturnType<typeof kafkaResourceArns>): void {
  const allow = (actions: string[], resources: string[], conditions?: Record<string, Record<string, string>>) =>
    ingest.addToRolePolicy(new PolicyStatement({ actions, resources, ...(conditions ? { conditions } : {}) }));
  if (s.kafkaScramSecretArn === undefined) {
    allow(['kafka-cluster:Connect', 'kafka-cluster:DescribeClusterDynamicConfiguration'], [kafka.cluster]);
    allow(['kafka-cluster:DescribeTopic', 'kafka-cluster:ReadData'], [kafka.topic]);
    allow(['kafka-cluster:DescribeGroup', 'kafka-cluster:AlterGroup'], [kafka.group]);
  } else {
    Secret.fromSecretCompleteArn(ingest, 'KafkaSecret', s.kafkaScramSecretArn).grantRead(ingest);
    if (s.kafkaScramKmsKeyArn !== undefined) {
      // MSK accepts SCRAM secrets only on a customer-managed key; the mapping reads the secret with this role, and
      // Secrets Manager decrypts it with the role's permission on that key (and only through Secrets Manager).
      allow(['kms:Decrypt'], [s.kafkaScramKmsKeyArn], {
        StringEquals: { 'kms:ViaService': `secretsmanager.${ingest.stack.region}.amazonaws.com` },
      });
    }
  }
  // AWSLambdaMSKExecutionRole's statements, scoped: cluster discovery on this cluster only, no logs on "*".
  allow(
    [
      'kafka:DescribeCluster',
      'kafka:DescribeClusterV2',
      'kafka:GetBootstrapBrokers',
      ...(s.kafkaScramSecretArn === undefined ? [] : ['kafka:ListScramSecrets']),
    ],
    [kafka.cluster],
  );
  // The pollers' network interfaces are in the cluster's VPC: narrowed to it when the settings name it (mskVpcId).
  allow(
    MSK_NETWORK_ACTIONS.filter((a) => !MSK_INTERFACE_ACTIONS.includes(a)),
    ['*'],
  );
  const vpc =
    s.mskVpcId === undefined
      ? undefined
      : ingest.stack.formatArn({ service: 'ec2', resource: 'vpc', resourceName: s.mskVpcId });
  allow(MSK_INTERFACE_ACTIONS, ['*'], vpc === undefined ? undefined : { ArnEqualsIfExists: { 'ec2:Vpc': vpc } });
}

/**
 * The S3 on-failure destination with only what Lambda needs (PutObject, ListBucket), instead of the read-write
 * grant of S3OnFailureDestination.
 */
function putOnlyBucketDestination(bucket: Bucket): IEventSourceDlq {
  return {
    bind: (_mapping, fn: IFunction) => {
      fn.addToRolePolicy(new PolicyStatement({ actions: ['s3:PutObject'], resources: [bucket.arnForObjects('*')] }));
      fn.addToRolePolicy(new PolicyStatement({ actions: ['s3:ListBucket'], resources: [bucket.bucketArn] }));
      return { destination: bucket.bucketArn };
    },
  };
}

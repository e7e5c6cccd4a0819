/**
 * Every cdk-nag finding the stack accepts, in one place, each with the reason it is acceptable. An acknowledgement is
 * attached to the construct the finding is about (a role's policy, a function, a queue, a bucket), never to the stack.
 */
import { Stack, Token, Validations } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { CfnVPC } from 'aws-cdk-lib/aws-ec2';
import { CfnPolicy, CfnRole, type IRole, type Role } from 'aws-cdk-lib/aws-iam';
import { CfnFunction } from 'aws-cdk-lib/aws-lambda';
import type { Bucket } from 'aws-cdk-lib/aws-s3';
import type { Queue } from 'aws-cdk-lib/aws-sqs';
import type { IConstruct } from 'constructs';
import { AWS_CALLS_PROVIDER } from './aws-calls.ts';
import type { EvidenceStore } from './evidence-store.ts';
import type { NotifierFunction } from './notifier-function.ts';

export function acknowledgeFindings(r: {
  ingest: NotifierFunction;
  dispatch: NotifierFunction;
  sweeper: NotifierFunction;
  dispatchFailures: Queue;
  urgentFailures: Queue | undefined;
}): void {
  const ack = (scope: IConstruct, id: string, reason: string) => Validations.of(scope).acknowledge({ id, reason });
  const vpc =
    ' With the vpc setting also the EC2 network-interface actions Lambda needs to place the function in its subnets (AWSLambdaVPCAccessExecutionRole\'s, without its logs:* on "*"), which take no narrower resource.';
  const wildcards = {
    ingest: `X-Ray PutTraceSegments/PutTelemetryRecords, which have no resource-level permissions, and the EC2 network-interface actions the MSK mapping's pollers need in the cluster's VPC (AWSLambdaMSKExecutionRole's, without its logs:* on "*"): Describe* and CreateNetworkInterface in subnets known only to the mapping take no narrower resource; none grants data access.${vpc}`,
    dispatch: `X-Ray PutTraceSegments/PutTelemetryRecords and dynamodb:ListStreams (granted by CDK for the stream trigger), which have no resource-level permissions.${vpc}`,
    sweeper: `X-Ray PutTraceSegments/PutTelemetryRecords, which have no resource-level permissions.${vpc}`,
  };
  for (const [name, fn] of [
    ['ingest', r.ingest],
    ['dispatch', r.dispatch],
    ['sweeper', r.sweeper],
  ] as const) {
    // The wildcard statements sit in the role's default policy; the DLQ finding is the function's.
    ack(fn.role as Role, 'AwsSolutions-IAM5[Resource::*]', wildcards[name]);
    ack(
      fn,
      'Serverless-LambdaDLQ',
      'Invoked by event source mappings (which have their own on-failure destinations) or by a one-minute schedule whose next run redoes a missed one.',
    );
  }
  ack(
    r.ingest.role as Role,
    'AwsSolutions-IAM5[Resource::<FailedIngestBatchesA6AB3207.Arn>/*]',
    'The MSK mapping writes failed batches under object keys it chooses; PutObject only.',
  );
  ack(
    r.dispatchFailures,
    'AwsSolutions-SQS3',
    'This queue is itself the on-failure destination of the dispatch stream trigger.',
  );
  ack(
    r.dispatchFailures,
    'Serverless-SQSRedrivePolicy',
    'This queue is itself the on-failure destination of the dispatch stream trigger.',
  );
  if (r.urgentFailures !== undefined) {
    for (const id of ['AwsSolutions-SQS3', 'Serverless-SQSRedrivePolicy']) {
      ack(r.urgentFailures, id, 'This queue is itself the on-failure destination of the urgent dispatch trigger.');
    }
  }
}

/** The SNS delivery status set-up (lib/sns-delivery-status.ts): its logging role and the AwsCustomResource calls. */
export function acknowledgeDeliveryStatusFindings(scope: IConstruct, loggingRole: IRole): void {
  const ack = (on: IConstruct, id: string, reason: string) => Validations.of(on).acknowledge({ id, reason });
  const stack = Stack.of(scope);
  const region = Token.isUnresolved(stack.region) ? '<AWS::Region>' : stack.region;
  const account = Token.isUnresolved(stack.account) ? '<AWS::AccountId>' : stack.account;
  ack(
    loggingRole,
    `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:logs:${region}:${account}:log-group:sns/${region}/${account}/*]`,
    "SNS names its delivery status log groups and streams itself (sns/<region>/<account>/…): the role may write to SNS's log groups of this account and region only.",
  );
  const sms = scope.node.tryFindChild('SmsAttributes');
  if (sms !== undefined) {
    ack(
      sms,
      'AwsSolutions-IAM5[Resource::*]',
      'sns:SetSMSAttributes is an account-level action with no resource type: IAM authorizes it only against "*".',
    );
  }
  // The one Lambda function behind every AwsCustomResource of the stack (CDK's singleton provider).
  const provider = stack.node.tryFindChild(AWS_CALLS_PROVIDER);
  if (provider === undefined) return;
  for (const id of ['Serverless-LambdaDLQ', 'Serverless-LambdaTracing']) {
    ack(
      provider,
      id,
      "CDK's AwsCustomResource provider, invoked synchronously by CloudFormation during a deploy: a failure fails (and rolls back) the deploy itself.",
    );
  }
}

/** The smoke producer (lib/smoke-producer.ts): a function in the cluster's subnets, invoked by an operator. */
export function acknowledgeSmokeProducerFindings(role: Role, fn: IConstruct): void {
  Validations.of(role).acknowledge({
    id: 'AwsSolutions-IAM5[Resource::*]',
    reason:
      'X-Ray PutTraceSegments/PutTelemetryRecords, and the EC2 network-interface actions Lambda needs to place a function in a VPC: none has resource-level permissions.',
  });
  Validations.of(fn).acknowledge({
    id: 'Serverless-LambdaDLQ',
    reason: 'Invoked synchronously by the operator (npm run smoke), who sees its answer: nothing to dead-letter.',
  });
}

/** The three cdk-nag compliance packs name the same check with their own prefix. */
const COMPLIANCE_PACKS = ['PCI.DSS.321', 'NIST.800.53.R5', 'HIPAA.Security'] as const;
export const packs = (rule: string) => COMPLIANCE_PACKS.map((p) => `${p}-${rule}`);
/** Control Tower's proactive controls, as @cdklabs/cdk-validator-cfnguard names them. */
export const controlTower = (rule: string) => `cdk-validator-cfnguard::${rule}`;

export interface OutsideRuleSetsScope {
  readonly table: ITable;
  readonly failedBatches: Bucket;
  readonly evidence: EvidenceStore;
  /** Queues that are themselves a dead-letter or on-failure destination. */
  readonly deadLetterQueues: readonly Queue[];
  readonly dispatch: NotifierFunction;
  readonly pushApplicationArns: readonly string[];
  readonly settings: {
    readonly kmsKey: boolean;
    readonly vpc: boolean;
    readonly backup: boolean;
    readonly replication: boolean;
  };
}

/**
 * What PCI DSS 3.2.1, NIST 800-53 r5, HIPAA (cdk-nag) and Control Tower's proactive controls (cfn-guard) report
 * and the stack accepts, each on the construct it is about, with the reason. Run after every construct exists.
 */
export function acknowledgeOutsideRuleSets(stack: Stack, r: OutsideRuleSetsScope): void {
  const all = stack.node.findAll();
  acknowledgeEveryPolicyFunctionAndLogGroup(stack, all);
  for (const q of r.deadLetterQueues) {
    ack(
      q,
      [controlTower('sqs_dlq_check')],
      'This queue is itself a dead-letter or on-failure destination; a queue behind it would hold the same messages again.',
    );
  }
  acknowledgeBuckets(r);
  acknowledgeWhatTheStageLeavesOff(r, all);
}

const ack = (scope: IConstruct, ids: readonly string[], reason: string) => {
  for (const id of ids) Validations.of(scope).acknowledge({ id, reason });
};

/** What every inline policy, function and function log group of the stack is reported for. */
function acknowledgeEveryPolicyFunctionAndLogGroup(stack: Stack, all: IConstruct[]): void {
  const provider = stack.node.tryFindChild(AWS_CALLS_PROVIDER);
  for (const c of all) {
    if (c instanceof CfnPolicy || (c instanceof CfnRole && c.policies !== undefined)) {
      ack(
        c,
        packs('IAMNoInlinePolicy'),
        "Each policy is the least-privilege grant of the one role it belongs to, created, changed and removed with that role by this stack's reviewed deploys; a customer-managed policy would be a reusable grant another principal could be given.",
      );
    }
    if (c instanceof CfnFunction) {
      const inProvider = provider !== undefined && c.node.path.startsWith(provider.node.path);
      if (c.vpcConfig === undefined) {
        ack(
          c,
          [...packs('LambdaInsideVPC'), controlTower('lambda_inside_vpc_check')],
          inProvider
            ? "CDK's AwsCustomResource provider: it makes this stack's deploy-time API calls (SNS attributes, SNS's log groups, the cluster's brokers) and holds no customer data."
            : 'Outside a VPC only where the stage leaves the vpc setting off (docs/deploy.md "Network"): with it, the functions that hold contact points run in isolated subnets with no route to the internet; IAM limits each to its own resources either way.',
        );
      }
      if (c.reservedConcurrentExecutions === undefined) {
        ack(
          c,
          packs('LambdaConcurrency'),
          "No reservation by default: Lambda keeps 100 unreserved executions per account and a new account's quota can be 10, where any reservation fails the deploy. Sends are paced by rate, not by concurrency; every function's throttling is alarmed, and dispatchReservedConcurrency reserves for dispatch where the quota allows.",
        );
      }
      ack(
        c,
        packs('LambdaDLQ'),
        "No invocation is lost without a trace: the MSK and stream triggers have on-failure destinations, a missed sweeper run is redone a minute later, the feedback function's asynchronous invocations have an on-failure queue and its rule a dead-letter queue, and CloudFormation and operators invoke the rest synchronously, seeing each failure.",
      );
    }
  }
}

/** The evidence store's access logs and the failed-batch bucket: why each control does not fit them. */
function acknowledgeBuckets(r: OutsideRuleSetsScope): void {
  const { evidence, failedBatches } = r;
  ack(
    evidence.accessLogs,
    [...packs('S3BucketReplicationEnabled')],
    'The read audit stays in this account, versioned and delete-denied for as long as the evidence; the evidence itself is what is replicated to the log-archive account (evidenceReplication).',
  );
  ack(
    evidence.accessLogs,
    [...packs('S3DefaultEncryptionKMS'), controlTower('s3_bucket_default_encryption_kms_check')],
    "S3's server access log delivery writes only to buckets under SSE-S3 (AES-256); the logs hold request metadata (keys, requesters), never message content.",
  );
  ack(
    evidence.accessLogs,
    [controlTower('s3_bucket_logging_enabled_check')],
    'This is the server access log bucket; logging it into itself would loop.',
  );
  ack(
    evidence.accessLogs,
    [controlTower('s3_bucket_object_lock_enabled_check')],
    'S3 refuses server access logs into a bucket with an Object Lock default retention; the logs are instead versioned, every delete is denied to every principal, and only the lifecycle ends them with the evidence.',
  );
  ack(
    failedBatches,
    [...packs('S3BucketReplicationEnabled')],
    "Parked batches are transient customer records, kept no longer than the inbox and replayable from the topic's retention; a copy in another account would spread contact data for no record-keeping purpose.",
  );
  ack(
    failedBatches,
    [controlTower('s3_bucket_object_lock_enabled_check')],
    'Parked batches hold contact data that must not outlive the inbox (data minimization): a lock would keep them past the lifecycle that ends them with it; every read is in the server access logs.',
  );
  for (const bucket of [evidence.bucket, evidence.accessLogs, failedBatches]) {
    ack(
      bucket,
      [controlTower('s3_event_notifications_enabled_check')],
      'Nothing consumes object events: failed evidence writes are metrics and alarms (EvidenceGapsOpen, EvidenceLost), parked batches are counted by the MSK mapping itself (IngestBatchParked), reads are in the access logs, and changes to the bucket are reported from CloudTrail (protection watch).',
    );
  }
}

/** The protections a stage turns on by its settings (a key, replication, backup, a VPC, push applications). */
function acknowledgeWhatTheStageLeavesOff(r: OutsideRuleSetsScope, all: IConstruct[]): void {
  const { evidence, failedBatches, table } = r;
  if (!r.settings.kmsKey) {
    const why =
      "Encrypted with AWS-owned keys where the stage gives no kmsKeyArn (the bank's own key for the table, the queue and this bucket: docs/deploy.md); the evidence store always has a key of its own.";
    ack(
      failedBatches,
      [...packs('S3DefaultEncryptionKMS'), controlTower('s3_bucket_default_encryption_kms_check')],
      why,
    );
    ack(table, [controlTower('dynamodb_table_encrypted_kms_check')], why);
  }
  if (!r.settings.replication) {
    ack(
      evidence.bucket,
      [...packs('S3BucketReplicationEnabled')],
      'Replication to a log-archive account is the evidenceReplication setting, off in this stage (docs/deploy.md "Evidence in a log-archive account"); the evidence is versioned, locked and delete-denied here either way.',
    );
  }
  if (!r.settings.backup) {
    ack(
      table,
      packs('DynamoDBInBackupPlan'),
      'AWS Backup of the table is the backup setting, off in this stage (docs/deploy.md "Backup"); point-in-time recovery (35 days) and deletion protection are on either way.',
    );
  }
  const vpc = all.find((c): c is CfnVPC => c instanceof CfnVPC);
  if (vpc !== undefined) {
    ack(
      vpc,
      packs('VPCDefaultSecurityGroupClosed'),
      "Nothing uses the VPC's default security group: every function and endpoint has a group of its own, and the VPC has no route to the internet. Closing it takes a custom-resource Lambda outside the VPC, which would widen what this control narrows.",
    );
  }
  for (const arn of r.pushApplicationArns) {
    ack(
      r.dispatch.role as Role,
      [`AwsSolutions-IAM5[Resource::${arn.replace(':app/', ':endpoint/')}/*]`],
      "Push goes to endpoints of the bank's configured platform applications only; endpoints are created per device at run time, under the application's ARN.",
    );
  }
}

/** A region's fence table (lib/regional.ts): a handful of items the stack writes first and operators move, audited. */
export function acknowledgeFenceTable(table: IConstruct, kmsKey: boolean): void {
  acknowledgeTableOutsideBackup(
    table,
    kmsKey,
    "The fence holds a region's state and epoch only (a few items): every move is an audited operator action that says what it wrote, and the stack writes the first state if absent; point-in-time recovery and deletion protection are on.",
    `${AWS_OWNED_KEYS}; it holds no customer data.`,
  );
}

const AWS_OWNED_KEYS =
  "Encrypted with AWS-owned keys where the stage gives no kmsKeyArn (the bank's own key for the tables: docs/deploy.md)";

/**
 * A table kept out of the AWS Backup plan on purpose (the plan selects the main table by its ARN), `why` saying what
 * stands in for it; and, where the stage gives no kmsKeyArn, encrypted with AWS-owned keys as the main table is.
 */
export function acknowledgeTableOutsideBackup(
  table: IConstruct,
  kmsKey: boolean,
  why: string,
  keyWhy = `${AWS_OWNED_KEYS}, as the main table is.`,
): void {
  ack(table, packs('DynamoDBInBackupPlan'), why);
  if (!kmsKey) ack(table, [controlTower('dynamodb_table_encrypted_kms_check')], keyWhy);
}

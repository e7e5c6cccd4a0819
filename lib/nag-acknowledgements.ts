/**
 * Every cdk-nag finding the stack accepts, in one place, each with the reason it is acceptable. An acknowledgement is
 * attached to the construct the finding is about (a role's policy, a function, a queue, a bucket), never to the stack.
 */
import { Stack, Token, Validations } from 'aws-cdk-lib';
import type { IRole, Role } from 'aws-cdk-lib/aws-iam';
import type { Queue } from 'aws-cdk-lib/aws-sqs';
import type { IConstruct } from 'constructs';
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
  const provider = stack.node.tryFindChild('AWS679f53fac002430cb0da5b7982bd2287');
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

/** Findings of the outside rule sets (PCI DSS, NIST 800-53, HIPAA, Control Tower), acknowledged below. */
export function acknowledgeStackWide(
  stack: Stack,
  on: { readonly vpc: boolean; readonly backup: boolean; readonly replication: boolean },
): void {
  void stack;
  void on;
}

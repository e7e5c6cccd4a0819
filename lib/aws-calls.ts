/**
 * AWS API calls made at deploy time, for what CloudFormation has no resource for (account SMS attributes, platform
 * application attributes, log groups SNS owns, a cluster's bootstrap brokers): CDK's AwsCustomResource, whose one
 * provider function per stack gets a role and a log group of its own here, like the house functions — CDK's default
 * role carries AWSLambdaBasicExecutionRole, which may write to every log group of the account.
 */
import { RemovalPolicy, Stack } from 'aws-cdk-lib';
import { type PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { LogGroup } from 'aws-cdk-lib/aws-logs';
import {
  AwsCustomResource,
  AwsCustomResourcePolicy,
  type AwsSdkCall,
  PhysicalResourceId,
} from 'aws-cdk-lib/custom-resources';
import type { Construct } from 'constructs';
import { LOG_RETENTION, logsKeyOf } from './logs-key.ts';

/** The construct id of CDK's one AwsCustomResource provider function per stack. */
export const AWS_CALLS_PROVIDER = 'AWS679f53fac002430cb0da5b7982bd2287';

/** The provider's role and log group, one per stack, shared by every call. */
function provider(scope: Construct): { role: Role; logGroup: LogGroup } {
  const stack = Stack.of(scope);
  const existing = stack.node.tryFindChild('AwsCallsRole') as Role | undefined;
  if (existing !== undefined) {
    return { role: existing, logGroup: stack.node.findChild('AwsCallsLogs') as LogGroup };
  }
  const logGroup = new LogGroup(stack, 'AwsCallsLogs', {
    retention: LOG_RETENTION,
    encryptionKey: logsKeyOf(stack),
    removalPolicy: RemovalPolicy.DESTROY,
  });
  const role = new Role(stack, 'AwsCallsRole', {
    assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
    description: `${stack.stackName}: makes the deploy-time AWS calls that have no CloudFormation resource`,
  });
  logGroup.grantWrite(role);
  return { role, logGroup };
}

export const sdkCall = (
  service: string,
  action: string,
  parameters: Record<string, unknown>,
  physicalId: string,
  extra: Partial<AwsSdkCall> = {},
): AwsSdkCall => ({ service, action, parameters, physicalResourceId: PhysicalResourceId.of(physicalId), ...extra });

/**
 * One call, made on create and on update, with exactly these permissions; `onDelete`, when given, undoes it when the
 * resource is removed (the stack deleted, or the call no longer wanted).
 */
export function awsCall(
  scope: Construct,
  id: string,
  call: AwsSdkCall,
  statements: PolicyStatement[],
  onDelete?: AwsSdkCall,
): AwsCustomResource {
  const { role, logGroup } = provider(scope);
  return new AwsCustomResource(scope, id, {
    onCreate: call,
    onUpdate: call,
    ...(onDelete === undefined ? {} : { onDelete }),
    policy: AwsCustomResourcePolicy.fromStatements(statements),
    installLatestAwsSdk: false,
    role,
    logGroup,
    memorySize: 256,
  });
}

/**
 * The key every log group of the stack is encrypted with (one per stack, created on first use): the functions' logs
 * carry ids and codes, never an address, but a bank's rule is that nothing it operates rests under a key it does not
 * control. CloudWatch Logs may use it for this account's and region's log groups only (the encryption context names
 * the log group); the account administers it through IAM; grants only for AWS services.
 */
import { RemovalPolicy, Stack } from 'aws-cdk-lib';
import { PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { grantsOnlyForAwsServices } from './evidence-key.ts';

/**
 * How long every log group of the stack is kept: a year. The functions' logs are the audit history of the system
 * components that handle card data (PCI DSS 10.5.1: a year, three months at hand) and of who did what to a
 * customer's notices; they carry ids and codes, never an address, so a year holds no contact data. Control Tower's
 * CT.CLOUDWATCH.PR.2 asks the same, and a bank that turns it on refuses a shorter group at deploy. (SNS's delivery
 * status groups, which do hold phone numbers and device tokens, keep a month: lib/sns-delivery-status.ts.)
 */
export const LOG_RETENTION = RetentionDays.ONE_YEAR;

export function logsKeyOf(scope: Construct): Key {
  const stack = Stack.of(scope);
  const existing = stack.node.tryFindChild('LogsKey');
  if (existing !== undefined) return existing as Key;
  const key = new Key(stack, 'LogsKey', {
    description: `${stack.stackName}: encrypts the stack's CloudWatch log groups`,
    enableKeyRotation: true,
    // The retained log groups need it as long as they exist.
    removalPolicy: RemovalPolicy.RETAIN,
  });
  key.addToResourcePolicy(
    new PolicyStatement({
      sid: 'CloudWatchLogsOfThisAccountAndRegion',
      principals: [new ServicePrincipal(`logs.${stack.region}.amazonaws.com`)],
      actions: ['kms:Encrypt*', 'kms:Decrypt*', 'kms:ReEncrypt*', 'kms:GenerateDataKey*', 'kms:Describe*'],
      resources: ['*'],
      conditions: {
        ArnLike: {
          'kms:EncryptionContext:aws:logs:arn': `arn:${stack.partition}:logs:${stack.region}:${stack.account}:log-group:*`,
        },
      },
    }),
  );
  key.addToResourcePolicy(grantsOnlyForAwsServices());
  return key;
}

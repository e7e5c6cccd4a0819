/**
 * The CDK app, synthesized offline with bundling skipped: template assertions for each requirement, cdk-nag with
 * zero unacknowledged findings, a normalised snapshot, and the settings validation.
 */
import { App } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks, ServerlessChecks } from 'cdk-nag';
import { describe, expect, it } from 'vitest';
import cdkJson from '../../cdk.json' with { type: 'json' };
import {
  assertDispatchTiming,
  DISPATCH_TIMING,
  deriveDispatchTiming,
} from '../../functions/commons/dispatch-timing.ts';
import { NotifierStack } from '../../lib/notifier-stack.ts';
import { parseSettings, SettingsError } from '../../lib/settings.ts';
import { DISPATCH_FILTER_PATTERN } from '../../lib/stream-filter.ts';

function synth(overrides: Record<string, unknown> = {}) {
  const app = new App({ context: { ...cdkJson.context, ...overrides, 'aws:cdk:bundling-stacks': [] } });
  const stack = new NotifierStack(app, 'Notifier', {
    settings: parseSettings((key) => app.node.tryGetContext(key)),
    env: { account: '123456789012', region: 'ap-northeast-1' },
  });
  return { stack, template: Template.fromStack(stack) };
}

const { stack, template } = synth();
const json = template.toJSON() as { Resources: Record<string, { Type: string; Properties: Record<string, unknown> }> };
const resources = (type: string) => Object.entries(json.Resources).filter(([, r]) => r.Type === type);
const fnLogicalId = (prefix: string) => {
  const found = resources('AWS::Lambda::Function').find(([id]) => id.startsWith(prefix));
  if (!found) throw new Error(`no function ${prefix}`);
  return found[0];
};
const policyOf = (fnPrefix: string) => {
  const role = (json.Resources[fnLogicalId(fnPrefix)]!.Properties.Role as { 'Fn::GetAtt': string[] })['Fn::GetAtt'][0];
  return resources('AWS::IAM::Policy')
    .filter(([, p]) => JSON.stringify(p.Properties.Roles).includes(String(role)))
    .flatMap(([, p]) => (p.Properties.PolicyDocument as { Statement: Record<string, unknown>[] }).Statement);
};
const actionsOf = (statements: Record<string, unknown>[]) => statements.flatMap((s) => [s.Action].flat() as string[]);

describe('the table', () => {
  it('is on-demand, streams NEW_AND_OLD_IMAGES, expires on expiresAt, has PITR and deletion protection, and is retained', () => {
    template.hasResource('AWS::DynamoDB::Table', {
      DeletionPolicy: 'Retain',
      UpdateReplacePolicy: 'Retain',
      Properties: Match.objectLike({
        BillingMode: 'PAY_PER_REQUEST',
        KeySchema: [
          { AttributeName: 'pk', KeyType: 'HASH' },
          { AttributeName: 'sk', KeyType: 'RANGE' },
        ],
        StreamSpecification: { StreamViewType: 'NEW_AND_OLD_IMAGES' },
        TimeToLiveSpecification: { AttributeName: 'expiresAt', Enabled: true },
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
        DeletionProtectionEnabled: true,
      }),
    });
  });

  it('has the sparse sweep index the sweeper queries', () => {
    template.hasResourceProperties('AWS::DynamoDB::Table', {
      GlobalSecondaryIndexes: [
        Match.objectLike({
          IndexName: 'sweep',
          KeySchema: [
            { AttributeName: 'sweepKey', KeyType: 'HASH' },
            { AttributeName: 'sweepAt', KeyType: 'RANGE' },
          ],
        }),
      ],
    });
  });
});

describe('the functions', () => {
  it('run nodejs22.x on arm64 with tracing, JSON logs and the Powertools environment', () => {
    const fns = resources('AWS::Lambda::Function');
    expect(fns).toHaveLength(3);
    for (const [, fn] of fns) {
      expect(fn.Properties).toMatchObject({
        Runtime: 'nodejs22.x',
        Architectures: ['arm64'],
        TracingConfig: { Mode: 'Active' },
        LoggingConfig: { LogFormat: 'JSON' },
        Environment: { Variables: { POWERTOOLS_SERVICE_NAME: 'notifier', POWERTOOLS_METRICS_NAMESPACE: 'notifier' } },
      });
    }
  });

  it('log to groups with a retention, retained on stack deletion', () => {
    const groups = resources('AWS::Logs::LogGroup');
    expect(groups).toHaveLength(3);
    for (const [, g] of groups) expect(g.Properties.RetentionInDays).toBe(30);
  });

  it('caps dispatch concurrency (sends in flight; the send rate is paced separately)', () => {
    expect(json.Resources[fnLogicalId('Dispatch')]?.Properties.ReservedConcurrentExecutions).toBe(5);
  });

  it('takes dispatch and sweeper timing from the one timing module, checked at synth', () => {
    const dispatch = json.Resources[fnLogicalId('Dispatch')]?.Properties as {
      Timeout: number;
      Environment: { Variables: Record<string, string> };
    };
    expect(dispatch.Timeout).toBe(DISPATCH_TIMING.dispatchTimeoutSeconds);
    expect(dispatch.Environment.Variables).toMatchObject({
      LEASE_SECONDS: String(DISPATCH_TIMING.leaseSeconds),
      SEND_TIMEOUT_MS: String(DISPATCH_TIMING.sendTimeoutMs),
      CONNECT_TIMEOUT_MS: String(DISPATCH_TIMING.connectTimeoutMs),
      DISPATCH_CONCURRENCY: String(DISPATCH_TIMING.concurrency),
    });
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      BatchSize: DISPATCH_TIMING.batchSize,
    });
    const sweeper = json.Resources[fnLogicalId('Sweeper')]?.Properties as { Timeout: number };
    expect(sweeper.Timeout).toBe(DISPATCH_TIMING.sweeperTimeoutSeconds);
    // A value that breaks a rule fails the synth, naming the rule.
    expect(() => assertDispatchTiming(deriveDispatchTiming({ concurrency: 5 }))).toThrow(
      /dispatch timing: BATCH_FITS_TIMEOUT/,
    );
  });

  it('pass the send rates and the maximum age to dispatch and the sweeper, and the stuck threshold to all three', () => {
    const { template: t } = synth({ sendRatePerSecond: '{"EMAIL":40,"SMS":5}', notificationMaxAgeHours: '6' });
    const resources = (t.toJSON() as typeof json).Resources;
    const env = (prefix: string) => {
      const fn = Object.entries(resources).find(
        ([id, r]) => id.startsWith(prefix) && r.Type === 'AWS::Lambda::Function',
      );
      if (fn === undefined) throw new Error(`no function ${prefix}`);
      return (fn[1].Properties as { Environment: { Variables: Record<string, string> } }).Environment.Variables;
    };
    for (const fn of ['Dispatch', 'Sweeper']) {
      expect(env(fn)).toMatchObject({
        SEND_RATE_EMAIL: '40',
        SEND_RATE_PUSH: '100',
        SEND_RATE_SMS: '5',
        MAX_AGE_SECONDS: String(6 * 3600),
        PENDING_THRESHOLD_SECONDS: '900',
      });
    }
    expect(env('Ingest')).toMatchObject({ PENDING_THRESHOLD_SECONDS: '900' });
  });

  it('configure dispatch with the delivery policy and a lease longer than its timeout', () => {
    const fn = json.Resources[fnLogicalId('Dispatch')]?.Properties as {
      Timeout: number;
      Environment: { Variables: Record<string, string> };
    };
    expect(fn.Environment.Variables).toMatchObject({
      SENDER_EMAIL: 'notifications@example.com',
      CHANNEL_POLICIES: 'EMAIL=AT_MOST_ONCE,PUSH=AT_MOST_ONCE,SMS=AT_MOST_ONCE',
    });
    expect(Number(fn.Environment.Variables.LEASE_SECONDS)).toBeGreaterThan(fn.Timeout);
  });
});

describe('the triggers', () => {
  it('ingest reads the MSK topic from TRIM_HORIZON with batch size, window, bisect, bounded retries and an S3 destination', () => {
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      EventSourceArn: cdkJson.context.mskClusterArn,
      Topics: ['banking.transfers'],
      StartingPosition: 'TRIM_HORIZON',
      BatchSize: 100,
      MaximumBatchingWindowInSeconds: 1,
      AmazonManagedKafkaEventSourceConfig: { ConsumerGroupId: 'notifier' },
      BisectBatchOnFunctionError: true,
      MaximumRetryAttempts: 10,
      DestinationConfig: {
        OnFailure: {
          Destination: Match.objectLike({ 'Fn::GetAtt': [Match.stringLikeRegexp('^FailedIngestBatches'), 'Arn'] }),
        },
      },
    });
  });

  it('dispatch reads the stream with the PENDING-only filter, partial batch responses, bisect, bounded retries and age, and an SQS destination', () => {
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      StartingPosition: 'TRIM_HORIZON',
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      BisectBatchOnFunctionError: true,
      MaximumRetryAttempts: 5,
      MaximumRecordAgeInSeconds: 21_600,
      FilterCriteria: { Filters: [{ Pattern: JSON.stringify(DISPATCH_FILTER_PATTERN) }] },
      DestinationConfig: {
        OnFailure: {
          Destination: Match.objectLike({ 'Fn::GetAtt': [Match.stringLikeRegexp('^DispatchOnFailure'), 'Arn'] }),
        },
      },
    });
  });

  it('the on-failure queue is encrypted and TLS-only', () => {
    template.hasResourceProperties('AWS::SQS::Queue', { SqsManagedSseEnabled: true });
    template.hasResourceProperties('AWS::SQS::QueuePolicy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
        ]),
      },
    });
  });

  it("the sweeper runs every minute: it is the delay queue's clock", () => {
    template.hasResourceProperties('AWS::Events::Rule', { ScheduleExpression: 'rate(1 minute)' });
  });
});

describe('least privilege', () => {
  it('no statement grants a wildcard action', () => {
    for (const [, p] of resources('AWS::IAM::Policy')) {
      const statements = (p.Properties.PolicyDocument as { Statement: Record<string, unknown>[] }).Statement;
      for (const a of actionsOf(statements)) expect(a.endsWith('*'), a).toBe(false);
    }
  });

  it('ingest may only put items (the transaction) and read its Kafka topic as its group', () => {
    const ingest = policyOf('Ingest');
    const ddb = actionsOf(ingest).filter((a) => a.startsWith('dynamodb:'));
    expect(ddb).toEqual(['dynamodb:PutItem']);
    const kafka = ingest.filter((s) => actionsOf([s]).some((a) => a.startsWith('kafka-cluster:')));
    expect(kafka.map((s) => s.Resource)).toEqual([
      cdkJson.context.mskClusterArn,
      'arn:aws:kafka:ap-northeast-1:123456789012:topic/bank-events/11111111-2222-3333-4444-555555555555-1/banking.transfers',
      'arn:aws:kafka:ap-northeast-1:123456789012:group/bank-events/11111111-2222-3333-4444-555555555555-1/notifier',
    ]);
  });

  it('dispatch reads and updates items, sends email only from the sender identity, publishes to SNS', () => {
    const dispatch = policyOf('Dispatch');
    // The stream actions are the event source mapping's own, granted by CDK on the stream ARN.
    const streamActions = [
      'dynamodb:DescribeStream',
      'dynamodb:GetRecords',
      'dynamodb:GetShardIterator',
      'dynamodb:ListStreams',
    ];
    expect(actionsOf(dispatch).filter((a) => a.startsWith('dynamodb:') && !streamActions.includes(a))).toEqual([
      'dynamodb:GetItem',
      'dynamodb:UpdateItem',
    ]);
    const ses = dispatch.find((s) => actionsOf([s]).includes('ses:SendEmail'));
    expect(ses?.Condition).toEqual({ StringEquals: { 'ses:FromAddress': 'notifications@example.com' } });
    expect(JSON.stringify(ses?.Resource)).toContain('identity/notifications@example.com');
  });

  it('the sweeper queries only the sweep index, and reads and updates items (the re-read after a failed condition)', () => {
    const sweeper = actionsOf(policyOf('Sweeper')).filter((a) => a.startsWith('dynamodb:'));
    expect(sweeper.sort()).toEqual(['dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:UpdateItem']);
  });

  it('SASL/SCRAM replaces the IAM Kafka permissions when a secret is given', () => {
    const { template: t } = synth({
      kafkaScramSecretArn: 'arn:aws:secretsmanager:ap-northeast-1:123456789012:secret:AmazonMSK_notifier-AbCdEf',
    });
    t.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      SourceAccessConfigurations: [{ Type: 'SASL_SCRAM_512_AUTH', URI: Match.stringLikeRegexp('AmazonMSK_notifier') }],
    });
    expect(JSON.stringify(t.toJSON())).not.toContain('kafka-cluster:ReadData');
  });
});

describe('CloudWatch', () => {
  it('alarms on everything that needs a human, all to the alarm topic', () => {
    const names = resources('AWS::CloudWatch::Alarm')
      .map(([, a]) => a.Properties.AlarmName)
      .sort();
    expect(names).toEqual(
      [
        'DispatchErrors',
        'DispatchIteratorAge',
        'DispatchOnFailureQueue',
        'EventIdConflicts',
        'IngestErrors',
        'KafkaOffsetLag',
        'LateAcceptances',
        'NotificationsExpired',
        'ProviderBlocked',
        'ProviderThrottling',
        'RecordsQuarantined',
        'SendFailures',
        'SweeperErrors',
        'SweeperFoundStuck',
        'UnknownOutcomes',
      ].map((n) => `notifier-${n}`),
    );
    for (const [, a] of resources('AWS::CloudWatch::Alarm')) expect(a.Properties.AlarmActions).toHaveLength(1);
  });

  it('subscribes the alarm email when one is given', () => {
    synth({ alarmEmail: 'oncall@example.com' }).template.hasResourceProperties('AWS::SNS::Subscription', {
      Protocol: 'email',
      Endpoint: 'oncall@example.com',
    });
    expect(resources('AWS::SNS::Subscription')).toHaveLength(0);
  });

  it('has one dashboard', () => {
    expect(resources('AWS::CloudWatch::Dashboard')).toHaveLength(1);
  });
});

describe('cdk-nag', () => {
  it.each([
    ['AwsSolutions', new AwsSolutionsChecks()],
    ['Serverless', new ServerlessChecks()],
  ])('%s: zero unacknowledged findings', (_name, pack) => {
    const report = pack.validateScope(stack);
    expect(report.violations.map((v) => v.ruleName)).toEqual([]);
  });
});

describe('settings', () => {
  it('names a missing key', () => {
    expect(() =>
      parseSettings((k) => (k === 'senderEmail' ? undefined : cdkJson.context[k as keyof typeof cdkJson.context])),
    ).toThrow(/context key "senderEmail" is required/);
  });
  it('names an invalid key and says what it must be', () => {
    expect(() => synth({ mskClusterArn: 'not-an-arn' })).toThrow(SettingsError);
    expect(() => synth({ mskClusterArn: 'not-an-arn' })).toThrow(
      /context key "mskClusterArn" is invalid: must be an MSK cluster ARN/,
    );
    expect(() => synth({ deliveryPolicy: { EMAIL: 'SOMETIMES' } })).toThrow(/deliveryPolicy.EMAIL/);
  });
  it('accepts command-line strings for numbers and JSON', () => {
    const s = parseSettings(
      (k) =>
        ({ ...cdkJson.context, batchSize: '250', deliveryPolicy: '{"SMS":"AT_LEAST_ONCE"}' })[
          k as keyof typeof cdkJson.context
        ],
    );
    expect(s.batchSize).toBe(250);
    expect(s.deliveryPolicy).toEqual({ EMAIL: 'AT_MOST_ONCE', PUSH: 'AT_MOST_ONCE', SMS: 'AT_LEAST_ONCE' });
  });
  it('defaults and validates the send rates and the maximum age', () => {
    const s = parseSettings((k) => cdkJson.context[k as keyof typeof cdkJson.context]);
    expect(s.sendRatePerSecond).toEqual({ EMAIL: 14, PUSH: 100, SMS: 20 });
    expect(s.notificationMaxAgeHours).toBe(24);
    expect(() => synth({ sendRatePerSecond: { EMAIL: 0 } })).toThrow(
      /context key "sendRatePerSecond.EMAIL" is invalid/,
    );
    expect(() => synth({ notificationMaxAgeHours: 0 })).toThrow(/notificationMaxAgeHours/);
  });
});

describe('snapshot', () => {
  it('matches, with asset hashes normalised', () => {
    const text = JSON.stringify(json, null, 1)
      .replace(/[0-9a-f]{64}\.zip/g, '<asset>.zip')
      .replace(/"S3Key": "[^"]+"/g, '"S3Key": "<asset>"');
    expect(JSON.parse(text)).toMatchSnapshot();
  });
});

/**
 * The CDK app, synthesized offline with bundling skipped, the way `bin/notifier.ts` builds it (settings file under
 * context, environment from the cluster ARN): template assertions for each requirement, cdk-nag with zero
 * unacknowledged findings, a normalised snapshot, and the settings validation.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks, ServerlessChecks } from 'cdk-nag';
import { describe, expect, it } from 'vitest';
import cdkJson from '../../cdk.json' with { type: 'json' };
import example from '../../examples/settings.example.json' with { type: 'json' };
import { brandOf } from '../../functions/commons/config.ts';
import {
  assertDispatchTiming,
  DISPATCH_TIMING,
  deriveDispatchTiming,
} from '../../functions/contracts/dispatch-timing.ts';
import {
  DISPATCH_ENVIRONMENT,
  FEEDBACK_ENVIRONMENT,
  INGEST_ENVIRONMENT,
  SMOKE_ENVIRONMENT,
  SWEEPER_ENVIRONMENT,
} from '../../functions/contracts/environment.ts';
import { type EnvSpec, keysTheStackSets } from '../../functions/contracts/environment-keys.ts';
import {
  FILTER_PATTERN_MAX_CHARS,
  matchesFilter,
  URGENT_BATCH_SIZE,
  urgentFilterPattern,
} from '../../functions/contracts/stream-filter.ts';
import { CRITICAL_TYPES } from '../../functions/domain/catalogue.ts';
import { buildNotification, type NotificationItem } from '../../functions/domain/notification.ts';
import { RATE_MIN_COUNT } from '../../lib/alarm-groups.ts';
import { createNotifierStack } from '../../lib/notifier-app.ts';
import { KAFKA_MAPPING_LOGICAL_ID } from '../../lib/notifier-stack.ts';
import { parseSettings, SettingsError, settingsFromContext } from '../../lib/settings.ts';
import { STACK_OUTPUT_NAMES } from '../../lib/stack-outputs.ts';
import { TICKET_ALARMS } from '../../lib/stage-metrics.ts';
import { decodeTransfer, transferEvent } from '../support/events.ts';
import { streamRecord } from '../support/stream.ts';
import { EXAMPLE_ONE_REGION, PRODUCTION_LIKE } from '../support/synth.ts';

const SETTINGS_FILE = EXAMPLE_ONE_REGION;
/** The one function of the stack that is not ours: CDK's AwsCustomResource provider (its calls are ours). */
const PROVIDER = /^AWS679f53fac002430cb0da5b7982bd2287/;
const SCRAM = {
  kafkaScramSecretArn: 'arn:aws:secretsmanager:ap-northeast-1:123456789012:secret:AmazonMSK_notifier-AbCdEf',
  kafkaScramKmsKeyArn: 'arn:aws:kms:ap-northeast-1:123456789012:key/aaaaaaaa-1111-2222-3333-bbbbbbbbbbbb',
};
const DATA_KEY = 'arn:aws:kms:ap-northeast-1:123456789012:key/cccccccc-1111-2222-3333-dddddddddddd';
const EVERY_OPTION = {
  ...SCRAM,
  kmsKeyArn: DATA_KEY,
  mskVpcId: 'vpc-0123456789abcdef0',
  mskRouteTableIds: 'rtb-0123456789abcdef0,rtb-0fedcba9876543210',
  dispatchReservedConcurrency: '20',
  alarmEmail: 'oncall@example.com',
  sesConfigurationSet: 'notifier',
};

type Resource = { Type: string; Properties: Record<string, unknown>; DeletionPolicy?: string };
type Statement = Record<string, unknown>;

function synth(overrides: Record<string, unknown> = {}) {
  const app = new App({ context: { settingsFile: SETTINGS_FILE, ...overrides, 'aws:cdk:bundling-stacks': [] } });
  const stack = createNotifierStack(app);
  const template = Template.fromStack(stack);
  const json = template.toJSON() as { Resources: Record<string, Resource>; Outputs: Record<string, unknown> };
  const resources = (type: string) => Object.entries(json.Resources).filter(([, r]) => r.Type === type);
  const fnLogicalId = (prefix: string) => {
    const found = resources('AWS::Lambda::Function').find(([id]) => id.startsWith(prefix));
    if (!found) throw new Error(`no function ${prefix}`);
    return found[0];
  };
  const fnProps = (prefix: string) => json.Resources[fnLogicalId(prefix)]!.Properties;
  const policyOf = (fnPrefix: string): Statement[] => {
    const role = (fnProps(fnPrefix).Role as { 'Fn::GetAtt': string[] })['Fn::GetAtt'][0];
    return resources('AWS::IAM::Policy')
      .filter(([, p]) => JSON.stringify(p.Properties.Roles).includes(String(role)))
      .flatMap(([, p]) => (p.Properties.PolicyDocument as { Statement: Statement[] }).Statement);
  };
  const alarms = (): Record<string, Resource> =>
    Object.fromEntries(resources('AWS::CloudWatch::Alarm').map(([, a]) => [String(a.Properties.AlarmName), a]));
  return { stack, template, json, resources, fnLogicalId, fnProps, policyOf, alarms };
}

const actionsOf = (statements: Statement[]) => statements.flatMap((s) => [s.Action].flat() as string[]);
const publishes = (statements: Statement[]) => statements.filter((s) => actionsOf([s]).includes('sns:Publish'));

const base = synth();
const { template, json, resources, fnLogicalId, fnProps, policyOf } = base;

describe('deploying', () => {
  it('cdk.json holds no value for a required key: a deploy without them fails at synth, naming each', () => {
    for (const key of ['stage', 'mskClusterArn', 'topic', 'consumerGroupId', 'startingPosition', 'senderEmail']) {
      expect(cdkJson.context).not.toHaveProperty(key);
    }
    const app = new App({ context: cdkJson.context });
    expect(() => createNotifierStack(app)).toThrow(SettingsError);
    expect(() => createNotifierStack(app)).toThrow(
      /"stage" is required.*"mskClusterArn" is required.*"topic" is required.*"consumerGroupId" is required.*"startingPosition" is required.*"senderEmail" is required/,
    );
  });

  it('deploys to the cluster account and region, never an environment-agnostic stack', () => {
    expect(base.stack.account).toBe('123456789012');
    expect(base.stack.region).toBe('ap-northeast-1');
    const other = synth({
      mskClusterArn: 'arn:aws:kafka:eu-west-1:210987654321:cluster/events/99999999-8888-7777-6666-555555555555-2',
      pushPlatformApplicationArns: 'arn:aws:sns:eu-west-1:210987654321:app/GCM/bank-app',
    });
    expect([other.stack.account, other.stack.region]).toEqual(['210987654321', 'eu-west-1']);
  });

  it('names the stack after its stage', () => {
    expect(base.stack.stackName).toBe('notifier-example');
    expect(synth({ settingsFile: PRODUCTION_LIKE, stage: 'staging' }).stack.stackName).toBe('notifier-staging');
  });

  it('two stages in one account share no fixed physical name and no metric namespace', () => {
    const names = (s: ReturnType<typeof synth>) => [
      ...Object.keys(s.alarms()),
      ...s.resources('AWS::CloudWatch::Dashboard').map(([, d]) => d.Properties.DashboardName),
      ...s.resources('AWS::SNS::Topic').map(([, t]) => t.Properties.DisplayName),
      ...s
        .resources('AWS::Lambda::Function')
        .filter(([id]) => !PROVIDER.test(id))
        .map(
          ([, f]) =>
            (f.Properties.Environment as { Variables: Record<string, string> }).Variables.POWERTOOLS_METRICS_NAMESPACE,
        ),
    ];
    const prod = names(synth({ settingsFile: PRODUCTION_LIKE, stage: 'prod' }));
    const staging = names(synth({ settingsFile: PRODUCTION_LIKE, stage: 'staging' }));
    expect(prod.length).toBeGreaterThan(10);
    expect(prod.filter((n) => staging.includes(n))).toEqual([]);
    expect(prod).toContain('notifier-prod');
    expect(prod).toContain('notifier-prod pages');
    expect(prod).toContain('notifier-prod tickets');
    expect(prod).toContain('notifier/prod');
  });

  it('a key given on the command line wins over the settings file', () => {
    const s = settingsFromContext((k) => ({ settingsFile: SETTINGS_FILE, topic: 'other.topic' })[k as 'topic']);
    expect(s.topic).toBe('other.topic');
    expect(s.consumerGroupId).toBe(example.consumerGroupId);
  });

  it('an unreadable settings file is named', () => {
    expect(() => settingsFromContext((k) => (k === 'settingsFile' ? 'no/such/file.json' : undefined))).toThrow(
      /settingsFile "no\/such\/file.json" cannot be read/,
    );
  });
});

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
        // SNS's delivery status names the message only: the feedback function finds the notification here.
        {
          IndexName: 'providerMessage',
          KeySchema: [{ AttributeName: 'providerMessageId', KeyType: 'HASH' }],
          Projection: { ProjectionType: 'KEYS_ONLY' },
        },
        // One customer's events without a scan (docs/evidence-and-privacy.md): keys only, inbox items only.
        {
          IndexName: 'byUser',
          KeySchema: [
            { AttributeName: 'userKey', KeyType: 'HASH' },
            { AttributeName: 'occurredAt', KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'KEYS_ONLY' },
        },
        // Quarantined records and refused channels by day, for an incident's look-up without a scan.
        {
          IndexName: 'incidents',
          KeySchema: [
            { AttributeName: 'incidentKey', KeyType: 'HASH' },
            { AttributeName: 'incidentAt', KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'ALL' },
        },
      ],
    });
  });
});

describe('the functions', () => {
  it('run nodejs24.x on arm64 with JSON logs and the Powertools environment (tracing is a setting: test/infra/tracing.test.ts)', () => {
    const fns = resources('AWS::Lambda::Function').filter(([id]) => !PROVIDER.test(id));
    // Ingest, dispatch, the sweeper, the feedback function and the operator function.
    expect(fns).toHaveLength(5);
    for (const [, fn] of fns) {
      expect(fn.Properties).toMatchObject({
        Runtime: 'nodejs24.x',
        Architectures: ['arm64'],
        LoggingConfig: { LogFormat: 'JSON' },
        Environment: {
          Variables: { POWERTOOLS_SERVICE_NAME: 'notifier', POWERTOOLS_METRICS_NAMESPACE: 'notifier/example' },
        },
      });
    }
  });

  it('set each function the environment its contract names: every variable the stack always sets, and no other', () => {
    const smoke = synth({ mskSubnetIds: 'subnet-0123456789abcdef0', mskSecurityGroupIds: 'sg-0123456789abcdef0' });
    const contracts: [typeof fnProps, string, EnvSpec][] = [
      [fnProps, 'Ingest', INGEST_ENVIRONMENT],
      [fnProps, 'Dispatch', DISPATCH_ENVIRONMENT],
      [fnProps, 'Sweeper', SWEEPER_ENVIRONMENT],
      [fnProps, 'DeliveryFeedbackFunction', FEEDBACK_ENVIRONMENT],
      [smoke.fnProps, 'SmokeProducerFunction', SMOKE_ENVIRONMENT],
    ];
    // Powertools' and Node's, set on every function by the house construct (TelemetryEnvironment).
    const telemetry = [
      'POWERTOOLS_SERVICE_NAME',
      'POWERTOOLS_METRICS_NAMESPACE',
      'POWERTOOLS_LOG_LEVEL',
      // Off unless the stack asks for an X-Ray subsegment per AWS call (settings traceAwsCalls).
      'POWERTOOLS_TRACE_ENABLED',
      'NODE_OPTIONS',
    ];
    for (const [props, fn, spec] of contracts) {
      const set = Object.keys((props(fn) as { Environment: { Variables: object } }).Environment.Variables);
      expect(
        set.filter((name) => !(name in spec) && !telemetry.includes(name)),
        `${fn} sets what its contract does not name`,
      ).toEqual([]);
      expect(
        keysTheStackSets(spec).filter((name) => !set.includes(name)),
        `${fn} misses what the stack always sets`,
      ).toEqual([]);
    }
  });

  it("log to groups kept a year (a bank's audit history: PCI DSS 10.5.1, Control Tower's CT.CLOUDWATCH.PR.2), retained on stack deletion, each writable only by its own function", () => {
    const groups = resources('AWS::Logs::LogGroup');
    // The five functions', the AwsCustomResource provider's (its own role writes only there too) and the operator
    // API's access log.
    expect(groups).toHaveLength(7);
    for (const [, g] of groups) expect(g.Properties.RetentionInDays).toBe(365);
    for (const name of ['Ingest', 'Dispatch', 'Sweeper', 'DeliveryFeedbackFunction', 'Operator']) {
      const logs = policyOf(name).filter((s) => actionsOf([s]).some((a) => a.startsWith('logs:')));
      expect(logs).toEqual([
        {
          Effect: 'Allow',
          Action: ['logs:CreateLogStream', 'logs:PutLogEvents'],
          Resource: { 'Fn::GetAtt': [expect.stringMatching(new RegExp(`^${name}Logs`)), 'Arn'] },
        },
      ]);
    }
    // The managed basic execution role would allow writing to every log group of the account.
    expect(JSON.stringify(json)).not.toContain('AWSLambdaBasicExecutionRole');
  });

  it('reserve no concurrency by default: a new account with a quota of 10 can deploy', () => {
    for (const [, fn] of resources('AWS::Lambda::Function')) {
      expect(fn.Properties).not.toHaveProperty('ReservedConcurrentExecutions');
    }
  });

  it('reserve dispatch concurrency only when the setting asks for it', () => {
    const s = synth({ dispatchReservedConcurrency: '20' });
    expect(s.fnProps('Dispatch').ReservedConcurrentExecutions).toBe(20);
    expect(s.fnProps('Sweeper')).not.toHaveProperty('ReservedConcurrentExecutions');
    expect(() => synth({ dispatchReservedConcurrency: '0' })).toThrow(/"dispatchReservedConcurrency" is invalid/);
  });

  it('keeps environments warm for the urgent trigger alone, only when asked: an alias with provisioned concurrency that only the urgent mapping invokes', () => {
    const mappingsOf = (r: ReturnType<typeof synth>) =>
      r.resources('AWS::Lambda::EventSourceMapping').map(([, m]) => m.Properties);
    const isUrgent = (m: Record<string, unknown>) => m.StartingPosition === 'LATEST';
    // Default: no alias, nothing provisioned; both triggers invoke the function itself.
    expect(resources('AWS::Lambda::Alias')).toEqual([]);
    const warm = synth({ urgentWarmEnvironments: '2' });
    const aliases = warm.resources('AWS::Lambda::Alias');
    expect(aliases).toHaveLength(1);
    const [aliasId, alias] = aliases[0] as [string, { Properties: Record<string, unknown> }];
    expect(alias.Properties).toMatchObject({
      Name: 'urgent',
      FunctionName: { Ref: warm.fnLogicalId('Dispatch') },
      ProvisionedConcurrencyConfig: { ProvisionedConcurrentExecutions: 2 },
    });
    const streamMappings = mappingsOf(warm).filter((m) => JSON.stringify(m.EventSourceArn).includes('StreamArn'));
    // The function's name qualified by the alias's: the alias, never the unqualified function.
    const urgentTargets = streamMappings.filter(isUrgent).map((m) => JSON.stringify(m.FunctionName));
    expect(urgentTargets).toHaveLength(1);
    expect(urgentTargets[0]).toContain(`{"Ref":"${aliasId}"}`);
    expect(urgentTargets[0]).toContain(':urgent');
    expect(streamMappings.filter((m) => !isUrgent(m)).map((m) => m.FunctionName)).toEqual([
      { Ref: warm.fnLogicalId('Dispatch') },
    ]);
    // Within a reservation, the routine trigger must keep room.
    expect(() => synth({ urgentWarmEnvironments: '5', dispatchReservedConcurrency: '5' })).toThrow(
      /"urgentWarmEnvironments".*must be below dispatchReservedConcurrency/s,
    );
  });

  it('give ingest the maximum event age', () => {
    const env = (fnProps('Ingest').Environment as { Variables: Record<string, string> }).Variables;
    expect(env.MAX_EVENT_AGE_SECONDS).toBe('86400');
    const custom = synth({ maxEventAgeSeconds: '3600' }).fnProps('Ingest');
    expect((custom.Environment as { Variables: Record<string, string> }).Variables.MAX_EVENT_AGE_SECONDS).toBe('3600');
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
    // Our own account, resolved at deploy: another account's push endpoint is then that message's fault alone.
    expect(dispatch.Environment.Variables.ACCOUNT_ID).toEqual({ Ref: 'AWS::AccountId' });
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

  it('pass the send rates and the maximum age to dispatch and the sweeper, and the pending threshold to all three', () => {
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
    const fn = fnProps('Dispatch') as { Timeout: number; Environment: { Variables: Record<string, string> } };
    expect(fn.Environment.Variables).toMatchObject({
      SENDER_EMAIL: 'notifications@example.com',
      CHANNEL_POLICIES: 'EMAIL=AT_MOST_ONCE,PUSH=AT_MOST_ONCE,SMS=AT_MOST_ONCE',
    });
    expect(Number(fn.Environment.Variables.LEASE_SECONDS)).toBeGreaterThan(fn.Timeout);
  });

  it("give dispatch the bank's identity as one BRAND variable, within Lambda's 4 KB of environment", () => {
    const fn = fnProps('Dispatch') as { Environment: { Variables: Record<string, string> } };
    const brand = JSON.parse(fn.Environment.Variables.BRAND ?? '{}');
    expect(brand).toMatchObject({ name: example.brand.name, brandColor: '#0f4c81' });
    expect(brandOf(fn.Environment.Variables.BRAND)).toEqual(brand);
    // Tokens (the table name) count as their longest value: 255 characters.
    const size = Object.entries(fn.Environment.Variables).reduce(
      (n, [k, v]) => n + k.length + (typeof v === 'string' ? Buffer.byteLength(v) : 255),
      0,
    );
    expect(size).toBeLessThan(4096);
  });
});

describe('the MSK trigger', () => {
  const mapping = (s: ReturnType<typeof synth>) =>
    s.resources('AWS::Lambda::EventSourceMapping').filter(([, m]) => m.Properties.Topics !== undefined);

  it('reads the topic with batch size, window, bisect, bounded retries, an S3 destination and every mapping metric', () => {
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      EventSourceArn: example.mskClusterArn,
      Topics: ['banking.transfers'],
      StartingPosition: 'TRIM_HORIZON',
      BatchSize: 100,
      MaximumBatchingWindowInSeconds: 1,
      AmazonManagedKafkaEventSourceConfig: { ConsumerGroupId: 'notifier-example' },
      BisectBatchOnFunctionError: true,
      MaximumRetryAttempts: 10,
      ProvisionedPollerConfig: { MinimumPollers: 1, MaximumPollers: 4 },
      MetricsConfig: { Metrics: ['EventCount', 'ErrorCount', 'KafkaMetrics'] },
      DestinationConfig: {
        OnFailure: {
          Destination: Match.objectLike({ 'Fn::GetAtt': [Match.stringLikeRegexp('^FailedIngestBatches'), 'Arn'] }),
        },
      },
    });
    // An old record is recorded as too old by ingest, not diverted to S3 by the mapping.
    expect(mapping(base)[0]?.[1].Properties).not.toHaveProperty('MaximumRecordAgeInSeconds');
  });

  it('keeps one logical id whatever the topic, so a topic change cannot add a second mapping beside the first', () => {
    const ids = ['banking.transfers', 'banking.transfers.v2'].map((topic) => mapping(synth({ topic }))[0]?.[0]);
    expect(ids).toEqual([KAFKA_MAPPING_LOGICAL_ID, KAFKA_MAPPING_LOGICAL_ID]);
  });

  it('starts at a timestamp when asked, and requires one for AT_TIMESTAMP', () => {
    const s = synth({ startingPosition: 'AT_TIMESTAMP', startingPositionTimestamp: '2026-12-01T00:00:00Z' });
    expect(mapping(s)[0]?.[1].Properties).toMatchObject({
      StartingPosition: 'AT_TIMESTAMP',
      StartingPositionTimestamp: Date.parse('2026-12-01T00:00:00Z') / 1000,
    });
    expect(() => synth({ startingPosition: 'AT_TIMESTAMP' })).toThrow(
      /"startingPositionTimestamp" is required when startingPosition is AT_TIMESTAMP/,
    );
  });

  it('SASL/SCRAM replaces the IAM Kafka permissions and may decrypt the secret key, only through Secrets Manager', () => {
    const s = synth(SCRAM);
    s.template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      SourceAccessConfigurations: [{ Type: 'SASL_SCRAM_512_AUTH', URI: Match.stringLikeRegexp('AmazonMSK_notifier') }],
    });
    const ingest = s.policyOf('Ingest');
    expect(actionsOf(ingest)).not.toContain('kafka-cluster:ReadData');
    // Besides the secret fields' HMAC key (GenerateMac, below: a customer-managed key).
    const decrypting = ingest.filter((st) =>
      actionsOf([st]).some((a) => a.startsWith('kms:') && a !== 'kms:GenerateMac'),
    );
    expect(decrypting).toEqual([
      {
        Effect: 'Allow',
        Action: 'kms:Decrypt',
        Resource: SCRAM.kafkaScramKmsKeyArn,
        Condition: { StringEquals: { 'kms:ViaService': 'secretsmanager.ap-northeast-1.amazonaws.com' } },
      },
    ]);
    expect(actionsOf(ingest)).toContain('secretsmanager:GetSecretValue');
  });

  it('refuses a SCRAM secret without its key, and a secret or key outside the cluster region', () => {
    expect(() => synth({ kafkaScramSecretArn: SCRAM.kafkaScramSecretArn })).toThrow(
      /"kafkaScramKmsKeyArn" is required with kafkaScramSecretArn/,
    );
    expect(() =>
      synth({ ...SCRAM, kafkaScramKmsKeyArn: SCRAM.kafkaScramKmsKeyArn.replace('ap-northeast-1', 'us-east-1') }),
    ).toThrow(/"kafkaScramKmsKeyArn" must be in the cluster's account and region/);
  });

  it('adds the S3 gateway endpoint the on-failure destination needs when the cluster VPC is given', () => {
    expect(resources('AWS::EC2::VPCEndpoint')).toHaveLength(0);
    synth({
      mskVpcId: 'vpc-0123456789abcdef0',
      mskRouteTableIds: '["rtb-0123456789abcdef0"]',
    }).template.hasResourceProperties('AWS::EC2::VPCEndpoint', {
      VpcId: 'vpc-0123456789abcdef0',
      ServiceName: 'com.amazonaws.ap-northeast-1.s3',
      VpcEndpointType: 'Gateway',
      RouteTableIds: ['rtb-0123456789abcdef0'],
    });
    expect(() => synth({ mskVpcId: 'vpc-0123456789abcdef0' })).toThrow(/mskVpcId and mskRouteTableIds go together/);
  });
});

describe('the failed-batch bucket', () => {
  it('is private, TLS-only, versioned, and keeps nothing longer than the inbox', () => {
    template.hasResourceProperties('AWS::S3::Bucket', {
      VersioningConfiguration: { Status: 'Enabled' },
      PublicAccessBlockConfiguration: {
        BlockPublicAcls: true,
        BlockPublicPolicy: true,
        IgnorePublicAcls: true,
        RestrictPublicBuckets: true,
      },
      LifecycleConfiguration: {
        Rules: [
          {
            Id: 'expire-with-the-inbox',
            Status: 'Enabled',
            ExpirationInDays: 35,
            NoncurrentVersionExpiration: { NoncurrentDays: 1 },
            AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 },
          },
          { Id: 'remove-expired-delete-markers', Status: 'Enabled', ExpiredObjectDeleteMarker: true },
        ],
      },
    });
    const retention = synth({ inboxRetentionDays: '10', maxEventAgeSeconds: '3600' });
    retention.template.hasResourceProperties('AWS::S3::Bucket', {
      LifecycleConfiguration: { Rules: Match.arrayWith([Match.objectLike({ ExpirationInDays: 10 })]) },
    });
  });

  it('refuses a maximum event age the inbox would not outlive', () => {
    expect(() => synth({ inboxRetentionDays: '1' })).toThrow(
      /"maxEventAgeSeconds" must be shorter than inboxRetentionDays/,
    );
  });
});

describe('the dispatch trigger', () => {
  it('reads the stream with the PENDING-only filter, partial batch responses, bisect, bounded retries and age, and an SQS destination', () => {
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      StartingPosition: 'TRIM_HORIZON',
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      BisectBatchOnFunctionError: true,
      MaximumRetryAttempts: 5,
      MaximumRecordAgeInSeconds: 21_600,
      FilterCriteria: { Filters: [{ Pattern: Match.anyValue() }] },
      DestinationConfig: {
        OnFailure: {
          Destination: Match.objectLike({ 'Fn::GetAtt': [Match.stringLikeRegexp('^DispatchOnFailure'), 'Arn'] }),
        },
      },
    });
  });

  describe('the deployed filter, evaluated on real-shaped stream records: only a notification PENDING after the write passes', () => {
    const mappings = resources('AWS::Lambda::EventSourceMapping').filter(([, m]) => m.Properties.FilterCriteria);
    const filters = mappings.flatMap(
      ([, m]) => (m.Properties.FilterCriteria as { Filters: { Pattern: string }[] }).Filters,
    );
    const patterns = filters.map((f) => JSON.parse(f.Pattern) as unknown);
    /** Lambda delivers a record when any of the mapping's filters matches it. */
    const delivered = (record: unknown) => patterns.some((p) => matchesFilter(p, record));

    const NOW = Date.parse('2026-11-30T09:20:00Z');
    const parsed = decodeTransfer(transferEvent());
    const pending = buildNotification(parsed.event, 'EMAIL', 'hanako@example.com', NOW, { retentionDays: 35 });
    const as = (status: NotificationItem['status'], attempt = 1): NotificationItem => ({ ...pending, status, attempt });

    it('two mappings carry a filter (routine and urgent), and they use only the grammar the matcher implements', () => {
      expect(mappings).toHaveLength(2);
      expect(filters).toHaveLength(2);
      const plain = (p: unknown): boolean =>
        Array.isArray(p)
          ? p.every((v) => typeof v === 'string')
          : typeof p === 'object' && p !== null && Object.values(p).every(plain);
      expect(patterns.every(plain)).toBe(true);
    });

    it('passes a new PENDING notification (INSERT) and one put back to PENDING (MODIFY: retry, redrive)', () => {
      expect(delivered(streamRecord('INSERT', pending))).toBe(true);
      expect(delivered(streamRecord('MODIFY', { ...as('PENDING'), retryAt: NOW + 5 }, as('SENDING')))).toBe(true);
      expect(delivered(streamRecord('MODIFY', { ...pending, redrives: 1 }, pending))).toBe(true);
    });

    it('stops every other status: SENDING, SENT, FAILED, UNKNOWN — our own writes never re-trigger dispatch', () => {
      expect(delivered(streamRecord('MODIFY', as('SENDING'), pending))).toBe(false);
      for (const status of ['SENT', 'FAILED', 'UNKNOWN'] as const) {
        expect(delivered(streamRecord('MODIFY', as(status), as('SENDING'))), status).toBe(false);
      }
      // An INSERT with another status (never written by ingest, but the filter must not depend on that).
      expect(delivered(streamRecord('INSERT', as('SENT')))).toBe(false);
    });

    it('stops REMOVE (TTL), inbox, quarantine, send-rate and breaker items', () => {
      expect(delivered(streamRecord('REMOVE', undefined, pending))).toBe(false);
      expect(delivered(streamRecord('INSERT', { pk: pending.pk, sk: 'INBOX', kind: 'INBOX', status: 'PENDING' }))).toBe(
        false,
      );
      expect(delivered(streamRecord('INSERT', { pk: 'QUARANTINE#t#0#1', sk: 'RECORD', kind: 'QUARANTINE' }))).toBe(
        false,
      );
      expect(delivered(streamRecord('MODIFY', { pk: 'RATE#EMAIL', sk: '1', kind: 'RATE', used: 3 }))).toBe(false);
      expect(delivered(streamRecord('INSERT', { pk: 'BREAKER#SMS', sk: 'BREAKER', kind: 'BREAKER' }))).toBe(false);
    });

    it('critical notices first: the urgent mapping takes only the critical types, in small batches without waiting; the routine one takes every type', () => {
      const patternOf = ([, m]: (typeof mappings)[number]) =>
        JSON.parse((m.Properties.FilterCriteria as { Filters: { Pattern: string }[] }).Filters[0]?.Pattern ?? '{}');
      const urgent = mappings.find(([, m]) => m.Properties.BatchSize === URGENT_BATCH_SIZE) ?? expect.fail('urgent');
      const routine = mappings.find((m) => m !== urgent) ?? expect.fail('routine');
      expect(urgent[1].Properties.MaximumBatchingWindowInSeconds ?? 0).toBe(0);
      expect(routine[1].Properties.BatchSize).toBe(100);
      expect(CRITICAL_TYPES).toContain('LoginFromNewDevice');
      const critical = { ...pending, template: 'LoginFromNewDevice' };
      for (const record of [
        streamRecord('INSERT', critical),
        streamRecord('MODIFY', { ...critical, redrives: 1 }, critical),
      ]) {
        expect(matchesFilter(patternOf(urgent), record)).toBe(true);
        expect(matchesFilter(patternOf(routine), record)).toBe(true);
      }
      for (const type of ['TransferCompleted', 'CardPayment', 'StatementReady']) {
        const record = streamRecord('INSERT', { ...pending, template: type });
        expect(matchesFilter(patternOf(urgent), record), type).toBe(false);
        expect(matchesFilter(patternOf(routine), record), type).toBe(true);
      }
      // The urgent mapping stops every other status, as the routine one does.
      expect(matchesFilter(patternOf(urgent), streamRecord('MODIFY', { ...critical, status: 'SENT' }, critical))).toBe(
        false,
      );
      // Both reach the one dispatch function. The urgent one is a fast lane, never the only one: it starts at LATEST
      // (no replay of the stream on its first deploy) and gives up after a minute — into a queue of its own, never
      // the routine trigger's (whose alarm means a record no trigger will deliver): a trace of every critical batch
      // that fell back to the routine pace, with its own event-count metrics.
      expect(urgent[1].Properties.FunctionName).toEqual(routine[1].Properties.FunctionName);
      expect(urgent[1].Properties.StartingPosition).toBe('LATEST');
      expect(urgent[1].Properties.MaximumRecordAgeInSeconds).toBe(60);
      expect(urgent[1].Properties.DestinationConfig).toEqual({
        OnFailure: { Destination: { 'Fn::GetAtt': [expect.stringMatching(/^UrgentDispatchOnFailure/), 'Arn'] } },
      });
      expect(routine[1].Properties.DestinationConfig).toEqual({
        OnFailure: { Destination: { 'Fn::GetAtt': [expect.stringMatching(/^DispatchOnFailure/), 'Arn'] } },
      });
      expect(urgent[1].Properties.MetricsConfig).toEqual({ Metrics: ['EventCount'] });
    });

    it('a catalogue whose critical types would not fit in a Lambda filter pattern is refused at synth, naming why', () => {
      expect(JSON.stringify(urgentFilterPattern(CRITICAL_TYPES)).length).toBeLessThan(FILTER_PATTERN_MAX_CHARS);
      const many = Array.from({ length: 200 }, (_, i) => `SuspiciousActivityDetected${i}`);
      expect(() => urgentFilterPattern(many)).toThrow(/at most 4096: shorten the critical types' names/);
    });

    it('the matcher follows the filter grammar: every key must be present and hold one of the listed values', () => {
      const p = { a: ['x'], b: { c: ['y', 'z'] } };
      expect(matchesFilter(p, { a: 'x', b: { c: 'z' }, extra: 1 })).toBe(true);
      expect(matchesFilter(p, { a: 'x' })).toBe(false);
      expect(matchesFilter(p, { a: 'x', b: { c: 'w' } })).toBe(false);
      expect(matchesFilter(p, { a: 'x', b: 'y' })).toBe(false);
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

describe('a customer-managed key', () => {
  const keyed = synth({ kmsKeyArn: DATA_KEY });

  it('encrypts the table, the on-failure queue and the failed-batch bucket', () => {
    keyed.template.hasResourceProperties('AWS::DynamoDB::Table', {
      SSESpecification: { SSEEnabled: true, SSEType: 'KMS', KMSMasterKeyId: DATA_KEY },
    });
    keyed.template.hasResourceProperties('AWS::SQS::Queue', { KmsMasterKeyId: DATA_KEY });
    keyed.template.hasResourceProperties('AWS::S3::Bucket', {
      BucketEncryption: {
        ServerSideEncryptionConfiguration: [
          {
            BucketKeyEnabled: true,
            ServerSideEncryptionByDefault: { SSEAlgorithm: 'aws:kms', KMSMasterKeyID: DATA_KEY },
          },
        ],
      },
    });
  });

  it('the secret MAC key: the account administers it and never uses it; ingest generates MACs, the evidence reader verifies them, only break glass disables or deletes it', () => {
    const found = resources('AWS::KMS::Key').find(([id]) => id.startsWith('SecretMacKey'));
    if (found === undefined) throw new Error('no SecretMacKey');
    const statements = (found[1].Properties.KeyPolicy as { Statement: Statement[] }).Statement;
    const allowed = statements.filter((st) => st.Effect === 'Allow');
    // Nobody holds kms:* on it: a MAC computed at will tests candidate codes against the evidence's MAC.
    expect(actionsOf(allowed)).not.toContain('kms:*');
    const uses = (action: string) => allowed.filter((st) => actionsOf([st]).includes(action));
    expect(uses('kms:GenerateMac').map((st) => JSON.stringify(st.Principal))).toEqual([
      expect.stringContaining((fnProps('Ingest').Role as { 'Fn::GetAtt': string[] })['Fn::GetAtt'][0] ?? 'none'),
    ]);
    expect(uses('kms:VerifyMac').map((st) => JSON.stringify(st.Principal))).toEqual([
      expect.stringMatching(/EvidenceReaderRole/),
    ]);
    const denied = statements.filter((st) => st.Effect === 'Deny').flatMap((st) => actionsOf([st]));
    expect(denied).toEqual(expect.arrayContaining(['kms:ScheduleKeyDeletion', 'kms:DisableKey', 'kms:CreateGrant']));
  });

  it('lets each function decrypt and generate data keys with it, nothing more', () => {
    const kmsOf = (name: string) =>
      keyed.policyOf(name).filter((s) => actionsOf([s]).some((a) => a.startsWith('kms:')));
    for (const name of ['Sweeper', 'DeliveryFeedbackFunction']) {
      expect(new Set(actionsOf(kmsOf(name)))).toEqual(new Set(['kms:Decrypt', 'kms:GenerateDataKey']));
    }
    // Ingest also MACs secret fields (one-time codes) with the stack's HMAC key, and may do nothing else with it.
    expect(new Set(actionsOf(kmsOf('Ingest')))).toEqual(
      new Set(['kms:Decrypt', 'kms:GenerateDataKey', 'kms:GenerateMac']),
    );
    expect(kmsOf('Ingest').filter((s) => actionsOf([s]).includes('kms:GenerateMac'))).toEqual([
      {
        Effect: 'Allow',
        Action: 'kms:GenerateMac',
        Resource: { 'Fn::GetAtt': [expect.stringMatching(/^SecretMacKey/), 'Arn'] },
      },
    ]);
    // CDK's grant for the stream trigger adds DescribeKey.
    expect(new Set(actionsOf(kmsOf('Dispatch')))).toEqual(
      new Set(['kms:Decrypt', 'kms:GenerateDataKey', 'kms:DescribeKey']),
    );
    // Besides the bank's key, the writers of evidence may only encrypt with the evidence store's own key.
    for (const name of ['Ingest', 'Dispatch', 'Sweeper']) {
      for (const s of kmsOf(name)) {
        if (s.Resource === DATA_KEY || s.Action === 'kms:GenerateMac') continue;
        expect(s.Resource).toEqual({ 'Fn::GetAtt': [expect.stringMatching(/^EvidenceKey/), 'Arn'] });
        expect(s.Action).toBe('kms:GenerateDataKey');
      }
    }
  });

  it('is not used without the setting', () => {
    expect(JSON.stringify(json)).not.toContain('KMSMasterKeyId');
    template.hasResourceProperties('AWS::S3::Bucket', {
      BucketEncryption: {
        ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }],
      },
    });
  });

  it('must be in the cluster account and region', () => {
    expect(() => synth({ kmsKeyArn: DATA_KEY.replace('123456789012', '999999999999') })).toThrow(
      /"kmsKeyArn" must be in the cluster's account and region/,
    );
  });
});

describe('least privilege', () => {
  it('no statement grants a wildcard action', () => {
    for (const s of [base, synth(EVERY_OPTION)]) {
      for (const [, p] of s.resources('AWS::IAM::Policy')) {
        const statements = (p.Properties.PolicyDocument as { Statement: Statement[] }).Statement;
        for (const a of actionsOf(statements)) expect(a.endsWith('*'), a).toBe(false);
      }
    }
  });

  it('ingest may only put items (the transaction), read inbox items, raise the shard mark, and read its Kafka topic as its group', () => {
    const ingest = policyOf('Ingest');
    const ddb = actionsOf(ingest).filter((a) => a.startsWith('dynamodb:'));
    expect(ddb).toEqual(['dynamodb:PutItem', 'dynamodb:BatchGetItem', 'dynamodb:UpdateItem']);
    // UpdateItem only on the sweep shard mark's partition: never on an event's items.
    const update = ingest.find((s) => actionsOf([s]).includes('dynamodb:UpdateItem'));
    expect(update?.Condition).toEqual({ 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': ['SWEEP#SHARDS'] } });
    const kafka = ingest.filter((s) => actionsOf([s]).some((a) => a.startsWith('kafka-cluster:')));
    expect(kafka.map((s) => s.Resource)).toEqual([
      example.mskClusterArn,
      'arn:aws:kafka:ap-northeast-1:123456789012:topic/bank-events/11111111-2222-3333-4444-555555555555-1/banking.transfers',
      'arn:aws:kafka:ap-northeast-1:123456789012:group/bank-events/11111111-2222-3333-4444-555555555555-1/notifier-example',
    ]);
  });

  it('dispatch reads and updates items, sends email only from the sender identity', () => {
    const dispatch = policyOf('Dispatch');
    // The stream actions are the event source mapping's own, granted by CDK on the stream ARN.
    const streamActions = [
      'dynamodb:DescribeStream',
      'dynamodb:GetRecords',
      'dynamodb:GetShardIterator',
      'dynamodb:ListStreams',
    ];
    // PutItem only on evidence gaps and batch intents, DeleteItem only on the intents (test/infra/evidence.test.ts);
    // BatchWriteItem and UpdateItem on the evidence index's own table (test/infra/evidence-index.test.ts); PutItem
    // alone on the evidence spool's own table.
    expect(actionsOf(dispatch).filter((a) => a.startsWith('dynamodb:') && !streamActions.includes(a))).toEqual([
      'dynamodb:GetItem',
      'dynamodb:UpdateItem',
      'dynamodb:BatchWriteItem',
      'dynamodb:UpdateItem',
      'dynamodb:PutItem',
      'dynamodb:PutItem',
      'dynamodb:DeleteItem',
    ]);
    const spoolPut = dispatch.find(
      (s) =>
        String(JSON.stringify(s.Resource)).includes('EvidenceSpoolTable') &&
        actionsOf([s]).includes('dynamodb:PutItem'),
    );
    expect(actionsOf([spoolPut as Statement])).toEqual(['dynamodb:PutItem']);
    // In the spool's partitions only, never its roll-up's cursor (EVIDENCE_SPOOL#ROLLED).
    expect(JSON.stringify(spoolPut?.Condition)).toContain('EVIDENCE_SPOOL#0');
    expect(JSON.stringify(spoolPut?.Condition)).not.toContain('ROLLED');
    const ses = dispatch.find((s) => actionsOf([s]).includes('ses:SendEmail'));
    expect(ses?.Condition).toEqual({ StringEquals: { 'ses:FromAddress': 'notifications@example.com' } });
    expect(JSON.stringify(ses?.Resource)).toContain('identity/notifications@example.com');
  });

  it("dispatch publishes to SNS only to the configured applications' endpoints and to phone numbers: no topic, no other application", () => {
    const statements = publishes(policyOf('Dispatch'));
    const partitionArn = (rest: string) => ({ 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, rest]] });
    expect(statements).toEqual([
      {
        Sid: 'PushToConfiguredApplications',
        Effect: 'Allow',
        Action: 'sns:Publish',
        Resource: example.pushPlatformApplicationArns.map((arn) => `${arn.replace(':app/', ':endpoint/')}/*`),
      },
      // Every SNS ARN (topics, endpoints, applications, in any account and region) is outside this grant.
      { Sid: 'SmsToPhoneNumbersOnly', Effect: 'Allow', Action: 'sns:Publish', NotResource: partitionArn(':sns:*:*:*') },
    ]);
    // Dispatch knows which applications its role may publish to: an endpoint of another is that message's fault.
    expect(
      (fnProps('Dispatch').Environment as { Variables: Record<string, string> }).Variables.PUSH_APPLICATION_ARNS,
    ).toBe(example.pushPlatformApplicationArns.join(','));
    // Without applications, no push at all (and the synth says so).
    const { pushPlatformApplicationArns: _apps, ...noApps } = example;
    const file = join(mkdtempSync(join(tmpdir(), 'settings-')), 'no-push.json');
    writeFileSync(file, JSON.stringify(noApps));
    const none = synth({ settingsFile: file });
    expect(publishes(none.policyOf('Dispatch')).map((st) => st.Sid)).toEqual(['SmsToPhoneNumbersOnly']);
    // Nowhere in the stack is sns:Publish granted on "*".
    for (const [, p] of resources('AWS::IAM::Policy')) {
      for (const s of publishes((p.Properties.PolicyDocument as { Statement: Statement[] }).Statement)) {
        expect([s.Resource].flat()).not.toContain('*');
      }
    }
  });

  it('the sweeper queries only the sweep index, and reads and updates items (the re-read after a failed condition)', () => {
    const sweeper = actionsOf(policyOf('Sweeper')).filter((a) => a.startsWith('dynamodb:'));
    // Query, PutItem and DeleteItem on evidence gaps and batch intents too (test/infra/evidence.test.ts);
    // BatchWriteItem on the evidence index's own table (test/infra/evidence-index.test.ts).
    expect([...new Set(sweeper)].sort()).toEqual([
      'dynamodb:BatchWriteItem',
      'dynamodb:DeleteItem',
      'dynamodb:GetItem',
      'dynamodb:PutItem',
      'dynamodb:Query',
      'dynamodb:UpdateItem',
    ]);
  });
});

describe('CloudWatch', () => {
  const alarms = base.alarms();
  type AlarmProps = {
    EvaluationPeriods: number;
    DatapointsToAlarm: number;
    TreatMissingData: string;
    ComparisonOperator: string;
    AlarmActions: unknown[];
    Metrics?: { MetricStat?: { Metric: { Dimensions: unknown[] } } }[];
    Dimensions?: unknown[];
  };
  const shape = (name: string) => {
    const p = alarms[`notifier-example-${name}`]?.Properties as AlarmProps | undefined;
    if (!p) throw new Error(`no alarm ${name}`);
    return [p.DatapointsToAlarm, p.EvaluationPeriods, p.TreatMissingData];
  };

  it('alarms on everything that needs a human, named for the stage, each to one topic (its tier)', () => {
    expect(Object.keys(alarms).sort()).toEqual(
      [
        'AcceptancesNotRecorded',
        'ApplicationBlocked',
        'DispatchErrors',
        'DispatchIteratorAge',
        'DispatchOnFailureQueue',
        'EventIdConflicts',
        'EvidenceGapsOpen',
        'EvidenceIntentsNotWritten',
        'EvidenceIntentOldestAge',
        'EvidenceUnindexed',
        'EvidenceLost',
        'EvidenceSpoolOldestAge',
        'EvidenceSpoolSetAside',
        'EvidenceSpoolUnreadable',
        'DeliveryFailures',
        'DispatchThrottles',
        'CardNumbersMasked',
        'FeedbackDeadLetters',
        'FeedbackThrottles',
        'IngestBatchNotParked',
        'IngestBatchParked',
        'IngestErrors',
        'IngestIdle',
        'IngestThrottles',
        'KafkaMappingErrors',
        'KafkaOffsetLag',
        'LateAcceptances',
        'NotificationsExpired',
        'NotificationsPastValidity',
        'NotificationsRefused',
        'ProtectionReportsUndelivered',
        'ProviderBlocked',
        'ProviderThrottling',
        'RecordsQuarantined',
        'SendFailures',
        'SesBounceRate',
        'SesComplaintRate',
        'SmsSpend',
        'SmsSuccessRate',
        'SnsNotificationsFailed',
        'SweeperErrors',
        'SweeperFoundStuck',
        'SweeperNotRunning',
        'SweeperThrottles',
        'UnknownOutcomes',
        'UrgentTriggerGaveUp',
        'SendFailureRate',
        'RefusedChannelRate',
        'QuarantineRate',
        'DeliveryFailureRate',
        'EvidenceIndexUnprocessed',
        'SweeperLeasePassBehind',
        'SweeperLeasePassFailing',
        'SpoolSendsLeftForNextRun',
      ]
        .map((n) => `notifier-example-${n}`)
        .sort(),
    );
    for (const a of Object.values(alarms)) expect((a.Properties as AlarmProps).AlarmActions).toHaveLength(1);
  });

  it('error and lag alarms need a pattern (M of N), not one transient retry', () => {
    expect(shape('IngestErrors')).toEqual([3, 5, 'notBreaching']);
    expect(shape('DispatchErrors')).toEqual([3, 5, 'notBreaching']);
    expect(shape('SweeperErrors')).toEqual([2, 3, 'notBreaching']);
    expect(shape('DispatchIteratorAge')).toEqual([3, 5, 'notBreaching']);
    // Missing lag data means the mapping stopped reporting, not that it caught up.
    expect(shape('KafkaOffsetLag')).toEqual([3, 5, 'ignore']);
    // A refused evidence intent is absorbed once; a table refusing it minute after minute pages.
    expect(shape('EvidenceIntentsNotWritten')).toEqual([3, 5, 'notBreaching']);
    expect(shape('EvidenceUnindexed')).toEqual([3, 5, 'notBreaching']);
    // The index table leaving items unprocessed after the retries: the sweeper indexes the batch; a persisting refusal pages.
    expect(shape('EvidenceIndexUnprocessed')).toEqual([3, 5, 'notBreaching']);
    // The sweeper cannot read the spool table (published every run, 0 when it can): three runs of it page.
    expect(shape('EvidenceSpoolUnreadable')).toEqual([3, 5, 'notBreaching']);
    // The lease pass left partitions unread: one run under a burst is normal, three of five is window 5 stretching.
    expect(shape('SweeperLeasePassBehind')).toEqual([3, 5, 'notBreaching']);
    // A lease-pass Query that failed: the next run retries it; three runs of five is a partition nobody reads.
    expect(shape('SweeperLeasePassFailing')).toEqual([3, 5, 'notBreaching']);
    // A found spool record whose SENT write fails: a retry is normal, every run of five is a write that keeps failing.
    expect(shape('SpoolSendsLeftForNextRun')).toEqual([5, 5, 'notBreaching']);
  });

  it('every occurrence of a customer-facing fault alarms, and its absence is no data', () => {
    for (const name of [
      'RecordsQuarantined',
      'EventIdConflicts',
      'SendFailures',
      'UnknownOutcomes',
      'IngestBatchParked',
      'AcceptancesNotRecorded',
      'ApplicationBlocked',
      'NotificationsRefused',
      'CardNumbersMasked',
      'EvidenceLost',
      'UrgentTriggerGaveUp',
      'ProtectionReportsUndelivered',
    ]) {
      expect(shape(name)).toEqual([1, 1, 'notBreaching']);
    }
  });

  it("the urgent trigger's give-ups are watched: its own queue and the records its mapping dropped", () => {
    const urgent = JSON.stringify(alarms['notifier-example-UrgentTriggerGaveUp']?.Properties);
    expect(urgent).toContain('UrgentDispatchOnFailure');
    expect(urgent).toContain('DroppedEventCount');
    expect(urgent).toMatch(/"EventSourceMappingUUID","Value":\{"Ref":"DispatchUrgentDispatchTrigger/);
  });

  it('silence of ingest is itself the alarm: missing data breaches', () => {
    const idle = alarms['notifier-example-IngestIdle']?.Properties as AlarmProps & { Threshold: number };
    expect(idle).toMatchObject({
      ComparisonOperator: 'LessThanThreshold',
      Threshold: 1,
      EvaluationPeriods: 60,
      DatapointsToAlarm: 60,
      TreatMissingData: 'breaching',
      MetricName: 'Invocations',
      Namespace: 'AWS/Lambda',
    });
    const custom = synth({ ingestIdleAlarmMinutes: '15' }).alarms()['notifier-example-IngestIdle']?.Properties;
    expect(custom).toMatchObject({ EvaluationPeriods: 15, DatapointsToAlarm: 15 });
    expect(synth({ ingestIdleAlarmMinutes: '0' }).alarms()).not.toHaveProperty('notifier-example-IngestIdle');
  });

  it('parked and unparked batches are read from the MSK mapping itself', () => {
    const parked = alarms['notifier-example-IngestBatchParked']?.Properties as AlarmProps & Record<string, unknown>;
    expect(parked).toMatchObject({
      Namespace: 'AWS/Lambda',
      MetricName: 'OnFailureDestinationDeliveredEventCount',
      Dimensions: [{ Name: 'EventSourceMappingUUID', Value: { Ref: KAFKA_MAPPING_LOGICAL_ID } }],
    });
    const notParked = JSON.stringify(alarms['notifier-example-IngestBatchNotParked']?.Properties);
    expect(notParked).toContain('DestinationDeliveryFailures');
    expect(notParked).toContain('DroppedEventCount');
  });

  it('subscribes the alarm email to both tiers: someone is paged, and someone reads the tickets', () => {
    for (const topic of ['^ObservabilityAlarmTopic', '^ObservabilityTicketTopic']) {
      template.hasResourceProperties('AWS::SNS::Subscription', {
        Protocol: 'email',
        Endpoint: example.alarmEmail,
        TopicArn: { Ref: Match.stringLikeRegexp(topic) },
      });
    }
    expect(resources('AWS::SNS::Subscription')).toHaveLength(2);
  });

  it('has one dashboard, named for the stage, that shows events too old to send', () => {
    const dashboards = resources('AWS::CloudWatch::Dashboard');
    expect(dashboards.map(([, d]) => d.Properties.DashboardName)).toEqual(['notifier-example']);
    expect(JSON.stringify(dashboards[0]?.[1].Properties.DashboardBody)).toContain('EventsTooOld');
  });
});

describe('delivery feedback', () => {
  it('creates a configuration set with reputation metrics and SES suppression, and dispatch sends through it', () => {
    template.hasResourceProperties('AWS::SES::ConfigurationSet', {
      Name: 'notifier-example',
      ReputationOptions: { ReputationMetricsEnabled: true },
      SuppressionOptions: { SuppressedReasons: ['BOUNCE', 'COMPLAINT'] },
    });
    expect((fnProps('Dispatch').Environment as { Variables: Record<string, unknown> }).Variables).toMatchObject({
      SES_CONFIGURATION_SET: 'notifier-example',
    });
  });

  it('publishes Delivery, Bounce, Complaint, Reject and DeliveryDelay to the default bus', () => {
    const [destination] = resources('AWS::SES::ConfigurationSetEventDestination');
    expect(destination?.[1].Properties.EventDestination).toMatchObject({
      Enabled: true,
      MatchingEventTypes: ['delivery', 'bounce', 'complaint', 'reject', 'deliveryDelay'],
    });
    expect(JSON.stringify(destination?.[1].Properties)).toContain(
      ':events:ap-northeast-1:123456789012:event-bus/default',
    );
  });

  it('a rule on source aws.ses, the five detail-types and our configuration set queues them for the feedback function in batches, with a DLQ', () => {
    template.hasResourceProperties('AWS::Events::Rule', {
      EventPattern: {
        source: ['aws.ses'],
        'detail-type': [
          'Email Delivered',
          'Email Bounced',
          'Email Complaint Received',
          'Email Rejected',
          'Email Delivery Delayed',
        ],
        detail: { mail: { tags: { 'ses:configuration-set': ['notifier-example'] } } },
      },
      Targets: [
        Match.objectLike({
          Arn: { 'Fn::GetAtt': [Match.stringLikeRegexp('^DeliveryFeedbackSesEvents'), 'Arn'] },
          DeadLetterConfig: Match.objectLike({ Arn: Match.anyValue() }),
          RetryPolicy: { MaximumRetryAttempts: 8, MaximumEventAgeInSeconds: 86_400 },
        }),
      ],
    });
    // The queue hands the function batches (its reports on one send batch are one evidence object), and
    // dead-letters a message it could not record after five receives.
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionName: { Ref: fnLogicalId('DeliveryFeedbackFunction') },
      BatchSize: 500,
      MaximumBatchingWindowInSeconds: 10,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });
    template.hasResourceProperties('AWS::SQS::Queue', {
      RedrivePolicy: Match.objectLike({ maxReceiveCount: 5 }),
      VisibilityTimeout: 360,
    });
    template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
      MaximumRetryAttempts: 2,
      DestinationConfig: { OnFailure: { Destination: Match.anyValue() } },
    });
  });

  it('the feedback function may only read and update items, read its queue of SES events, and send to its dead-letter queue', () => {
    // Evidence (s3:, kms:) is pinned in test/infra/evidence.test.ts.
    const statements = policyOf('DeliveryFeedbackFunction').filter(
      (st) => !actionsOf([st]).some((a) => /^(logs|xray|s3|kms):/.test(a)),
    );
    expect(actionsOf(statements).sort()).toEqual([
      'dynamodb:GetItem',
      'dynamodb:PutItem',
      'dynamodb:PutItem',
      'dynamodb:Query',
      'dynamodb:UpdateItem',
      'sqs:ChangeMessageVisibility',
      'sqs:DeleteMessage',
      'sqs:GetQueueAttributes',
      'sqs:GetQueueUrl',
      'sqs:ReceiveMessage',
      'sqs:SendMessage',
    ]);
    // PutItem on evidence gaps (a batch of reports the store refused) and on the items naming a batch of reports per
    // send batch only; a few reports go to the evidence spool's own table (PutItem alone).
    expect(statements.find((st) => actionsOf([st]).includes('dynamodb:PutItem'))?.Condition).toEqual({
      'ForAllValues:StringLike': {
        'dynamodb:LeadingKeys': ['EVIDENCE_GAP#*', 'EVIDENCE_REPORTS#*'],
      },
    });
    const spoolPut = statements.find((st) => String(JSON.stringify(st.Resource)).includes('EvidenceSpoolTable'));
    expect(actionsOf([spoolPut as Statement])).toEqual(['dynamodb:PutItem']);
    // In the spool's partitions only, never its roll-up's cursor (EVIDENCE_SPOOL#ROLLED).
    expect(JSON.stringify(spoolPut?.Condition)).toContain('EVIDENCE_SPOOL#0');
    expect(JSON.stringify(spoolPut?.Condition)).not.toContain('ROLLED');
    // Query on the providerMessage index only (SNS's delivery status names a message id, not a notification).
    expect(statements.find((st) => actionsOf([st]).includes('dynamodb:Query'))?.Resource).toEqual({
      'Fn::Join': ['', [{ 'Fn::GetAtt': [expect.stringMatching(/^Table/), 'Arn'] }, '/index/providerMessage']],
    });
    // Notifications and suppressions only: never a send window, the breaker, preferences or the shard mark.
    const table = statements.find((st) => actionsOf([st]).includes('dynamodb:UpdateItem'));
    expect(actionsOf([table as Statement])).toEqual(['dynamodb:GetItem', 'dynamodb:UpdateItem']);
    expect(table?.Condition).toEqual({
      'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['EVENT#*', 'SUPPRESSION#*'] },
    });
  });

  it('an existing configuration set named in the settings is used, not created', () => {
    const s = synth({ sesConfigurationSet: 'bank-mail' });
    expect(s.resources('AWS::SES::ConfigurationSet')).toHaveLength(0);
    s.template.hasResourceProperties('AWS::SES::ConfigurationSetEventDestination', {
      ConfigurationSetName: 'bank-mail',
    });
  });

  it('alarms on the account bounce and complaint rates before SES reviews the account (5%, 0.1%)', () => {
    const a = base.alarms();
    expect(a['notifier-example-SesBounceRate']?.Properties).toMatchObject({
      Namespace: 'AWS/SES',
      MetricName: 'Reputation.BounceRate',
      Threshold: 0.04,
    });
    expect(a['notifier-example-SesComplaintRate']?.Properties).toMatchObject({
      Namespace: 'AWS/SES',
      MetricName: 'Reputation.ComplaintRate',
      Threshold: 0.0008,
    });
  });
});

describe('the operator API', () => {
  it('authorizes every method with IAM, so the function reads a caller AWS verified; four eyes by default; invokes only ingest', () => {
    const methods = resources('AWS::ApiGateway::Method');
    expect(methods.length).toBeGreaterThanOrEqual(2);
    for (const [, m] of methods) expect(m.Properties.AuthorizationType).toBe('AWS_IAM');
    template.hasOutput('OperatorApiUrl', {});
    expect((fnProps('Operator').Environment as { Variables: Record<string, unknown> }).Variables).toMatchObject({
      APPROVAL_REQUIRED_FOR: 'OPERATOR_CONTENT,SUPPRESSION_LIFT,ERASE',
      PROPOSAL_HOURS: '24',
    });
    const invokes = policyOf('Operator').filter((st) => actionsOf([st]).includes('lambda:InvokeFunction'));
    expect(invokes).toEqual([
      { Effect: 'Allow', Action: 'lambda:InvokeFunction', Resource: { 'Fn::GetAtt': [fnLogicalId('Ingest'), 'Arn'] } },
    ]);
  });
});

describe('alarm tiers', () => {
  const byName = base.alarms();
  const topicOf = (a: Resource): string => JSON.stringify(a.Properties.AlarmActions);
  const PER_CUSTOMER = [
    'SendFailures',
    'UnknownOutcomes',
    'NotificationsRefused',
    'NotificationsExpired',
    'RecordsQuarantined',
    'EventIdConflicts',
    'LateAcceptances',
    'AcceptancesNotRecorded',
    'DeliveryFeedback',
    'NumberOfNotificationsFailed',
  ];
  it('pages to one topic and tickets to another, each alarm telling its topic when it is OK again', () => {
    for (const [name, a] of Object.entries(byName)) {
      expect(a.Properties.OKActions, name).toEqual(a.Properties.AlarmActions);
      const tier = TICKET_ALARMS.has(name.replace(/^notifier-example-/, '')) ? 'TicketTopic' : 'AlarmTopic';
      expect(topicOf(a), name).toContain(`Observability${tier}`);
    }
    const tickets = Object.keys(byName).filter((n) => topicOf(byName[n] as Resource).includes('TicketTopic'));
    expect(tickets.length).toBe(TICKET_ALARMS.size);
  });
  it('no condition of one customer or one producer pages: a page reads such a metric only as a share, from 10 failures a window', () => {
    const pages = Object.entries(byName).filter(([, a]) => topicOf(a).includes('AlarmTopic'));
    for (const [name, a] of pages) {
      const text = JSON.stringify(a.Properties);
      const reads = PER_CUSTOMER.filter((metric) => text.includes(`"MetricName":"${metric}"`));
      if (reads.length === 0) continue;
      expect(text, name).toMatch(new RegExp(`IF\\(\\([^)]+\\) >= ${RATE_MIN_COUNT}, `));
      expect(a.Properties.DatapointsToAlarm, name).toBeGreaterThanOrEqual(2);
    }
    for (const rate of ['SendFailureRate', 'DeliveryFailureRate', 'QuarantineRate', 'RefusedChannelRate']) {
      expect(topicOf(byName[`notifier-example-${rate}`] as Resource), rate).toContain('AlarmTopic');
    }
  });
});

describe('outputs', () => {
  it('name everything the Operations section refers to', () => {
    // The operator function is always there; its output is optional only so tools still read a stack deployed before.
    expect(Object.keys(json.Outputs).sort()).toEqual(
      [
        ...STACK_OUTPUT_NAMES,
        'AuditSealKeyArn',
        'OperatorFunctionName',
        'EvidenceIndexTableName',
        'EvidenceSpoolTableName',
      ].sort(),
    );
    expect(STACK_OUTPUT_NAMES).toHaveLength(23);
    template.hasOutput('EvidenceReaderRoleArn', {
      Value: { 'Fn::GetAtt': [Match.stringLikeRegexp('^EvidenceReaderRole'), 'Arn'] },
    });
    template.hasOutput('TableName', { Value: { Ref: Match.stringLikeRegexp('^Table') } });
    template.hasOutput('IngestFunctionName', { Value: { Ref: fnLogicalId('Ingest') } });
    template.hasOutput('IngestKafkaMappingId', { Value: { Ref: KAFKA_MAPPING_LOGICAL_ID } });
    template.hasOutput('DashboardUrl', {
      Value:
        'https://ap-northeast-1.console.aws.amazon.com/cloudwatch/home?region=ap-northeast-1#dashboards/dashboard/notifier-example',
    });
  });
});

describe('cdk-nag', () => {
  it.each([
    ['AwsSolutions', 'defaults', () => new AwsSolutionsChecks(), base],
    ['Serverless', 'defaults', () => new ServerlessChecks(), base],
    ['AwsSolutions', 'every option', () => new AwsSolutionsChecks(), synth(EVERY_OPTION)],
    ['Serverless', 'every option', () => new ServerlessChecks(), synth(EVERY_OPTION)],
  ])('%s, %s: zero unacknowledged findings', (_pack, _options, pack, s) => {
    const report = pack().validateScope(s.stack);
    expect(report.violations.map((v) => `${v.ruleName}: ${JSON.stringify(v.violatingResources)}`)).toEqual([]);
  });
});

describe('settings', () => {
  const read = (overrides: Record<string, unknown>) => (k: string) => ({ ...example, ...overrides })[k as 'stage'];

  it('names a missing key', () => {
    expect(() => parseSettings(read({ senderEmail: undefined }))).toThrow(/context key "senderEmail" is required/);
    expect(() => parseSettings(read({ brand: undefined }))).toThrow(/context key "brand" is required/);
  });

  it('checks the brand with the schema dispatch uses at cold start, and its size as an environment variable', () => {
    const brand = (over: Record<string, unknown>) => read({ brand: { ...example.brand, ...over } });
    expect(() => parseSettings(brand({ brandColor: '#ffcc00' }))).toThrow(
      /context key "brand.brandColor" must contrast at least 4.5:1 with white/,
    );
    expect(() => parseSettings(brand({ supportUrl: 'http://bank.example' }))).toThrow(/"brand.supportUrl" is invalid/);
    expect(() => parseSettings(brand({ name: { en: 'Harbor Bank' } }))).toThrow(
      /context key "brand.name.ja" is required/,
    );
    const legalFooter = { ...example.brand.legalFooter, en: 'x'.repeat(600), ja: '銀'.repeat(600) };
    expect(() => parseSettings(brand({ legalFooter }))).toThrow(
      /context key "brand" is \d+ bytes as JSON; at most 2048 fit/,
    );
    // Given on the command line as JSON.
    const s = parseSettings(read({ brand: JSON.stringify({ ...example.brand, brandColor: '#1d4ed8' }) }));
    expect(s.brand.brandColor).toBe('#1d4ed8');
  });

  it('names an invalid key and says what it must be', () => {
    expect(() => synth({ mskClusterArn: 'not-an-arn' })).toThrow(SettingsError);
    expect(() => synth({ mskClusterArn: 'not-an-arn' })).toThrow(
      /context key "mskClusterArn" is invalid: must be an MSK cluster ARN/,
    );
    expect(() => synth({ deliveryPolicy: { EMAIL: 'SOMETIMES' } })).toThrow(/deliveryPolicy.EMAIL/);
    expect(() => synth({ stage: 'Prod' })).toThrow(/context key "stage" is invalid/);
  });

  it('accepts command-line strings for numbers, lists and JSON', () => {
    const s = parseSettings(
      read({
        batchSize: '250',
        deliveryPolicy: '{"SMS":"AT_LEAST_ONCE"}',
        mskVpcId: 'vpc-0123456789abcdef0',
        mskRouteTableIds: 'rtb-0123456789abcdef0, rtb-0fedcba9876543210',
      }),
    );
    expect(s.batchSize).toBe(250);
    expect(s.deliveryPolicy).toEqual({ EMAIL: 'AT_MOST_ONCE', PUSH: 'AT_MOST_ONCE', SMS: 'AT_LEAST_ONCE' });
    expect(s.mskRouteTableIds).toEqual(['rtb-0123456789abcdef0', 'rtb-0fedcba9876543210']);
  });
  it('defaults and validates the send rates and the maximum age', () => {
    const s = parseSettings(read({}));
    expect(s.sendRatePerSecond).toEqual({ EMAIL: 14, PUSH: 100, SMS: 20 });
    expect(s.notificationMaxAgeHours).toBe(24);
    expect(() =>
      parseSettings(read({ inboxRetentionDays: 2, maxEventAgeSeconds: 3600, notificationMaxAgeHours: 48 })),
    ).toThrow(/"notificationMaxAgeHours" must be shorter than inboxRetentionDays/);
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

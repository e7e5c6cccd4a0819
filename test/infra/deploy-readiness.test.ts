/**
 * What a first deploy into a real account needs, on the synthesized template of the example settings and of a
 * production-like settings file: SMS and push delivery status recorded (the account's SMS attributes, the platform
 * applications' attributes, the log groups subscribed to the feedback function), every silence alarmed (a sweeper
 * that stopped, throttling, the MSK mapping's own errors, SMS spend and success, SNS's failures), the S3 endpoint
 * limited to the failed-batch bucket, cdk-nag clean; and the settings that would break the deploy or the bank's
 * name refused at synth.
 */
import { AwsSolutionsChecks, ServerlessChecks } from 'cdk-nag';
import { describe, expect, it } from 'vitest';
import example from '../../examples/settings.example.json' with { type: 'json' };
import { deployProblems } from '../../lib/deploy-problems.ts';
import { parseSettings, type Settings } from '../../lib/settings.ts';
import {
  EXAMPLE_ONE_REGION,
  PRODUCTION_LIKE,
  type TemplateResource as Resource,
  synthTemplate,
} from '../support/synth.ts';
import production from './fixtures/settings.production.json' with { type: 'json' };

function synth(file: string, overrides: Record<string, unknown> = {}) {
  const { template, stack } = synthTemplate(file, overrides);
  const all = Object.entries(template.Resources) as [string, Resource][];
  const of = (type: string) => all.filter(([, r]) => r.Type === type);
  const alarm = (name: string) =>
    of('AWS::CloudWatch::Alarm').find(([, a]) => a.Properties.AlarmName === `${stack.stackName}-${name}`)?.[1]
      .Properties;
  /** An AwsCustomResource's call: its JSON, with each CloudFormation token inside it shown as TOKEN(<logical id>). */
  const callOf = (create: unknown): string => {
    if (typeof create === 'string') return create;
    const [, parts] = (create as { 'Fn::Join': [string, unknown[]] })['Fn::Join'];
    return parts
      .map((p) =>
        typeof p === 'string'
          ? p
          : `TOKEN(${JSON.stringify(p).match(/"(?:Fn::GetAtt|Ref)":\[?"([^"]+)"/)?.[1] ?? 'unknown'})`,
      )
      .join('');
  };
  const calls = of('Custom::AWS').map(([id, r]) => ({ id, create: JSON.parse(callOf(r.Properties.Create)) }));
  return { stack, template: template as typeof template & { Outputs?: Record<string, unknown> }, of, alarm, calls };
}

const SETTINGS = [
  ['the example settings', EXAMPLE_ONE_REGION],
  ['a production-like settings file', PRODUCTION_LIKE],
] as const;

describe.each(SETTINGS)('%s', (_name, file) => {
  const s = synth(file);
  const { region, account } = s.stack;
  const settings = (file === PRODUCTION_LIKE ? production : example) as unknown as {
    pushPlatformApplicationArns: string[];
    smsMonthlySpendLimitUsd: number;
  };

  it('SMS delivery status is logged: the account SMS attributes name a role SNS may use, for every success', () => {
    const sms = s.calls.find((c) => c.create.action === 'setSMSAttributes');
    expect(sms?.create).toMatchObject({
      service: 'SNS',
      parameters: { attributes: { DeliveryStatusSuccessSamplingRate: '100' } },
    });
    expect(sms?.create.parameters.attributes.DeliveryStatusIAMRole).toMatch(/^TOKEN\(SnsDeliveryStatusLoggingRole/);
    const [, role] = s.of('AWS::IAM::Role').find(([id]) => id.includes('LoggingRole')) ?? [];
    expect(role?.Properties.AssumeRolePolicyDocument).toMatchObject({
      Statement: [
        {
          Action: 'sts:AssumeRole',
          Principal: { Service: 'sns.amazonaws.com' },
          Condition: { StringEquals: { 'aws:SourceAccount': account } },
        },
      ],
    });
  });

  it('push delivery status is logged for each platform application the settings name', () => {
    const apps = s.calls.filter((c) => c.create.action === 'setPlatformApplicationAttributes');
    expect(apps.map((c) => c.create.parameters.PlatformApplicationArn).sort()).toEqual(
      [...settings.pushPlatformApplicationArns].sort(),
    );
    for (const a of apps) {
      expect(a.create.parameters.Attributes).toMatchObject({ SuccessFeedbackSampleRate: '100' });
      expect(a.create.parameters.Attributes.FailureFeedbackRoleArn).toMatch(/^TOKEN\(SnsDeliveryStatusLoggingRole/);
      expect(a.create.parameters.Attributes.SuccessFeedbackRoleArn).toMatch(/^TOKEN\(SnsDeliveryStatusLoggingRole/);
    }
  });

  it('every delivery status log group exists, keeps a month, and is subscribed to the feedback function', () => {
    const expected = [
      `sns/${region}/${account}/DirectPublishToPhoneNumber`,
      `sns/${region}/${account}/DirectPublishToPhoneNumber/Failure`,
      ...settings.pushPlatformApplicationArns.flatMap((arn) => {
        const [, platform, name] = /:app\/([^/]+)\/(.+)$/.exec(arn) ?? [];
        return [
          `sns/${region}/${account}/app/${platform}/${name}`,
          `sns/${region}/${account}/app/${platform}/${name}/Failure`,
        ];
      }),
    ];
    const filters = s.of('AWS::Logs::SubscriptionFilter').map(([, f]) => f.Properties);
    expect(filters.map((f) => f.LogGroupName).sort()).toEqual([...expected].sort());
    for (const f of filters) {
      expect(f.DestinationArn).toEqual({ 'Fn::GetAtt': [expect.stringMatching(/^DeliveryFeedbackFunction/), 'Arn'] });
      expect(f.FilterPattern).toBe('');
    }
    const created = s.calls.filter((c) => c.create.action === 'createLogGroup');
    expect(created.map((c) => c.create.parameters.logGroupName).sort()).toEqual([...expected].sort());
    for (const c of created) expect(c.create.ignoreErrorCodesMatching).toBe('ResourceAlreadyExistsException');
    const retention = s.calls.filter((c) => c.create.action === 'putRetentionPolicy');
    expect(retention.map((c) => c.create.parameters.retentionInDays)).toEqual(expected.map(() => 30));
  });

  it('each silence is alarmed: a stopped sweeper, throttling, the MSK mapping errors', () => {
    expect(s.alarm('SweeperNotRunning')).toMatchObject({
      MetricName: 'Invocations',
      ComparisonOperator: 'LessThanThreshold',
      Threshold: 1,
      TreatMissingData: 'breaching',
      EvaluationPeriods: 5,
      DatapointsToAlarm: 5,
    });
    for (const fn of ['Ingest', 'Dispatch', 'Sweeper', 'Feedback']) {
      expect(s.alarm(`${fn}Throttles`)).toMatchObject({
        MetricName: 'Throttles',
        DatapointsToAlarm: 3,
        EvaluationPeriods: 5,
      });
    }
    const mapping = JSON.stringify(s.alarm('KafkaMappingErrors'));
    for (const m of ['PollingErrorCount', 'InvokeErrorCount', 'CommitErrorCount']) expect(mapping).toContain(m);
    expect(mapping).toContain('EventSourceMappingUUID');
  });

  it("SMS spend alarms at 80% of the account's quota; SMS success and SNS's own failure counts are alarmed", () => {
    expect(s.alarm('SmsSpend')).toMatchObject({
      Namespace: 'AWS/SNS',
      MetricName: 'SMSMonthToDateSpentUSD',
      Statistic: 'Maximum',
      Threshold: Math.round(settings.smsMonthlySpendLimitUsd * 0.8 * 100) / 100,
    });
    expect(s.alarm('SmsSuccessRate')).toMatchObject({
      MetricName: 'SMSSuccessRate',
      ComparisonOperator: 'LessThanThreshold',
      Threshold: 0.9,
    });
    const failed = JSON.stringify(s.alarm('SnsNotificationsFailed'));
    expect(failed).toContain('PhoneNumberDirect');
    for (const arn of settings.pushPlatformApplicationArns) expect(failed).toContain(arn.split('/').pop() as string);
    const ours = JSON.stringify(s.alarm('DeliveryFailures'));
    expect(ours).toContain('"Value":"SMS"');
    expect(ours).toContain('"Value":"PUSH"');
  });

  it.each([
    ['AwsSolutions', () => new AwsSolutionsChecks()],
    ['Serverless', () => new ServerlessChecks()],
  ])('cdk-nag %s: zero unacknowledged findings', (_pack, pack) => {
    const report = pack().validateScope(s.stack);
    expect(report.violations.map((v) => `${v.ruleName}: ${JSON.stringify(v.violatingResources)}`)).toEqual([]);
  });
});

describe('the account-level SMS attributes are left to another stage when asked', () => {
  it('manageSmsDeliveryStatus false: no SetSMSAttributes, the subscriptions stay', () => {
    const s = synth(EXAMPLE_ONE_REGION, { manageSmsDeliveryStatus: 'false' });
    expect(s.calls.some((c) => c.create.action === 'setSMSAttributes')).toBe(false);
    expect(s.of('AWS::Logs::SubscriptionFilter').length).toBeGreaterThanOrEqual(2);
  });
});

describe('the S3 gateway endpoint', () => {
  it('allows the failed-batch bucket only: it cannot route this VPC to any other bucket', () => {
    const s = synth(PRODUCTION_LIKE);
    const [[, endpoint] = []] = s.of('AWS::EC2::VPCEndpoint');
    expect(endpoint?.Properties).toMatchObject({ VpcEndpointType: 'Gateway' });
    const document = endpoint?.Properties.PolicyDocument as { Statement: Record<string, unknown>[] };
    expect(document.Statement).toEqual([
      {
        Sid: 'FailedIngestBatchesOnly',
        Effect: 'Allow',
        Principal: { AWS: '*' },
        Action: ['s3:PutObject', 's3:ListBucket'],
        Resource: [
          { 'Fn::GetAtt': [expect.stringMatching(/^FailedIngestBatches/), 'Arn'] },
          { 'Fn::Join': ['', [{ 'Fn::GetAtt': [expect.stringMatching(/^FailedIngestBatches/), 'Arn'] }, '/*']] },
        ],
        Condition: { StringEquals: { 'aws:PrincipalAccount': s.stack.account } },
      },
    ]);
  });
});

describe('the delivery status resources are keyed by what they configure', () => {
  const apps = example.pushPlatformApplicationArns;
  const ids = (arns: readonly string[]) => {
    const { of } = synth(EXAMPLE_ONE_REGION, { pushPlatformApplicationArns: JSON.stringify(arns) });
    const all = [...of('Custom::AWS'), ...of('AWS::Logs::SubscriptionFilter'), ...of('AWS::Lambda::Permission')];
    return new Map(all.filter(([id]) => id.startsWith('SnsDeliveryStatus')).map(([id, r]) => [id, JSON.stringify(r)]));
  };
  const both = ids(apps);
  const reordered = ids([...apps].reverse());
  const gcmOnly = ids([apps[0] as string]);

  it('reordering pushPlatformApplicationArns keeps every logical id and what each configures: nothing is replaced', () => {
    expect([...reordered.keys()].sort()).toEqual([...both.keys()].sort());
    for (const [id, body] of both) expect(reordered.get(id), id).toBe(body);
  });

  it("removing an application removes its own resources alone: no other one's delete runs (which would clear its roles)", () => {
    const removed = [...both.keys()].filter((id) => !gcmOnly.has(id));
    expect([...gcmOnly.keys()].filter((id) => !both.has(id))).toEqual([]);
    // Its attributes, and for each of its two log groups: exists, retention, permission to invoke, subscription.
    expect(removed.length).toBe(9);
    for (const id of removed) expect(id, id).toMatch(/APNS/);
    for (const [id, body] of gcmOnly) expect(both.get(id), id).toBe(body);
  });

  it('an application named twice is refused at synth: it is configured once', () => {
    expect(() =>
      parseSettings((k) => ({ ...example, pushPlatformApplicationArns: [apps[0], apps[0]] })[k as 'stage']),
    ).toThrow(/"pushPlatformApplicationArns" names an application twice/);
  });
});

describe('settings a deploy would trip on are refused at synth', () => {
  const NOW = Date.parse('2026-12-02T00:00:00Z');
  const read = (base: object, overrides: Record<string, unknown>) => (k: string) =>
    ({ ...base, ...overrides })[k as keyof typeof base];
  const parse = (base: object, overrides: Record<string, unknown> = {}) => parseSettings(read(base, overrides), NOW);

  it('an AT_TIMESTAMP starting position in the future (Lambda would refuse it and roll the deploy back)', () => {
    const at = (startingPositionTimestamp: unknown) =>
      parse(production, { startingPosition: 'AT_TIMESTAMP', startingPositionTimestamp });
    expect(() => at('2026-12-02T00:00:01Z')).toThrow(
      /"startingPositionTimestamp" is in the future \(2026-12-02T00:00:01.000Z\): Lambda refuses it/,
    );
    expect(() => at(String(NOW / 1000 + 3600))).toThrow(/is in the future/);
    expect(at('2026-12-01T23:59:59Z').startingPositionTimestamp).toBe(NOW / 1000 - 1);
    expect(at(String(NOW / 1000)).startingPositionTimestamp).toBe(NOW / 1000);
  });

  it("the example's placeholders outside the example stage, each named; the example stage keeps them", () => {
    expect(parse(example).stage).toBe('example');
    let problems: readonly string[] = [];
    try {
      parse(example, { stage: 'prod', alarmEmail: 'oncall@example.org' });
    } catch (error) {
      problems = (error as { problems: string[] }).problems;
    }
    expect(problems).toEqual([
      expect.stringMatching(/"brand.name.en" is a placeholder \(Example Bank\): stage "prod" needs the bank's own/),
      expect.stringMatching(/"brand.name.ja" is a placeholder \(サンプル銀行\)/),
      expect.stringMatching(/"brand.supportUrl" is a placeholder \(bank.example\)/),
      expect.stringMatching(/"brand.supportPhone.en" is a placeholder/),
      expect.stringMatching(/"brand.supportPhone.ja" is a placeholder/),
      expect.stringMatching(/"senderEmail" is a placeholder \(example.com is reserved/),
      expect.stringMatching(/"alarmEmail" is a placeholder \(example.org is reserved/),
    ]);
  });

  it('a reserved domain anywhere a customer or an operator would be sent (RFC 2606), a real one passes', () => {
    const real = parse(production);
    const with_ = (over: Partial<Settings>) => deployProblems({ ...real, ...over } as Settings, NOW);
    expect(with_({})).toEqual([]);
    expect(with_({ senderEmail: 'notices@mail.example.net' })).toEqual([expect.stringMatching(/"senderEmail"/)]);
    expect(with_({ brand: { ...real.brand, supportUrl: 'https://help.test/x' } })).toEqual([
      expect.stringMatching(/"brand.supportUrl"/),
    ]);
    expect(
      with_({ brand: { ...real.brand, logo: { url: 'https://cdn.example.com/l.png', width: 100, height: 40 } } }),
    ).toEqual([expect.stringMatching(/"brand.logo.url"/)]);
    // A bank whose own domain merely contains the word is not a placeholder.
    expect(with_({ senderEmail: 'n@example-bank.co.jp', alarmEmail: 'ops@examples.jp' })).toEqual([]);
  });

  it('push applications outside the cluster account and region; subnets without security groups', () => {
    expect(() =>
      parse(production, { pushPlatformApplicationArns: 'arn:aws:sns:us-east-1:210987654321:app/GCM/harbor-mobile' }),
    ).toThrow(/pushPlatformApplicationArns" arn:aws:sns:us-east-1.* must be in the cluster's account and region/);
    expect(() =>
      parse(production, { pushPlatformApplicationArns: 'arn:aws:sns:ap-northeast-1:210987654321:endpoint/GCM/x/y' }),
    ).toThrow(/must be SNS platform application ARNs/);
    expect(() =>
      parse(production, { mskSecurityGroupIds: undefined, mskSubnetIds: 'subnet-0a1b2c3d4e5f60718' }),
    ).toThrow(/mskSubnetIds and mskSecurityGroupIds go together/);
    expect(() => parse(production, { smsMonthlySpendLimitUsd: undefined })).toThrow(
      /"smsMonthlySpendLimitUsd" is required/,
    );
  });
});

describe('the smoke producer', () => {
  it("runs in the cluster's subnets, writes only to the topic with IAM, and is named in the outputs", () => {
    const s = synth(PRODUCTION_LIKE);
    const [[id, fn] = []] = s.of('AWS::Lambda::Function').filter(([i]) => i.startsWith('SmokeProducer'));
    expect(fn?.Properties).toMatchObject({
      VpcConfig: {
        SubnetIds: production.mskSubnetIds,
        SecurityGroupIds: production.mskSecurityGroupIds,
      },
      Environment: {
        Variables: {
          TOPIC: production.topic,
          BOOTSTRAP_BROKERS: {
            'Fn::GetAtt': [expect.stringMatching(/BootstrapBrokers/), 'BootstrapBrokerStringSaslIam'],
          },
        },
      },
    });
    const brokers = s.calls.find((c) => c.create.action === 'getBootstrapBrokers');
    expect(brokers?.create.parameters).toEqual({ ClusterArn: production.mskClusterArn });
    if (fn === undefined) throw new Error('no smoke producer function');
    const role = (fn.Properties.Role as { 'Fn::GetAtt': string[] })['Fn::GetAtt'][0];
    const statements = s
      .of('AWS::IAM::Policy')
      .filter(([, p]) => JSON.stringify(p.Properties.Roles).includes(String(role)))
      .flatMap(([, p]) => (p.Properties.PolicyDocument as { Statement: Record<string, unknown>[] }).Statement);
    const kafka = statements.filter((st) => JSON.stringify(st.Action).includes('kafka-cluster'));
    const [, , , clusterName, clusterUuid] =
      /^arn:aws:kafka:([^:]+):(\d+):cluster\/([^/]+)\/(.+)$/.exec(production.mskClusterArn) ?? [];
    expect(kafka).toEqual([
      {
        Effect: 'Allow',
        Action: ['kafka-cluster:Connect', 'kafka-cluster:WriteDataIdempotently'],
        Resource: production.mskClusterArn,
      },
      {
        Effect: 'Allow',
        Action: ['kafka-cluster:DescribeTopic', 'kafka-cluster:WriteData'],
        Resource: `arn:aws:kafka:ap-northeast-1:210987654321:topic/${clusterName}/${clusterUuid}/${production.topic}`,
      },
    ]);
    expect(s.template).toMatchObject({
      Outputs: { SmokeProducerFunctionName: { Value: { Ref: id } } },
    });
    expect(s.alarm('SmokeProducerThrottles')).toBeDefined();
  });

  it('is not deployed without the subnets (npm run smoke -- --direct then), and refuses SASL/SCRAM', () => {
    const s = synth(EXAMPLE_ONE_REGION);
    expect(s.of('AWS::Lambda::Function').filter(([i]) => i.startsWith('SmokeProducer'))).toEqual([]);
    expect(() =>
      synth(PRODUCTION_LIKE, {
        kafkaScramSecretArn: 'arn:aws:secretsmanager:ap-northeast-1:210987654321:secret:AmazonMSK_notifier-AbCdEf',
        kafkaScramKmsKeyArn: 'arn:aws:kms:ap-northeast-1:210987654321:key/aaaaaaaa-1111-2222-3333-bbbbbbbbbbbb',
      }),
    ).toThrow(/"mskSubnetIds" deploys the smoke producer, which authenticates with IAM/);
  });

  it("sends only to the SES mailbox simulator and the settings' smokeContacts: the list reaches the producer, checked at synth", () => {
    const contacts = ['+819012345678', 'qa@bank.example'];
    const s = synth(PRODUCTION_LIKE, { smokeContacts: contacts.join(',') });
    const [, fn] = s.of('AWS::Lambda::Function').find(([i]) => i.startsWith('SmokeProducer')) ?? [];
    expect(fn?.Properties.Environment).toMatchObject({
      Variables: { SMOKE_CONTACTS: '+819012345678,qa@bank.example' },
    });
    const settings = (smokeContacts: unknown) => parseSettings((k) => ({ ...example, smokeContacts })[k as 'stage']);
    expect(settings(contacts).smokeContacts).toEqual(contacts);
    expect(() => settings(['090-1234-5678'])).toThrow(
      /"smokeContacts\.0" 090-1234-5678 must be one e-mail address, E.164 number \(\+819012345678\) or SNS endpoint ARN/,
    );
    // One reviewed "mailbox" must not carry a second contact point to the producer, which splits the list at commas.
    for (const smuggled of [
      'qa@bank.example,+819012345678',
      'arn:aws:sns:ap-northeast-1:210987654321:endpoint/GCM/bank-app/x,+447700900123',
      'qa@bank.example;+819012345678',
      'qa@bank.example +819012345678',
      'qä@bank.example',
    ]) {
      expect(() => settings([smuggled]), smuggled).toThrow(/"smokeContacts\.0" .* must be one e-mail address/);
    }
    expect(() => settings(['qa@bank.example', 'QA@bank.example'])).toThrow(
      /"smokeContacts".*must not list a contact point twice/,
    );
    expect(() => settings(Array.from({ length: 11 }, (_, i) => `+8190123456${10 + i}`))).toThrow(
      /"smokeContacts".*at most 10/,
    );
  });
});

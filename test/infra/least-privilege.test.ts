/**
 * Least privilege and the network, on the example settings and a bank's production settings: no role may write
 * another's logs (the MSK statements inline, no AWS managed execution policy), dispatch publishes only to the
 * configured applications' endpoints, the SNS logging role is passed to SNS only, the feedback function writes
 * only reports; with the vpc setting, the functions that hold contact points run in isolated subnets with no route
 * to the internet and an endpoint, limited to what they call, per AWS service they call; and settings that would
 * put a secret in plain text, or a VPC with no way to its registry, are refused at synth.
 */
import { describe, expect, it } from 'vitest';
import example from '../../examples/settings.example.json' with { type: 'json' };
import { WATCHED_TABLE_EVENTS } from '../../lib/protection-watch.ts';
import { parseSettings } from '../../lib/settings.ts';
import { allows, denies, type Request, resolver, type Statement } from '../support/policy-eval.ts';
import { EXAMPLE_ONE_REGION, PRODUCTION_LIKE, synthTemplate, type TemplateResource } from '../support/synth.ts';
import production from './fixtures/settings.production.json' with { type: 'json' };

function read(file: string) {
  const { template, stack } = synthTemplate(file);
  const resolve = resolver(stack.account, stack.region);
  const all = Object.entries(template.Resources) as [string, TemplateResource][];
  const of = (type: string) => all.filter(([, r]) => r.Type === type);
  const fn = (prefix: string) => {
    const found = of('AWS::Lambda::Function').find(([id]) => id.startsWith(prefix));
    if (found === undefined) throw new Error(`no function ${prefix}`);
    return found;
  };
  /** Every statement a role holds: its inline policies and the AWS::IAM::Policy resources attached to it. */
  const statementsOfRole = (roleId: string): Statement[] => {
    const role = template.Resources[roleId];
    const inline = ((role?.Properties.Policies as { PolicyDocument: unknown }[] | undefined) ?? []).flatMap(
      (p) => (resolve(p.PolicyDocument) as { Statement: Statement[] }).Statement,
    );
    const attached = of('AWS::IAM::Policy')
      .filter(([, p]) => JSON.stringify(p.Properties.Roles).includes(`"${roleId}"`))
      .flatMap(([, p]) => (resolve(p.Properties.PolicyDocument) as { Statement: Statement[] }).Statement);
    return [...inline, ...attached];
  };
  const roleOf = (fnPrefix: string) =>
    (fn(fnPrefix)[1].Properties.Role as { 'Fn::GetAtt': string[] })['Fn::GetAtt'][0] as string;
  return { stack, template, all, of, fn, resolve, statementsOfRole, roleOf };
}

const actions = (statements: Statement[]) => statements.flatMap((s) => [s.Action].flat() as string[]);
const FUNCTIONS = ['Ingest', 'Dispatch', 'Sweeper', 'DeliveryFeedbackFunction'] as const;

describe.each([
  ['the example settings', EXAMPLE_ONE_REGION],
  ["a bank's production settings", PRODUCTION_LIKE],
])('%s', (_name, file) => {
  const s = read(file);

  it('no role of the stack carries an AWS managed policy that writes logs (AWSLambdaMSKExecutionRole, the basic and VPC execution roles)', () => {
    for (const [id, role] of s.of('AWS::IAM::Role')) {
      const managed = JSON.stringify(role.Properties.ManagedPolicyArns ?? []);
      expect(managed, id).not.toMatch(
        /AWSLambdaMSKExecutionRole|AWSLambdaBasicExecutionRole|AWSLambdaVPCAccessExecutionRole/,
      );
    }
  });

  it("no role may write a log group it does not own: each function's own group, SNS's role SNS's groups", () => {
    // Whose log group is whose: a function's role, its LoggingConfig; a flow log's role, its group.
    const owned = new Map<string, string[]>();
    const own = (role: unknown, group: unknown) => {
      const roleId = String(s.resolve(role)).replace(/^arn:/, '');
      owned.set(roleId, [...(owned.get(roleId) ?? []), String(s.resolve(group)).replace(/^ref:/, 'arn:')]);
    };
    for (const [, f] of s.of('AWS::Lambda::Function')) {
      own(f.Properties.Role, (f.Properties.LoggingConfig as { LogGroup: unknown }).LogGroup);
    }
    for (const [, f] of s.of('AWS::EC2::FlowLog'))
      own(f.Properties.DeliverLogsPermissionArn, f.Properties.LogGroupName);
    const sns = `arn:aws:logs:${s.stack.region}:${s.stack.account}:log-group:sns/${s.stack.region}/${s.stack.account}/*`;
    for (const [roleId] of s.of('AWS::IAM::Role')) {
      const allowed = roleId.startsWith('SnsDeliveryStatusLoggingRole') ? [sns] : (owned.get(roleId) ?? []);
      for (const st of s.statementsOfRole(roleId)) {
        const writes = actions([st]).filter((a) => /^logs:(PutLogEvents|CreateLogStream|\*)$/.test(a));
        if (writes.length === 0 || st.Effect !== 'Allow') continue;
        for (const resource of [st.Resource].flat().map(String)) {
          expect(allowed, `${roleId} may ${writes} on ${resource}`).toContain(resource);
        }
      }
    }
  });

  it('ingest holds the MSK mapping statements inline: cluster discovery on this cluster only, the EC2 network-interface actions, no logs', () => {
    const st = s.statementsOfRole(s.roleOf('Ingest'));
    const discovery = st.find((x) => actions([x]).includes('kafka:DescribeClusterV2'));
    expect(actions(discovery ? [discovery] : [])).toEqual(
      expect.arrayContaining(['kafka:DescribeCluster', 'kafka:DescribeClusterV2', 'kafka:GetBootstrapBrokers']),
    );
    expect(discovery?.Resource).toBe(file === PRODUCTION_LIKE ? production.mskClusterArn : example.mskClusterArn);
    expect(actions(st)).toEqual(
      expect.arrayContaining([
        'ec2:CreateNetworkInterface',
        'ec2:DescribeNetworkInterfaces',
        'ec2:DeleteNetworkInterface',
      ]),
    );
    const logs = st.filter((x) => actions([x]).some((a) => a.startsWith('logs:')));
    const [groupId] = s.of('AWS::Logs::LogGroup').find(([id]) => id.startsWith('IngestLogs')) ?? [];
    expect(logs.map((x) => x.Resource)).toEqual([`arn:${groupId}`]);
  });

  it("nobody writes the table's items but the functions the stack granted a write and break glass; every write action, PartiQL's included, and reads stay open", () => {
    const [, table] = s.of('AWS::DynamoDB::Table')[0] as [string, TemplateResource];
    const policy = (table.Properties.ResourcePolicy as { PolicyDocument: unknown }).PolicyDocument;
    const statements = (s.resolve(policy) as { Statement: Statement[] }).Statement;
    const role = (prefix: string) => `arn:${s.of('AWS::IAM::Role').find(([id]) => id.startsWith(prefix))?.[0]}`;
    const refused = (who: string, action: string) =>
      denies(statements, {
        principal: { arn: who, account: s.stack.account },
        action,
        resource: '*',
        context: { 'aws:PrincipalArn': who },
      });
    const writes = ['PutItem', 'UpdateItem', 'DeleteItem', 'BatchWriteItem', 'TransactWriteItems', 'PartiQLUpdate'];
    for (const action of writes.map((w) => `dynamodb:${w}`)) {
      expect(refused(`arn:aws:iam::${s.stack.account}:role/Admin`, action), `${action} by an administrator`).toBe(true);
      expect(refused(role('EvidenceReaderRole'), action), `${action} by the evidence reader`).toBe(true);
      for (const writer of ['IngestRole', 'DispatchRole', 'SweeperRole', 'OperatorRole', 'EvidenceBreakGlassRole']) {
        expect(refused(role(writer), action), `${action} by ${writer}`).toBe(false);
      }
    }
    expect(refused(`arn:aws:iam::${s.stack.account}:role/Admin`, 'dynamodb:GetItem')).toBe(false);
  });

  it("the table's guard is lifted only by break glass or this stack's deploy, and every change to it is reported; so is the audit-seal key's policy", () => {
    const [, table] = s.of('AWS::DynamoDB::Table')[0] as [string, TemplateResource];
    const policy = (table.Properties.ResourcePolicy as { PolicyDocument: unknown }).PolicyDocument;
    const statements = (s.resolve(policy) as { Statement: Statement[] }).Statement;
    const role = (prefix: string) => `arn:${s.of('AWS::IAM::Role').find(([id]) => id.startsWith(prefix))?.[0]}`;
    const deployer = `arn:aws:iam::${s.stack.account}:role/cdk-hnb659fds-cfn-exec-role-${s.stack.account}-${s.stack.region}`;
    const refused = (sts: Statement[], who: string, action: string) =>
      denies(sts, {
        principal: { arn: who, account: s.stack.account },
        action,
        resource: '*',
        context: { 'aws:PrincipalArn': who },
      });
    for (const action of ['dynamodb:PutResourcePolicy', 'dynamodb:DeleteResourcePolicy']) {
      expect(refused(statements, `arn:aws:iam::${s.stack.account}:role/Admin`, action), action).toBe(true);
      expect(refused(statements, role('OperatorRole'), action), action).toBe(true);
      // CloudFormation deploys as its execution role: a later deploy may still change the policy.
      expect(refused(statements, deployer, action), action).toBe(false);
      expect(refused(statements, role('EvidenceBreakGlassRole'), action), action).toBe(false);
    }
    const [sealId, seal] = s.of('AWS::KMS::Key').find(([id]) => id.startsWith('EvidenceAuditSealKey')) as [
      string,
      TemplateResource,
    ];
    const sealPolicy = (s.resolve(seal.Properties.KeyPolicy) as { Statement: Statement[] }).Statement;
    expect(refused(sealPolicy, `arn:aws:iam::${s.stack.account}:role/Admin`, 'kms:PutKeyPolicy')).toBe(true);
    expect(refused(sealPolicy, deployer, 'kms:PutKeyPolicy')).toBe(false);
    expect(refused(sealPolicy, role('EvidenceBreakGlassRole'), 'kms:PutKeyPolicy')).toBe(false);
    const patterns = s
      .of('AWS::Events::Rule')
      .filter(([id]) => id.startsWith('ProtectionWatch'))
      .map(([, r]) => JSON.stringify(s.resolve(r.Properties.EventPattern)));
    const [tableId] = s.of('AWS::DynamoDB::Table')[0] as [string, TemplateResource];
    expect(patterns).toContainEqual(
      JSON.stringify({
        source: ['aws.dynamodb'],
        'detail-type': ['AWS API Call via CloudTrail'],
        detail: {
          eventSource: ['dynamodb.amazonaws.com'],
          eventName: [...WATCHED_TABLE_EVENTS],
          requestParameters: { resourceArn: [`arn:${tableId}`] },
        },
      }),
    );
    expect(patterns.find((p) => p.includes('"aws.kms"') && p.includes('PutKeyPolicy'))).toContain(`arn:${sealId}`);
  });

  it('the operator API refuses a role named like an IAM Identity Center role outside AWS’s reserved path (its session name would be the caller’s choice)', () => {
    const [, api] = s.of('AWS::ApiGateway::RestApi').find(([id]) => id.startsWith('OperatorApi')) as [
      string,
      TemplateResource,
    ];
    const statements = (s.resolve(api.Properties.Policy) as { Statement: Statement[] }).Statement;
    const invoke = (who: string) =>
      denies(statements, {
        principal: { arn: who, account: s.stack.account },
        action: 'execute-api:Invoke',
        resource: 'execute-api:/*',
        context: { 'aws:PrincipalArn': who },
      });
    const account = s.stack.account;
    expect(invoke(`arn:aws:iam::${account}:role/AWSReservedSSO_Operators_0a1b2c`)).toBe(true);
    expect(invoke(`arn:aws:iam::${account}:role/team/AWSReservedSSO_Operators_0a1b2c`)).toBe(true);
    expect(invoke(`arn:aws:iam::${account}:role/aws-reserved/sso.amazonaws.com/AWSReservedSSO_Operators_0a1b2c`)).toBe(
      false,
    );
    expect(invoke(`arn:aws:iam::${account}:role/Operators`)).toBe(false);
  });

  it('the SNS logging role is passed to SNS only', () => {
    const passes = s
      .of('AWS::IAM::Policy')
      .flatMap(([, p]) => (s.resolve(p.Properties.PolicyDocument) as { Statement: Statement[] }).Statement)
      .filter((st) => actions([st]).includes('iam:PassRole'));
    expect(passes.length).toBeGreaterThan(0);
    for (const st of passes)
      expect(st.Condition).toEqual({ StringEquals: { 'iam:PassedToService': 'sns.amazonaws.com' } });
  });

  it("dispatch publishes push only to the configured applications' endpoints", () => {
    const apps = (file === PRODUCTION_LIKE ? production : example).pushPlatformApplicationArns;
    const push = s.statementsOfRole(s.roleOf('Dispatch')).find((st) => st.Sid === 'PushToConfiguredApplications');
    expect(push?.Resource).toEqual(apps.map((a) => `${a.replace(':app/', ':endpoint/')}/*`));
  });

  it('the SNS delivery status settings are undone when the stack is deleted: no attribute names a deleted role', () => {
    const deletes = s
      .of('Custom::AWS')
      .map(([, r]) => r.Properties.Delete)
      .filter((d) => d !== undefined)
      .map(
        (d) =>
          JSON.parse(typeof d === 'string' ? d : String(s.resolve(d))) as {
            action: string;
            parameters: Record<string, Record<string, string>>;
          },
      );
    const sms = deletes.find((d) => d.action === 'setSMSAttributes');
    expect(sms?.parameters.attributes).toEqual({ DeliveryStatusIAMRole: '', DeliveryStatusSuccessSamplingRate: '' });
    const apps = deletes.filter((d) => d.action === 'setPlatformApplicationAttributes');
    expect(apps).toHaveLength((file === PRODUCTION_LIKE ? production : example).pushPlatformApplicationArns.length);
    for (const a of apps)
      expect(a.parameters.Attributes).toEqual({ SuccessFeedbackRoleArn: '', FailureFeedbackRoleArn: '' });
  });
});

describe('the vpc setting (production settings)', () => {
  const prod = read(PRODUCTION_LIKE);
  const plain = read(EXAMPLE_ONE_REGION);

  it('isolated subnets in the zones named, no internet gateway, no NAT, no route to anywhere but the VPC and its gateway endpoints', () => {
    expect(prod.of('AWS::EC2::InternetGateway')).toEqual([]);
    expect(prod.of('AWS::EC2::NatGateway')).toEqual([]);
    expect(prod.of('AWS::EC2::EgressOnlyInternetGateway')).toEqual([]);
    expect(prod.of('AWS::EC2::Route')).toEqual([]);
    const subnets = prod.of('AWS::EC2::Subnet').map(([, r]) => r.Properties);
    expect(subnets.map((p) => p.AvailabilityZone).sort()).toEqual([...production.vpc.availabilityZones].sort());
    for (const p of subnets) expect(p.MapPublicIpOnLaunch).toBe(false);
    expect(prod.of('AWS::EC2::VPC')[0]?.[1].Properties.CidrBlock).toBe(production.vpc.cidr);
    expect(prod.of('AWS::EC2::FlowLog')).toHaveLength(1);
    expect(plain.of('AWS::EC2::VPC')).toEqual([]);
  });

  it('the functions that hold contact points run there, with a group that admits nothing and sends HTTPS only', () => {
    const subnetIds = prod.of('AWS::EC2::Subnet').map(([id]) => ({ Ref: id }));
    for (const name of FUNCTIONS) {
      const config = prod.fn(name)[1].Properties.VpcConfig as { SubnetIds: unknown[]; SecurityGroupIds: unknown[] };
      expect(config.SubnetIds, name).toEqual(subnetIds);
      expect(config.SecurityGroupIds, name).toEqual([
        { 'Fn::GetAtt': [expect.stringMatching(/^NetworkFunctions/), 'GroupId'] },
      ]);
      // Placed by inline statements, not AWSLambdaVPCAccessExecutionRole (which also writes every log group).
      expect(actions(prod.statementsOfRole(prod.roleOf(name)))).toContain('ec2:CreateNetworkInterface');
    }
    const [, group] = prod.of('AWS::EC2::SecurityGroup').find(([id]) => id.startsWith('NetworkFunctions')) ?? [];
    expect(group?.Properties.SecurityGroupIngress).toBeUndefined();
    expect(group?.Properties.SecurityGroupEgress).toEqual([
      expect.objectContaining({ CidrIp: '0.0.0.0/0', IpProtocol: 'tcp', FromPort: 443, ToPort: 443 }),
    ]);
    for (const name of FUNCTIONS) expect(plain.fn(name)[1].Properties.VpcConfig, name).toBeUndefined();
  });

  it('an endpoint per AWS service the functions call, each limited to what they call on it; the registry through its PrivateLink service', () => {
    const endpoints = prod.of('AWS::EC2::VPCEndpoint').map(([, r]) => r.Properties);
    const service = (e: Record<string, unknown>) =>
      String(prod.resolve(e.ServiceName)).replace(/^com\.amazonaws\.ap-northeast-1\./, '');
    const byService = Object.fromEntries(endpoints.map((e) => [service(e), e]));
    // The failed-batch S3 endpoint in the cluster's VPC is the other S3 endpoint (test/infra/deploy-readiness.test.ts).
    expect(Object.keys(byService).sort()).toEqual(
      // No X-Ray endpoint: the production settings turn tracing off (test/infra/tracing.test.ts).
      ['dynamodb', 'email', 's3', 'secretsmanager', 'sns', production.vpc.schemaRegistryEndpointService].sort(),
    );
    const allowed = (e: Record<string, unknown> | undefined) =>
      (prod.resolve(e?.PolicyDocument) as { Statement: Statement[] } | undefined)?.Statement.flatMap((st) =>
        [st.Action].flat(),
      );
    expect(allowed(byService.sns)).toEqual(['sns:Publish']);
    expect(allowed(byService.email)).toEqual(['ses:SendEmail', 'ses:SendRawEmail']);
    expect(allowed(byService.secretsmanager)).toEqual(['secretsmanager:GetSecretValue']);
    const s3 = endpoints.filter(
      (e) =>
        service(e) === 's3' && e.VpcEndpointType === 'Gateway' && JSON.stringify(e.RouteTableIds).includes('Network'),
    );
    expect(allowed(s3[0])).toEqual(['s3:PutObject', 's3:PutObjectRetention']);
    expect(JSON.stringify(prod.resolve(s3[0]?.PolicyDocument))).toContain('EvidenceBucket');
    expect(JSON.stringify(prod.resolve(byService.dynamodb?.PolicyDocument))).toMatch(
      /"Resource":\["arn:Table[0-9A-F]+","arn:Table[0-9A-F]+\/index\/\*"\]/,
    );
    for (const e of endpoints.filter((x) => x.VpcEndpointType === 'Interface')) {
      expect(e.SecurityGroupIds).toEqual([{ 'Fn::GetAtt': [expect.stringMatching(/^NetworkEndpoints/), 'GroupId'] }]);
    }
    // The registry's host name resolves to its endpoint inside the VPC.
    const zone = prod.of('AWS::Route53::HostedZone')[0]?.[1].Properties;
    expect(zone?.Name).toBe(`${new URL(production.schemaRegistry.url).hostname}.`);
  });
});

describe('settings refused at synth', () => {
  const read_ = (overrides: Record<string, unknown>) => (k: string) => ({ ...production, ...overrides })[k as 'stage'];
  const NOW = Date.parse('2026-12-02T00:00:00Z');
  const parse = (overrides: Record<string, unknown>) => parseSettings(read_(overrides), NOW);
  const registry = (url: string) => ({ schemaRegistry: { ...production.schemaRegistry, url } });

  it('a registry URL with credentials in it (they would be plain text in the environment), a query string or a fragment', () => {
    expect(() =>
      parse(registry('https://KEY:S3cr3tV4lu3@lsrc-7q2z9.ap-northeast-1.aws.private.confluent.cloud')),
    ).toThrow(/"schemaRegistry.url" must not carry credentials/);
    expect(() => parse(registry('https://KEY@lsrc-7q2z9.ap-northeast-1.aws.private.confluent.cloud'))).toThrow(
      /must not carry credentials/,
    );
    expect(() => parse(registry('https://r.example.net/?api_key=SECRET'))).toThrow(
      /"schemaRegistry.url" must have no query string or fragment/,
    );
    expect(() => parse(registry('https://r.example.net/#x'))).toThrow(/no query string or fragment/);
    // The message never repeats the secret.
    try {
      parse(registry('https://KEY:S3cr3tV4lu3@r.example.net'));
    } catch (error) {
      expect(String(error)).not.toContain('S3cr3tV4lu3');
    }
    expect(parse(registry('https://r.example.net/registry')).schemaRegistry).toMatchObject({
      url: 'https://r.example.net/registry',
    });
  });

  it('outside the example stage, a deploy must name who is paged; the example stage need not', () => {
    expect(() => parse({ alarmEmail: undefined })).toThrow(
      /"alarmEmail" is required outside the example stage: every alarm mails it/,
    );
    expect(parseSettings((k) => ({ ...example, alarmEmail: undefined })[k as 'stage'], NOW).stage).toBe('example');
  });

  it('the protection settings: another account for the copies, zones of the cluster region, a VPC the registry can be reached from', () => {
    const account = '210987654321';
    expect(() =>
      parse({ evidenceReplication: { ...production.evidenceReplication, destinationAccount: account } }),
    ).toThrow(/"evidenceReplication.destinationAccount" must be another account than the stack's/);
    expect(() =>
      parse({
        evidenceReplication: {
          ...production.evidenceReplication,
          destinationKmsKeyArn: 'arn:aws:kms:ap-northeast-3:111111111111:key/x',
        },
      }),
    ).toThrow(/"evidenceReplication.destinationKmsKeyArn" must be a key of the destination account/);
    expect(() =>
      parse({
        backup: { ...production.backup, copyToVaultArn: `arn:aws:backup:ap-northeast-3:${account}:backup-vault:v1` },
      }),
    ).toThrow(/"backup.copyToVaultArn" must be a vault of another account/);
    expect(() => parse({ backup: { ...production.backup, lockChangeableDays: 1 } })).toThrow(
      /"backup.lockChangeableDays" is invalid/,
    );
    expect(() => parse({ vpc: { ...production.vpc, availabilityZones: ['us-east-1a', 'ap-northeast-1c'] } })).toThrow(
      /us-east-1a is not a zone of the cluster's region/,
    );
    expect(() => parse({ vpc: { ...production.vpc, availabilityZones: ['ap-northeast-1a'] } })).toThrow(
      /two or more different zones/,
    );
    expect(() => parse({ vpc: { ...production.vpc, cidr: '10.0.0.0/8' } })).toThrow(
      /"vpc.cidr" must be an IPv4 block from \/16 to \/24/,
    );
    const { schemaRegistryEndpointService: _service, ...noService } = production.vpc;
    expect(() => parse({ vpc: noService })).toThrow(
      /"vpc.schemaRegistryEndpointService" is required with a Confluent registry/,
    );
    expect(() => parse({ schemaRegistry: undefined, vpc: production.vpc })).toThrow(
      /is only used with a Confluent schemaRegistry/,
    );
  });
});

describe('narrowed where it can be', () => {
  const prod = read(PRODUCTION_LIKE);
  const plain = read(EXAMPLE_ONE_REGION);
  const arn = (type: string, id: string) => `arn:aws:ec2:${prod.stack.region}:${prod.stack.account}:${type}/${id}`;
  /** A role's own statements, read with the role as their principal (an identity policy names none). */
  const own = (s: ReturnType<typeof read>, roleId: string) =>
    s.statementsOfRole(roleId).map((st) => ({ ...st, Principal: { AWS: `arn:${roleId}` } }));
  const eni = (roleId: string, action: string, subnet?: string, vpc?: string): Request => ({
    principal: { arn: `arn:${roleId}`, account: prod.stack.account },
    action,
    resource: '*',
    context: { 'ec2:Subnet': subnet, 'ec2:Vpc': vpc },
  });

  it("with the vpc setting, a function's network interfaces are created, changed and deleted in its own subnets and VPC alone", () => {
    const subnets = prod.of('AWS::EC2::Subnet').map(([id]) => `ref:${id}`);
    const [vpcId] = prod.of('AWS::EC2::VPC')[0] ?? [];
    for (const name of FUNCTIONS) {
      const roleId = prod.roleOf(name);
      const policy = own(prod, roleId);
      for (const action of [
        'ec2:CreateNetworkInterface',
        'ec2:DeleteNetworkInterface',
        'ec2:AssignPrivateIpAddresses',
        'ec2:UnassignPrivateIpAddresses',
      ]) {
        const ask = (subnet: string, vpc: string) => allows(policy, eni(roleId, action, subnet, vpc));
        expect(ask(arn('subnet', subnets[0] as string), arn('vpc', `ref:${vpcId}`)), `${name} ${action}`).toBe(true);
        expect(ask(arn('subnet', 'subnet-0ther'), arn('vpc', 'vpc-0ther')), `${name} ${action} elsewhere`).toBe(false);
      }
      // Describe actions take no resource: "*" as before.
      expect(allows(policy, eni(roleId, 'ec2:DescribeNetworkInterfaces')), name).toBe(true);
    }
  });

  it("the MSK pollers' network interfaces are narrowed to the cluster's VPC where the settings name it; the smoke producer's to its subnets", () => {
    const ingest = prod.roleOf('Ingest');
    const create = (vpc: string) =>
      allows(own(prod, ingest), eni(ingest, 'ec2:CreateNetworkInterface', arn('subnet', 'subnet-0msk'), vpc));
    expect(create(arn('vpc', production.mskVpcId))).toBe(true);
    expect(create(arn('vpc', 'vpc-0ther'))).toBe(false);
    const smoke = prod.roleOf('SmokeProducer');
    const at = (subnet: string) =>
      allows(own(prod, smoke), eni(smoke, 'ec2:CreateNetworkInterface', arn('subnet', subnet), undefined));
    expect(at(production.mskSubnetIds[0] as string)).toBe(true);
    expect(at('subnet-0ther')).toBe(false);
  });

  it.each([
    ['the example settings', plain],
    ["a bank's production settings", prod],
  ])(
    "%s: the evidence bucket's keys (an event and a customer each) are listed by the reader, replication, break glass and a deploy alone",
    (_n, s) => {
      const [bucketId] = s.of('AWS::S3::Bucket').find(([id]) => id.startsWith('EvidenceBucket')) ?? [];
      const [, policy] =
        s.of('AWS::S3::BucketPolicy').find(([, p]) => JSON.stringify(p.Properties.Bucket).includes(String(bucketId))) ??
        [];
      const statements = (s.resolve(policy?.Properties.PolicyDocument) as { Statement: Statement[] }).Statement;
      const role = (prefix: string) => `arn:${s.of('AWS::IAM::Role').find(([id]) => id.startsWith(prefix))?.[0]}`;
      const list = (who: string, action: string) =>
        denies(statements, {
          principal: { arn: who, account: s.stack.account },
          action,
          resource: `arn:${bucketId}`,
          context: { 'aws:PrincipalArn': who },
        });
      const deployer = `arn:aws:iam::${s.stack.account}:role/cdk-hnb659fds-cfn-exec-role-${s.stack.account}-${s.stack.region}`;
      for (const action of ['s3:ListBucket', 's3:ListBucketVersions']) {
        expect(list(`arn:aws:iam::${s.stack.account}:role/Admin`, action), `${action} by an administrator`).toBe(true);
        for (const fn of ['DispatchRole', 'SweeperRole', 'DeliveryFeedbackFunctionRole']) {
          expect(list(role(fn), action), `${action} by ${fn}`).toBe(true);
        }
        for (const allowed of [role('EvidenceReaderRole'), role('EvidenceBreakGlassRole'), deployer]) {
          expect(list(allowed, action), `${action} by ${allowed}`).toBe(false);
        }
      }
      if (s === prod) expect(list(role('EvidenceReplicationRole'), 's3:ListBucket')).toBe(false);
    },
  );
});

/**
 * A VPC of the stack's own for the functions that hold customers' contact points (settings `vpc`): isolated subnets
 * in two or more zones — no internet gateway, no NAT gateway, so no route to the internet — and an endpoint for each
 * AWS service those functions call, each endpoint's policy limited to what they call on it:
 *   DynamoDB (gateway; the table and its indexes)   every function
 *   S3 (gateway; evidence objects, write only)     dispatch, sweeper, feedback (evidence)
 *   SNS, SES (`email`, the API SendEmail uses)      dispatch
 *   X-Ray                                          every function, with active tracing (settings `tracing`)
 *   Glue, or Secrets Manager and the registry's    ingest (Avro/Protobuf writer schemas)
 *   own PrivateLink service (Confluent)
 * KMS, CloudWatch Logs and STS get none: no function calls them (S3, DynamoDB and Secrets Manager use KMS on their
 * side, Lambda ships the logs, and the functions run with the credentials Lambda gives them).
 * Traffic is recorded in VPC flow logs kept a year. The functions' security group admits nothing and sends HTTPS
 * only; the endpoints admit HTTPS from the functions only.
 */
import { RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import {
  FlowLogDestination,
  FlowLogTrafficType,
  GatewayVpcEndpointAwsService,
  type IInterfaceVpcEndpointService,
  InterfaceVpcEndpoint,
  InterfaceVpcEndpointAwsService,
  InterfaceVpcEndpointService,
  IpAddresses,
  Peer,
  Port,
  SecurityGroup,
  SubnetType,
  Vpc,
} from 'aws-cdk-lib/aws-ec2';
import { AnyPrincipal, PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { ARecord, PrivateHostedZone, RecordTarget } from 'aws-cdk-lib/aws-route53';
import { InterfaceVpcEndpointTarget } from 'aws-cdk-lib/aws-route53-targets';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import { logsKeyOf } from './logs-key.ts';
import type { NotifierFunction } from './notifier-function.ts';
import type { Settings } from './settings.ts';
import type { NetworkSettings } from './settings-protection.ts';
import { tracingOf } from './tracing.ts';

export interface NetworkProps {
  readonly prefix: string;
  readonly settings: NetworkSettings;
  readonly table: ITable;
  readonly evidenceBucket: IBucket;
  readonly schemaRegistry: Settings['schemaRegistry'];
}

/** Each subnet's size: Lambda's shared network interfaces and the endpoints' need few addresses per zone. */
export const SUBNET_MASK = 26;

export class Network extends Construct {
  readonly vpc: Vpc;
  /** The functions' security group: no ingress, HTTPS out (to the endpoints: there is no other route). */
  readonly functions: SecurityGroup;
  private readonly endpoints: SecurityGroup;

  constructor(scope: Construct, id: string, props: NetworkProps) {
    super(scope, id);
    const account = Stack.of(this).account;
    const flowLogs = new LogGroup(this, 'FlowLogs', {
      retention: RetentionDays.ONE_YEAR,
      encryptionKey: logsKeyOf(this),
      removalPolicy: RemovalPolicy.RETAIN,
    });
    this.vpc = new Vpc(this, 'Vpc', {
      ipAddresses: IpAddresses.cidr(props.settings.cidr),
      availabilityZones: props.settings.availabilityZones,
      natGateways: 0,
      createInternetGateway: false,
      subnetConfiguration: [{ name: 'Functions', subnetType: SubnetType.PRIVATE_ISOLATED, cidrMask: SUBNET_MASK }],
      flowLogs: {
        all: {
          destination: FlowLogDestination.toCloudWatchLogs(
            flowLogs,
            // VPC Flow Logs may write with this role for this account only.
            new Role(this, 'FlowLogsRole', {
              assumedBy: new ServicePrincipal('vpc-flow-logs.amazonaws.com', {
                conditions: { StringEquals: { 'aws:SourceAccount': account } },
              }),
              description: `${props.prefix}: VPC flow logs write to their log group with this role`,
            }),
          ),
          trafficType: FlowLogTrafficType.ALL,
        },
      },
    });
    Validations.of(this.vpc).acknowledge({
      id: 'CloudFormation-Validate::W3010',
      reason:
        "The zones are the stage's settings (vpc.availabilityZones), chosen by the bank and checked at synth against the cluster's region; looking them up would need AWS credentials at synth.",
    });
    this.functions = new SecurityGroup(this, 'Functions', {
      vpc: this.vpc,
      allowAllOutbound: false,
      description: `${props.prefix} functions: no ingress; HTTPS out, which reaches only the VPC endpoints`,
    });
    this.functions.addEgressRule(Peer.anyIpv4(), Port.tcp(443), 'HTTPS: the subnets route only to the VPC endpoints');
    this.endpoints = new SecurityGroup(this, 'Endpoints', {
      vpc: this.vpc,
      allowAllOutbound: false,
      description: `${props.prefix} VPC endpoints: HTTPS from the functions only`,
    });
    this.endpoints.addIngressRule(this.functions, Port.tcp(443), 'HTTPS from the functions');
    const fromThisAccount = { StringEquals: { 'aws:PrincipalAccount': account } };
    const subnets = [{ subnetType: SubnetType.PRIVATE_ISOLATED }];

    const dynamodb = this.vpc.addGatewayEndpoint('DynamoDb', {
      service: GatewayVpcEndpointAwsService.DYNAMODB,
      subnets,
    });
    dynamodb.addToPolicy(
      new PolicyStatement({
        principals: [new AnyPrincipal()],
        actions: ['dynamodb:*'],
        resources: [props.table.tableArn, `${props.table.tableArn}/index/*`],
        conditions: fromThisAccount,
      }),
    );
    const s3 = this.vpc.addGatewayEndpoint('S3', { service: GatewayVpcEndpointAwsService.S3, subnets });
    s3.addToPolicy(
      new PolicyStatement({
        principals: [new AnyPrincipal()],
        actions: ['s3:PutObject', 's3:PutObjectRetention'],
        resources: [props.evidenceBucket.arnForObjects('*')],
        conditions: fromThisAccount,
      }),
    );
    const endpoint = (name: string, service: IInterfaceVpcEndpointService, actions: string[]) => {
      const e = this.interfaceEndpoint(name, service);
      e.addToPolicy(
        new PolicyStatement({
          principals: [new AnyPrincipal()],
          actions,
          resources: ['*'],
          conditions: fromThisAccount,
        }),
      );
      return e;
    };
    endpoint('Sns', InterfaceVpcEndpointAwsService.SNS, ['sns:Publish']);
    endpoint('Ses', InterfaceVpcEndpointAwsService.EMAIL, ['ses:SendEmail', 'ses:SendRawEmail']);
    // Only with tracing on (settings `tracing`): otherwise no function calls X-Ray, and an endpoint is paid by the hour.
    if (tracingOf(this) === 'active') {
      endpoint('XRay', InterfaceVpcEndpointAwsService.XRAY, [
        'xray:PutTraceSegments',
        'xray:PutTelemetryRecords',
        'xray:GetSamplingRules',
        'xray:GetSamplingTargets',
      ]);
    }
    const registry = props.schemaRegistry;
    if (registry?.kind === 'glue') {
      endpoint('Glue', InterfaceVpcEndpointAwsService.GLUE, ['glue:GetSchemaVersion']);
    }
    if (registry?.kind === 'confluent') {
      if (registry.basicAuthSecretArn !== undefined) {
        endpoint('SecretsManager', InterfaceVpcEndpointAwsService.SECRETS_MANAGER, ['secretsmanager:GetSecretValue']);
      }
      const service = props.settings.schemaRegistryEndpointService;
      if (service !== undefined) this.privateRegistry(registry.url, service);
    }
  }

  /** The function runs in the isolated subnets with the functions' security group. */
  place(fn: NotifierFunction): void {
    fn.placeInSubnets(
      this.vpc.isolatedSubnets.map((s) => s.subnetId),
      [this.functions.securityGroupId],
      this.vpc.vpcId,
    );
  }

  private interfaceEndpoint(name: string, service: IInterfaceVpcEndpointService): InterfaceVpcEndpoint {
    return this.vpc.addInterfaceEndpoint(name, {
      service,
      privateDnsEnabled: true,
      subnets: { subnetType: SubnetType.PRIVATE_ISOLATED },
      securityGroups: [this.endpoints],
      // Only the functions' security group, not the whole VPC's range.
      open: false,
    });
  }

  /**
   * A Confluent registry reached over its PrivateLink service: an interface endpoint to it, and a private zone that
   * resolves the registry's host name to that endpoint inside this VPC (the URL stays the one in the settings).
   */
  private privateRegistry(url: string, serviceName: string): void {
    const endpoint = new InterfaceVpcEndpoint(this, 'SchemaRegistry', {
      vpc: this.vpc,
      service: new InterfaceVpcEndpointService(serviceName, 443),
      privateDnsEnabled: false,
      subnets: { subnetType: SubnetType.PRIVATE_ISOLATED },
      securityGroups: [this.endpoints],
      open: false,
    });
    const zone = new PrivateHostedZone(this, 'SchemaRegistryZone', { zoneName: new URL(url).hostname, vpc: this.vpc });
    new ARecord(this, 'SchemaRegistryRecord', {
      zone,
      target: RecordTarget.fromAlias(new InterfaceVpcEndpointTarget(endpoint)),
    });
  }
}

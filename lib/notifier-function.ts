/**
 * The house Lambda function, with the defaults every notifier function shares (runtime, arm64, ESM bundling with
 * esbuild and code splitting from lib/bundling.ts, log retention, tracing, Powertools environment). Each function has its
 * own role that may write only to its own log group (instead of the managed AWSLambdaBasicExecutionRole, which allows
 * every log group in the account), and reaches the table through `useTable`, which grants exactly the actions it
 * names and tells the function the table's name in the same step.
 */

import { fileURLToPath } from 'node:url';
import { AssetHashType, DockerImage, Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import {
  Architecture,
  type CfnFunction,
  Code,
  Function as LambdaFunction,
  LoggingFormat,
  Runtime,
  Tracing,
} from 'aws-cdk-lib/aws-lambda';
import { LogGroup } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import type { ConsoleEnvironment, ConsolePageEnvironment } from '../functions/contracts/console-environment.ts';
import type {
  DispatchEnvironment,
  FeedbackEnvironment,
  IngestEnvironment,
  OperatorEnvironment,
  SmokeEnvironment,
  SweeperEnvironment,
} from '../functions/contracts/environment.ts';
import { SERVICE_NAME, type TelemetryEnvironment } from '../functions/contracts/telemetry.ts';
import { bundleFunction } from './bundling.ts';
import { LOG_RETENTION, logsKeyOf } from './logs-key.ts';
import { ITEM_WRITE_ACTIONS, recordTableWriter } from './table.ts';
import { tracingOf } from './tracing.ts';

/**
 * The environment of one of the functions, as its contract types it (functions/contracts/environment.ts): the stack
 * builds each as its function's type, so a renamed or missing variable fails to compile.
 */
export type FunctionEnvironment =
  | IngestEnvironment
  | DispatchEnvironment
  | SweeperEnvironment
  | FeedbackEnvironment
  | SmokeEnvironment
  | OperatorEnvironment
  | ConsoleEnvironment
  | ConsolePageEnvironment;

export interface NotifierFunctionProps {
  /** Entry file under functions/, e.g. "ingest/index.ts". */
  readonly entry: string;
  readonly description: string;
  readonly environment: FunctionEnvironment;
  readonly timeout?: Duration;
  readonly memorySize?: number;
  readonly reservedConcurrentExecutions?: number;
  /** EMF namespace (per stage, so two stages in one account keep their metrics apart). */
  readonly metricNamespace: string;
  /** Run after bundling, to put other files beside the bundle (the console's page). */
  readonly afterBundling?: (outputDir: string) => void;
}

/** DynamoDB actions a function may be granted on the table (or on one of its indexes). */
export type TableAction =
  | 'dynamodb:GetItem'
  | 'dynamodb:PutItem'
  | 'dynamodb:UpdateItem'
  | 'dynamodb:Query'
  | 'dynamodb:DeleteItem'
  | 'dynamodb:BatchGetItem'
  | 'dynamodb:BatchWriteItem';

/**
 * What Lambda needs to place a function's network interfaces in subnets (AWSLambdaVPCAccessExecutionRole's EC2
 * actions): these act on a network interface, which carries its subnet and VPC (condition keys `ec2:Subnet`,
 * `ec2:Vpc` — Service Authorization Reference, Amazon EC2), and are narrowed to the function's own; …
 */
export const LAMBDA_VPC_ACTIONS = [
  'ec2:CreateNetworkInterface',
  'ec2:DeleteNetworkInterface',
  'ec2:AssignPrivateIpAddresses',
  'ec2:UnassignPrivateIpAddresses',
] as const;
/** … these describe, and EC2 authorizes a Describe action only on "*". */
export const LAMBDA_VPC_DESCRIBE_ACTIONS = ['ec2:DescribeNetworkInterfaces', 'ec2:DescribeSubnets'] as const;

/**
 * The network-interface actions narrowed to these subnets (and this VPC, when known). `IfExists`: Lambda checks the
 * role when it creates the function with a request that names no subnet, and the subnet and security group a create
 * also touches carry no `ec2:Subnet`; every real network interface carries both keys, so none is created, changed or
 * deleted outside them.
 */
export function inTheseSubnets(stack: Stack, subnetIds: readonly string[], vpcId?: string): Record<string, unknown> {
  const arn = (type: string, id: string) => `arn:${stack.partition}:ec2:${stack.region}:${stack.account}:${type}/${id}`;
  return {
    ArnEqualsIfExists: {
      'ec2:Subnet': subnetIds.map((id) => arn('subnet', id)),
      ...(vpcId === undefined ? {} : { 'ec2:Vpc': arn('vpc', vpcId) }),
    },
  };
}

const functionsDir = fileURLToPath(new URL('../functions/', import.meta.url));
const repositoryRoot = fileURLToPath(new URL('..', import.meta.url));

/**
 * The function's code: its entry bundled with esbuild in this process (lib/bundling.ts: ESM, minified, source maps,
 * split into chunks loaded on first use), the SDK included — versions pinned by our lockfile, tree-shaken, measured
 * by npm run bench. The asset's hash is the bundle's, so an unchanged bundle is not deployed again.
 */
function codeOf(entry: string, afterBundling?: (outputDir: string) => void): Code {
  return Code.fromAsset(repositoryRoot, {
    assetHashType: AssetHashType.OUTPUT,
    bundling: {
      // Never used: esbuild is a dependency of the project and always bundles here.
      image: DockerImage.fromRegistry('esbuild-runs-locally'),
      local: {
        tryBundle(outputDir: string) {
          bundleFunction(`${functionsDir}${entry}`, outputDir);
          afterBundling?.(outputDir);
          return true;
        },
      },
    },
  });
}

export class NotifierFunction extends LambdaFunction {
  constructor(scope: Construct, id: string, props: NotifierFunctionProps) {
    // The log group and the role exist before the function, which is created with them.
    const logGroup = new LogGroup(scope, `${id}Logs`, {
      retention: LOG_RETENTION,
      encryptionKey: logsKeyOf(scope),
      removalPolicy: RemovalPolicy.RETAIN,
    });
    const role = new Role(scope, `${id}Role`, {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description: `Execution role of ${props.description}`.slice(0, 1000),
    });
    // Lambda writes to the configured log group only: CreateLogStream and PutLogEvents on it, nothing else.
    logGroup.grantWrite(role);
    super(scope, id, {
      code: codeOf(props.entry, props.afterBundling),
      handler: 'index.handler',
      description: props.description,
      role,
      runtime: Runtime.NODEJS_24_X,
      architecture: Architecture.ARM_64,
      memorySize: props.memorySize ?? 512,
      timeout: props.timeout ?? Duration.seconds(30),
      // Active tracing only where the stage's settings ask for it (lib/tracing.ts): off, no X-Ray permission either.
      ...(tracingOf(scope) === 'active' ? { tracing: Tracing.ACTIVE } : {}),
      loggingFormat: LoggingFormat.JSON,
      logGroup,
      ...(props.reservedConcurrentExecutions === undefined
        ? {}
        : { reservedConcurrentExecutions: props.reservedConcurrentExecutions }),
      environment: setVariables({ ...telemetryOf(props.metricNamespace), ...props.environment }),
    });
    if (tracingOf(scope) === 'off') {
      Validations.of(this).acknowledge({
        id: 'Serverless-LambdaTracing',
        reason:
          "Tracing is off by the stage's settings (`tracing`): without subsegments a trace holds what the invocation's REPORT log line and the Lambda metrics hold, at about the cost of the evidence's S3 requests; an investigation turns it on with a deploy (docs/operations.md \"What X-Ray records\").",
      });
    }
  }

  /**
   * Runs the function in these subnets with these security groups. The network-interface actions are granted inline
   * (not AWSLambdaVPCAccessExecutionRole, which also allows writing to every log group of the account), on these
   * subnets (and VPC) alone; Lambda checks them when it creates the function, which depends on the role's policy.
   */
  placeInSubnets(subnetIds: readonly string[], securityGroupIds: readonly string[], vpcId?: string): this {
    (this.node.defaultChild as CfnFunction).vpcConfig = {
      subnetIds: [...subnetIds],
      securityGroupIds: [...securityGroupIds],
    };
    this.addToRolePolicy(new PolicyStatement({ actions: [...LAMBDA_VPC_DESCRIBE_ACTIONS], resources: ['*'] }));
    this.addToRolePolicy(
      new PolicyStatement({
        actions: [...LAMBDA_VPC_ACTIONS],
        resources: ['*'],
        conditions: inTheseSubnets(Stack.of(this), subnetIds, vpcId),
      }),
    );
    return this;
  }

  /**
   * The one way a function reaches the table: exactly these actions, on the table or one of its indexes. (Its name
   * is in the function's environment, TABLE_NAME, which its contract requires.)
   */
  useTable(
    table: ITable,
    actions: readonly TableAction[],
    options: {
      readonly index?: string;
      /** Only items whose partition key matches one of these patterns (IAM `dynamodb:LeadingKeys`, `*` wildcards). */
      readonly leadingKeys?: readonly string[];
    } = {},
  ): this {
    const resource = options.index === undefined ? table.tableArn : `${table.tableArn}/index/${options.index}`;
    if (actions.some((a) => (ITEM_WRITE_ACTIONS as readonly string[]).includes(a))) {
      if (this.role !== undefined) recordTableWriter(table, this.role);
    }
    this.addToRolePolicy(
      new PolicyStatement({
        actions: [...actions],
        resources: [resource],
        ...(options.leadingKeys === undefined
          ? {}
          : { conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [...options.leadingKeys] } } }),
      }),
    );
    // A table under a customer key is read and written through it (the stack uses the same key for its queue and
    // bucket): Decrypt and GenerateDataKey, nothing else.
    if (table.encryptionKey !== undefined) {
      this.addToRolePolicy(
        new PolicyStatement({
          actions: ['kms:Decrypt', 'kms:GenerateDataKey'],
          resources: [table.encryptionKey.keyArn],
        }),
      );
    }
    return this;
  }
}

/** Every function of the stack records an X-Ray subsegment per AWS call (settings `traceAwsCalls`). */
export function traceAwsCalls(scope: Construct): void {
  for (const fn of scope.node.findAll()) {
    if (fn instanceof NotifierFunction) fn.addEnvironment('POWERTOOLS_TRACE_ENABLED', 'true');
  }
}

const telemetryOf = (metricNamespace: string): TelemetryEnvironment => ({
  POWERTOOLS_SERVICE_NAME: SERVICE_NAME,
  POWERTOOLS_METRICS_NAMESPACE: metricNamespace,
  POWERTOOLS_LOG_LEVEL: 'INFO',
  // The X-Ray SDK only where the stack asks for AWS calls' subsegments (settings `traceAwsCalls`: traceAwsCalls below).
  POWERTOOLS_TRACE_ENABLED: 'false',
  NODE_OPTIONS: '--enable-source-maps',
});

/** The variables that have a value: an optional one left unset is not set at all. */
const setVariables = (environment: Readonly<Record<string, string | undefined>>): Record<string, string> =>
  Object.fromEntries(Object.entries(environment).filter((entry): entry is [string, string] => entry[1] !== undefined));

/**
 * The house Lambda construct: one place for the defaults every notifier function shares (runtime, arm64, ESM
 * bundling with esbuild, minify, source maps, log retention, tracing, Powertools environment) and the table binding.
 * Each function has its own role that may write only to its own log group (instead of the managed
 * AWSLambdaBasicExecutionRole, which allows every log group in the account).
 */

import { fileURLToPath } from 'node:url';
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Architecture, LoggingFormat, Runtime, Tracing } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { BUNDLE } from './bundling.ts';
import { SERVICE_NAME } from '../functions/commons/telemetry.ts';

export interface NotifierFunctionProps {
  /** Entry file under functions/, e.g. "ingest/index.ts". */
  readonly entry: string;
  readonly description: string;
  readonly table: ITable;
  readonly environment?: Record<string, string>;
  readonly timeout?: Duration;
  readonly memorySize?: number;
  readonly reservedConcurrentExecutions?: number;
  /** EMF namespace (per stage, so two stages in one account keep their metrics apart). */
  readonly metricNamespace: string;
}

const functionsDir = fileURLToPath(new URL('../functions/', import.meta.url));

export class NotifierFunction extends Construct {
  readonly fn: NodejsFunction;
  readonly logGroup: LogGroup;

  constructor(scope: Construct, id: string, props: NotifierFunctionProps) {
    super(scope, id);
    const logGroup = new LogGroup(this, 'Logs', {
      retention: RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    this.logGroup = logGroup;
    const role = new Role(this, 'Role', {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description: `Execution role of ${props.description}`.slice(0, 1000),
    });
    // Lambda writes to the configured log group only: CreateLogStream and PutLogEvents on it, nothing else.
    logGroup.grantWrite(role);
    this.fn = new NodejsFunction(this, 'Function', {
      entry: `${functionsDir}${props.entry}`,
      handler: 'handler',
      description: props.description,
      role,
      runtime: Runtime.NODEJS_24_X,
      architecture: Architecture.ARM_64,
      memorySize: props.memorySize ?? 512,
      timeout: props.timeout ?? Duration.seconds(30),
      tracing: Tracing.ACTIVE,
      loggingFormat: LoggingFormat.JSON,
      logGroup,
      ...(props.reservedConcurrentExecutions === undefined
        ? {}
        : { reservedConcurrentExecutions: props.reservedConcurrentExecutions }),
      environment: {
        TABLE_NAME: props.table.tableName,
        POWERTOOLS_SERVICE_NAME: SERVICE_NAME,
        POWERTOOLS_METRICS_NAMESPACE: props.metricNamespace,
        POWERTOOLS_LOG_LEVEL: 'INFO',
        NODE_OPTIONS: '--enable-source-maps',
        ...props.environment,
      },
      bundling: {
        format: OutputFormat.ESM,
        target: BUNDLE.target,
        minify: BUNDLE.minify,
        sourceMap: BUNDLE.sourceMap,
        banner: BUNDLE.banner,
        mainFields: [...BUNDLE.mainFields],
        // Bundle the SDK too: versions pinned by our lockfile, tree-shaken, and measured by npm run bench.
        externalModules: [],
      },
    });
  }
}

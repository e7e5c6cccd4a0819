/**
 * The house Lambda construct: one place for the defaults every notifier function shares (runtime, arm64, ESM
 * bundling with esbuild, minify, source maps, log retention, tracing, Powertools environment) and the table binding.
 */

import { fileURLToPath } from 'node:url';
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { Architecture, LoggingFormat, Runtime, Tracing } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';

export interface NotifierFunctionProps {
  /** Entry file under functions/, e.g. "ingest/index.ts". */
  readonly entry: string;
  readonly description: string;
  readonly table: ITable;
  readonly environment?: Record<string, string>;
  readonly timeout?: Duration;
  readonly memorySize?: number;
  readonly reservedConcurrentExecutions?: number;
}

const functionsDir = fileURLToPath(new URL('../functions/', import.meta.url));

export class NotifierFunction extends Construct {
  readonly fn: NodejsFunction;

  constructor(scope: Construct, id: string, props: NotifierFunctionProps) {
    super(scope, id);
    const logGroup = new LogGroup(this, 'Logs', {
      retention: RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    this.fn = new NodejsFunction(this, 'Function', {
      entry: `${functionsDir}${props.entry}`,
      handler: 'handler',
      description: props.description,
      runtime: Runtime.NODEJS_22_X,
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
        POWERTOOLS_SERVICE_NAME: 'notifier',
        POWERTOOLS_METRICS_NAMESPACE: 'notifier',
        POWERTOOLS_LOG_LEVEL: 'INFO',
        NODE_OPTIONS: '--enable-source-maps',
        ...props.environment,
      },
      bundling: {
        format: OutputFormat.ESM,
        target: 'node22',
        minify: true,
        sourceMap: true,
        // ESM bundles need require() for the few CommonJS dependencies that call it.
        banner: "import { createRequire } from 'module'; const require = createRequire(import.meta.url);",
        mainFields: ['module', 'main'],
        // Bundle the SDK too: versions pinned by our lockfile, tree-shaken, and measured by npm run bench.
        externalModules: [],
      },
    });
  }
}

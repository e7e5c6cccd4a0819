/**
 * Where the operator's commands act: a deployed stack (every name from its outputs) or the local run's DynamoDB Local
 * (`npm start -- --keep`). Builds the operator's ports (functions/operator) once: the table's stores, the evidence
 * store with the audit log in it, the ingest function replays go through, and the bucket of parked batches.
 */
import { CloudFormationClient } from '@aws-sdk/client-cloudformation';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { S3Client } from '@aws-sdk/client-s3';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import {
  type IngestInvoker,
  type OperatorPorts,
  operatorPorts,
  S3ParkedBatches,
} from '../../functions/operator/index.ts';
import { FileEvidenceStore, S3EvidenceStore } from '../../functions/stores/evidence-store.ts';
import { stackNameOf } from '../../lib/settings.ts';
import type { StackOutputs } from '../../lib/stack-outputs.ts';
import { UsageError } from '../local/cli.ts';
import { type RunDir, runOn, UNRECORDED_RUN_EVIDENCE } from '../local/run-dir.ts';
import { readStackOutputs } from './stack-outputs.ts';

export interface Target {
  readonly ports: OperatorPorts;
  readonly tableName: string;
  /** The deployed stack's outputs; undefined for the local run. */
  readonly outputs: StackOutputs | undefined;
  /** The local run on this DynamoDB Local, when one recorded itself (tools/local/run-dir.ts). */
  readonly localRun?: RunDir | undefined;
}

export interface Where {
  readonly stage?: string | undefined;
  readonly stack?: string | undefined;
  readonly endpoint?: string | undefined;
  readonly table?: string | undefined;
  readonly 'evidence-dir'?: string | undefined;
}

export async function connect(where: Where): Promise<Target> {
  const given = [where.stage, where.stack, where.endpoint].filter((v) => v !== undefined).length;
  if (given !== 1) throw new UsageError('say where notifier runs: exactly one of --stage, --stack or --endpoint');
  return where.endpoint === undefined ? deployed(where) : local(where.endpoint, where);
}

function local(endpoint: string, where: Where): Target {
  if (!/^https?:\/\/[^/]+/.test(endpoint)) {
    throw new UsageError(`--endpoint must be a URL like http://127.0.0.1:8000, got "${endpoint}"`);
  }
  const tableName = where.table ?? 'notifier-local';
  const doc = DynamoDBDocumentClient.from(
    new DynamoDBClient({
      endpoint,
      region: 'us-east-1',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      maxAttempts: 2,
    }),
  );
  // Locally, the real ingest handler in this process, configured as the local run configures it.
  const invokeIngest: IngestInvoker = async (event) => {
    const { localIngest } = await import('./local-ingest.ts');
    await (await localIngest(endpoint, tableName))(event);
  };
  // The evidence (and audit records) of the run on this DynamoDB Local: its own folder, also after it ended.
  const localRun = runOn(endpoint);
  const evidence = new FileEvidenceStore(where['evidence-dir'] ?? localRun?.evidenceDir ?? UNRECORDED_RUN_EVIDENCE);
  return { ports: operatorPorts({ doc, tableName, evidence, invokeIngest }), tableName, outputs: undefined, localRun };
}

async function deployed(where: Where): Promise<Target> {
  const stackName = where.stack ?? stackNameOf(where.stage as string);
  const outputs = await readStackOutputs(new CloudFormationClient({}), stackName);
  return {
    ports: operatorPorts({
      doc: DynamoDBDocumentClient.from(new DynamoDBClient({})),
      tableName: outputs.TableName,
      // The lock mode matters to writes of evidence, which the operator never makes (audit records take the
      // bucket's default retention).
      evidence: new S3EvidenceStore(new S3Client({}), outputs.EvidenceBucketName, 'GOVERNANCE'),
      invokeIngest: lambdaIngest(outputs.IngestFunctionName),
      parked: new S3ParkedBatches(new S3Client({}), outputs.FailedIngestBatchesBucketName),
    }),
    tableName: outputs.TableName,
    outputs,
  };
}

/** The deployed ingest function, invoked and waited for: a function error is an error here. */
function lambdaIngest(functionName: string): IngestInvoker {
  const lambda = new LambdaClient({ maxAttempts: 1, requestHandler: { requestTimeout: 150_000 } });
  return async (event) => {
    const answer = await lambda.send(
      new InvokeCommand({
        FunctionName: functionName,
        InvocationType: 'RequestResponse',
        Payload: Buffer.from(JSON.stringify(event)),
      }),
    );
    if (answer.FunctionError !== undefined) {
      const payload = answer.Payload === undefined ? '' : Buffer.from(answer.Payload).toString('utf8');
      throw new Error(`ingest ${functionName} failed (${answer.FunctionError}): ${payload.slice(0, 300)}`);
    }
  };
}

/**
 * Where the operator's commands act: a deployed stack (every name from its outputs) or the local run's DynamoDB Local
 * (`npm start -- --keep`). The reads go through the operator's ports (functions/operator): the table's stores and
 * the evidence store. The actions go through the operations (docs/operations.md "Who acts: verified identities"):
 * on a deployed stage the operator API, whose function acts with its own role and records the caller AWS verified
 * from the signed request; locally the same operations in this process, recorded as the local run's user — the
 * operating system's login, the only identity a developer's machine has.
 */
import { userInfo } from 'node:os';
import { CloudFormationClient } from '@aws-sdk/client-cloudformation';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { localEvidenceIndexTableName } from '../../functions/contracts/evidence-index-schema.ts';
import { localEvidenceSpoolTableName } from '../../functions/contracts/evidence-spool-schema.ts';
import {
  approvalPolicyOf,
  asCaller,
  type CallerOperations,
  type IngestInvoker,
  type OperatorPorts,
  operations,
  operatorPorts,
  personKey,
  type VerifiedIdentity,
} from '../../functions/operator/index.ts';
import { auditSealOf } from '../../functions/stores/audit-seal.ts';
import { FileEvidenceStore, S3EvidenceStore } from '../../functions/stores/evidence-store.ts';
import { stackNameOf } from '../../lib/settings.ts';
import type { StackOutputs } from '../../lib/stack-outputs.ts';
import { UsageError } from '../local/cli.ts';
import { type RunDir, runOn, UNRECORDED_RUN_EVIDENCE } from '../local/run-dir.ts';
import { operatorApiClient } from './operator-client.ts';
import { readStackOutputs } from './stack-outputs.ts';

export interface Target {
  /** What the read commands read through. */
  readonly ports: OperatorPorts;
  /** What the action commands act through: the operations, as this caller. */
  readonly operations: CallerOperations;
  /** Who the actions are recorded as, for the operator to read before confirming. */
  readonly caller: string;
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
  /** Locally: who acts, when not the login of this process (the tests' second identity). */
  readonly identity?: VerifiedIdentity | undefined;
}

/** The local run's user: the operating system's login of the process, the only identity a developer's machine has. */
export const localIdentity = (): VerifiedIdentity => ({
  principal: userInfo().username,
  verifiedBy: 'LOCAL_USER',
  person: personKey(userInfo().username),
});

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
  const evidenceIndexTableName = localEvidenceIndexTableName(tableName);
  const evidenceSpoolTableName = localEvidenceSpoolTableName(tableName);
  const ports = operatorPorts({
    doc,
    tableName,
    evidenceIndexTableName,
    evidenceSpoolTableName,
    evidence,
    invokeIngest,
  });
  const identity = where.identity ?? localIdentity();
  // Four eyes as a deploy has it by default (APPROVAL_REQUIRED_FOR / PROPOSAL_HOURS set in the shell change it).
  const policy = approvalPolicyOf(
    process.env.APPROVAL_REQUIRED_FOR,
    Number(process.env.PROPOSAL_HOURS ?? 24),
    process.env.IDENTITY_CENTER_USER_NAME_IS_EMAIL === 'true',
  );
  if ('unknown' in policy)
    throw new UsageError(`APPROVAL_REQUIRED_FOR names no such kind: ${policy.unknown.join(', ')}`);
  return {
    ports,
    operations: asCaller(operations(ports, policy.policy), identity),
    caller: `${identity.principal} (${identity.verifiedBy}: the login of this local process)`,
    tableName,
    outputs: undefined,
    localRun,
  };
}

async function deployed(where: Where): Promise<Target> {
  const stackName = where.stack ?? stackNameOf(where.stage as string);
  const outputs = await readStackOutputs(new CloudFormationClient({}), stackName);
  const refuseWrites: IngestInvoker = async () => {
    throw new Error('a deployed stage is acted on through its operator API only');
  };
  return {
    // Reads only: every write of a deployed stage is the operator function's, through the operator API.
    ports: operatorPorts({
      doc: DynamoDBDocumentClient.from(new DynamoDBClient({})),
      tableName: outputs.TableName,
      // A stack deployed before the index had a table of its own kept it in the main table.
      evidenceIndexTableName: outputs.EvidenceIndexTableName ?? outputs.TableName,
      // A stack deployed before the spool had a table of its own kept it in the main table.
      evidenceSpoolTableName: outputs.EvidenceSpoolTableName,
      // The lock mode matters to writes of evidence, which these reads never make.
      evidence: new S3EvidenceStore(new S3Client({}), outputs.EvidenceBucketName, 'GOVERNANCE'),
      invokeIngest: refuseWrites,
      // The audit's seals are verified with the stack's key (a stack deployed before it had one: the local key, which
      // flags every record as not sealed by it — deploy first).
      ...auditSealOf(outputs.AuditSealKeyArn),
    }),
    operations: operatorApiClient({ url: outputs.OperatorApiUrl }),
    caller: 'your AWS principal, as the operator API verifies your signed request',
    tableName: outputs.TableName,
    outputs,
  };
}

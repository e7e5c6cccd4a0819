/**
 * The operator function, behind the operator API (lib/operator-api.ts: API Gateway REST, IAM authorization on every
 * route): every operator action on a deployed stage is a request here, done with this function's role — never with
 * the operator's own table or evidence credentials, which the stack denies writes to (docs/operations.md "The
 * operator API"). Thin: the caller's identity from what API Gateway verified, the JSON body, the routes
 * (functions/operator/routes.ts) over the operations, the answer. Logs say who asked for what and the status, never
 * the body (a corrected event carries contact points).
 */
// The card brands' ranges and the IBAN registry at start: only ingest loads them with a value that needs them.
import '../domain/card-rules.ts';
import { LambdaClient } from '@aws-sdk/client-lambda';
import { S3Client } from '@aws-sdk/client-s3';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { loadOperatorConfig } from '../commons/config.ts';
import { documentClient } from '../commons/dynamodb-client.ts';
import { logger, traced } from '../commons/powertools.ts';
import { answer, operations, operatorPorts, S3ParkedBatches } from '../operator/index.ts';
import { answerRegions } from '../operator/region-routes.ts';
import { auditSealOf } from '../stores/audit-seal.ts';
import { S3EvidenceStore } from '../stores/evidence-store.ts';
import { iamIdentityOf } from './iam-identity.ts';
import { lambdaIngest } from './lambda-ingest.ts';
import { oldRegionLookOf, regionCommandsOf } from './region-commands.ts';

const config = loadOperatorConfig();
const s3 = traced(new S3Client({}));
// A replay waits for ingest's answer: no retry of a call that may have been done (the inbox would make it a
// duplicate, but the operator's outcome must say what this call did).
const lambda = traced(new LambdaClient({ maxAttempts: 1 }));
const ports = operatorPorts({
  doc: documentClient,
  tableName: config.tableName,
  evidenceIndexTableName: config.evidenceIndexTableName,
  evidenceSpoolTableName: config.evidenceSpoolTableName,
  evidence: new S3EvidenceStore(s3, config.evidence.bucket, config.evidence.lockMode),
  invokeIngest: lambdaIngest(lambda, config.ingestFunctionName),
  parked: new S3ParkedBatches(s3, config.failedBatchesBucket),
  proposalKeepDays: config.proposalKeepDays,
  policies: config.channelPolicies,
  ...auditSealOf(config.auditSealKeyArn),
});
// A stage in two regions: promote, demote and reconcile, for this region (functions/operator/region-routes.ts).
const regionCommands = regionCommandsOf({ doc: documentClient, tableName: config.tableName, audit: ports.audit });
// A held notice's release or settlement asks whether the old region answers: then reconcile decides it, with proof.
const ops = operations(
  regionCommands === undefined ? ports : { ...ports, oldRegion: oldRegionLookOf(regionCommands) },
  config.policy,
);

const json = (statusCode: number, body: unknown): APIGatewayProxyResult => ({
  statusCode,
  headers: { 'content-type': 'application/json', 'cache-control': 'no-store' },
  body: JSON.stringify(body),
});

export const handler = async (event: APIGatewayProxyEvent, context: Context): Promise<APIGatewayProxyResult> => {
  logger.addContext(context);
  const identity = iamIdentityOf(event.requestContext?.identity);
  const asked = { method: event.httpMethod, path: event.path };
  if (identity === undefined) {
    // Only a route without IAM authorization could get here: the stack has none.
    logger.error('operator request without a verified caller', asked);
    return json(403, { ok: false, refusal: { code: 'INVALID', message: 'no verified caller' } });
  }
  let body: unknown;
  try {
    body = event.body === null || event.body === '' ? undefined : JSON.parse(event.body);
  } catch {
    return json(400, { ok: false, refusal: { code: 'INVALID', message: 'the body is not JSON' } });
  }
  try {
    const request = { ...asked, query: event.queryStringParameters ?? {}, body };
    const answered = (await answerRegions(regionCommands, identity, request)) ?? (await answer(ops, identity, request));
    logger.info('operator request', { ...asked, principal: identity.principal, status: answered.status });
    return json(answered.status, answered.body);
  } catch (error) {
    logger.error('operator request failed', { ...asked, principal: identity.principal, error });
    const { name, message } = error as Error;
    return json(500, { ok: false, error: { name, message } });
  }
};

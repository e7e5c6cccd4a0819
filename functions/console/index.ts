/**
 * The support console's API function, behind API Gateway's authorizer (lib/console.ts): every route in
 * functions/contracts/console-routes.ts API_ROUTES. Thin: find the route the gateway matched, take the caller from
 * the claims the authorizer checked (never from a header of the request), answer through api.ts, log who asked what
 * and what it answered — ids, never a contact point or a body.
 *
 * The same handler runs on a developer's machine (tools/local/console.ts), where the local run's own token checker
 * stands in for the authorizer and hands over the claims the same way.
 */
// The card brands' ranges and the IBAN registry at start: only ingest loads them with a value that needs them.
import '../domain/card-rules.ts';
import { S3Client } from '@aws-sdk/client-s3';
import { fromTemporaryCredentials } from '@aws-sdk/credential-providers';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { approvalPolicy, evidenceOf, parseEnvironment } from '../commons/config.ts';
import { documentClient } from '../commons/dynamodb-client.ts';
import { logger, traced } from '../commons/powertools.ts';
import { CONSOLE_ENVIRONMENT } from '../contracts/console-environment.ts';
import { apiRouteOf } from '../contracts/console-routes.ts';
import { operations } from '../operator/operations.ts';
import { operatorPorts } from '../operator/ports.ts';
import { auditSealOf } from '../stores/audit-seal.ts';
import { evidenceStoreOf } from '../stores/evidence-store.ts';
import { answerApi } from './api.ts';
import { callerOf, parseGroupRoles } from './caller.ts';

const config = parseEnvironment(CONSOLE_ENVIRONMENT, process.env);
const groups = parseGroupRoles(config.CONSOLE_GROUPS);
const readerRole = config.EVIDENCE_READER_ROLE_ARN;
// Evidence is readable through the evidence-reader role alone (its key lets no other principal decrypt).
const s3 = () =>
  traced(
    new S3Client(
      readerRole === undefined
        ? {}
        : {
            credentials: fromTemporaryCredentials({
              params: { RoleArn: readerRole, RoleSessionName: 'notifier-console', DurationSeconds: 900 },
            }),
          },
    ),
  );
const evidence = evidenceStoreOf(evidenceOf(config).store, s3);
if (evidence === undefined) throw new Error('configuration error: the console needs EVIDENCE_BUCKET or EVIDENCE_DIR');
// Audit records are written as the function's own role: the bucket lets no person's role write them (lib/evidence-store.ts).
const auditWrites = evidenceStoreOf(evidenceOf(config).store, () => traced(new S3Client({})));
const ports = operatorPorts({
  doc: documentClient,
  tableName: config.TABLE_NAME,
  evidenceIndexTableName: config.EVIDENCE_INDEX_TABLE_NAME,
  evidenceSpoolTableName: config.EVIDENCE_SPOOL_TABLE_NAME,
  evidence,
  invokeIngest: () => Promise.reject(new Error('the console feeds nothing through ingest')),
  proposalKeepDays: config.INBOX_RETENTION_DAYS,
  ...auditSealOf(config.AUDIT_SEAL_KEY_ARN),
  ...(auditWrites === undefined ? {} : { auditWrites }),
});
const deps = {
  ports,
  ops: operations(
    ports,
    approvalPolicy(
      config.APPROVAL_REQUIRED_FOR,
      config.PROPOSAL_HOURS,
      config.IDENTITY_CENTER_USER_NAME_IS_EMAIL === 'true',
    ),
  ),
};

/** Answers nobody may cache, sniff or frame. */
export const API_HEADERS = {
  'content-type': 'application/json; charset=utf-8',
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
} as const;

export const handler = async (event: APIGatewayProxyEvent): Promise<APIGatewayProxyResult> => {
  const route = apiRouteOf(event.httpMethod, event.resource);
  if (route === undefined) {
    return { statusCode: 404, headers: API_HEADERS, body: JSON.stringify({ error: { message: 'No such page.' } }) };
  }
  const caller = callerOf(event.requestContext.authorizer?.claims as Record<string, unknown> | undefined, groups);
  const answer = await answerApi(route, caller, event.body, deps);
  // The data-access trail: who looked at which customer, event or notice, when — ids only, never what was shown
  // (docs/console.md "Who looked at what").
  logger.info('console request', {
    route: route.name,
    caller: caller?.principal ?? null,
    status: answer.status,
    about: subjectOf(event.body),
    requestId: event.requestContext.requestId,
  });
  return { statusCode: answer.status, headers: API_HEADERS, body: JSON.stringify(answer.body) };
};

/** The ids a request names (customer, event, notice, proposal), for the data-access trail; {} when it names none. */
export function subjectOf(body: string | null): Record<string, string> {
  try {
    const parsed = JSON.parse(body ?? '{}') as Record<string, unknown>;
    const ids = ['userId', 'eventId', 'notificationId', 'proposalId'] as const;
    return Object.fromEntries(
      ids.flatMap((k) => (typeof parsed[k] === 'string' ? [[k, (parsed[k] as string).slice(0, 200)]] : [])),
    );
  } catch {
    return {};
  }
}

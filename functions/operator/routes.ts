/**
 * The operations API over HTTP, whatever carries it (docs/operations.md "The operator API"): a request's method, path,
 * query and JSON body, and the identity its transport verified, become one call of the operations (operations.ts);
 * the answer becomes a status and a JSON body. The operator API (functions/operator-api, behind API Gateway's IAM
 * authorization) and the support console mount these same routes, so both act through the same operations.
 *
 *   POST /actions/{ACTION}/preview   body: the request                           → 200 the preview (or its refusal)
 *   POST /actions/{ACTION}/confirm   body: { request, reason, fingerprint? }    → 200 { outcome }
 *   POST /proposals                  body: { action, request, reason, fingerprint? } → 201 { proposal }
 *   GET  /proposals[?status=PENDING&userId=…]                                    → 200 { proposals }
 *   POST /proposals/{id}/approve     body: { reason }                           → 200 { proposal, outcome }
 *   POST /proposals/{id}/reject      body: { reason }                           → 200 { proposal }
 *
 * A refusal answers { ok: false, refusal: { code, message } } with 400 (INVALID), 403 (APPROVAL_REQUIRED,
 * OWN_PROPOSAL, OWN_PROPOSAL_UNKNOWN), 404 (NOT_FOUND) or 409 (the rest: the state is not what the action needs). ACTION is an audited
 * action's name (RESEND, REPAIR, REPLAY, REPLAY_BATCHES, SUPPRESSION_LIFT, EXPORT, ERASE, RELEASE_HELD,
 * SETTLE_HELD).
 */
import { PROPOSAL_STATES } from '../domain/approval.ts';
import { OPERATOR_ACTIONS, type OperatorActionName } from '../domain/audit.ts';
import type { VerifiedIdentity } from '../domain/identity.ts';
import { type Refusal, type RefusalCode, refusal } from '../domain/refusal.ts';
import { OperatorError } from './action.ts';
import { asCaller, type CallerOperations, type Operations, type RequestOf } from './operations.ts';
import { parseRequest } from './requests.ts';

export interface HttpRequest {
  readonly method: string;
  /** The path below the API's stage, e.g. /proposals/p-20261202T050000Z-a1b2c3/approve. */
  readonly path: string;
  readonly query: Readonly<Record<string, string | undefined>>;
  /** The parsed JSON body (undefined when there was none). */
  readonly body: unknown;
}

export interface HttpAnswer {
  readonly status: number;
  readonly body: unknown;
}

const STATUS_OF: Partial<Record<RefusalCode, number>> = {
  INVALID: 400,
  APPROVAL_REQUIRED: 403,
  OWN_PROPOSAL: 403,
  OWN_PROPOSAL_UNKNOWN: 403,
  NOT_FOUND: 404,
};

export const refusalAnswer = (r: Refusal): HttpAnswer => ({
  status: STATUS_OF[r.code] ?? 409,
  body: { ok: false, refusal: r },
});
const invalid = (message: string) => refusalAnswer(refusal('INVALID', message));
const isAction = (name: string): name is OperatorActionName => (OPERATOR_ACTIONS as readonly string[]).includes(name);
const PROPOSAL_ID = /^p-[0-9]{8}T[0-9]{6}Z-[0-9a-f]{6}$/;

/** The words of a body field, or undefined when it is absent or not text. */
const field = (body: unknown, name: string): string | undefined => {
  const value = typeof body === 'object' && body !== null ? (body as Record<string, unknown>)[name] : undefined;
  return typeof value === 'string' ? value : undefined;
};

/** One request, answered: refusals as answers, anything else thrown (the transport logs it and answers 500). */
export async function answer(ops: Operations, identity: VerifiedIdentity, request: HttpRequest): Promise<HttpAnswer> {
  try {
    return await route(asCaller(ops, identity), request);
  } catch (error) {
    if (error instanceof OperatorError) return refusalAnswer(error.refusal);
    throw error;
  }
}

async function route(ops: CallerOperations, r: HttpRequest): Promise<HttpAnswer> {
  const parts = r.path.split('/').filter((p) => p !== '');
  const reason = field(r.body, 'reason') ?? '';
  const [first, second, third] = parts;
  if (first === 'actions' && second !== undefined && parts.length === 3 && r.method === 'POST') {
    if (!isAction(second)) return invalid(`no action ${second}: one of ${OPERATOR_ACTIONS.join(', ')}`);
    if (third === 'preview')
      return withRequest(second, r.body, async (q) => ({ status: 200, body: await ops.preview(second, q) }));
    if (third === 'confirm') {
      const body = r.body as { request?: unknown } | undefined;
      return withRequest(second, body?.request, async (q) => {
        const outcome = await ops.confirm(second, q, reason, field(r.body, 'fingerprint'));
        return { status: 200, body: { ok: true, outcome } };
      });
    }
  }
  if (first === 'proposals' && parts.length === 1) {
    if (r.method === 'GET') return listed(ops, r.query);
    if (r.method === 'POST') {
      const action = field(r.body, 'action') ?? '';
      if (!isAction(action)) return invalid(`name the action: one of ${OPERATOR_ACTIONS.join(', ')}`);
      return withRequest(action, (r.body as { request?: unknown }).request, async (q) => {
        const proposal = await ops.propose(action, q, reason, field(r.body, 'fingerprint'));
        return { status: 201, body: { ok: true, proposal } };
      });
    }
  }
  if (first === 'proposals' && second !== undefined && parts.length === 3 && r.method === 'POST') {
    if (!PROPOSAL_ID.test(second)) return invalid(`"${second}" is not a proposal id (p-<yyyymmdd>T<hhmmss>Z-<hex>)`);
    if (third === 'approve') return { status: 200, body: { ok: true, ...(await ops.approve(second, reason)) } };
    if (third === 'reject') return { status: 200, body: { ok: true, proposal: await ops.reject(second, reason) } };
  }
  return { status: 404, body: { ok: false, refusal: refusal('NOT_FOUND', `no route ${r.method} ${r.path}`) } };
}

async function withRequest<N extends OperatorActionName>(
  action: N,
  body: unknown,
  then: (request: RequestOf<N>) => Promise<HttpAnswer>,
): Promise<HttpAnswer> {
  const parsed = parseRequest(action, body);
  if (!parsed.ok) return invalid(`${action}: ${parsed.problem}`);
  return then(parsed.request as RequestOf<N>);
}

async function listed(ops: CallerOperations, query: HttpRequest['query']): Promise<HttpAnswer> {
  const status = query.status;
  const statuses: readonly string[] = [...PROPOSAL_STATES, 'EXPIRED'];
  if (status !== undefined && !statuses.includes(status))
    return invalid(`status must be one of ${statuses.join(', ')}`);
  const proposals = await ops.proposals({
    ...(status === undefined ? {} : { status: status as (typeof PROPOSAL_STATES)[number] | 'EXPIRED' }),
    ...(query.userId === undefined ? {} : { userId: query.userId }),
  });
  return { status: 200, body: { ok: true, proposals } };
}

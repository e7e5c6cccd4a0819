/**
 * The operator API as the command line reaches a deployed stage (docs/operations.md "The operator API"): every action
 * is an HTTPS request signed with the operator's own AWS credentials (SigV4, service execute-api). API Gateway checks
 * the signature and IAM authorization before the operator function runs, and the function records the caller AWS
 * verified — the operator's credentials never write the table or the audit themselves. The routes are
 * functions/operator/routes.ts; a refusal comes back as the same typed refusal an in-process call throws.
 */
import { Sha256 } from '@aws-crypto/sha256-js';
import { defaultProvider } from '@aws-sdk/credential-provider-node';
import { SignatureV4 } from '@smithy/signature-v4';
import type { AwsCredentialIdentityProvider } from '@smithy/types';
import { type CallerOperations, OperatorError, type Refusal } from '../../functions/operator/index.ts';

export interface OperatorApiOptions {
  /** The API's invoke URL with its stage (output OperatorApiUrl), e.g. https://abc.execute-api.eu-west-1.amazonaws.com/ops/ */
  readonly url: string;
  /** The API's region; by default the one its URL names. */
  readonly region?: string;
  readonly credentials?: AwsCredentialIdentityProvider;
  readonly fetch?: typeof fetch;
}

/** The region an execute-api URL names, or undefined (a custom domain). */
export const regionOfApiUrl = (url: string) => /\.execute-api\.([a-z0-9-]+)\.amazonaws\.com/.exec(url)?.[1];

/** One signed request to the operator API: its JSON answer, or the refusal thrown as a typed refusal. */
export type OperatorApiCall = (
  method: 'GET' | 'POST',
  route: string,
  body?: unknown,
  query?: Record<string, string>,
  // biome-ignore lint/suspicious/noExplicitAny: each route answers its own JSON shape (functions/operator/routes.ts)
) => Promise<any>;

/** Requests to a deployed stage's operator API, each signed with the operator's own credentials (SigV4). */
export function operatorApiCall(options: OperatorApiOptions): OperatorApiCall {
  const base = new URL(options.url.endsWith('/') ? options.url : `${options.url}/`);
  const region = options.region ?? regionOfApiUrl(base.href) ?? process.env.AWS_REGION;
  if (region === undefined) throw new Error(`cannot tell the region of ${base.href}: set AWS_REGION`);
  const signer = new SignatureV4({
    service: 'execute-api',
    region,
    credentials: options.credentials ?? defaultProvider(),
    sha256: Sha256,
  });
  const send = options.fetch ?? fetch;

  return async (method, route, body, query = {}) => {
    const url = new URL(route.replace(/^\//, ''), base);
    for (const [k, v] of Object.entries(query)) url.searchParams.set(k, v);
    const text = body === undefined ? undefined : JSON.stringify(body);
    const signed = await signer.sign({
      method,
      protocol: url.protocol,
      hostname: url.hostname,
      ...(url.port === '' ? {} : { port: Number(url.port) }),
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      headers: { host: url.host, ...(text === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(text === undefined ? {} : { body: text }),
    });
    const response = await send(url, {
      method,
      headers: signed.headers,
      ...(text === undefined ? {} : { body: text }),
    });
    return settle(response, `${method} ${url.pathname}`);
  };
}

/** The operations of a deployed stage, over its operator API: the caller is whoever AWS says signed the request. */
export function operatorApiClient(options: OperatorApiOptions): CallerOperations {
  const call = operatorApiCall(options);
  return {
    preview: (action, request) => call('POST', `actions/${action}/preview`, request),
    confirm: async (action, request, reason, fingerprint) =>
      (await call('POST', `actions/${action}/confirm`, { request, reason, fingerprint })).outcome,
    propose: async (action, request, reason, fingerprint) =>
      (await call('POST', 'proposals', { action, request, reason, fingerprint })).proposal,
    approve: (id, reason) => call('POST', `proposals/${id}/approve`, { reason }),
    reject: async (id, reason) => (await call('POST', `proposals/${id}/reject`, { reason })).proposal,
    proposals: async (query = {}) =>
      (
        await call('GET', 'proposals', undefined, {
          ...(query.status === undefined ? {} : { status: query.status }),
          ...(query.userId === undefined ? {} : { userId: query.userId }),
        })
      ).proposals,
  };
}

/** An answer of the operator API that is not one: its HTTP status, kept (504: API Gateway stopped waiting at 29 s). */
export class OperatorApiError extends Error {
  override name = 'OperatorApiError';
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** The answer's body; a refusal thrown as the refusal, anything else that is not an answer as an error naming it. */
// biome-ignore lint/suspicious/noExplicitAny: each route answers its own JSON shape (functions/operator/routes.ts)
async function settle(response: Response, what: string): Promise<any> {
  const text = await response.text();
  let body: { ok?: boolean; refusal?: Refusal; error?: { name: string; message: string }; message?: string };
  try {
    body = JSON.parse(text);
  } catch {
    throw new OperatorApiError(
      response.status,
      `operator API ${what} answered ${response.status} without JSON: ${text.slice(0, 200)}`,
    );
  }
  if (body.refusal !== undefined) throw new OperatorError(body.refusal);
  if (!response.ok || body.ok === false) {
    // API Gateway's own answers (403 for a missing or refused IAM authorization) carry only a message.
    const why =
      body.error === undefined ? (body.message ?? text.slice(0, 200)) : `${body.error.name}: ${body.error.message}`;
    throw new OperatorApiError(response.status, `operator API ${what} answered ${response.status}: ${why}`);
  }
  return body;
}

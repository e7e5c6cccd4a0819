import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { type CryptoKey, generateKeyPair, jwtVerify, SignJWT } from 'jose';
import { apiRouteOf, CLAIMS, type ConsoleRole, pageRouteOf } from '../../functions/contracts/console-routes.ts';
import { consolePageFiles } from '../../lib/bundling.ts';

/** The local run's staff: two support people (so one proposes and the other cannot approve) and an approver. */
export const LOCAL_USERS = [
  { username: 'sam', name: 'Sam Rivera', roles: ['support'] },
  { username: 'kim', name: 'Kim Patel', roles: ['support'] },
  { username: 'noor', name: 'Noor Haddad', roles: ['approver'] },
] as const satisfies readonly { username: string; name: string; roles: readonly ConsoleRole[] }[];

/** The identity-provider groups of the local users, mapped to roles as a deploy's `console.groups` maps the bank's. */
export const LOCAL_GROUPS: Readonly<Record<ConsoleRole, readonly string[]>> = {
  support: ['notifier-support'],
  approver: ['notifier-approvers'],
};

const ISSUER = 'urn:notifier:local-console';
const AUDIENCE = 'notifier-console';
const TOKEN_HOURS = 8;
const MAX_BODY_BYTES = 64 * 1024;

export interface LocalConsole {
  readonly url: string;
  stop(): Promise<void>;
}

/**
 * Starts the console on `port` (a free one by default). The handlers read the table and the evidence the run's own
 * environment names (tools/local/pipeline.ts loadHandlers set it): call this after the pipeline is loaded.
 */
export async function startConsole(port = 0): Promise<LocalConsole> {
  const signIn = JSON.stringify({ kind: 'local', users: LOCAL_USERS });
  Object.assign(process.env, { CONSOLE_GROUPS: JSON.stringify(LOCAL_GROUPS), CONSOLE_SIGN_IN: signIn });
  const [api, page, files, keys] = await Promise.all([
    import('../../functions/console/index.ts'),
    import('../../functions/console-page/index.ts'),
    consolePageFiles(),
    generateKeyPair('ES256'),
  ]);
  const serve = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const method = req.method ?? 'GET';
    if (url.pathname === '/' || url.pathname === '/console/') return redirect(res, '/console');
    if (pageRouteOf(method, url.pathname) !== undefined) {
      return send(
        res,
        page.pageAnswer(method, url.pathname, (f) => files.get(f), signIn),
      );
    }
    if (method === 'POST' && url.pathname === '/console/local/sign-in') {
      return send(res, await localSignIn(await bodyOf(req), keys.privateKey));
    }
    if (apiRouteOf(method, url.pathname) === undefined) return send(res, json(404, { message: 'Not Found' }));
    const claims = await authorize(req.headers.authorization, keys.publicKey);
    if (claims === undefined) return send(res, json(401, { message: 'Unauthorized' }));
    send(res, await api.handler(apiEvent(req, url.pathname, await bodyOf(req), claims)));
  };
  const server: Server = createServer((req, res) => {
    serve(req, res).catch((error: Error) => send(res, json(500, { message: error.message })));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/console`,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A token for one of the local users, with the claims a Cognito ID token carries for a federated user. */
async function localSignIn(body: string, key: CryptoKey): Promise<APIGatewayProxyResult> {
  let username: unknown;
  try {
    username = (JSON.parse(body) as { username?: unknown }).username;
  } catch {
    return json(400, { message: 'not JSON' });
  }
  const user = LOCAL_USERS.find((u) => u.username === username);
  if (user === undefined) return json(403, { message: 'no such local user' });
  const token = await new SignJWT({
    [CLAIMS.principal]: `local_${user.username}`,
    [CLAIMS.name]: user.name,
    [CLAIMS.email]: `${user.username}@staff.bank.example`,
    // A custom attribute holds the identity provider's groups as one string, as Cognito maps them.
    [CLAIMS.groups]: JSON.stringify(user.roles.flatMap((r) => LOCAL_GROUPS[r])),
    token_use: 'id',
  })
    .setProtectedHeader({ alg: 'ES256' })
    .setSubject(`local-${user.username}`)
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .setIssuedAt()
    .setExpirationTime(`${TOKEN_HOURS}h`)
    .sign(key);
  return json(200, { token });
}

/** What API Gateway's Cognito authorizer does with the Authorization header: the claims of a valid token, or none. */
async function authorize(header: string | undefined, key: CryptoKey): Promise<Record<string, string> | undefined> {
  if (header === undefined || header === '') return undefined;
  try {
    const { payload } = await jwtVerify(header.replace(/^Bearer /i, ''), key, {
      issuer: ISSUER,
      audience: AUDIENCE,
      algorithms: ['ES256'],
    });
    // The authorizer hands every claim on as a string.
    return Object.fromEntries(
      Object.entries(payload).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]),
    );
  } catch {
    return undefined;
  }
}

/** The proxy event API Gateway builds for a matched route, with the authorizer's claims. */
function apiEvent(req: IncomingMessage, resource: string, body: string, claims: Record<string, string>) {
  return {
    resource,
    path: resource,
    httpMethod: req.method ?? 'GET',
    headers: { 'content-type': req.headers['content-type'] ?? '' },
    multiValueHeaders: {},
    queryStringParameters: null,
    multiValueQueryStringParameters: null,
    pathParameters: null,
    stageVariables: null,
    isBase64Encoded: false,
    body: body === '' ? null : body,
    requestContext: { requestId: crypto.randomUUID(), authorizer: { claims } },
  } as unknown as APIGatewayProxyEvent;
}

function bodyOf(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => {
      body += chunk;
      if (body.length > MAX_BODY_BYTES) req.destroy(new Error('request body too large'));
    });
    req.on('end', () => resolve(body));
    req.on('error', reject);
  });
}

const json = (statusCode: number, body: unknown): APIGatewayProxyResult => ({
  statusCode,
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(body),
});

function send(res: ServerResponse, answer: APIGatewayProxyResult): void {
  res.writeHead(answer.statusCode, answer.headers as Record<string, string>);
  res.end(answer.body);
}

function redirect(res: ServerResponse, location: string): void {
  res.writeHead(302, { location });
  res.end();
}

/**
 * The support console's page (functions/contracts/console-routes.ts PAGE_ROUTES): the same static files for
 * everyone — no data, no secret — which a browser loads before it has signed in, so these routes alone are open in
 * the API; this function may read nothing (lib/console.ts grants it its log group alone). Every answer carries a
 * content security policy: scripts from this page only, no framing, data only from this API and the sign-in
 * service; the email shown in the page (a sandboxed frame: no script) may load its images.
 *
 * The files sit beside the bundle (the stack compiles app.js with esbuild when it bundles this function); the local
 * run compiles them the same way and answers through `pageAnswer` with its own.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { parseEnvironment } from '../commons/config.ts';
import { CONSOLE_PAGE_ENVIRONMENT } from '../contracts/console-environment.ts';
import { pageRouteOf } from '../contracts/console-routes.ts';

/** A page file by name (index.html, app.js, console.css), or undefined. */
export type PageFiles = (file: string) => string | undefined;

/** The policy of every page answer; `signInOrigin` is where the page exchanges its sign-in code for a token. */
export function pageHeaders(contentType: string, signInOrigin: string | undefined): Record<string, string> {
  const csp = [
    "default-src 'none'",
    "script-src 'self'",
    // The email's own inline styles (the frame inherits this policy) and the page's stylesheet.
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: https:",
    `connect-src 'self'${signInOrigin === undefined ? '' : ` ${signInOrigin}`}`,
    "frame-src 'self'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
    "form-action 'self'",
  ].join('; ');
  return {
    'content-type': contentType,
    'content-security-policy': csp,
    'cache-control': 'no-cache',
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
  };
}

/** Where the page exchanges its sign-in code: the token URL's origin in the sign-in settings, if any. */
export function signInOrigin(signIn: string): string | undefined {
  const tokenUrl = (JSON.parse(signIn) as { tokenUrl?: unknown }).tokenUrl;
  return typeof tokenUrl === 'string' && URL.canParse(tokenUrl) ? new URL(tokenUrl).origin : undefined;
}

export function pageAnswer(method: string, resource: string, files: PageFiles, signIn: string): APIGatewayProxyResult {
  const route = pageRouteOf(method, resource);
  const body = route === undefined ? undefined : route.file === 'config.json' ? signIn : files(route.file);
  if (route === undefined || body === undefined) {
    return { statusCode: 404, headers: { 'content-type': 'text/plain' }, body: 'not found' };
  }
  return { statusCode: 200, headers: pageHeaders(route.contentType, signInOrigin(signIn)), body };
}

const config = parseEnvironment(CONSOLE_PAGE_ENVIRONMENT, process.env);
const here = dirname(fileURLToPath(import.meta.url));
/** Read on first use, once per environment: the files do not change under a running function. */
const bundled = new Map<string, string>();
const bundledFile: PageFiles = (file) => {
  if (!bundled.has(file)) bundled.set(file, readFileSync(join(here, file), 'utf8'));
  return bundled.get(file);
};

export const handler = async (event: APIGatewayProxyEvent): Promise<APIGatewayProxyResult> =>
  pageAnswer(event.httpMethod, event.resource, bundledFile, config.CONSOLE_SIGN_IN);

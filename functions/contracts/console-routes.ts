/**
 * The support console's routes, once: the stack builds one API method per route (lib/console.ts), the console's
 * function answers them (functions/console/), and the local run serves them the same way (tools/local/console.ts).
 *
 * Two kinds of route:
 * - the page (PAGE_ROUTES): the same static files for everyone, no data, no secret — what a browser loads before it
 *   has signed in. Served by a function that may read nothing (functions/console-page/).
 * - the API (API_ROUTES): every one behind the identity provider's authorizer, each allowed to the roles named here.
 *   Customer identifiers travel in request bodies, never in URLs: a URL lands in access logs and browser history.
 */

/** What a person may do in the console, by the group the bank's identity provider puts them in. */
export const CONSOLE_ROLES = ['support', 'approver'] as const;
export type ConsoleRole = (typeof CONSOLE_ROLES)[number];

/**
 * read: look customers and events up, read what was sent and the audit; reveal: see a contact point in full, with a
 * reason (audited); propose: ask for a resend (another person approves it) and withdraw one's own; decide: approve or
 * reject someone else's proposal.
 */
export type ConsoleCapability = 'read' | 'reveal' | 'propose' | 'decide';

/** Support staff propose, approvers decide: nobody does both halves of one action (four eyes). */
export const ROLE_CAPABILITIES: Readonly<Record<ConsoleRole, readonly ConsoleCapability[]>> = {
  support: ['read', 'reveal', 'propose'],
  approver: ['read', 'reveal', 'decide'],
};

export const capabilitiesOf = (roles: readonly ConsoleRole[]): ConsoleCapability[] => [
  ...new Set(roles.flatMap((r) => ROLE_CAPABILITIES[r])),
];

export interface ApiRoute {
  readonly name: string;
  readonly method: 'GET' | 'POST';
  /** The API Gateway resource path (below the stage). */
  readonly resource: string;
  readonly needs: ConsoleCapability;
}

export const API_ROUTES = [
  { name: 'me', method: 'GET', resource: '/console/api/me', needs: 'read' },
  { name: 'customer', method: 'POST', resource: '/console/api/customer', needs: 'read' },
  { name: 'event', method: 'POST', resource: '/console/api/event', needs: 'read' },
  { name: 'notice', method: 'POST', resource: '/console/api/notice', needs: 'read' },
  { name: 'reveal', method: 'POST', resource: '/console/api/reveal', needs: 'reveal' },
  { name: 'proposals', method: 'POST', resource: '/console/api/proposals', needs: 'read' },
  { name: 'preview', method: 'POST', resource: '/console/api/preview', needs: 'propose' },
  { name: 'propose', method: 'POST', resource: '/console/api/propose', needs: 'propose' },
  { name: 'decide', method: 'POST', resource: '/console/api/decide', needs: 'decide' },
  { name: 'withdraw', method: 'POST', resource: '/console/api/withdraw', needs: 'propose' },
] as const satisfies readonly ApiRoute[];
export type ApiRouteName = (typeof API_ROUTES)[number]['name'];

export interface PageRoute {
  readonly method: 'GET';
  readonly resource: string;
  /** The file served, from the page's folder (functions/console-page/assets/, app.js compiled from app.ts). */
  readonly file: string;
  readonly contentType: string;
}

export const PAGE_ROUTES = [
  { method: 'GET', resource: '/console', file: 'index.html', contentType: 'text/html; charset=utf-8' },
  { method: 'GET', resource: '/console/app.js', file: 'app.js', contentType: 'text/javascript; charset=utf-8' },
  { method: 'GET', resource: '/console/console.css', file: 'console.css', contentType: 'text/css; charset=utf-8' },
  // How the page signs in: the identity provider's sign-in page and the app client (public values, no secret).
  { method: 'GET', resource: '/console/config.json', file: 'config.json', contentType: 'application/json' },
] as const satisfies readonly PageRoute[];

export const apiRouteOf = (method: string, resource: string): ApiRoute | undefined =>
  API_ROUTES.find((r) => r.method === method && r.resource === resource);

export const pageRouteOf = (method: string, resource: string): PageRoute | undefined =>
  PAGE_ROUTES.find((r) => r.method === method && r.resource === resource);

/**
 * The claims the console reads from a token the authorizer checked (Cognito's ID token; the local run's own): the
 * user name (`cognito:username`: the identity provider's name and its NameID — recorded, but it changes at every
 * sign-in when the bank's identity provider sends a transient NameID), the person (`email`: the corporate e-mail the
 * identity provider asserts at every sign-in, the same key the operator API's Identity Center user name is — four
 * eyes compares it across both: docs/console.md "Who is who"), a name to show, and the groups (a custom attribute the
 * identity provider's group claim is mapped to at every sign-in).
 */
export const CLAIMS = {
  principal: 'cognito:username',
  subject: 'sub',
  name: 'name',
  email: 'email',
  groups: 'custom:groups',
  person: 'email',
} as const;

/** The person a token names (lower-cased), or undefined when it names none: such a caller is refused. */
export function personOfClaims(claims: Readonly<Record<string, unknown>>): string | undefined {
  const person = claims[CLAIMS.person];
  return typeof person === 'string' && person.trim() !== '' ? person.trim().toLowerCase() : undefined;
}

/**
 * Who is calling the console, from the claims of a token the authorizer in front of it checked — API Gateway's
 * Cognito authorizer in AWS (signature, issuer, audience, expiry), the local run's own checker on a developer's
 * machine (tools/local/console.ts) — never from anything else in the request. The groups the bank's identity
 * provider puts a person in become console roles through the stack's mapping (settings `console.groups`).
 */
import {
  CLAIMS,
  CONSOLE_ROLES,
  type ConsoleCapability,
  type ConsoleRole,
  capabilitiesOf,
} from '../contracts/console-routes.ts';

/** A caller as the authorizer vouched for it: `principal` is what four eyes compares; `name` is for people only. */
export interface Caller {
  readonly principal: string;
  readonly verifiedBy: 'IDENTITY_PROVIDER';
  readonly name: string;
  readonly roles: readonly ConsoleRole[];
  readonly can: readonly ConsoleCapability[];
}

/** Which identity-provider groups make a person which console role. */
export type GroupRoles = Readonly<Record<ConsoleRole, readonly string[]>>;

/** The CONSOLE_GROUPS value: {"support": ["…"], "approver": ["…"]}, each role named by at least one group. */
export function parseGroupRoles(text: string): GroupRoles {
  const parsed = JSON.parse(text) as Record<string, unknown>;
  const roles = {} as Record<ConsoleRole, string[]>;
  for (const role of CONSOLE_ROLES) {
    const groups = parsed[role];
    if (!Array.isArray(groups) || groups.length === 0 || !groups.every((g) => typeof g === 'string' && g !== '')) {
      throw new Error(`CONSOLE_GROUPS: "${role}" must name at least one identity-provider group`);
    }
    roles[role] = groups as string[];
  }
  return roles;
}

/**
 * The groups in a claim. A multi-valued SAML attribute or OIDC claim arrives in a custom attribute as one string —
 * `["a","b"]` (JSON), `[a, b]` or `a,b` — and API Gateway hands every claim on as a string; a group name holds no
 * comma in any of these providers' formats (names, object ids, distinguished names are refused below).
 */
export function groupsIn(claim: unknown): string[] {
  if (Array.isArray(claim)) return claim.filter((g): g is string => typeof g === 'string');
  if (typeof claim !== 'string') return [];
  const text = claim.trim();
  if (text.startsWith('[')) {
    try {
      const list = JSON.parse(text) as unknown;
      if (Array.isArray(list)) return list.filter((g): g is string => typeof g === 'string').map((g) => g.trim());
    } catch {
      // not JSON: "[a, b]"
    }
  }
  return text
    .replace(/^\[|\]$/g, '')
    .split(',')
    .map((g) => g.trim())
    .filter((g) => g !== '');
}

/** The caller, or undefined when the claims name nobody (no principal): such a request is refused. */
export function callerOf(
  claims: Readonly<Record<string, unknown>> | undefined,
  mapping: GroupRoles,
): Caller | undefined {
  if (claims === undefined) return undefined;
  const principal = claims[CLAIMS.principal] ?? claims[CLAIMS.subject];
  if (typeof principal !== 'string' || principal === '') return undefined;
  const groups = new Set(groupsIn(claims[CLAIMS.groups]));
  const roles = CONSOLE_ROLES.filter((role) => mapping[role].some((g) => groups.has(g)));
  const shown = [claims[CLAIMS.name], claims[CLAIMS.email]].find((v) => typeof v === 'string' && v !== '');
  return {
    principal,
    verifiedBy: 'IDENTITY_PROVIDER',
    name: typeof shown === 'string' ? shown : principal,
    roles,
    can: capabilitiesOf(roles),
  };
}

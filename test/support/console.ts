/**
 * The support console's API on a test's own stores: people as the authorizer would vouch for them (support `s`,
 * approver `a`), the operations under the default four-eyes policy, and one call to ask a route as one of them.
 */
import { answerApi, type ConsoleDeps } from '../../functions/console/api.ts';
import { type Caller, callerOf, parseGroupRoles } from '../../functions/console/caller.ts';
import { API_ROUTES, type ApiRouteName } from '../../functions/contracts/console-routes.ts';
import { approvalPolicyOf } from '../../functions/domain/approval.ts';
import { type OperatorPorts, operations } from '../../functions/operator/index.ts';

const GROUPS = parseGroupRoles(JSON.stringify({ support: ['s'], approver: ['a'] }));

/** A person signed in to the console: `user@bank.example`, in the support (`s`) or approver (`a`) group. */
export const consolePerson = (user: string, group: 's' | 'a', name: string = user): Caller =>
  callerOf(
    { 'cognito:username': `bank_${user}`, name, email: `${user}@bank.example`, 'custom:groups': group },
    GROUPS,
  ) as Caller;

export const apiRoute = (name: ApiRouteName) => API_ROUTES.find((r) => r.name === name) as (typeof API_ROUTES)[number];

/** The console's dependencies on these ports, and a call of one route with a JSON body as `caller`. */
export function consoleOn(ports: OperatorPorts) {
  const policy = approvalPolicyOf(undefined, 24);
  if ('unknown' in policy) throw new Error(`approval policy: ${policy.unknown.join()}`);
  const deps: ConsoleDeps = { ports, ops: operations(ports, policy.policy) };
  const ask = (name: ApiRouteName, body: unknown, caller: Caller) =>
    answerApi(apiRoute(name), caller, JSON.stringify(body), deps);
  return { deps, ask };
}

/**
 * The functions that send and write evidence, watched: the bucket policy lets their roles, and no one else, write a
 * send record, so whoever changes what they run — or gives their role to a function of their own — can write forged
 * evidence through them, or quietly stop sending. Reported, from CloudTrail, unless a CloudFormation deploy of this
 * stack made the change (CloudFormation acting with this stack's deploy role; a stack of someone else's, or
 * CloudFormation with the caller's own credentials, is reported):
 * - a function changed: its code or configuration (environment, role, layers, handler), who may invoke it (a
 *   permission, a function URL), whether and how often it runs (concurrency, event invoke config), its deletion, a
 *   new event source feeding it;
 * - one of the stack's event source mappings changed or deleted (the MSK trigger, the stream triggers);
 * - a function created, or reconfigured, with one of their roles (the iam:PassRole that matters here).
 * Versions and aliases are not watched: the triggers invoke the unqualified functions, so a version or alias runs
 * only once a mapping or permission names it, which is reported.
 * IAM changes to their roles (a policy attached, a trust widened) are IAM events, which EventBridge delivers in
 * us-east-1 only: watched here when the stack is in us-east-1; elsewhere they are the bank's to watch there
 * (docs/deploy.md "What the bank's organisation must provide"), and the synth says so.
 */
import { Annotations, Stack } from 'aws-cdk-lib';
import { EventField, type EventPattern } from 'aws-cdk-lib/aws-events';
import type { IRole } from 'aws-cdk-lib/aws-iam';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { deployRoleArn } from './evidence-key.ts';
import { CHECK, call, type ProtectionWatch, WHAT, WHO } from './protection-watch.ts';
import { IAM_EVENTS_REGION } from './watched-event-sources.ts';

export interface WatchedFunctions {
  readonly functions: readonly IFunction[];
  /**
   * Of `functions`, those only API Gateway may invoke (the operator function): a mapping pointed at one is left out of
   * the trigger rule, which must fit EventBridge's pattern size, because its invoke rule reports any other caller.
   */
  readonly apiOnly?: readonly IFunction[];
  /** The UUIDs of the stack's event source mappings. */
  readonly mappingIds: readonly string[];
  /** Roles whose IAM changes are reported too (in us-east-1), beside the functions': the reader's, break glass's. */
  readonly otherRoles: readonly IRole[];
}

/** Lambda's CloudTrail event names carry an API version (UpdateFunctionCode20150331v2): matched by prefix. */
export const WATCHED_FUNCTION_EVENTS = [
  'UpdateFunction',
  'PutFunction',
  'DeleteFunction',
  'AddPermission',
  'RemovePermission',
  'CreateFunctionUrlConfig',
  'CreateEventSourceMapping',
] as const;
export const WATCHED_MAPPING_EVENTS = ['UpdateEventSourceMapping', 'DeleteEventSourceMapping'] as const;
/** The calls that hand a role to a function. */
export const WATCHED_ROLE_PASSING_EVENTS = ['CreateFunction', 'UpdateFunctionConfiguration'] as const;
/** IAM calls that change what a role may do or who may assume it. */
export const WATCHED_ROLE_EVENTS = [
  'PutRolePolicy',
  'DeleteRolePolicy',
  'AttachRolePolicy',
  'DetachRolePolicy',
  'UpdateAssumeRolePolicy',
  'PutRolePermissionsBoundary',
  'DeleteRolePermissionsBoundary',
  'DeleteRole',
] as const;

const CLOUDFORMATION = 'cloudformation.amazonaws.com';
const byPrefix = (names: readonly string[]) => names.map((prefix) => ({ prefix }));

/**
 * Who made a call, unless it was a CloudFormation deploy of this stack: CloudFormation with this stack's deploy
 * role. Without the default synthesizer (no known deploy role) any call CloudFormation made is left out.
 */
export function outsideThisStacksDeploy(deployRole: string | undefined) {
  return {
    $or: [
      { invokedBy: [{ exists: false }] },
      { invokedBy: [{ 'anything-but': CLOUDFORMATION }] },
      ...(deployRole === undefined
        ? []
        : [
            { type: [{ 'anything-but': 'AssumedRole' }] },
            { sessionContext: { sessionIssuer: { arn: [{ 'anything-but': deployRole }] } } },
          ]),
    ],
  };
}

/** The reporting rules over the functions, their mappings and roles (docs/operations.md "Evidence protections"). */
export function watchFunctions(watch: ProtectionWatch, w: WatchedFunctions): void {
  const who = outsideThisStacksDeploy(deployRoleArn(Stack.of(watch)));
  const functionRoles = w.functions.map((f) => f.role).filter((r) => r !== undefined);
  const lambda = (eventNames: readonly string[], match: Record<string, unknown>) => {
    const c = call('lambda', byPrefix(eventNames));
    return { ...c, detail: { ...c.detail, ...match, userIdentity: who } } as EventPattern;
  };
  // A function is named by its name, its ARN or its partial ARN (account:function:name), each with a qualifier or
  // not: the name at the end, or before the qualifier.
  const names = w.functions.flatMap((f) => [{ wildcard: `*${f.functionName}` }, { wildcard: `*${f.functionName}:*` }]);
  watch.rule(
    'Functions',
    "changes to the functions outside this stack's deploys",
    lambda(WATCHED_FUNCTION_EVENTS, { requestParameters: { functionName: names } }),
    `${WHAT} on function ${EventField.fromPath('$.detail.requestParameters.functionName')} by ${WHO}, outside a deploy of this stack: what it runs, who may invoke it or whether it runs changed; through it evidence can be forged or sending stop. ${CHECK}`,
  );
  const ids = [...w.mappingIds];
  watch.rule(
    'Triggers',
    "changes to the stack's event source mappings outside its deploys",
    // CloudTrail spells the request's UUID uUID; uuid is matched too, and the mapping's function in the answer.
    lambda(WATCHED_MAPPING_EVENTS, {
      $or: [
        { requestParameters: { uUID: ids } },
        { requestParameters: { uuid: ids } },
        {
          responseElements: {
            functionArn: w.functions.filter((f) => !(w.apiOnly ?? []).includes(f)).map((f) => f.functionArn),
          },
        },
      ],
    }),
    `${WHAT} by ${WHO}, outside a deploy of this stack: a trigger of the functions changed or was deleted, and with it what reaches them (the MSK topic, the table's stream). ${CHECK}`,
  );
  watch.rule(
    'FunctionRoles',
    "a function given one of the stack's function roles outside its deploys",
    lambda(WATCHED_ROLE_PASSING_EVENTS, { requestParameters: { role: functionRoles.map((r) => r.roleArn) } }),
    `${WHAT} of ${EventField.fromPath('$.detail.requestParameters.functionName')} with role ${EventField.fromPath('$.detail.requestParameters.role')} by ${WHO}: a function running with a sender's role may write send records. ${CHECK}`,
  );
  const stack = Stack.of(watch);
  if (stack.region === IAM_EVENTS_REGION) {
    const iam = call('iam', WATCHED_ROLE_EVENTS, {
      roleName: [...functionRoles, ...w.otherRoles].map((r) => r.roleName),
    });
    watch.rule(
      'Roles',
      "IAM changes to the stack's roles outside its deploys",
      { ...iam, detail: { ...iam.detail, userIdentity: who } } as EventPattern,
      `${WHAT} on role ${EventField.fromPath('$.detail.requestParameters.roleName')} by ${WHO}, outside a deploy of this stack: what a sender, the evidence reader or break glass may do, or who may assume it, changed. ${CHECK}`,
    );
  } else {
    Annotations.of(watch).addWarningV2(
      'notifier:iamEventsInUsEast1',
      `IAM changes to the stack's roles are not watched from ${stack.region}: EventBridge delivers IAM's CloudTrail events in us-east-1 only. Watch them there (docs/deploy.md "What the bank's organisation must provide").`,
    );
  }
}

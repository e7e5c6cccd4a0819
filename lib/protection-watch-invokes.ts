/**
 * The doors around the controls, watched: every operator action goes through the operator API or the console's
 * (previewed, approved where set, audited), and every event through the MSK mapping. Whoever may invoke the operator
 * or console function directly can hand it a forged request context (one person proposing and approving as two);
 * whoever may invoke ingest can hand it any event, any text to any contact point, with no preview, approval or audit.
 * The stack grants those invokes to nobody but API Gateway, the mapping, the operator function (replays feed ingest)
 * and break glass (`smoke --direct`); a grant can be added, and the account's administrators need none.
 *
 * CloudTrail records each `Invoke` as a data event of lambda.amazonaws.com when the bank's trail records these
 * functions' data events (`npm run smoke` checks it, tools/ops/data-events-check.ts), and EventBridge receives the
 * data events a trail logs, as "AWS API Call via CloudTrail" (docs/operations.md "Evidence protections"). The record
 * names the function in `resources[].ARN` (unqualified) and the caller in `userIdentity`: an AWS service invoking
 * through the function's resource policy is `type: AWSService` with `invokedBy` the service (API Gateway:
 * apigateway.amazonaws.com); a role session is `type: AssumedRole` with `sessionContext.sessionIssuer.arn` the role.
 * An invoke by anyone else is reported.
 */
import { EventField, type EventPattern } from 'aws-cdk-lib/aws-events';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { call, type ProtectionWatch, WHO } from './protection-watch.ts';

/** Who may invoke one function without a report. */
export interface ExpectedCallers {
  /** AWS services invoking through the function's resource policy (`userIdentity.invokedBy`). */
  readonly services: readonly string[];
  /** Role ARNs whose sessions invoke it (`userIdentity.sessionContext.sessionIssuer.arn`). */
  readonly roles: readonly string[];
}

export const API_GATEWAY = 'apigateway.amazonaws.com';
/**
 * The event source mapping's poller. AWS publishes no sample of a mapping's Invoke record; Lambda invokes as
 * itself (AWSService, lambda.amazonaws.com) or with the function's own role, which only Lambda may assume: both
 * are expected for ingest (docs/operations.md "Evidence protections").
 */
export const LAMBDA_SERVICE = 'lambda.amazonaws.com';

/** A caller outside `expected`, as an EventBridge pattern on `userIdentity`. */
export function unexpectedCaller(expected: ExpectedCallers) {
  const { services, roles } = expected;
  return {
    $or: [
      // A root, IAM user, federated user or any other identity invokes none of them.
      { type: [{ 'anything-but': ['AWSService', 'AssumedRole'] }] },
      { type: ['AWSService'], invokedBy: services.length === 0 ? [{ exists: true }] : [{ 'anything-but': services }] },
      { type: ['AWSService'], invokedBy: [{ exists: false }] },
      roles.length === 0
        ? { type: ['AssumedRole'] }
        : { type: ['AssumedRole'], sessionContext: { sessionIssuer: { arn: [{ 'anything-but': [...roles] }] } } },
      { type: ['AssumedRole'], sessionContext: { sessionIssuer: { arn: [{ exists: false }] } } },
    ],
  };
}

/**
 * CloudTrail's invoke data events of this function (or a version or alias of it) by a caller outside `expected`:
 * every name Lambda records an invoke under starts with `Invoke` (Invoke, InvokeFunctionUrl for a function URL,
 * InvokeWithResponseStream, the deprecated InvokeAsync); InvokeExecution is Lambda itself running an async invoke.
 */
export function invokePattern(fn: IFunction, expected: ExpectedCallers): EventPattern {
  const c = call('lambda', [{ prefix: 'Invoke' }]);
  return {
    ...c,
    detail: {
      ...c.detail,
      resources: { ARN: [fn.functionArn, { prefix: `${fn.functionArn}:` }] },
      userIdentity: unexpectedCaller(expected),
    },
  } as EventPattern;
}

export interface WatchedInvokes {
  readonly ingest: IFunction;
  readonly operator: IFunction;
  /** The console's API function, when the console is deployed. */
  readonly consoleApi?: IFunction | undefined;
}

const BY = EventField.fromPath('$.detail.userIdentity.invokedBy');
const WHY =
  'Its controls (preview, reason, four eyes, audit) were skipped: find who, and why (docs/operations.md "Evidence protections").';

/** One rule per door: the operator and console functions (API Gateway alone), ingest (its trigger, replays). */
export function watchInvokes(watch: ProtectionWatch, w: WatchedInvokes): void {
  const apiOnly: ExpectedCallers = { services: [API_GATEWAY], roles: [] };
  watch.rule(
    'OperatorInvoke',
    'the operator function invoked other than through the operator API',
    invokePattern(w.operator, apiOnly),
    `the operator function ${w.operator.functionName} was invoked directly by ${WHO} ${BY}, not through the operator API: a forged request context can act as anyone. ${WHY}`,
  );
  if (w.consoleApi !== undefined) {
    watch.rule(
      'ConsoleInvoke',
      "the console's API function invoked other than through the console API",
      invokePattern(w.consoleApi, apiOnly),
      `the console's API function ${w.consoleApi.functionName} was invoked directly by ${WHO} ${BY}, not through the console API: a forged sign-in can act as anyone. ${WHY}`,
    );
  }
  const roles = [w.ingest.role, w.operator.role].filter((r) => r !== undefined).map((r) => r.roleArn);
  watch.rule(
    'IngestInvoke',
    'the ingest function invoked other than by its MSK trigger or an operator replay',
    invokePattern(w.ingest, { services: [LAMBDA_SERVICE], roles }),
    `the ingest function ${w.ingest.functionName} was invoked directly by ${WHO} ${BY}, not by its MSK trigger or a replay: whatever event it was handed was sent, unpreviewed and unaudited (expected only for \`npm run smoke -- --direct\` as break glass). ${WHY}`,
  );
}

/**
 * The dispatch function's part of the stack: stream → claim → send → mark. The function with its environment, what
 * it may send through SES and SNS, its two stream triggers (lib/dispatch-triggers.ts) and its evidence.
 */
import { Aws, Duration } from 'aws-cdk-lib';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { DispatchEnvironment } from '../functions/contracts/environment.ts';
import { brandEnvValue } from '../functions/domain/brand.ts';
import { createDispatchTriggers, type DispatchTriggers } from './dispatch-triggers.ts';
import { evidenceIndexEnvironment, grantIndexWrites } from './evidence-index-table.ts';
import { grantSpoolPuts } from './evidence-spool-table.ts';
import type { FunctionPartProps } from './function-parts.ts';
import { NotifierFunction } from './notifier-function.ts';

export interface Dispatch {
  readonly fn: NotifierFunction;
  readonly triggers: DispatchTriggers;
}

export function createDispatch(p: FunctionPartProps): Dispatch {
  const { stack, settings: s, timing, table } = p;
  const fn = new NotifierFunction(stack, 'Dispatch', {
    entry: 'dispatch/index.ts',
    description: 'notifier: sends each new notification once via SES (email) or SNS (push, SMS)',
    metricNamespace: p.metricNamespace,
    timeout: Duration.seconds(timing.dispatchTimeoutSeconds),
    // No reservation by default: Lambda keeps 100 unreserved per account, and new accounts often have a quota of
    // 10, where any reservation fails the deploy. Sends are paced by rate in the function, not by concurrency.
    ...(s.dispatchReservedConcurrency === undefined
      ? {}
      : { reservedConcurrentExecutions: s.dispatchReservedConcurrency }),
    environment: dispatchEnvironment(p),
  });
  // GetItem/UpdateItem also serve the send-rate windows and the channel breaker (RATE#…, BREAKER# items).
  fn.useTable(table, ['dynamodb:GetItem', 'dynamodb:UpdateItem']);
  grantSends(fn, p);
  // The routine and the urgent stream triggers, and where each parks what it gives up (lib/dispatch-triggers.ts).
  const triggers = createDispatchTriggers(stack, fn, table, p.key, timing, s.urgentWarmEnvironments, p.owner);
  // One batch of records per invocation (docs/evidence-and-privacy.md), then its sends in the evidence index.
  p.evidence.grantWrite(fn, ['batches']);
  grantIndexWrites(fn, p.evidenceIndexTable);
  // The batch's intent (written, then closed), and a gap (the batch's bytes) when the store fails: the sweeper
  // finishes what an invocation could not.
  fn.useTable(table, ['dynamodb:PutItem'], { leadingKeys: ['EVIDENCE_GAP#*', 'EVIDENCE_BATCH#*'] });
  // An invocation of few records puts each in the evidence spool (the sweeper rolls them into one object a minute).
  grantSpoolPuts(fn, p.evidenceSpoolTable);
  fn.useTable(table, ['dynamodb:DeleteItem'], { leadingKeys: ['EVIDENCE_BATCH#*'] });
  return { fn, triggers };
}

function dispatchEnvironment(p: FunctionPartProps): DispatchEnvironment {
  const { settings: s, timing } = p;
  return {
    TABLE_NAME: p.table.tableName,
    ...evidenceIndexEnvironment(p.evidenceIndexTable),
    SENDER_EMAIL: s.senderEmail,
    BRAND: brandEnvValue(s.brand),
    // Our own account: a push endpoint of another account is that message's fault, never the channel's.
    ACCOUNT_ID: Aws.ACCOUNT_ID,
    // The lease outlives the function timeout, so a live holder is never taken over (dispatch-timing.ts).
    LEASE_SECONDS: String(timing.leaseSeconds),
    SEND_TIMEOUT_MS: String(timing.sendTimeoutMs),
    CONNECT_TIMEOUT_MS: String(timing.connectTimeoutMs),
    DISPATCH_CONCURRENCY: String(timing.concurrency),
    ...p.sendingEnv,
    ...p.placementEnv,
    ...p.evidence.environment,
    // Every email goes through the configuration set whose events reach the feedback function.
    SES_CONFIGURATION_SET: s.sesConfigurationSet ?? p.prefix,
    // The platform applications dispatch may publish to (grantSends): an endpoint of any other fails that message alone.
    PUSH_APPLICATION_ARNS: (s.pushPlatformApplicationArns ?? []).join(','),
    // A deployed stage always judges validity and send windows by the clock (REPLAY is the local replay's alone).
    NOTICE_TIMING: 'ENFORCED',
  };
}

/** What dispatch may send: email from the sender through the configuration set, push to the applications, SMS. */
function grantSends(fn: NotifierFunction, p: FunctionPartProps): void {
  const { stack, settings: s } = p;
  const domain = s.senderEmail.split('@')[1] ?? '';
  fn.addToRolePolicy(
    new PolicyStatement({
      actions: ['ses:SendEmail'],
      resources: [
        stack.formatArn({ service: 'ses', resource: 'identity', resourceName: s.senderEmail }),
        stack.formatArn({ service: 'ses', resource: 'identity', resourceName: domain }),
        stack.formatArn({
          service: 'ses',
          resource: 'configuration-set',
          resourceName: s.sesConfigurationSet ?? p.prefix,
        }),
      ],
      conditions: { StringEquals: { 'ses:FromAddress': s.senderEmail } },
    }),
  );
  // Push publishes to the endpoints of the configured platform applications only (SNS publishes only within a
  // region): an endpoint ARN is the application's with `endpoint/` for `app/` and the device's id after it.
  // Without applications, no push is permitted (synth warns); dispatch reads an endpoint of any other application
  // as that message's fault alone (PUSH_APPLICATION_ARNS), never the channel's.
  const applications = s.pushPlatformApplicationArns ?? [];
  if (applications.length > 0) {
    fn.addToRolePolicy(
      new PolicyStatement({
        sid: 'PushToConfiguredApplications',
        actions: ['sns:Publish'],
        resources: applications.map((arn) => `${arn.replace(':app/', ':endpoint/')}/*`),
      }),
    );
  }
  // SMS publishes straight to a phone number, which has no ARN, so SNS authorizes it only against "*". NotResource
  // keeps that grant away from every SNS ARN: no topic and no endpoint, in any account, through this statement.
  fn.addToRolePolicy(
    new PolicyStatement({
      sid: 'SmsToPhoneNumbersOnly',
      actions: ['sns:Publish'],
      notResources: [`arn:${Aws.PARTITION}:sns:*:*:*`],
    }),
  );
}

/**
 * `npm run smoke -- --stage <stage>`: the post-deploy check. Invokes the deployed ingest function (Lambda Invoke API)
 * with one synthetic, real-shaped MSK event, follows its notification in the table to a terminal state, and prints
 * what happened. By default the event's one channel is EMAIL to the SES mailbox simulator, which accepts mail even
 * in the SES sandbox and reaches no one; --phone and --push add SMS and PUSH to a number or device of your own (they
 * exercise the SNS permissions, which EMAIL does not).
 *
 * Exit codes (README "Operations"):
 *   0  every notification ended SENT
 *   1  the pipeline ran, but a notification ended in another terminal state (FAILED, UNKNOWN, ...)
 *   2  timed out: not every notification was terminal in time (dispatch not triggered, throttled, stuck)
 *   3  ingest did not record the event (the invocation failed, or the event was quarantined)
 *   4  could not start: bad arguments, stack or outputs not found, AWS refused a call
 */
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { CloudFormationClient } from '@aws-sdk/client-cloudformation';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { DynamoDBDocumentClient, GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { MSKEvent } from 'aws-lambda';
import {
  eventPk,
  INBOX_SK,
  type NotificationStatus,
  QUARANTINE_SK,
  quarantinePk,
  TERMINAL_STATUSES,
} from '../functions/domain/notification.ts';
import { stackNameOf } from '../lib/settings.ts';
import type { StackOutputs } from '../lib/stack-outputs.ts';
import { mskRecord } from '../local/msk.ts';
import { readStackOutputs, StackOutputsError } from './stack-outputs.ts';

export const EXIT = { SENT: 0, NOT_SENT: 1, TIMEOUT: 2, NOT_RECORDED: 3, SETUP: 4 } as const;
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** SES mailbox simulator: accepted as delivered, works in the sandbox, reaches no inbox. */
export const SES_SIMULATOR_SUCCESS = 'success@simulator.amazonses.com';
/** Smoke records carry their own topic name, so their inbox and quarantine keys never meet real ones. */
export const SMOKE_TOPIC = 'notifier.smoke';

export interface SmokeOptions {
  readonly stackName: string;
  readonly email: string;
  /** E.164: adds SMS. */
  readonly phone?: string;
  /** An SNS platform endpoint ARN: adds PUSH. */
  readonly pushEndpointArn?: string;
  readonly timeoutMs: number;
  readonly pollMs: number;
}

export interface SmokeDeps {
  readonly cloudFormation: CloudFormationClient;
  readonly lambda: LambdaClient;
  readonly documentClient: DynamoDBDocumentClient;
  readonly now: () => number;
  readonly sleep: (ms: number) => Promise<void>;
  readonly print: (line: string) => void;
}

interface NotificationView {
  readonly channel: string;
  readonly status: NotificationStatus;
  readonly attempt?: number;
  readonly providerMessageId?: string;
  readonly lastError?: string;
}

/** The synthetic event: valid by the contract, recognisable by its eventId, one notification per contact given. */
export function smokeEvent(
  now: number,
  contacts: Pick<SmokeOptions, 'email' | 'phone' | 'pushEndpointArn'>,
  nonce: string,
) {
  const stamp = new Date(now)
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
  return {
    eventId: `smoke-${stamp}-${nonce}`,
    type: 'TransferCompleted',
    occurredAt: new Date(now).toISOString(),
    recipient: {
      userId: 'notifier-smoke',
      locale: 'en',
      email: contacts.email,
      ...(contacts.phone === undefined ? {} : { phoneNumber: contacts.phone }),
      ...(contacts.pushEndpointArn === undefined ? {} : { pushEndpointArn: contacts.pushEndpointArn }),
    },
    data: { transferId: `smoke-${nonce}`, amount: '1.00', currency: 'USD', counterpartyName: 'notifier smoke check' },
    channels: [
      'EMAIL',
      ...(contacts.pushEndpointArn === undefined ? [] : ['PUSH']),
      ...(contacts.phone === undefined ? [] : ['SMS']),
    ],
  };
}

/** The event as the MSK event source mapping would deliver it. */
export function smokeMskEvent(clusterArn: string, event: object, offset: number): MSKEvent {
  const record = mskRecord({ topic: SMOKE_TOPIC, partition: 0, offset, value: event, key: 'smoke' });
  return {
    eventSource: 'aws:kafka',
    eventSourceArn: clusterArn,
    bootstrapServers: 'smoke-check.invalid:9098',
    records: { [`${SMOKE_TOPIC}-0`]: [record] },
  } as MSKEvent;
}

export async function runSmoke(options: SmokeOptions, deps: SmokeDeps): Promise<ExitCode> {
  const { print } = deps;
  let outputs: StackOutputs;
  try {
    outputs = await readStackOutputs(deps.cloudFormation, options.stackName);
  } catch (error) {
    print(`cannot start: ${(error as Error).message}`);
    return EXIT.SETUP;
  }
  const started = deps.now();
  const elapsed = () => `${((deps.now() - started) / 1000).toFixed(1)} s`;
  const nonce = Math.random().toString(36).slice(2, 8);
  const event = smokeEvent(started, options, nonce);
  const offset = started;
  print(`notifier smoke check: stack ${options.stackName} (stage ${outputs.Stage})`);
  print(`event ${event.eventId}: ${event.channels.join(', ')} (EMAIL to ${options.email})`);

  // 1. Ingest, exactly as the mapping would call it.
  try {
    const answer = await deps.lambda.send(
      new InvokeCommand({
        FunctionName: outputs.IngestFunctionName,
        InvocationType: 'RequestResponse',
        Payload: Buffer.from(JSON.stringify(smokeMskEvent(outputs.MskClusterArn, event, offset))),
      }),
    );
    if (answer.FunctionError !== undefined) {
      const payload = answer.Payload === undefined ? '' : Buffer.from(answer.Payload).toString('utf8');
      print(`ingest ${outputs.IngestFunctionName} failed (${answer.FunctionError}): ${payload.slice(0, 500)}`);
      print(`see log group ${outputs.IngestLogGroupName}`);
      return EXIT.NOT_RECORDED;
    }
    print(`ingest invoked: ${outputs.IngestFunctionName} answered in ${elapsed()}`);
  } catch (error) {
    print(`cannot invoke ${outputs.IngestFunctionName}: ${(error as Error).name}: ${(error as Error).message}`);
    return EXIT.SETUP;
  }

  // 2. The inbox item proves the transaction; the notifications tell the rest of the story.
  const seen = new Map<string, NotificationStatus>();
  let inboxSeen = false;
  while (true) {
    const items = await eventItems(deps.documentClient, outputs.TableName, event.eventId);
    if (!inboxSeen && items.some((i) => i.sk === INBOX_SK)) {
      inboxSeen = true;
      print(`inbox recorded (${elapsed()})`);
    }
    if (!inboxSeen) {
      const quarantined = await deps.documentClient.send(
        new GetCommand({
          TableName: outputs.TableName,
          Key: { pk: quarantinePk({ topic: SMOKE_TOPIC, partition: 0, offset }), sk: QUARANTINE_SK },
          ConsistentRead: true,
        }),
      );
      if (quarantined.Item !== undefined) {
        print(`the event was quarantined: ${String(quarantined.Item.reason)} (${String(quarantined.Item.detail)})`);
        return EXIT.NOT_RECORDED;
      }
    }
    const notifications = items
      .filter((i) => String(i.sk).startsWith('NOTIFICATION#'))
      .map((i) => i as unknown as NotificationView);
    for (const n of notifications) {
      if (seen.get(n.channel) !== n.status) {
        seen.set(n.channel, n.status);
        print(`${n.channel} ${n.status} (${elapsed()})${describe(n)}`);
      }
    }
    if (inboxSeen && notifications.length > 0 && notifications.every((n) => TERMINAL_STATUSES.includes(n.status))) {
      const notSent = notifications.filter((n) => n.status !== 'SENT');
      if (notSent.length === 0) {
        print(`result: every notification SENT in ${elapsed()} (exit ${EXIT.SENT})`);
        return EXIT.SENT;
      }
      print(`result: ${notSent.map((n) => `${n.channel} ${n.status}`).join(', ')} (exit ${EXIT.NOT_SENT})`);
      return EXIT.NOT_SENT;
    }
    if (inboxSeen && notifications.length === 0) {
      print(`result: the event was recorded without a notification (exit ${EXIT.NOT_RECORDED})`);
      return EXIT.NOT_RECORDED;
    }
    if (deps.now() - started >= options.timeoutMs) {
      const state = inboxSeen
        ? [...seen].map(([channel, status]) => `${channel} ${status}`).join(', ') || 'no notification yet'
        : 'no inbox item';
      print(`result: timed out after ${elapsed()} with ${state} (exit ${EXIT.TIMEOUT})`);
      print(`see log groups ${outputs.IngestLogGroupName} and ${outputs.DispatchLogGroupName}`);
      return inboxSeen ? EXIT.TIMEOUT : EXIT.NOT_RECORDED;
    }
    await deps.sleep(options.pollMs);
  }
}

async function eventItems(client: DynamoDBDocumentClient, table: string, eventId: string) {
  const answer = await client.send(
    new QueryCommand({
      TableName: table,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': eventPk(eventId) },
      ConsistentRead: true,
    }),
  );
  return answer.Items ?? [];
}

function describe(n: NotificationView): string {
  const parts = [
    n.attempt === undefined ? '' : `attempt ${n.attempt}`,
    n.providerMessageId === undefined ? '' : `providerMessageId ${n.providerMessageId}`,
    n.lastError === undefined ? '' : `lastError ${n.lastError}`,
  ].filter((p) => p !== '');
  return parts.length === 0 ? '' : `: ${parts.join(', ')}`;
}

export class UsageError extends Error {
  override name = 'UsageError';
}

export const USAGE = `usage: npm run smoke -- (--stage <stage> | --stack <stack name>) [--email <address>] [--phone <E.164>]
                       [--push <endpoint ARN>] [--timeout <seconds>]
  --email    where the smoke email goes (default ${SES_SIMULATOR_SUCCESS}, the SES mailbox simulator)
  --phone    also send an SMS to this number of yours (checks the SMS path and its permissions)
  --push     also send a push to this SNS platform endpoint of yours
  --timeout  how long to follow the notifications (default 180 s)
The stack's region comes from the usual AWS settings (AWS_REGION or the profile).`;

export function parseSmokeArgs(argv: readonly string[]): SmokeOptions {
  let values: { stage?: string; stack?: string; email?: string; phone?: string; push?: string; timeout?: string };
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: {
        stage: { type: 'string' },
        stack: { type: 'string' },
        email: { type: 'string' },
        phone: { type: 'string' },
        push: { type: 'string' },
        timeout: { type: 'string' },
      },
      strict: true,
    }));
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  if ((values.stage === undefined) === (values.stack === undefined)) {
    throw new UsageError('give either --stage or --stack');
  }
  const timeout = Number(values.timeout ?? '180');
  if (!Number.isInteger(timeout) || timeout < 1 || timeout > 3600) {
    throw new UsageError('--timeout must be whole seconds between 1 and 3600');
  }
  const email = values.email ?? SES_SIMULATOR_SUCCESS;
  if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email)) throw new UsageError('--email must be an email address');
  if (values.phone !== undefined && !/^\+[1-9]\d{6,14}$/.test(values.phone)) {
    throw new UsageError('--phone must be an E.164 number (+81...)');
  }
  if (values.push !== undefined && !/^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:endpoint\//.test(values.push)) {
    throw new UsageError('--push must be an SNS platform endpoint ARN');
  }
  return {
    stackName: values.stack ?? stackNameOf(values.stage as string),
    email,
    ...(values.phone === undefined ? {} : { phone: values.phone }),
    ...(values.push === undefined ? {} : { pushEndpointArn: values.push }),
    timeoutMs: timeout * 1000,
    pollMs: 1000,
  };
}

async function main(): Promise<number> {
  let options: SmokeOptions;
  try {
    options = parseSmokeArgs(process.argv.slice(2));
  } catch (error) {
    console.error(`${(error as Error).message}\n${USAGE}`);
    return EXIT.SETUP;
  }
  try {
    return await runSmoke(options, {
      cloudFormation: new CloudFormationClient({}),
      // The ingest function may take up to its timeout (2 minutes): the SDK must not give up or retry before.
      lambda: new LambdaClient({ maxAttempts: 1, requestHandler: { requestTimeout: 150_000 } }),
      documentClient: DynamoDBDocumentClient.from(new DynamoDBClient({})),
      now: Date.now,
      sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
      print: (line) => console.log(line),
    });
  } catch (error) {
    if (error instanceof StackOutputsError) console.error(error.message);
    else console.error(`smoke check failed: ${(error as Error).name}: ${(error as Error).message}`);
    return EXIT.SETUP;
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.exitCode = await main();
}

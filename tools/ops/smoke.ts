/**
 * `npm run smoke -- --stage <stage>`: the post-deploy check, through MSK. Invokes the stack's smoke producer (a small
 * function in the cluster's subnets, functions/smoke/) which writes one synthetic event to the topic; the event
 * source mapping delivers it to ingest like any other; the check follows its notifications in the table to a terminal
 * state and then to the provider's delivery feedback (SES's Delivery, SNS's delivery status), printing what happened.
 * `--direct` is the fallback when the producer is not deployed or MSK is the suspect: it invokes ingest (Lambda Invoke
 * API) with the event shaped as the mapping delivers it, on a topic of its own. By default the event's one channel is
 * EMAIL to the SES mailbox simulator, which accepts mail even in the SES sandbox, reaches no one and answers with a
 * Delivery; --phone and --push add SMS and PUSH to a number or device of your own (they exercise the SNS permissions
 * and SNS's delivery status logging, which EMAIL does not).
 *
 * Exit codes (docs/operations.md "Smoke check"):
 *   0  every notification ended SENT and its provider reported it delivered
 *   1  the pipeline ran, but a notification ended in another terminal state (FAILED, UNKNOWN, ...), or its provider
 *      reported it not delivered (bounced, failed, rejected, complained)
 *   2  timed out: not every notification was terminal in time (dispatch not triggered, throttled, stuck)
 *   3  the event did not get in: the producer could not write it, ingest failed, or it was quarantined
 *   4  could not start: bad arguments, stack or outputs not found, AWS refused a call
 *   5  sent, but no delivery feedback in time (the SES event destination or SNS delivery status logging is not
 *      reaching the feedback function)
 *   6  all of that passed, but no logging CloudTrail trail records this region's management events: the protection
 *      watch is blind (tools/ops/trail-check.ts; printed whatever the exit code)
 */
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { CloudFormationClient } from '@aws-sdk/client-cloudformation';
import { CloudTrailClient } from '@aws-sdk/client-cloudtrail';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { InvokeCommand, type InvokeCommandOutput, LambdaClient } from '@aws-sdk/client-lambda';
import { DynamoDBDocumentClient, GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { MSKEvent } from 'aws-lambda';
import { eventPk, INBOX_SK, QUARANTINE_SK, quarantinePk } from '../../functions/domain/keys.ts';
import { messageIdOf } from '../../functions/domain/message-id.ts';
import { SES_SIMULATOR_SUCCESS, smokeEvent } from '../../functions/domain/smoke.ts';
import { type NotificationStatus, TERMINAL_STATUSES } from '../../functions/domain/state-machine.ts';
import { stackNameOf } from '../../lib/settings.ts';
import type { StackOutputs } from '../../lib/stack-outputs.ts';
import { mskRecord } from '../local/msk.ts';
import { checkDataEvents, watchedOf } from './data-events-check.ts';
import { readStackOutputs, StackOutputsError } from './stack-outputs.ts';
import { checkTrail, type TrailVerdict } from './trail-check.ts';

export const EXIT = {
  SENT: 0,
  NOT_SENT: 1,
  TIMEOUT: 2,
  NOT_RECORDED: 3,
  SETUP: 4,
  NO_FEEDBACK: 5,
  NO_TRAIL: 6,
} as const;
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

export { SES_SIMULATOR_SUCCESS, smokeEvent };
/** Smoke records sent --direct carry their own topic name, so their inbox and quarantine keys never meet real ones. */
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
  /** Invoke ingest directly instead of producing through MSK (the fallback). */
  readonly direct?: boolean;
}

export interface SmokeDeps {
  readonly cloudFormation: CloudFormationClient;
  readonly lambda: LambdaClient;
  readonly documentClient: DynamoDBDocumentClient;
  readonly now: () => number;
  readonly sleep: (ms: number) => Promise<void>;
  readonly print: (line: string) => void;
  /** Whether a trail feeds the protection watch (tools/ops/trail-check.ts). */
  readonly checkTrail: () => Promise<TrailVerdict>;
}

interface NotificationView {
  readonly channel: string;
  readonly status: NotificationStatus;
  readonly attempt?: number;
  readonly providerMessageId?: string;
  /** An email's message id (functions/domain/message-id.ts). */
  readonly sesMessageId?: string;
  readonly lastError?: string;
  readonly deliveryStatus?: string;
  readonly deliveryResponse?: string;
}

/** What the provider said after accepting: final and good, final and bad, or not yet (DELAYED is provisional). */
const DELIVERED = 'DELIVERED';
const NOT_YET = [undefined, 'DELAYED'];

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

/** Where the smoke record went in: its event id, and the Kafka position its quarantine item would be keyed by. */
interface Injected {
  readonly eventId: string;
  readonly source: { readonly topic: string; readonly partition: number; readonly offset: number };
}

type Injection = { ok: true; injected: Injected } | { ok: false; exit: ExitCode };

/** Through MSK: the smoke producer in the cluster's subnets writes the event to the topic. */
async function produceThroughMsk(options: SmokeOptions, outputs: StackOutputs, deps: SmokeDeps): Promise<Injection> {
  const producer = outputs.SmokeProducerFunctionName;
  if (producer === undefined) {
    deps.print(
      'cannot start: this stack has no smoke producer (settings mskSubnetIds and mskSecurityGroupIds deploy it). Use --direct to invoke ingest instead.',
    );
    return { ok: false, exit: EXIT.SETUP };
  }
  const contacts = {
    email: options.email,
    ...(options.phone === undefined ? {} : { phone: options.phone }),
    ...(options.pushEndpointArn === undefined ? {} : { pushEndpointArn: options.pushEndpointArn }),
  };
  let answer: InvokeCommandOutput;
  try {
    answer = await deps.lambda.send(
      new InvokeCommand({
        FunctionName: producer,
        InvocationType: 'RequestResponse',
        Payload: Buffer.from(JSON.stringify(contacts)),
      }),
    );
  } catch (error) {
    deps.print(`cannot invoke ${producer}: ${(error as Error).name}: ${(error as Error).message}`);
    return { ok: false, exit: EXIT.SETUP };
  }
  const payload = answer.Payload === undefined ? '' : Buffer.from(answer.Payload).toString('utf8');
  if (answer.FunctionError !== undefined && payload.includes('"errorType":"SmokeRequestError"')) {
    // The producer refused what it was asked: a contact point it may not send to, a malformed one.
    const refusal = (JSON.parse(payload) as { errorMessage?: string }).errorMessage ?? payload.slice(0, 500);
    deps.print(`cannot start: the smoke producer refused: ${refusal}`);
    return { ok: false, exit: EXIT.SETUP };
  }
  if (answer.FunctionError !== undefined) {
    // The brokers refused or could not be reached (security group, IAM, TLS): the event never got in.
    deps.print(
      `the smoke producer ${producer} could not write to the topic (${answer.FunctionError}): ${payload.slice(0, 500)}`,
    );
    return { ok: false, exit: EXIT.NOT_RECORDED };
  }
  const produced = JSON.parse(payload || '{}') as Partial<Injected['source'] & { eventId: string }>;
  if (
    typeof produced.eventId !== 'string' ||
    typeof produced.topic !== 'string' ||
    !Number.isInteger(produced.partition) ||
    !Number.isInteger(produced.offset)
  ) {
    deps.print(`the smoke producer answered without the record's position: ${payload.slice(0, 300)}`);
    return { ok: false, exit: EXIT.NOT_RECORDED };
  }
  deps.print(
    `produced ${produced.eventId} to ${produced.topic} partition ${produced.partition} offset ${produced.offset} (through MSK)`,
  );
  return {
    ok: true,
    injected: {
      eventId: produced.eventId,
      source: { topic: produced.topic, partition: Number(produced.partition), offset: Number(produced.offset) },
    },
  };
}

/** --direct: ingest invoked with the event exactly as the mapping would deliver it (MSK itself not exercised). */
async function invokeIngest(options: SmokeOptions, outputs: StackOutputs, deps: SmokeDeps): Promise<Injection> {
  const started = deps.now();
  const event = smokeEvent(started, options, Math.random().toString(36).slice(2, 8));
  const offset = started;
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
      deps.print(`ingest ${outputs.IngestFunctionName} failed (${answer.FunctionError}): ${payload.slice(0, 500)}`);
      deps.print(`see log group ${outputs.IngestLogGroupName}`);
      return { ok: false, exit: EXIT.NOT_RECORDED };
    }
  } catch (error) {
    deps.print(`cannot invoke ${outputs.IngestFunctionName}: ${(error as Error).name}: ${(error as Error).message}`);
    return { ok: false, exit: EXIT.SETUP };
  }
  deps.print(
    `event ${event.eventId}: ingest ${outputs.IngestFunctionName} invoked directly (--direct: MSK not exercised)`,
  );
  return { ok: true, injected: { eventId: event.eventId, source: { topic: SMOKE_TOPIC, partition: 0, offset } } };
}

/**
 * The pipeline, then the trail the protection watch reads: a stage whose every send works but whose watch is blind
 * does not pass (exit 6); a pipeline failure keeps its own code, with the trail's lines printed after it.
 */
export async function runSmoke(options: SmokeOptions, deps: SmokeDeps): Promise<ExitCode> {
  const exit = await runPipeline(options, deps);
  const trail = await deps.checkTrail();
  for (const line of trail.lines) deps.print(`trail: ${line}`);
  if (exit === EXIT.SENT && !trail.ok) {
    deps.print(`result: the pipeline works, but the protection watch is blind (exit ${EXIT.NO_TRAIL})`);
    return EXIT.NO_TRAIL;
  }
  return exit;
}

async function runPipeline(options: SmokeOptions, deps: SmokeDeps): Promise<ExitCode> {
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
  const channels = ['EMAIL', ...(options.pushEndpointArn ? ['PUSH'] : []), ...(options.phone ? ['SMS'] : [])];
  print(`notifier smoke check: stack ${options.stackName} (stage ${outputs.Stage})`);
  print(`channels ${channels.join(', ')} (EMAIL to ${options.email})`);

  // 1. The event goes in: through MSK, or straight into ingest.
  const injection = options.direct
    ? await invokeIngest(options, outputs, deps)
    : await produceThroughMsk(options, outputs, deps);
  if (!injection.ok) return injection.exit;
  const { eventId, source } = injection.injected;

  // 2. The inbox item proves the transaction; the notifications tell the rest of the story.
  const seen = new Map<string, string>();
  let inboxSeen = false;
  let allSent = false;
  while (true) {
    const items = await eventItems(deps.documentClient, outputs.TableName, eventId);
    if (!inboxSeen && items.some((i) => i.sk === INBOX_SK)) {
      inboxSeen = true;
      print(`inbox recorded (${elapsed()})`);
    }
    if (!inboxSeen) {
      const quarantined = await deps.documentClient.send(
        new GetCommand({
          TableName: outputs.TableName,
          Key: { pk: quarantinePk(source), sk: QUARANTINE_SK },
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
      const state = `${n.status}/${n.deliveryStatus ?? ''}`;
      if (seen.get(n.channel) !== state) {
        const statusChanged = seen.get(n.channel)?.split('/')[0] !== n.status;
        seen.set(n.channel, state);
        if (statusChanged) print(`${n.channel} ${n.status} (${elapsed()})${describe(n)}`);
        if (n.deliveryStatus !== undefined) {
          print(
            `${n.channel} delivery: ${n.deliveryStatus} (${elapsed()})${n.deliveryResponse ? `: ${n.deliveryResponse}` : ''}`,
          );
        }
      }
    }
    if (inboxSeen && notifications.length === 0) {
      print(`result: the event was recorded without a notification (exit ${EXIT.NOT_RECORDED})`);
      return EXIT.NOT_RECORDED;
    }
    const terminal =
      inboxSeen && notifications.length > 0 && notifications.every((n) => TERMINAL_STATUSES.includes(n.status));
    if (terminal) {
      const notSent = notifications.filter((n) => n.status !== 'SENT');
      if (notSent.length > 0) {
        print(`result: ${notSent.map((n) => `${n.channel} ${n.status}`).join(', ')} (exit ${EXIT.NOT_SENT})`);
        return EXIT.NOT_SENT;
      }
      if (!allSent) {
        allSent = true;
        print(`every notification SENT in ${elapsed()}; waiting for the providers' delivery feedback`);
      }
      // 3. After "accepted": what SES and SNS said about each message.
      const undelivered = notifications.filter(
        (n) => !NOT_YET.includes(n.deliveryStatus) && n.deliveryStatus !== DELIVERED,
      );
      if (undelivered.length > 0) {
        print(
          `result: ${undelivered.map((n) => `${n.channel} ${n.deliveryStatus}`).join(', ')} after SENT (exit ${EXIT.NOT_SENT})`,
        );
        return EXIT.NOT_SENT;
      }
      if (notifications.every((n) => n.deliveryStatus === DELIVERED)) {
        print(`result: every notification SENT and delivered in ${elapsed()} (exit ${EXIT.SENT})`);
        return EXIT.SENT;
      }
    }
    if (deps.now() - started >= options.timeoutMs) {
      if (allSent) {
        const waiting = notifications.filter((n) => NOT_YET.includes(n.deliveryStatus)).map((n) => n.channel);
        print(
          `result: SENT, but no delivery feedback for ${waiting.join(', ')} after ${elapsed()} (exit ${EXIT.NO_FEEDBACK})`,
        );
        print(`see log group ${outputs.FeedbackLogGroupName} and docs/operations.md "Delivery feedback"`);
        return EXIT.NO_FEEDBACK;
      }
      const state = inboxSeen
        ? [...seen].map(([channel, s]) => `${channel} ${s.split('/')[0]}`).join(', ') || 'no notification yet'
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
    messageIdOf(n) === undefined ? '' : `providerMessageId ${messageIdOf(n)}`,
    n.lastError === undefined ? '' : `lastError ${n.lastError}`,
  ].filter((p) => p !== '');
  return parts.length === 0 ? '' : `: ${parts.join(', ')}`;
}

export class UsageError extends Error {
  override name = 'UsageError';
}

export const USAGE = `usage: npm run smoke -- (--stage <stage> | --stack <stack name>) [--email <address>] [--phone <E.164>]
                       [--push <endpoint ARN>] [--timeout <seconds>] [--direct]
  --email    where the smoke email goes (default ${SES_SIMULATOR_SUCCESS}, the SES mailbox simulator)
  --phone    also send an SMS to this number of yours (checks the SMS path, its permissions and its delivery status)
  --push     also send a push to this SNS platform endpoint of yours
  --timeout  how long to follow the notifications to their delivery feedback (default 180 s)
  --direct   invoke the ingest function instead of producing through MSK (the fallback: MSK itself is not
             checked). Break glass: run it as the break-glass role, the only principal besides the stack that may
             invoke ingest
The stack's region comes from the usual AWS settings (AWS_REGION or the profile). It also checks that a CloudTrail
trail records the region's management events (exit 6 if none does: the protection watch would be blind).`;

export function parseSmokeArgs(argv: readonly string[]): SmokeOptions {
  let values: {
    stage?: string;
    stack?: string;
    email?: string;
    phone?: string;
    push?: string;
    timeout?: string;
    direct?: boolean;
  };
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
        direct: { type: 'boolean' },
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
    ...(values.direct === true ? { direct: true } : {}),
  };
}

/** The functions and table whose data events a trail must record, from the stack's outputs (its account and partition: the reader role's ARN). */
async function watchedBy(stackName: string, region: string) {
  const outputs = await readStackOutputs(new CloudFormationClient({}), stackName);
  const [, partition = 'aws', , , account = ''] = outputs.EvidenceReaderRoleArn.split(':');
  const functions = [outputs.IngestFunctionName, outputs.OperatorFunctionName, outputs.ConsoleApiFunctionName];
  return watchedOf(
    { partition, region, account },
    functions.filter((f): f is string => f !== undefined),
    outputs.TableName,
  );
}

async function main(): Promise<number> {
  if (process.argv.includes('--help') || process.argv.includes('-h')) {
    console.log(USAGE);
    return EXIT.SENT;
  }
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
      // Ingest (--direct) may take up to its timeout (2 minutes): the SDK must not give up or retry before.
      lambda: new LambdaClient({ maxAttempts: 1, requestHandler: { requestTimeout: 150_000 } }),
      documentClient: DynamoDBDocumentClient.from(new DynamoDBClient({})),
      now: Date.now,
      sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
      print: (line) => console.log(line),
      checkTrail: async () => {
        const cloudTrail = new CloudTrailClient({});
        const region = await cloudTrail.config.region();
        const management = await checkTrail(cloudTrail, region);
        const data = await checkDataEvents(cloudTrail, region, await watchedBy(options.stackName, region));
        return { ok: management.ok && data.ok, lines: [...management.lines, ...data.lines] };
      },
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

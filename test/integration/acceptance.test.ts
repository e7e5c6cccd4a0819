/**
 * The provider's acceptance is durable before dispatch gives up on it — on DynamoDB Local, through the real handlers,
 * with DynamoDB's failures injected where DynamoDB Local never raises them (tools/chaos/faults.ts) and the suite's clock:
 * - the SENT write fails after the provider accepted: kept trying, SENT, never sent again by the sweeper or a
 *   redelivery (SMS is at-least-once here: a lost acceptance would be resent);
 * - the SENT write fails past the lease: the lease is extended with the message id, and when the process then dies
 *   the sweeper marks the notification SENT instead of resending it;
 * - a throttled attempt whose release fails stays "not sent": deferred, then sent once — never UNKNOWN;
 * - a send that completes after the sweeper resolved its lease: the message id lands on the UNKNOWN item, and
 *   `ops resend` refuses unless told that id.
 */

import { SendEmailCommand } from '@aws-sdk/client-ses';
import { PublishCommand } from '@aws-sdk/client-sns';
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { chaosInvoke } from '../../tools/chaos/converge.ts';
import { clock, type DynamoFault, injectDynamoFaults, isMarkSent } from '../../tools/chaos/faults.ts';
import { mskEvent } from '../../tools/local/msk.ts';
import { type Handlers, KafkaMapping, lambdaContext, StreamMapping } from '../../tools/local/pipeline.ts';
import { StreamReader } from '../../tools/local/stream-reader.ts';
import { providerMocks } from '../support/aws-mocks.ts';
import { transferEvent } from '../support/events.ts';
import { handlersOn } from '../support/handlers.ts';
import { type LocalTable, newLocalTable } from '../support/local-table.ts';
import { operatorOn, resendNow } from '../support/operator.ts';

const { ses, sns } = providerMocks();
let table: LocalTable;
let handlers: Handlers;
let reader: StreamReader;
let stream: StreamMapping;
let kafka: KafkaMapping;
let offset = 0;
/** What the next DynamoDB call gets: the test decides per call (undefined: no fault). */
let plan: (command: string, input: Record<string, unknown>) => DynamoFault | 'afterProviderAccepted' | undefined;

const LEASE_MS = 10_000;

beforeAll(async () => {
  clock.install();
  table = await newLocalTable(inject('dynamoEndpoint'));
  handlers = await handlersOn(table, {
    CHANNEL_POLICIES: 'EMAIL=AT_MOST_ONCE,SMS=AT_LEAST_ONCE',
    LEASE_SECONDS: String(LEASE_MS / 1000),
    PENDING_THRESHOLD_SECONDS: '1',
    RETRY_BASE_MS: '5',
    RETRY_MAX_MS: '20',
  });
  const { documentClient } = await import('../../functions/commons/dynamodb-client.ts');
  injectDynamoFaults(documentClient, { dynamo: (command, input) => plan(command, input) });
  reader = new StreamReader(table.endpoint, table.tableName);
  // Each invocation in a crash context: a crash fails it whole, and a dead environment writes nothing more.
  stream = new StreamMapping(reader, handlers.dispatch, { invoke: chaosInvoke });
  kafka = new KafkaMapping(handlers.ingest);
});
afterAll(() => reader.close());

beforeEach(() => {
  plan = () => undefined;
  ses.reset();
  sns.reset();
  let n = 0;
  ses.on(SendEmailCommand).callsFake(async () => ({ MessageId: `ses-${n++}` }));
  sns.on(PublishCommand).callsFake(async () => ({ MessageId: `sns-${n++}` }));
});

const ingest = (value: object) =>
  kafka.deliver(mskEvent([{ topic: 'acceptance', partition: 0, offset: offset++, value }]));
const notification = async (eventId: string, channel: string) =>
  (await table.eventItems(eventId)).find((i) => i.sk === `NOTIFICATION#${channel}`);
const values = (input: Record<string, unknown>) => {
  const v = (input.ExpressionAttributeValues ?? {}) as Record<string, unknown>;
  const plain = (x: unknown) => (x !== null && typeof x === 'object' ? ((x as { S?: unknown }).S ?? x) : x);
  return { to: plain(v[':to']), lease: v[':lease'], mid: plain(v[':providerMessageId']) };
};
/** The sweeper, after every lease and the stuck threshold have passed on the suite's clock. */
const sweepLater = async () => {
  clock.advance(LEASE_MS + 30_000);
  return handlers.sweeper({}, lambdaContext('sweeper'));
};
const pumpAll = async () => {
  while ((await stream.pump()) > 0) {
    // drain
  }
};

describe("the provider's acceptance survives DynamoDB's failures", () => {
  it('the SENT write fails twice after SNS accepted: kept trying, SENT once; the sweeper and a redelivery send nothing more', async () => {
    let failures = 0;
    plan = (command, input) =>
      command.startsWith('UpdateItem') && isMarkSent(input) && failures++ < 2 ? 'ThrottlingException' : undefined;
    await ingest(transferEvent({ eventId: 'acc-1', channels: ['SMS'] }));
    await pumpAll();
    const swept = await sweepLater();
    await pumpAll();
    // One copy: the acceptance was recorded, so neither the sweeper nor a redelivery sent it again.
    expect(sns.commandCalls(PublishCommand)).toHaveLength(1);
    expect(swept.resolvedRetry + swept.resolvedUnknown).toBe(0);
    expect(failures).toBeGreaterThanOrEqual(3);
    expect(await notification('acc-1', 'SMS')).toMatchObject({ status: 'SENT', providerMessageId: 'sns-0' });
  });

  it('the SENT write fails past the lease: the lease is extended with the message id; the process dies; the sweeper marks SENT, no resend', async () => {
    let extended = false;
    plan = (command, input) => {
      if (!command.startsWith('UpdateItem')) return undefined;
      const v = values(input);
      if (v.lease !== undefined && v.mid !== undefined) {
        extended = true; // the extension carrying the acceptance goes through
        return undefined;
      }
      if (!isMarkSent(input)) return undefined;
      if (extended) return 'afterProviderAccepted'; // then the execution environment dies before SENT lands
      clock.advance(4_000); // DynamoDB throttles for seconds: the lease runs out meanwhile
      return 'ThrottlingException';
    };
    await ingest(transferEvent({ eventId: 'acc-2', channels: ['SMS'] }));
    await pumpAll();
    expect(extended).toBe(true);
    expect(await notification('acc-2', 'SMS')).toMatchObject({ status: 'SENDING', providerMessageId: 'sns-0' });
    plan = () => undefined;
    const swept = await sweepLater();
    expect(swept).toMatchObject({ resolvedSent: 1, resolvedRetry: 0, resolvedUnknown: 0 });
    await pumpAll();
    await sweepLater();
    await pumpAll();
    expect(await notification('acc-2', 'SMS')).toMatchObject({ status: 'SENT', providerMessageId: 'sns-0' });
    expect(sns.commandCalls(PublishCommand)).toHaveLength(1);
  });

  it('a throttled attempt whose release write fails stays "not sent": deferred, then sent once, never UNKNOWN', async () => {
    let failures = 0;
    ses.reset();
    ses
      .on(SendEmailCommand)
      .rejectsOnce(
        Object.assign(new Error('Maximum sending rate exceeded.'), {
          name: 'Throttling',
          Code: 'Throttling',
          $metadata: { httpStatusCode: 400 },
        }),
      )
      .resolves({ MessageId: 'ses-after-throttle' });
    plan = (command, input) =>
      command.startsWith('UpdateItem') && values(input).to === 'PENDING' && failures++ < 2
        ? 'InternalServerError'
        : undefined;
    await ingest(transferEvent({ eventId: 'acc-3', channels: ['EMAIL'] }));
    await pumpAll();
    await sweepLater();
    await pumpAll();
    expect(failures).toBeGreaterThanOrEqual(2);
    expect(await notification('acc-3', 'EMAIL')).toMatchObject({
      status: 'SENT',
      sesMessageId: 'ses-after-throttle',
      deferrals: 1,
    });
    expect(ses.commandCalls(SendEmailCommand)).toHaveLength(2);
  });
});

describe('a send that outlives its lease', () => {
  it('its message id lands on the UNKNOWN item, and ops resend refuses without it', async () => {
    ses.reset();
    ses.on(SendEmailCommand).callsFake(async () => {
      // The holder hangs past its lease: the sweeper resolves it as UNKNOWN (at most once) meanwhile.
      await sweepLater();
      return { MessageId: 'ses-late' };
    });
    await ingest(transferEvent({ eventId: 'acc-4', channels: ['EMAIL'] }));
    await pumpAll();
    expect(await notification('acc-4', 'EMAIL')).toMatchObject({
      status: 'UNKNOWN',
      lastError: 'LEASE_EXPIRED',
      sesMessageId: 'ses-late',
    });
    const ports = operatorOn(table);
    const request = { notificationId: 'acc-4#EMAIL' };
    await expect(resendNow(ports, request)).rejects.toThrow(/message ses-late/);
    expect((await resendNow(ports, { ...request, despiteAccepted: 'ses-late' })).status).toBe('PENDING');
  });
});

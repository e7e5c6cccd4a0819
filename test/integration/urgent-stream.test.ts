/**
 * Critical notices first in the stream path, on DynamoDB Local through the real handlers: dispatch's urgent trigger
 * (critical types only) reads the stream on its own, so a critical notice written behind a backlog of normal ones is
 * sent before the routine trigger has reached any of them; the routine trigger, which sees it too, does not send it
 * again.
 */
import { SendEmailCommand } from '@aws-sdk/client-ses';
import { PublishCommand } from '@aws-sdk/client-sns';
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { notificationSk } from '../../functions/domain/keys.ts';
import { mskEvent } from '../../tools/local/msk.ts';
import { DispatchMappings, type Handlers, KafkaMapping } from '../../tools/local/pipeline.ts';
import { StreamReader } from '../../tools/local/stream-reader.ts';
import { providerMocks } from '../support/aws-mocks.ts';
import { transferEvent } from '../support/events.ts';
import { handlersOn } from '../support/handlers.ts';
import { type LocalTable, newLocalTable } from '../support/local-table.ts';

const { ses, sns } = providerMocks();
let table: LocalTable;
let handlers: Handlers;
let mappings: DispatchMappings;
const readers: StreamReader[] = [];

beforeAll(async () => {
  table = await newLocalTable(inject('dynamoEndpoint'));
  handlers = await handlersOn(table);
  const reader = () => {
    const r = new StreamReader(table.endpoint, table.tableName);
    readers.push(r);
    return r;
  };
  mappings = new DispatchMappings({ urgent: reader(), routine: reader() }, handlers.dispatch);
});
afterAll(() => {
  for (const r of readers) r.close();
});

const BACKLOG = 30;
let offset = 0;
let sent = 0;
beforeEach(() => {
  ses.reset();
  sns.reset();
  ses.on(SendEmailCommand).callsFake(async () => ({ MessageId: `ses-${sent++}` }));
  sns.on(PublishCommand).callsFake(async () => ({ MessageId: `sns-${sent++}` }));
});

const email = (eventId: string, type: string, data: Record<string, unknown>) =>
  transferEvent({
    eventId,
    type,
    occurredAt: new Date().toISOString(),
    channels: ['EMAIL'],
    // The transfer factory's fields, left out: each type has its own.
    data: { transferId: undefined, amount: undefined, currency: undefined, counterpartyName: undefined, ...data },
    // A customer per notice: a backlog of one customer's card notices would meet its flood guard (30 an hour).
    recipient: { locale: 'en', userId: `u-${eventId}` },
  });
const card = (eventId: string) =>
  email(eventId, 'CardPayment', {
    paymentId: `p-${eventId}`,
    amount: '12.50',
    currency: 'USD',
    merchantName: 'Blue Bottle Coffee',
    cardLast4: '4242',
  });
const login = (eventId: string) =>
  email(eventId, 'LoginFromNewDevice', { sessionId: `s-${eventId}`, deviceName: 'Chrome on Windows' });
const deliver = (values: object[]) =>
  new KafkaMapping(handlers.ingest).deliver(
    mskEvent(values.map((value) => ({ topic: 'banking.transfers', partition: 0, offset: offset++, value }))),
  );
const status = async (eventId: string) =>
  (await table.eventItems(eventId)).find((i) => i.sk === notificationSk('EMAIL'))?.status;

describe('the urgent dispatch trigger', () => {
  it('sends a critical notice written behind a backlog before any of the backlog, and the routine trigger does not send it again', async () => {
    const backlog = Array.from({ length: BACKLOG }, (_, i) => card(`card-${i}`));
    const critical = login('login-1');
    await deliver([...backlog, critical]);

    await mappings.urgent.pump();
    expect(await status('login-1')).toBe('SENT');
    const stillPending = await Promise.all(backlog.map((e) => status(String(e.eventId))));
    expect(stillPending.every((s) => s === 'PENDING')).toBe(true);
    expect(ses.commandCalls(SendEmailCommand)).toHaveLength(1);

    await mappings.routine.pump();
    const sent = await Promise.all(backlog.map((e) => status(String(e.eventId))));
    expect(sent.every((s) => s === 'SENT')).toBe(true);
    // The routine trigger read the critical record too, and found it sent: one email each, no more.
    expect(ses.commandCalls(SendEmailCommand)).toHaveLength(BACKLOG + 1);
    expect(mappings.onFailure).toEqual([]);
  });

  it('both triggers at once, each reaching the same critical notices: every notice sent once', async () => {
    const events = Array.from({ length: 40 }, (_, i) =>
      i % 4 === 0 ? login(`both-login-${i}`) : card(`both-card-${i}`),
    );
    await deliver(events);
    // The two triggers are two pollers in AWS: here they run concurrently, and claim the critical ones in a race.
    await Promise.all([mappings.urgent.pump(), mappings.routine.pump()]);
    const statuses = await Promise.all(events.map((e) => status(String(e.eventId))));
    expect(statuses.every((s) => s === 'SENT')).toBe(true);
    expect(ses.commandCalls(SendEmailCommand)).toHaveLength(events.length);
    expect(mappings.onFailure).toEqual([]);
  });
});

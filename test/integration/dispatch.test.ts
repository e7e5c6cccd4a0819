/**
 * Ingest → DynamoDB Local's own stream → the real dispatch handler (SES and SNS mocked) → SENT, one send per
 * (eventId, channel); and the sweeper finding an item whose stream record was dropped.
 */
import { SESClient, SendEmailCommand } from '@aws-sdk/client-ses';
import { PublishCommand, SNSClient } from '@aws-sdk/client-sns';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { DynamoNotificationStore } from '../../functions/commons/notification-store.ts';
import { dispatchNotification } from '../../functions/dispatch/dispatch-notification.ts';
import { ProviderSender } from '../../functions/dispatch/senders.ts';
import { EXAMPLE_BRAND } from '../../local/example-brand.ts';
import { mskEvent } from '../../local/msk.ts';
import {
  converge,
  type Handlers,
  KafkaMapping,
  lambdaContext,
  loadHandlers,
  StreamMapping,
} from '../../local/pipeline.ts';
import { StreamReader } from '../../local/stream-reader.ts';
import { transferEvent } from '../support/events.ts';
import { type LocalTable, newLocalTable } from '../support/local-table.ts';

const ses = mockClient(SESClient);
const sns = mockClient(SNSClient);
let table: LocalTable;
let handlers: Handlers;
let reader: StreamReader;
let stream: StreamMapping;
let kafka: KafkaMapping;
let offset = 0;

beforeAll(async () => {
  table = await newLocalTable(inject('dynamoEndpoint'));
  handlers = await loadHandlers({
    dynamoEndpoint: table.endpoint,
    sesEndpoint: 'http://127.0.0.1:9',
    snsEndpoint: 'http://127.0.0.1:9',
    tableName: table.tableName,
    extra: { PENDING_THRESHOLD_SECONDS: '1' },
  });
  reader = new StreamReader(table.endpoint, table.tableName);
  stream = new StreamMapping(reader, handlers.dispatch);
  kafka = new KafkaMapping(handlers.ingest);
});
afterAll(() => reader.close());

beforeEach(() => {
  ses.reset();
  sns.reset();
  let n = 0;
  ses.on(SendEmailCommand).callsFake(async () => ({ MessageId: `ses-${n++}` }));
  sns.on(PublishCommand).callsFake(async () => ({ MessageId: `sns-${n++}` }));
});

const ingest = (values: object[]) =>
  kafka.deliver(
    mskEvent(values.map((value) => ({ topic: 'banking.transfers', partition: 0, offset: offset++, value }))),
  );

/** (eventId, channel) of every send the mocked providers accepted. */
function sends(): string[] {
  const emails = ses.commandCalls(SendEmailCommand).map((c) => {
    const tag = c.args[0].input.Tags?.find((t) => t.Name === 'notificationId')?.Value ?? '';
    return Buffer.from(tag, 'base64url').toString('utf8');
  });
  const publishes = sns.commandCalls(PublishCommand).map((c) => {
    const input = c.args[0].input;
    if (input.PhoneNumber) return `sms:${input.PhoneNumber}`;
    return JSON.parse(JSON.parse(input.Message ?? '{}').APNS).notificationId as string;
  });
  return [...emails, ...publishes].sort();
}

describe('dispatch on DynamoDB Local', () => {
  it('each new notification is sent once and ends SENT, with the provider message id', async () => {
    await ingest([transferEvent({ eventId: 'd-1' }), transferEvent({ eventId: 'd-2', channels: ['EMAIL', 'PUSH'] })]);
    await converge(stream, handlers, { dynamoEndpoint: table.endpoint, tableName: table.tableName });
    expect(ses.commandCalls(SendEmailCommand)).toHaveLength(2);
    expect(sns.commandCalls(PublishCommand)).toHaveLength(3);
    expect(sends().filter((s) => !s.startsWith('sms:'))).toEqual(['d-1#EMAIL', 'd-1#PUSH', 'd-2#EMAIL', 'd-2#PUSH']);
    const items = await table.eventItems('d-1');
    for (const n of items.filter((i) => i.kind === 'NOTIFICATION')) {
      expect(n).toMatchObject({ status: 'SENT', attempt: 1 });
      expect(n.providerMessageId).toMatch(/^(ses|sns)-/);
      expect(n.sweepKey).toBeUndefined();
    }
  });

  it('a redelivered stream batch and a redelivered Kafka batch send nothing more', async () => {
    await ingest([transferEvent({ eventId: 'd-3', channels: ['EMAIL'] })]);
    // Capture the stream's records, deliver them, then deliver the same batch twice more.
    const records = (await reader.poll()).filter((r) => r.eventName === 'INSERT');
    for (let i = 0; i < 3; i++) await handlers.dispatch({ Records: records }, lambdaContext('dispatch'));
    await ingest([transferEvent({ eventId: 'd-3', channels: ['EMAIL'] })]);
    await converge(stream, handlers, { dynamoEndpoint: table.endpoint, tableName: table.tableName });
    expect(sends()).toEqual(['d-3#EMAIL']);
  });

  it('two dispatchers racing on one item: one claim wins, one send', async () => {
    await ingest([transferEvent({ eventId: 'd-race', channels: ['PUSH'] })]);
    await reader.poll(); // the stream record is taken by the racers below, not by the mapping
    const store = new DynamoNotificationStore(table.doc, table.tableName);
    const sender = new ProviderSender(new SESClient({}), new SNSClient({}), { senderEmail: 'n@example.com' });
    const deps = {
      store,
      sender,
      now: Date.now,
      sleep: async () => undefined,
      policies: { EMAIL: 'AT_MOST_ONCE', PUSH: 'AT_MOST_ONCE', SMS: 'AT_MOST_ONCE' } as const,
      leaseMs: 60_000,
      sendTimeoutMs: 5_000,
      maxSendAttempts: 5,
      retryBaseMs: 10,
      brand: EXAMPLE_BRAND,
    };
    const key = { pk: 'EVENT#d-race', sk: 'NOTIFICATION#PUSH' };
    const results = await Promise.all(Array.from({ length: 8 }, () => dispatchNotification(key, undefined, deps)));
    expect(results.filter((r) => r.kind === 'sent')).toHaveLength(1);
    expect(sends()).toEqual(['d-race#PUSH']);
  });

  it('the sweeper re-drives a notification whose stream record was dropped, and it is sent once', async () => {
    await ingest([transferEvent({ eventId: 'd-dropped', channels: ['EMAIL'] })]);
    await reader.poll(); // the record is read and lost: dispatch never sees it
    expect((await table.eventItems('d-dropped')).find((i) => i.kind === 'NOTIFICATION')?.status).toBe('PENDING');
    await new Promise((r) => setTimeout(r, 1_100)); // past PENDING_THRESHOLD_SECONDS
    await converge(stream, handlers, { dynamoEndpoint: table.endpoint, tableName: table.tableName });
    expect(sends()).toEqual(['d-dropped#EMAIL']);
    const n = (await table.eventItems('d-dropped')).find((i) => i.kind === 'NOTIFICATION');
    expect(n).toMatchObject({ status: 'SENT', redrives: 1 });
  });

  it('a throttled send is retried through PENDING and sent once; a rejected one ends FAILED', async () => {
    ses.reset();
    ses
      .on(SendEmailCommand)
      .rejectsOnce(
        Object.assign(new Error('Maximum sending rate exceeded.'), {
          name: 'Throttling',
          $metadata: { httpStatusCode: 400 },
        }),
      )
      .resolves({ MessageId: 'ses-after-throttle' });
    sns.reset();
    sns
      .on(PublishCommand)
      .rejects(
        Object.assign(new Error('disabled'), { name: 'EndpointDisabledException', $metadata: { httpStatusCode: 400 } }),
      );
    await ingest([transferEvent({ eventId: 'd-retry', channels: ['EMAIL', 'PUSH'] })]);
    await converge(stream, handlers, { dynamoEndpoint: table.endpoint, tableName: table.tableName });
    const items = await table.eventItems('d-retry');
    expect(items.find((i) => i.sk === 'NOTIFICATION#EMAIL')).toMatchObject({
      status: 'SENT',
      attempt: 2,
      providerMessageId: 'ses-after-throttle',
    });
    expect(items.find((i) => i.sk === 'NOTIFICATION#PUSH')).toMatchObject({
      status: 'FAILED',
      attempt: 1,
      lastError: 'EndpointDisabledException',
    });
    expect(ses.commandCalls(SendEmailCommand)).toHaveLength(2);
    expect(sns.commandCalls(PublishCommand)).toHaveLength(1);
  });
});

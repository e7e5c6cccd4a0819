/**
 * Ingest → DynamoDB Local's own stream → the real dispatch handler (SES and SNS mocked) → SENT, one send per
 * (eventId, channel); and the sweeper finding an item whose stream record was dropped.
 */

import { SESClient, SendEmailCommand } from '@aws-sdk/client-ses';
import { PublishCommand, SNSClient } from '@aws-sdk/client-sns';
import { DeleteCommand, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { neverHeld } from '../../functions/dispatch/channel-breaker.ts';
import { type DispatchDeps, dispatchNotification } from '../../functions/dispatch/dispatch-notification.ts';
import { unpaced } from '../../functions/dispatch/pacer.ts';
import { ProviderSender } from '../../functions/dispatch/senders.ts';
import type { NotificationItem } from '../../functions/domain/notification.ts';
import { DynamoNotificationStore, type SweepEntry } from '../../functions/stores/notification-store.ts';
import { DynamoSweepStore } from '../../functions/stores/sweep-store.ts';
import { EXAMPLE_BRAND } from '../../tools/local/example-brand.ts';
import { mskEvent } from '../../tools/local/msk.ts';
import { converge, type Handlers, KafkaMapping, lambdaContext, StreamMapping } from '../../tools/local/pipeline.ts';
import { StreamReader } from '../../tools/local/stream-reader.ts';
import { providerMocks } from '../support/aws-mocks.ts';
import { transferEvent } from '../support/events.ts';
import { handlersOn } from '../support/handlers.ts';
import { type LocalTable, newLocalTable } from '../support/local-table.ts';

const { ses, sns } = providerMocks();
let table: LocalTable;
let handlers: Handlers;
let reader: StreamReader;
let stream: StreamMapping;
let kafka: KafkaMapping;
let offset = 0;

beforeAll(async () => {
  table = await newLocalTable(inject('dynamoEndpoint'));
  handlers = await handlersOn(table, { PENDING_THRESHOLD_SECONDS: '1', BREAKER_HOLD_SECONDS: '1' });
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
      // An email's id outside the providerMessage index (its reports carry our tag); an SNS send's on it.
      if (n.channel === 'EMAIL') {
        expect(n.sesMessageId).toMatch(/^ses-/);
        expect(n).not.toHaveProperty('providerMessageId');
      } else expect(n.providerMessageId).toMatch(/^sns-/);
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
    const deps: DispatchDeps = {
      store,
      sender,
      pacer: unpaced,
      breaker: neverHeld,
      now: Date.now,
      sleep: async () => undefined,
      policies: { EMAIL: 'AT_MOST_ONCE', PUSH: 'AT_MOST_ONCE', SMS: 'AT_MOST_ONCE' } as const,
      leaseMs: 60_000,
      sendTimeoutMs: 5_000,
      maxSendAttempts: 5,
      retryBaseMs: 10,
      retryMaxMs: 1_000,
      nearRetryMs: 2_000,
      pendingThresholdMs: 1_000,
      maxAgeMs: 86_400_000,
      brand: EXAMPLE_BRAND,
    };
    const key = { pk: 'EVENT#d-race', sk: 'NOTIFICATION#PUSH' };
    const budget = { finishBy: Date.now() + 50_000, maxWaitMs: 5_000 };
    const results = await Promise.all(
      Array.from({ length: 8 }, () => dispatchNotification({ key, retryAt: undefined }, deps, budget)),
    );
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

  it('a throttled send is deferred through PENDING — more often than the attempt budget — and sent once; a rejected one ends FAILED', async () => {
    ses.reset();
    const throttled = () =>
      Object.assign(new Error('Maximum sending rate exceeded.'), {
        name: 'Throttling',
        Code: 'Throttling',
        $metadata: { httpStatusCode: 400 },
      });
    let calls = 0;
    // Six throttles: more than MAX_SEND_ATTEMPTS (5), which throttling must not use up.
    ses.on(SendEmailCommand).callsFake(async () => {
      if (++calls <= 6) throw throttled();
      return { MessageId: 'ses-after-throttle' };
    });
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
      attempt: 7,
      deferrals: 6,
      sesMessageId: 'ses-after-throttle',
    });
    expect(items.find((i) => i.sk === 'NOTIFICATION#PUSH')).toMatchObject({
      status: 'FAILED',
      attempt: 1,
      lastError: 'EndpointDisabledException',
    });
    expect(ses.commandCalls(SendEmailCommand)).toHaveLength(7);
    expect(sns.commandCalls(PublishCommand)).toHaveLength(1);
  });

  it('an account-level refusal fails nothing: the channel is held, and after the hold the notification is sent once', async () => {
    ses.reset();
    ses
      .on(SendEmailCommand)
      .rejectsOnce(
        Object.assign(new Error('Sending is paused for this account.'), {
          name: 'AccountSendingPausedException',
          Code: 'AccountSendingPausedException',
          $metadata: { httpStatusCode: 400 },
        }),
      )
      .resolves({ MessageId: 'ses-after-pause' });
    await ingest([transferEvent({ eventId: 'd-paused', channels: ['EMAIL'] })]);
    await converge(stream, handlers, { dynamoEndpoint: table.endpoint, tableName: table.tableName });
    const n = (await table.eventItems('d-paused')).find((i) => i.kind === 'NOTIFICATION');
    expect(n).toMatchObject({ status: 'SENT', attempt: 2, deferrals: 1, sesMessageId: 'ses-after-pause' });
    const breaker = await table.doc.send(
      new GetCommand({ TableName: table.tableName, Key: { pk: 'BREAKER#EMAIL', sk: 'BREAKER' } }),
    );
    expect(breaker.Item).toMatchObject({ kind: 'BREAKER', code: 'AccountSendingPausedException' });
    expect(ses.commandCalls(SendEmailCommand)).toHaveLength(2);
  });

  it('a notification past its maximum age is expired by the sweeper, never sent', async () => {
    await ingest([transferEvent({ eventId: 'd-old', channels: ['PUSH'] })]);
    await reader.poll(); // its stream record is lost
    const old = new Date(Date.now() - 2 * 86_400_000).toISOString();
    await table.doc.send(
      new UpdateCommand({
        TableName: table.tableName,
        Key: { pk: 'EVENT#d-old', sk: 'NOTIFICATION#PUSH' },
        UpdateExpression: 'SET createdAt = :old, sweepAt = :due',
        ExpressionAttributeValues: { ':old': old, ':due': Date.now() - 1 },
      }),
    );
    const swept = await handlers.sweeper({}, lambdaContext('sweeper'));
    expect(swept.expired).toBe(1);
    const n = (await table.eventItems('d-old')).find((i) => i.kind === 'NOTIFICATION');
    expect(n).toMatchObject({ status: 'FAILED', lastError: 'EXPIRED' });
    expect(n?.sweepKey).toBeUndefined();
    expect(sns.commandCalls(PublishCommand)).toHaveLength(0);
  });
});

describe('a third party’s name of nothing but invisible characters', () => {
  // Each notice's other fields; the name a third party writes is a right-to-left override and zero-width spaces.
  const named = [
    ['LoginFromNewDevice', { sessionId: 's-blank' }, 'deviceName', /unnamed device/i],
    [
      'CardPayment',
      { paymentId: 'p-blank', amount: '12.50', currency: 'USD', cardLast4: '4242' },
      'merchantName',
      /unnamed merchant/i,
    ],
    [
      'DirectDebitUpcoming',
      { mandateId: 'm-blank', amount: '89.99', currency: 'USD', collectionDate: '2026-12-03' },
      'creditorName',
      /unnamed organization/i,
    ],
  ] as const;

  it('silences no sign-in, card or direct-debit notice: every channel is SENT, with neutral words for the name', async () => {
    await ingest(
      named.map(([type, data, field]) =>
        transferEvent({
          eventId: `blank-${type}`,
          type,
          // Within each type's own maximum age (a sign-in alert's is an hour).
          occurredAt: new Date().toISOString(),
          recipient: { locale: 'en' },
          // The transfer factory's fields, left out: each type has its own.
          data: {
            transferId: undefined,
            amount: undefined,
            currency: undefined,
            counterpartyName: undefined,
            ...data,
            [field]: '\u202e\u200b\u200b',
          },
        }),
      ),
    );
    await converge(stream, handlers, { dynamoEndpoint: table.endpoint, tableName: table.tableName });
    const sent = [
      ...ses.commandCalls(SendEmailCommand).map((c) => c.args[0].input.Message?.Body?.Text?.Data ?? ''),
      ...sns.commandCalls(PublishCommand).map((c) => c.args[0].input.Message ?? ''),
    ];
    expect(sent).toHaveLength(named.length * 3);
    for (const [type, , , words] of named) {
      const items = (await table.eventItems(`blank-${type}`)).filter((i) => i.kind === 'NOTIFICATION');
      expect(items.map((n) => `${n.channel} ${n.status}`).sort(), type).toEqual([
        'EMAIL SENT',
        'PUSH SENT',
        'SMS SENT',
      ]);
      expect(
        sent.filter((m) => words.test(m)),
        type,
      ).toHaveLength(3);
    }
  });
});

describe('notifications on DynamoDB Local: what a redelivery and a stale holder can never do', () => {
  it('a SENT notification whose inbox item is gone (TTL) stays SENT when its event is redelivered: nothing is sent again', async () => {
    const event = transferEvent({ eventId: 'd-ttl', channels: ['EMAIL'] });
    await ingest([event]);
    await converge(stream, handlers, { dynamoEndpoint: table.endpoint, tableName: table.tableName });
    const sent = (await table.eventItems('d-ttl')).find((i) => i.kind === 'NOTIFICATION');
    expect(sent).toMatchObject({ status: 'SENT', attempt: 1 });
    // TTL deletes the inbox item first (its own expiresAt); the notification item is still there.
    await table.doc.send(new DeleteCommand({ TableName: table.tableName, Key: { pk: 'EVENT#d-ttl', sk: 'INBOX' } }));
    await ingest([event]);
    await converge(stream, handlers, { dynamoEndpoint: table.endpoint, tableName: table.tableName });
    const after = (await table.eventItems('d-ttl')).find((i) => i.kind === 'NOTIFICATION');
    expect(after).toEqual(sent);
    expect(sends()).toEqual(['d-ttl#EMAIL']);
  });

  it('a stale holder cannot mark SENT, FAILED or UNKNOWN, nor release, after its lease was taken over', async () => {
    await ingest([transferEvent({ eventId: 'd-stale', channels: ['SMS'] })]);
    await reader.poll(); // this test drives the item itself
    const store = new DynamoSweepStore(table.doc, table.tableName);
    const key = { pk: 'EVENT#d-stale', sk: 'NOTIFICATION#SMS' };
    const t0 = Date.now();
    const first = await store.claim(key, 'holder-a', t0, 1_000);
    if (first.kind !== 'claimed') throw new Error(`holder A could not claim: ${first.kind}`);
    const stale: NotificationItem = first.item;
    // A's lease expires (its send hangs); the sweeper puts the item back to PENDING and B claims it: attempt 2.
    const entry = { ...stale, sweepAt: stale.leaseUntil } as unknown as SweepEntry;
    expect(await store.resolveExpired(entry, 'PENDING', t0 + 2_000, t0 + 60_000)).toBe('applied');
    const second = await store.claim(key, 'holder-b', t0 + 2_001, 60_000);
    if (second.kind !== 'claimed') throw new Error(`holder B could not claim: ${second.kind}`);
    expect(second.item.attempt).toBe(stale.attempt + 1);

    const later = t0 + 3_000;
    expect(await store.markSent(stale, 'late-a', later)).toBe('lost');
    expect(await store.markFailed(stale, 'InvalidParameter', later + 1)).toBe('lost');
    expect(await store.markUnknown(stale, 'UNKNOWN_OUTCOME: ECONNRESET', later + 2)).toBe('lost');
    expect(
      await store.release(stale, { reason: 'THROTTLED', retryAt: later, sweepAt: later, deferral: true }, later + 3),
    ).toBe('lost');
    // B's claim stands untouched, and B — the current holder — still finishes it.
    expect(await store.get(key)).toEqual(second.item);
    expect(await store.markSent(second.item, 'sent-by-b', later + 4)).toBe('applied');
    expect(await store.get(key)).toMatchObject({ status: 'SENT', attempt: 2, providerMessageId: 'sent-by-b' });
    await reader.poll();
  });
});

describe('push: one bad endpoint or one disabled application never holds the channel', () => {
  const arn = (account: string, platform: string, app: string, id: string) =>
    `arn:aws:sns:us-east-1:${account}:endpoint/${platform}/${app}/${id}`;
  const IOS = arn('123456789012', 'APNS', 'bank-ios', '0f9c1d2e-3b4a-5c6d-7e8f-9a0b1c2d3e40');
  const ANDROID = arn('123456789012', 'GCM', 'bank-android', '1a2b3c4d-0000-4000-8000-000000000002');
  const FOREIGN = arn('999988887777', 'GCM', 'their-app', '1a2b3c4d-0000-4000-8000-000000000003');
  const push = (eventId: string, pushEndpointArn: string) =>
    transferEvent({ eventId, channels: ['PUSH'], recipient: { pushEndpointArn } });
  const refusal = (name: string, status: number) =>
    Object.assign(new Error(name), { name, Code: name, $metadata: { httpStatusCode: status } });

  it('another account’s endpoint FAILS alone, a disabled iOS application is held alone, Android is sent at once', async () => {
    sns.reset();
    let iosDisabled = true;
    sns.on(PublishCommand).callsFake(async (input: { TargetArn?: string }) => {
      // Our role may publish to this account's endpoints only: SNS answers 403 for that one ARN.
      if (input.TargetArn === FOREIGN) throw refusal('AuthorizationError', 403);
      if (input.TargetArn === IOS && iosDisabled) {
        iosDisabled = false; // the certificate is renewed after the first refusal
        throw refusal('PlatformApplicationDisabled', 400);
      }
      return { MessageId: `sns-${input.TargetArn?.slice(-2)}` };
    });
    await ingest([push('p-foreign', FOREIGN), push('p-ios', IOS), push('p-android', ANDROID)]);
    await converge(stream, handlers, { dynamoEndpoint: table.endpoint, tableName: table.tableName });
    const n = async (id: string) => (await table.eventItems(id)).find((i) => i.kind === 'NOTIFICATION');
    expect(await n('p-foreign')).toMatchObject({
      status: 'FAILED',
      attempt: 1,
      lastError: 'FOREIGN_ENDPOINT: AuthorizationError',
    });
    expect(await n('p-android')).toMatchObject({ status: 'SENT', attempt: 1 });
    expect((await n('p-android'))?.deferrals).toBeUndefined();
    expect(await n('p-ios')).toMatchObject({ status: 'SENT', attempt: 2, deferrals: 1 });
    const breaker = async (pk: string) =>
      (await table.doc.send(new GetCommand({ TableName: table.tableName, Key: { pk, sk: 'BREAKER' } }))).Item;
    // Nothing held the PUSH channel; the iOS application was held on its own.
    expect(await breaker('BREAKER#PUSH')).toBeUndefined();
    expect(await breaker('BREAKER#PUSH#arn:aws:sns:us-east-1:123456789012:app/APNS/bank-ios')).toMatchObject({
      code: 'PlatformApplicationDisabled',
    });
  });
});

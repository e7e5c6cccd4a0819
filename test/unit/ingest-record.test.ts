import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, PutCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import pLimit from 'p-limit';
import { beforeEach, describe, expect, it } from 'vitest';
import { RecordRefusedError, TransientStoreError, UnexpectedResponseError } from '../../functions/commons/errors.ts';
import { classifyCancellation, DynamoInboxStore } from '../../functions/ingest/inbox-store.ts';
import { ingestBatch } from '../../functions/ingest/ingest-batch.ts';
import { type IngestDeps, ingestRecord } from '../../functions/ingest/ingest-record.ts';
import { mskEvent } from '../../tools/local/msk.ts';
import { documentClientMock } from '../support/aws-mocks.ts';
import { b64, decodeTransfer, transferEvent } from '../support/events.ts';

const ddb = documentClientMock();
const client = DynamoDBDocumentClient.from(new (await import('@aws-sdk/client-dynamodb')).DynamoDBClient({}));
const NOW = Date.parse('2026-11-30T09:15:01Z');
const source = { topic: 'banking.transfers', partition: 0, offset: 7 };

const deps = (over: Partial<IngestDeps> = {}): IngestDeps => ({
  store: new DynamoInboxStore(client, 'notifier-test'),
  now: () => NOW,
  retentionDays: 35,
  maxEventBytes: 65_536,
  maxEventAgeSeconds: 86_400,
  transactionAttempts: 3,
  sleep: async () => undefined,
  ...over,
});

const cancelled = (...codes: string[]) =>
  new TransactionCanceledException({
    message: 'Transaction cancelled',
    $metadata: {},
    CancellationReasons: codes.map((Code) => ({ Code })),
  });

const hashOf = (e: object) => {
  const d = decodeTransfer(e);
  return d.payloadHash;
};

beforeEach(() => ddb.reset());

describe('ingest: the transaction', () => {
  it('writes the inbox and one PENDING notification per channel, each put conditional, in one transaction', async () => {
    ddb.on(TransactWriteCommand).resolves({});
    const result = await ingestRecord({ source, value: b64(transferEvent()) }, deps());
    expect(result).toEqual({
      kind: 'accepted',
      eventId: 'trf-2026-000123',
      channels: ['EMAIL', 'PUSH', 'SMS'],
      refused: [],
      sanitised: [],
      masked: [],
      normalised: [],
      fallbacks: [],
    });

    const calls = ddb.commandCalls(TransactWriteCommand);
    expect(calls).toHaveLength(1);
    const items = calls[0]!.args[0].input.TransactItems!;
    expect(items).toHaveLength(4);
    expect(items[0]!.Put).toMatchObject({
      TableName: 'notifier-test',
      ConditionExpression: 'attribute_not_exists(pk)',
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      Item: {
        pk: 'EVENT#trf-2026-000123',
        sk: 'INBOX',
        payloadHash: hashOf(transferEvent()),
        channels: ['EMAIL', 'PUSH', 'SMS'],
        source,
        expiresAt: Math.floor(NOW / 1000) + 35 * 86_400,
      },
    });
    expect(items.slice(1).map((i) => i.Put?.Item?.sk)).toEqual([
      'NOTIFICATION#EMAIL',
      'NOTIFICATION#PUSH',
      'NOTIFICATION#SMS',
    ]);
    for (const item of items.slice(1)) {
      expect(item.Put?.ConditionExpression).toBe('attribute_not_exists(pk)');
      expect(item.Put?.Item).toMatchObject({ pk: 'EVENT#trf-2026-000123', status: 'PENDING', attempt: 0 });
      expect(item.Put?.Item?.sweepKey).toMatch(/^PENDING#(EMAIL|PUSH|SMS)#\d$/);
      // First due for the sweeper after the stuck threshold, not at once.
      expect(item.Put?.Item?.sweepAt).toBe(NOW + 900_000);
    }
    expect(items[1]!.Put?.Item).toMatchObject({
      notificationId: 'trf-2026-000123#EMAIL',
      recipient: 'hanako@example.com',
      template: 'TransferCompleted',
      locale: 'ja',
      data: { amount: '10000', currency: 'JPY' },
    });
  });

  it('an event with no contact point writes the inbox alone', async () => {
    ddb.on(TransactWriteCommand).resolves({});
    const e = transferEvent({ recipient: { email: undefined, pushEndpointArn: undefined, phoneNumber: undefined } });
    const result = await ingestRecord({ source, value: b64(e) }, deps());
    expect(result).toMatchObject({ kind: 'accepted', channels: [] });
    expect(ddb.commandCalls(TransactWriteCommand)[0]!.args[0].input.TransactItems).toHaveLength(1);
  });
});

describe('ingest: cancellation classification', () => {
  it('inbox exists with the same payloadHash → duplicate, nothing else written', async () => {
    const err = cancelled('ConditionalCheckFailed', 'None', 'None', 'None');
    err.CancellationReasons![0]!.Item = { payloadHash: { S: hashOf(transferEvent()) } };
    ddb.on(TransactWriteCommand).rejects(err);
    const result = await ingestRecord({ source, value: b64(transferEvent()) }, deps());
    expect(result).toEqual({ kind: 'duplicate', eventId: 'trf-2026-000123' });
    expect(ddb.commandCalls(PutCommand)).toHaveLength(0);
  });

  it('inbox exists with a different payloadHash → EVENT_ID_CONFLICT quarantine keyed by the record', async () => {
    const err = cancelled('ConditionalCheckFailed', 'None');
    err.CancellationReasons![0]!.Item = { payloadHash: { S: 'f'.repeat(64) } };
    ddb.on(TransactWriteCommand).rejects(err);
    ddb.on(PutCommand).resolves({});
    const result = await ingestRecord({ source, value: b64(transferEvent()) }, deps());
    expect(result).toEqual({ kind: 'conflict', eventId: 'trf-2026-000123', newlyQuarantined: true });
    // The cancellation's ALL_OLD item says no channel of it was refused: a conflict, without reading it again.
    expect(ddb.commandCalls(GetCommand)).toHaveLength(0);
    const put = ddb.commandCalls(PutCommand)[0]!.args[0].input;
    expect(put.ConditionExpression).toBe('attribute_not_exists(pk)');
    expect(put.Item).toMatchObject({
      pk: 'QUARANTINE#banking.transfers#0#7',
      sk: 'RECORD',
      reason: 'EVENT_ID_CONFLICT',
      eventId: 'trf-2026-000123',
    });
  });

  it('a notification exists without its inbox → the key constraint caught a duplicate', () => {
    expect(classifyCancellation(cancelled('None', 'ConditionalCheckFailed'))).toEqual({ kind: 'notificationExists' });
  });

  it.each(['TransactionConflict', 'ThrottlingError', 'ProvisionedThroughputExceeded'])(
    '%s is transient, never bad input',
    (code) => {
      expect(() => classifyCancellation(cancelled('None', code))).toThrow(TransientStoreError);
    },
  );

  it('an unexpected reason is surfaced, not swallowed', () => {
    expect(() => classifyCancellation(cancelled('SomethingNew'))).toThrow(UnexpectedResponseError);
  });

  it('ValidationError (an item DynamoDB will never store) is the record refused, not an outage', () => {
    expect(() => classifyCancellation(cancelled('None', 'ValidationError'))).toThrow(RecordRefusedError);
  });

  it('retries a transient cancellation with backoff and then succeeds', async () => {
    ddb
      .on(TransactWriteCommand)
      .rejectsOnce(cancelled('TransactionConflict', 'None'))
      .rejectsOnce(cancelled('None', 'ThrottlingError'))
      .resolves({});
    const waits: number[] = [];
    const result = await ingestRecord(
      { source, value: b64(transferEvent()) },
      deps({ sleep: async (ms) => void waits.push(ms) }),
    );
    expect(result.kind).toBe('accepted');
    expect(ddb.commandCalls(TransactWriteCommand)).toHaveLength(3);
    expect(waits).toHaveLength(2);
  });

  it('throws after the bounded retries so the event source mapping redelivers; nothing is quarantined', async () => {
    ddb.on(TransactWriteCommand).rejects(cancelled('TransactionConflict'));
    await expect(ingestRecord({ source, value: b64(transferEvent()) }, deps())).rejects.toThrow(TransientStoreError);
    expect(ddb.commandCalls(TransactWriteCommand)).toHaveLength(3);
    expect(ddb.commandCalls(PutCommand)).toHaveLength(0);
  });

  it('a plain network or throttling error from DynamoDB propagates (never quarantined)', async () => {
    ddb.on(TransactWriteCommand).rejects(Object.assign(new Error('socket hang up'), { name: 'TimeoutError' }));
    await expect(ingestRecord({ source, value: b64(transferEvent()) }, deps())).rejects.toThrow('socket hang up');
    expect(ddb.commandCalls(PutCommand)).toHaveLength(0);
  });
});

describe('ingest: bad input', () => {
  it('quarantines with the reason and the bounded raw value, and does not throw', async () => {
    ddb.on(PutCommand).resolves({});
    const result = await ingestRecord({ source, value: b64('{"eventId":"e1",') }, deps());
    expect(result).toMatchObject({
      kind: 'quarantined',
      rejection: { reason: 'INVALID_JSON' },
      newlyQuarantined: true,
    });
    expect(ddb.commandCalls(TransactWriteCommand)).toHaveLength(0);
    expect(ddb.commandCalls(PutCommand)[0]!.args[0].input.Item).toMatchObject({
      reason: 'INVALID_JSON',
      raw: b64('{"eventId":"e1",'),
    });
  });

  it('a redelivered bad record finds its quarantine item and is not counted again', async () => {
    ddb.on(PutCommand).rejects(Object.assign(new Error('exists'), { name: 'ConditionalCheckFailedException' }));
    const result = await ingestRecord({ source, value: b64('nope') }, deps());
    expect(result).toMatchObject({ kind: 'quarantined', newlyQuarantined: false });
  });

  it('a failure to write the quarantine item is thrown: a bad record is never lost', async () => {
    ddb.on(PutCommand).rejects(new Error('service unavailable'));
    await expect(ingestRecord({ source, value: b64('nope') }, deps())).rejects.toThrow('service unavailable');
  });
});

describe('ingest: the batch', () => {
  it('processes every record of every partition and throws after the rest finished if one cannot be written', async () => {
    const written: string[] = [];
    ddb.on(TransactWriteCommand).callsFake((input) => {
      const eventId = input.TransactItems[0].Put.Item.eventId as string;
      if (eventId === 'e-bad') throw cancelled('TransactionConflict');
      written.push(eventId);
      return {};
    });
    ddb.on(PutCommand).resolves({});
    const event = mskEvent([
      { topic: 't', partition: 0, offset: 1, value: transferEvent({ eventId: 'e-1' }) },
      { topic: 't', partition: 0, offset: 2, value: transferEvent({ eventId: 'e-bad' }) },
      // Another customer's: one customer's failure holds back only that customer's later records.
      { topic: 't', partition: 1, offset: 1, value: transferEvent({ eventId: 'e-2', recipient: { userId: 'u-7' } }) },
      { topic: 't', partition: 1, offset: 2, value: 'garbage' },
    ]);
    const summary = await ingestBatch(event, { ...deps(), limit: pLimit(2) });
    expect(summary.failure).toBeInstanceOf(TransientStoreError);
    expect(summary.figures).toMatchObject({ received: 4, accepted: 2, quarantined: 1, failed: 1 });
    expect(written.sort()).toEqual(['e-1', 'e-2']);
    expect(ddb.commandCalls(PutCommand)[0]!.args[0].input.Item).toMatchObject({ pk: 'QUARANTINE#t#1#2' });
  });

  it('reports one result per record when everything could be written', async () => {
    ddb.on(TransactWriteCommand).resolves({});
    ddb.on(PutCommand).resolves({});
    const event = mskEvent([
      { topic: 't', partition: 0, offset: 1, value: transferEvent({ eventId: 'e-1' }) },
      { topic: 't', partition: 1, offset: 1, value: transferEvent({ eventId: 'e-2' }) },
      { topic: 't', partition: 1, offset: 2, value: null },
    ]);
    const summary = await ingestBatch(event, { ...deps(), limit: pLimit(2) });
    expect(summary.results.map((r) => r.kind).sort()).toEqual(['accepted', 'accepted', 'quarantined']);
  });

  it("the handler does not throw for a record's bytes: a lone surrogate in any text field", async () => {
    ddb.on(TransactWriteCommand).resolves({});
    ddb.on(PutCommand).resolves({});
    const { handler } = await import('../../functions/ingest/index.ts');
    const event = mskEvent([
      { topic: 't', partition: 0, offset: 1, value: transferEvent({ data: { counterpartyName: 'x\uD800' } }) },
      { topic: 't', partition: 0, offset: 2, value: transferEvent({ eventId: 'e2', recipient: { userId: '\uDFFF' } }) },
      { topic: 't', partition: 0, offset: 3, value: transferEvent({ eventId: 'e3', data: { reason: '\uD800' } }) },
    ]);
    await expect(handler(event, {} as never)).resolves.toBeUndefined();
    expect(ddb.commandCalls(TransactWriteCommand)).toHaveLength(2);
    // The quarantine item and its reference in the event's partition; the unreadable user id on neither.
    const puts = ddb.commandCalls(PutCommand).map((c) => c.args[0].input.Item as Record<string, unknown>);
    expect(puts.map((i) => i.kind)).toEqual(['QUARANTINE', 'QUARANTINE_REF']);
    expect(puts[1]).toMatchObject({ pk: 'EVENT#e2', eventId: 'e2', reason: puts[0]?.reason });
    expect(puts.some((i) => 'userId' in i || 'userKey' in i)).toBe(false);
  });

  it('the handler reads the MSK event and throws when a record stays unwritable', async () => {
    ddb.on(TransactWriteCommand).rejects(cancelled('ThrottlingError'));
    const { handler } = await import('../../functions/ingest/index.ts');
    const event = mskEvent([{ topic: 't', partition: 0, offset: 1, value: transferEvent() }]);
    await expect(handler(event, {} as never)).rejects.toThrow(TransientStoreError);
  });
});

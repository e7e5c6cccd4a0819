/**
 * The operator's use cases (functions/operator) on DynamoDB Local, with the real ingest handler behind replays: what
 * an operator can see, what a replay does (never a second send), and that a manual resend is recorded and can never
 * touch a SENT notification. The parked batches' bucket answers through aws-sdk-client-mock.
 */
import { GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { PutCommand, UpdateCommand, type UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import {
  apply,
  countBy,
  type IngestInvoker,
  inspectEvent,
  listAudit,
  listQuarantine,
  OperatorError,
  type OperatorPorts,
  parkedEvent,
  preview,
  producerText,
  replayFailedBatches,
  replayQuarantine,
  resend,
  S3ParkedBatches,
} from '../../functions/operator/index.ts';
import { mskEvent } from '../../tools/local/msk.ts';
import { localIngest } from '../../tools/ops/local-ingest.ts';
import { transferEvent } from '../support/events.ts';
import { type LocalTable, newLocalTable } from '../support/local-table.ts';
import { ALICE, operatorOn, resendNow } from '../support/operator.ts';

let table: LocalTable;
let ingest: IngestInvoker;
const TOPIC = 'ops.test';
const record = (offset: number, value: string | object) => mskEvent([{ topic: TOPIC, partition: 0, offset, value }]);

beforeAll(async () => {
  table = await newLocalTable(inject('dynamoEndpoint'));
  ingest = await localIngest(table.endpoint, table.tableName);
});

const ports = (extra: Partial<OperatorPorts> = {}): OperatorPorts => ({
  ...operatorOn(table, { invokeIngest: ingest }),
  ...extra,
});
/** A replay of quarantined records, as an operator applies it. */
const replay = (ids: string[], corrected?: string, extra: Partial<OperatorPorts> = {}) =>
  apply(replayQuarantine, ports(extra), { ids, ...(corrected === undefined ? {} : { corrected }) }, ALICE);

describe('inspect and quarantine', () => {
  it('inspect shows the inbox item and each notification of an event', async () => {
    await ingest(record(1, transferEvent({ eventId: 'ops-inspect', channels: ['EMAIL', 'SMS'] })));
    const { view } = await inspectEvent(ports(), 'ops-inspect');
    expect(view.inbox).toMatchObject({ eventId: 'ops-inspect', channels: ['EMAIL', 'SMS'] });
    expect(view.notifications.map((n) => [n.notificationId, n.status, n.attempt])).toEqual([
      ['ops-inspect#EMAIL', 'PENDING', 0],
      ['ops-inspect#SMS', 'PENDING', 0],
    ]);
    expect((await inspectEvent(ports(), 'ops-nobody')).view.notifications).toEqual([]);
  });

  it('quarantine lists each bad record with its reason and detail, filtered by reason and time', async () => {
    await ingest(record(2, '{"eventId":"ops-broken",'));
    await ingest(record(3, transferEvent({ eventId: 'ops-float', data: { amount: 12.5 } })));
    const all = await listQuarantine(ports());
    expect(all.find((q) => q.id === `${TOPIC}#0#3`)).toMatchObject({
      reason: 'INVALID_AMOUNT',
      eventId: 'ops-float',
      detail: expect.stringContaining('data.amount'),
      replayedAt: null,
    });
    expect((await listQuarantine(ports(), { reason: 'INVALID_JSON' })).map((q) => q.id)).toEqual([`${TOPIC}#0#2`]);
    expect(await listQuarantine(ports(), { sinceIso: new Date(Date.now() + 60_000).toISOString() })).toEqual([]);
  });
});

describe('incidents without scans', () => {
  it('finds quarantined records by window from the incident index (no Scan), names each producer, and counts by reason and producer', async () => {
    const sent: string[] = [];
    const doc = table.doc;
    const spy = ports({});
    const original = doc.send.bind(doc);
    (doc as { send: unknown }).send = (command: { constructor: { name: string } }, ...rest: unknown[]) => {
      sent.push(command.constructor.name);
      return (original as (...a: unknown[]) => unknown)(command, ...rest);
    };
    try {
      await ingest(
        mskEvent([
          {
            topic: TOPIC,
            partition: 1,
            offset: 41,
            value: '{"eventId":"inc-broken",',
            key: 'customer-41',
            headers: { producer: 'payments-svc' },
          },
          {
            topic: TOPIC,
            partition: 1,
            offset: 42,
            value: '{"eventId":"inc-broken2",',
            headers: { producer: 'payments-svc' },
          },
        ]),
      );
      sent.length = 0;
      const found = (await listQuarantine(spy, { sinceIso: new Date(Date.now() - 3_600_000).toISOString() })).filter(
        (q) => q.source.partition === 1,
      );
      expect(sent.length).toBeGreaterThan(0);
      expect(sent.every((name) => name === 'QueryCommand')).toBe(true);
      expect(found.find((q) => q.source.offset === 41)?.producer).toEqual({
        key: 'customer-41',
        headers: { producer: 'payments-svc' },
      });
      expect(countBy(found, producerText)).toEqual([
        { value: `${TOPIC} key=customer-41 producer=payments-svc`, count: 1 },
        { value: `${TOPIC} producer=payments-svc`, count: 1 },
      ]);
      expect(countBy(found, (q) => q.reason)).toEqual([{ value: 'INVALID_JSON', count: 2 }]);
      // A window that ended before they arrived reads other days' keys only: nothing.
      const yesterday = ports({ now: () => Date.now() - 2 * 86_400_000 });
      expect((await listQuarantine(yesterday)).filter((q) => q.source.partition === 1)).toEqual([]);
    } finally {
      (doc as { send: unknown }).send = original;
    }
  });
});

describe('replay', () => {
  it('replay-quarantine feeds a corrected event through ingest at its own offset; a second replay is a duplicate', async () => {
    await ingest(record(10, transferEvent({ eventId: 'ops-fixme', channels: ['EMAIL'], data: { amount: 1.5 } })));
    const fixed = JSON.stringify(transferEvent({ eventId: 'ops-fixme', channels: ['EMAIL'], data: { amount: '150' } }));
    expect(await replay([`${TOPIC}#0#10`], fixed)).toEqual([
      { id: `${TOPIC}#0#10`, outcome: 'ACCEPTED', eventId: 'ops-fixme' },
    ]);
    const before = await table.eventItems('ops-fixme');
    expect(before.find((i) => i.sk === 'INBOX')?.source).toEqual({ topic: TOPIC, partition: 0, offset: 10 });
    // Again: the inbox makes it a duplicate; the notification is untouched.
    await replay([`${TOPIC}#0#10`], fixed);
    expect(await table.eventItems('ops-fixme')).toEqual(before);
    const [q] = await listQuarantine(ports(), { reason: 'INVALID_AMOUNT' }).then((l) =>
      l.filter((x) => x.id.endsWith('#10')),
    );
    expect(q?.replayedAt).toEqual(expect.any(String));
  });

  it('the preview refuses, with WOULD_QUARANTINE, a stored value a replay would quarantine again; nothing is fed to ingest or audited; unknown ids are refused', async () => {
    await ingest(record(11, 'not json at all'));
    await ingest(record(14, transferEvent({ eventId: 'ops-float', channels: ['EMAIL'], data: { amount: 1.5 } })));
    let fed = 0;
    const counting = ports({
      invokeIngest: async (e) => {
        fed++;
        return ingest(e);
      },
    });
    expect(await preview(replayQuarantine, counting, { ids: [`${TOPIC}#0#14`] })).toEqual({
      ok: false,
      refusal: {
        code: 'WOULD_QUARANTINE',
        message: expect.stringMatching(
          /^ops\.test#0#14 was quarantined for INVALID_AMOUNT, and its stored value would be quarantined again \(INVALID_AMOUNT: .+\): replay it with --value-file/,
        ),
      },
    });
    // Confirmed anyway: the same rule refuses it, audited as REFUSED with that code; ingest never sees it.
    await expect(apply(replayQuarantine, counting, { ids: [`${TOPIC}#0#11`] }, ALICE)).rejects.toThrow(
      /#0#11 was quarantined for INVALID_JSON, and its stored value would be quarantined again \(INVALID_JSON: /,
    );
    expect(fed).toBe(0);
    const [record11] = (await listAudit(counting)).filter((r) => r.target === `${TOPIC}#0#11`);
    expect([record11?.outcome?.result, record11?.outcome?.details.code]).toEqual(['REFUSED', 'WOULD_QUARANTINE']);
    await expect(replay([`${TOPIC}#0#999`])).rejects.toThrow(OperatorError);
    await expect(replay(['nonsense'])).rejects.toThrow(/not a quarantine id/);
    // The preview asks the same rule: refused before anything is fed to ingest.
    expect(await preview(replayQuarantine, ports(), { ids: [`${TOPIC}#0#999`] })).toEqual({
      ok: false,
      refusal: { code: 'NOT_FOUND', message: `no quarantined record ${TOPIC}#0#999` },
    });
  });

  it('a stored value the decoder deployed now reads (a fix on our side) is replayed and accepted', async () => {
    // Quarantined by an older decoder for a rule this one no longer breaks: the kept bytes are a valid event.
    await ingest(record(15, 'not json at all'));
    const valid = JSON.stringify(transferEvent({ eventId: 'ops-fixed-here', channels: ['EMAIL'] }));
    await table.doc.send(
      new UpdateCommand({
        TableName: table.tableName,
        Key: { pk: `QUARANTINE#${TOPIC}#0#15`, sk: 'RECORD' },
        UpdateExpression: 'SET #raw = :raw, reason = :reason, eventId = :id',
        ExpressionAttributeNames: { '#raw': 'raw' },
        ExpressionAttributeValues: {
          ':raw': Buffer.from(valid).toString('base64'),
          ':reason': 'SCHEMA_VIOLATION',
          ':id': 'ops-fixed-here',
        },
      }),
    );
    expect((await preview(replayQuarantine, ports(), { ids: [`${TOPIC}#0#15`] })).ok).toBe(true);
    expect(await replay([`${TOPIC}#0#15`])).toEqual([
      { id: `${TOPIC}#0#15`, outcome: 'ACCEPTED', eventId: 'ops-fixed-here' },
    ]);
  });

  it('replay-quarantine of a conflict: refused as it is (the inbox holds another meaning), DUPLICATE once corrected to the original', async () => {
    const original = JSON.stringify(transferEvent({ eventId: 'ops-dup', channels: ['EMAIL'] }));
    await ingest(record(12, original));
    await ingest(record(13, transferEvent({ eventId: 'ops-dup', channels: ['EMAIL'], data: { amount: '1' } })));
    await expect(replay([`${TOPIC}#0#13`])).rejects.toThrow(/quarantined for EVENT_ID_CONFLICT.*--value-file/);
    const before = await table.eventItems('ops-dup');
    expect((await replay([`${TOPIC}#0#13`], original))[0]?.outcome).toBe('DUPLICATE');
    expect(await table.eventItems('ops-dup')).toEqual(before);
  });

  it('replay-failed-batches replays each parked invocation record since a time, oldest first (payload as JSON or string)', async () => {
    const s3 = mockClient(S3Client);
    const event = (id: string, offset: number) => record(offset, transferEvent({ eventId: id, channels: ['EMAIL'] }));
    // The SDK's streaming body, reduced to the one method replayFailedBatches reads.
    const body = (text: string) => ({ Body: { transformToString: async () => text } });
    s3.on(ListObjectsV2Command).resolves({
      Contents: [
        { Key: 'b/2', LastModified: new Date('2026-12-01T10:00:00Z') },
        { Key: 'b/1', LastModified: new Date('2026-12-01T09:00:00Z') },
        { Key: 'b/old', LastModified: new Date('2026-11-01T09:00:00Z') },
      ],
    });
    s3.on(GetObjectCommand, { Key: 'b/1' }).resolves(
      body(JSON.stringify({ version: '1.0', KafkaBatchInfo: {}, payload: event('ops-parked-1', 20) })) as never,
    );
    s3.on(GetObjectCommand, { Key: 'b/2' }).resolves(
      body(JSON.stringify({ version: '1.0', payload: JSON.stringify(event('ops-parked-2', 21)) })) as never,
    );
    const invoked: string[] = [];
    const batches = await apply(
      replayFailedBatches,
      ports({
        parked: new S3ParkedBatches(new S3Client({}), 'parked'),
        invokeIngest: async (e) => {
          invoked.push(Object.values(e.records).flat()[0]?.offset.toString() ?? '');
          await ingest(e);
        },
      }),
      { sinceIso: '2026-11-30T00:00:00.000Z' },
      ALICE,
    );
    expect(batches.map((b) => [b.key, b.records])).toEqual([
      ['b/1', 1],
      ['b/2', 1],
    ]);
    expect(invoked).toEqual(['20', '21']);
    expect((await inspectEvent(ports(), 'ops-parked-2')).view.inbox).toBeDefined();
    s3.restore();
    expect(() => parkedEvent('{"payload":{"eventSource":"aws:sqs"}}', 'k')).toThrow(/no MSK invocation record/);
  });
});

describe('resend', () => {
  const put = (id: string, status: string, extra: Record<string, unknown> = {}) =>
    table.doc.send(
      new PutCommand({
        TableName: table.tableName,
        Item: {
          pk: `EVENT#${id}`,
          sk: 'NOTIFICATION#EMAIL',
          kind: 'NOTIFICATION',
          notificationId: `${id}#EMAIL`,
          eventId: id,
          channel: 'EMAIL',
          status,
          attempt: 3,
          createdAt: '2026-11-01T00:00:00.000Z',
          updatedAt: '2026-11-01T00:05:00.000Z',
          ...extra,
        },
      }),
    );
  const request = (id: string) => ({ notificationId: `${id}#EMAIL` });

  it('puts a FAILED notification back to PENDING once, recorded with who, when, why and what it was', async () => {
    await put('ops-failed', 'FAILED', {
      lastError: 'REJECTED: MessageRejected',
      // Feedback about the earlier send: it stays in the resend's record, and the item starts afresh for the new one.
      deliveryStatus: 'FAILED',
      deliveryMessageId: 'm-0',
      deliveryResponse: 'Unknown error attempting to reach phone',
    });
    const after = await resendNow(
      operatorOn(table, { now: () => Date.parse('2026-12-01T12:00:00Z') }),
      request('ops-failed'),
    );
    expect(after).toMatchObject({
      status: 'PENDING',
      attempt: 3,
      deferrals: 3,
      createdAt: '2026-12-01T12:00:00.000Z',
      firstCreatedAt: '2026-11-01T00:00:00.000Z',
      sweepKey: expect.stringMatching(/^PENDING#EMAIL#\d$/),
      manualResends: [
        {
          by: 'alice',
          at: '2026-12-01T12:00:00.000Z',
          reason: 'customer called',
          fromStatus: 'FAILED',
          attempt: 3,
          lastError: 'REJECTED: MessageRejected',
          deliveryStatus: 'FAILED',
          deliveryResponse: 'Unknown error attempting to reach phone',
        },
      ],
    });
    expect(after.lastError).toBeUndefined();
    expect([after.deliveryStatus, after.deliveryMessageId, after.deliveryResponse]).toEqual([
      undefined,
      undefined,
      undefined,
    ]);
    // Now in flight: a second resend is refused until the pipeline has given up again.
    await expect(resendNow(ports(), request('ops-failed'))).rejects.toThrow(/PENDING: still in flight/);
  });

  it('resends UNKNOWN, and refuses SENT, SENDING, an unknown id and an item that moved since it was shown', async () => {
    await put('ops-unknown', 'UNKNOWN');
    await put('ops-sent', 'SENT', { providerMessageId: 'm-1' });
    await put('ops-sending', 'SENDING');
    await expect(resendNow(ports(), request('ops-sent'))).rejects.toThrow(
      /SENT: the provider accepted it as message m-1; no delivery report yet/,
    );
    expect((await table.eventItems('ops-sent'))[0]).toMatchObject({ status: 'SENT', providerMessageId: 'm-1' });
    await expect(resendNow(ports(), request('ops-sending'))).rejects.toThrow(/in flight/);
    await expect(resendNow(ports(), request('ops-none'))).rejects.toThrow(/no notification/);
    const shown = (attempt: number) => ({ ...request('ops-unknown'), expected: { status: 'UNKNOWN', attempt } });
    await expect(resendNow(ports(), shown(2))).rejects.toThrow(/changed since it was shown/);
    expect((await resendNow(ports(), shown(3))).status).toBe('PENDING');
  });

  it("a notification whose acceptance is known is resent only when the operator names the provider's message id", async () => {
    // UNKNOWN, but the provider's acceptance was recorded after its lease expired.
    await put('ops-late', 'UNKNOWN', { providerMessageId: 'm-late', acceptedLateAt: '2026-11-01T00:06:00.000Z' });
    await put('ops-sent-2', 'SENT', { providerMessageId: 'm-2' });
    await expect(resendNow(ports(), request('ops-late'))).rejects.toThrow(
      /accepted it as message m-late .*--despite-accepted m-late/,
    );
    await expect(resendNow(ports(), { ...request('ops-late'), despiteAccepted: 'm-other' })).rejects.toThrow(
      /names m-other, not m-late/,
    );
    expect((await table.eventItems('ops-late'))[0]).toMatchObject({ status: 'UNKNOWN', providerMessageId: 'm-late' });
    const late = await resendNow(ports(), { ...request('ops-late'), despiteAccepted: 'm-late' });
    expect(late).toMatchObject({
      status: 'PENDING',
      manualResends: [{ fromStatus: 'UNKNOWN', providerMessageId: 'm-late', despiteAccepted: true }],
    });
    expect(late.providerMessageId).toBeUndefined();
    // SENT: the same, deliberately.
    await expect(resendNow(ports(), request('ops-sent-2'))).rejects.toThrow(/message m-2/);
    expect((await resendNow(ports(), { ...request('ops-sent-2'), despiteAccepted: 'm-2' })).status).toBe('PENDING');
  });

  it('refuses, at the clock of the request, a notice the moment would stop: past its validity, held, or a code never kept', async () => {
    const at = (iso: string) => operatorOn(table, { now: () => Date.parse(iso) });
    // A low-balance notice is worth sending for six hours after it occurred; its send failed.
    await put('ops-lowbal', 'FAILED', { template: 'LowBalance', occurredAt: '2026-11-01T00:00:00.000Z' });
    expect(await preview(resend, at('2026-11-01T06:30:00Z'), request('ops-lowbal'))).toEqual({
      ok: false,
      refusal: { code: 'PAST_VALIDITY', message: expect.stringMatching(/validity ended at 2026-11-01T06:00:00.000Z/) },
    });
    await expect(resendNow(at('2026-11-01T06:30:00Z'), request('ops-lowbal'))).rejects.toThrow(/would end EXPIRED/);
    expect((await table.eventItems('ops-lowbal'))[0]).toMatchObject({ status: 'FAILED', attempt: 3 });
    expect((await resendNow(at('2026-11-01T05:00:00Z'), request('ops-lowbal'))).status).toBe('PENDING');
    // A one-time code's failed send, inside its five minutes: the code was forgotten when it failed.
    const code = { template: 'OneTimePasscode', occurredAt: '2026-11-01T00:00:00.000Z', secretDigests: { code: 'm' } };
    await put('ops-code', 'FAILED', code);
    expect(await preview(resend, at('2026-11-01T00:02:00Z'), request('ops-code'))).toMatchObject({
      refusal: { code: 'SECRET_FORGOTTEN' },
    });
    expect(await preview(resend, at('2026-11-01T00:10:00Z'), request('ops-code'))).toMatchObject({
      refusal: { code: 'PAST_VALIDITY' },
    });
    await put('ops-held', 'HELD', { heldUntil: '2026-11-01T08:00:00.000Z' });
    await expect(resendNow(ports(), request('ops-held'))).rejects.toThrow(/HELD until 2026-11-01T08:00:00.000Z/);
  });

  /** Ports whose first UpdateCommand is preceded by `meanwhile` on the same item: a change between the read and the write. */
  const racing = (id: string, meanwhile: Omit<UpdateCommandInput, 'TableName' | 'Key'>) =>
    operatorOn({
      tableName: table.tableName,
      doc: new Proxy(table.doc, {
        get(target, prop, receiver) {
          if (prop !== 'send') return Reflect.get(target, prop, receiver);
          return async (command: unknown) => {
            if (command instanceof UpdateCommand) {
              await table.doc.send(
                new UpdateCommand({
                  TableName: table.tableName,
                  Key: { pk: `EVENT#${id}`, sk: 'NOTIFICATION#EMAIL' },
                  ...meanwhile,
                }),
              );
            }
            return target.send(command as never);
          };
        },
      }),
    });

  it('the conditional write refuses a resend when the acceptance was recorded between the read and the write', async () => {
    await put('ops-late-race', 'UNKNOWN');
    const late = racing('ops-late-race', {
      UpdateExpression: 'SET providerMessageId = :mid',
      ExpressionAttributeValues: { ':mid': 'm-just-now' },
    });
    await expect(resendNow(late, request('ops-late-race'))).rejects.toThrow(/changed while being resent/);
    expect((await table.eventItems('ops-late-race'))[0]).toMatchObject({ status: 'UNKNOWN' });
  });

  it('the conditional write refuses a resend when the item turned SENT between the read and the write', async () => {
    await put('ops-race', 'FAILED');
    // The read sees FAILED; before the write, something marks it SENT (the update is made to fail its condition).
    const sent = racing('ops-race', {
      UpdateExpression: 'SET #s = :sent',
      ExpressionAttributeNames: { '#s': 'status' },
      ExpressionAttributeValues: { ':sent': 'SENT' },
    });
    await expect(resendNow(sent, request('ops-race'))).rejects.toThrow(/changed while being resent/);
    expect((await table.eventItems('ops-race'))[0]?.status).toBe('SENT');
  });
});

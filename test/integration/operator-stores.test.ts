/**
 * The stores behind the operator's use cases, on DynamoDB Local: each write is one conditional request that does what
 * was decided on the item as read, or nothing, and says which — a resend or an erasure never lands on an item that
 * moved since it was read; preferences holding an opt-out are never deleted.
 */
import { PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { incidentKeyOf } from '../../functions/domain/keys.ts';
import { DynamoAudienceStore } from '../../functions/stores/audience-store.ts';
import { DynamoEventStore, type ResendTarget } from '../../functions/stores/event-store.ts';
import { DynamoQuarantineStore } from '../../functions/stores/quarantine-store.ts';
import { type LocalTable, newLocalTable } from '../support/local-table.ts';
import { ALICE_ID } from '../support/operator.ts';

let table: LocalTable;
let events: DynamoEventStore;
const AT = '2026-12-02T05:00:00.000Z';

beforeAll(async () => {
  table = await newLocalTable(inject('dynamoEndpoint'));
  events = new DynamoEventStore(table.doc, table.tableName);
});

const put = (item: Record<string, unknown>) =>
  table.doc.send(new PutCommand({ TableName: table.tableName, Item: item }));
const notification = (eventId: string, status: string, extra: Record<string, unknown> = {}) => ({
  pk: `EVENT#${eventId}`,
  sk: 'NOTIFICATION#EMAIL',
  kind: 'NOTIFICATION',
  notificationId: `${eventId}#EMAIL`,
  eventId,
  channel: 'EMAIL',
  template: 'TransferCompleted',
  status,
  attempt: 2,
  userId: 'u-1',
  recipient: 'alex@example.com',
  data: { amount: '1' },
  createdAt: '2026-11-01T00:00:00.000Z',
  ...extra,
});
const inbox = (eventId: string, userId: string, occurredAt: string) => ({
  pk: `EVENT#${eventId}`,
  sk: 'INBOX',
  kind: 'INBOX',
  eventId,
  userKey: `USER#${userId}`,
  occurredAt,
});
const change = (eventId: string, set: Record<string, unknown>) =>
  table.doc.send(
    new UpdateCommand({
      TableName: table.tableName,
      Key: { pk: `EVENT#${eventId}`, sk: 'NOTIFICATION#EMAIL' },
      UpdateExpression: `SET ${Object.keys(set)
        .map((_, i) => `#k${i} = :v${i}`)
        .join(', ')}`,
      ExpressionAttributeNames: Object.fromEntries(Object.keys(set).map((k, i) => [`#k${i}`, k])),
      ExpressionAttributeValues: Object.fromEntries(Object.values(set).map((v, i) => [`:v${i}`, v])),
    }),
  );
const alice = { by: ALICE_ID, reason: 'customer called', accepted: undefined };

describe('the event store', () => {
  it("reads an event's inbox item and notifications, and a customer's events newest first through byUser", async () => {
    await put(inbox('es-old', 'u-es', '2026-11-01T00:00:00Z'));
    await put(inbox('es-new', 'u-es', '2026-11-02T00:00:00Z'));
    await put(notification('es-new', 'SENT'));
    expect(await events.eventIdsOfUser('u-es')).toEqual(['es-new', 'es-old']);
    const view = await events.read('es-new');
    expect(view.inbox).toMatchObject({ sk: 'INBOX' });
    expect(view.notifications.map((n) => n.notificationId)).toEqual(['es-new#EMAIL']);
  });

  it('resend: FAILED → PENDING with the record of who and why; lost when the attempt moved since the read', async () => {
    await put(notification('es-resend', 'FAILED', { lastError: 'REJECTED' }));
    const read = (await events.read('es-resend')).notifications[0] as unknown as ResendTarget;
    await change('es-resend', { attempt: 3 });
    expect(await events.resend(read, alice, Date.parse(AT))).toEqual({ result: 'lost' });
    const again = (await events.read('es-resend')).notifications[0] as unknown as ResendTarget;
    const written = await events.resend(again, alice, Date.parse(AT));
    expect(written.result).toBe('applied');
    expect(written.item).toMatchObject({
      status: 'PENDING',
      createdAt: AT,
      manualResends: [
        {
          by: 'alice',
          verifiedBy: 'LOCAL_USER',
          reason: 'customer called',
          fromStatus: 'FAILED',
          lastError: 'REJECTED',
        },
      ],
    });
    expect(written.item).not.toHaveProperty('lastError');
  });

  it('resend of an accepted send: lost when another acceptance or an erasure landed since the read; the earlier send stays findable', async () => {
    await put(notification('es-accepted', 'SENT', { providerMessageId: 'm-1' }));
    const read = (await events.read('es-accepted')).notifications[0] as unknown as ResendTarget;
    await change('es-accepted', { providerMessageId: 'm-2' });
    expect((await events.resend(read, { ...alice, accepted: 'm-1' }, Date.parse(AT))).result).toBe('lost');
    await change('es-accepted', { providerMessageId: 'm-1', erasedAt: AT });
    expect((await events.resend(read, { ...alice, accepted: 'm-1' }, Date.parse(AT))).result).toBe('lost');
    const items = await table.eventItems('es-accepted');
    // An email's earlier send keeps its id off the providerMessage index, as the item does now.
    expect(items.find((i) => i.kind === 'EARLIER_SEND')).toMatchObject({ sesMessageId: 'm-1' });
    expect(items.find((i) => i.kind === 'NOTIFICATION')).toMatchObject({ status: 'SENT' });
  });

  it('erase: a finished notification of the customer loses address, data and user id; one in flight or of another customer is lost', async () => {
    await put(notification('es-erase', 'SENT'));
    await put(notification('es-flight', 'SENDING'));
    const key = (eventId: string) => ({ pk: `EVENT#${eventId}`, sk: 'NOTIFICATION#EMAIL' });
    expect(await events.erase(key('es-flight'), 'u-1', AT)).toBe('lost');
    expect(await events.erase(key('es-erase'), 'u-other', AT)).toBe('lost');
    expect(await events.erase(key('es-erase'), 'u-1', AT)).toBe('applied');
    expect((await events.read('es-erase')).notifications[0]).toMatchObject({
      status: 'SENT',
      recipient: '',
      data: {},
      userId: 'ERASED',
      erasedAt: AT,
    });
    expect((await events.read('es-flight')).notifications[0]).toMatchObject({ recipient: 'alex@example.com' });
    // Erased already: its user id is gone, so a second erasure of the customer does not touch it.
    expect(await events.erase(key('es-erase'), 'u-1', AT)).toBe('lost');
  });

  it('unlist takes an event out of the byUser index; an event without an inbox item says so', async () => {
    await put(inbox('es-unlist', 'u-unlist', '2026-11-01T00:00:00Z'));
    expect(await events.unlist('es-unlist', AT)).toBe(true);
    expect(await events.eventIdsOfUser('u-unlist')).toEqual([]);
    expect(await events.unlist('es-none', AT)).toBe(false);
    expect(await table.eventItems('es-none')).toEqual([]);
  });

  it('lists REFUSED notifications by day from the incident index (never a scan), by reason, leaving erased ones out', async () => {
    const refused = (eventId: string, extra: Record<string, unknown> = {}) => {
      const n = notification(eventId, 'REFUSED', {
        refusedReason: 'INVALID_CONTACT',
        createdAt: '2026-12-01T00:00:00Z',
        ...extra,
      });
      return { ...n, incidentKey: incidentKeyOf('REFUSED', '2026-12-01T00:00:00Z', n.pk), incidentAt: n.createdAt };
    };
    await put(refused('es-ref'));
    await put(refused('es-ref-erased', { erasedAt: AT }));
    // A REFUSED item without the index key (written before the index) is not found: the look-up reads no table.
    await put(
      notification('es-ref-unindexed', 'REFUSED', {
        refusedReason: 'INVALID_CONTACT',
        createdAt: '2026-12-01T00:00:00Z',
      }),
    );
    const ids = (items: Record<string, unknown>[]) => items.map((i) => i.notificationId);
    const window = { sinceIso: '2026-11-30T00:00:00.000Z', untilIso: AT };
    expect(ids(await events.listRefused({ ...window, reason: 'INVALID_CONTACT' }))).toEqual(['es-ref#EMAIL']);
    expect(ids(await events.listRefused({ ...window, reason: 'MISSING_CONTACT' }))).toEqual([]);
    expect(ids(await events.listRefused({ sinceIso: '2026-12-02T00:00:00Z', untilIso: AT }))).toEqual([]);
  });
});

describe('the quarantine store', () => {
  it('gets and lists quarantined records; marks one replayed only if it exists', async () => {
    const quarantines = new DynamoQuarantineStore(table.doc, table.tableName);
    const source = { topic: 'qs', partition: 0, offset: 7 };
    await put({
      pk: 'QUARANTINE#qs#0#7',
      sk: 'RECORD',
      kind: 'QUARANTINE',
      reason: 'INVALID_JSON',
      detail: 'value is not valid JSON',
      raw: '',
      rawTruncated: false,
      receivedAt: '2026-12-01T00:00:00.000Z',
      source,
      incidentKey: incidentKeyOf('QUARANTINED', '2026-12-01T00:00:00.000Z', 'QUARANTINE#qs#0#7'),
      incidentAt: '2026-12-01T00:00:00.000Z',
    });
    expect(await quarantines.get(source)).toMatchObject({ reason: 'INVALID_JSON' });
    const window = { sinceIso: '2026-11-30T00:00:00.000Z', untilIso: AT };
    expect((await quarantines.list({ ...window, reason: 'INVALID_JSON' })).map((q) => q.source)).toContainEqual(source);
    expect(await quarantines.list({ ...window, reason: 'TOO_LARGE' })).toEqual([]);
    expect(await quarantines.list({ sinceIso: '2026-12-02T00:00:00Z', untilIso: AT })).toEqual([]);
    expect(await quarantines.markReplayed(source, AT)).toBe(true);
    expect(await quarantines.get(source)).toMatchObject({ replayedAt: AT });
    const none = { topic: 'qs', partition: 0, offset: 8 };
    expect(await quarantines.markReplayed(none, AT)).toBe(false);
    expect(await quarantines.get(none)).toBeUndefined();
  });
});

describe("the audience store's operator methods", () => {
  it('forgets preferences that opt out of nothing, leaving only the watermark; keeps an opt-out — also one written after the read', async () => {
    const audience = new DynamoAudienceStore(table.doc, table.tableName);
    const prefs = (userId: string, optOut: string[]) =>
      put({
        pk: `PREFS#${userId}`,
        sk: 'PREFS',
        kind: 'PREFS',
        userId,
        optOut,
        occurredAtMs: 1_000,
        occurredAt: '1970-01-01T00:00:01Z',
        eventId: 'p-ev',
      });
    await prefs('p-empty', []);
    await prefs('p-out', ['SMS']);
    expect(await audience.forgetPreferences('p-empty', AT)).toBe('deleted');
    const tombstone = await audience.preferences('p-empty');
    expect(tombstone).toMatchObject({ optOut: [], erasedAt: AT, occurredAtMs: 1_000, eventId: 'p-ev' });
    expect(tombstone).not.toHaveProperty('userId');
    expect(tombstone).not.toHaveProperty('occurredAt');
    expect(await audience.forgetPreferences('p-empty', AT)).toBe('none');
    expect(await audience.forgetPreferences('p-out', AT)).toBe('kept');
    expect(await audience.preferences('p-out')).toMatchObject({ optOut: ['SMS'] });
    expect(await audience.forgetPreferences('p-none', AT)).toBe('none');
    // An opt-out written between the store's read and its delete: the condition keeps it.
    await prefs('p-race', []);
    const racing = new DynamoAudienceStore(
      new Proxy(table.doc, {
        get(target, prop, receiver) {
          if (prop !== 'send') return Reflect.get(target, prop, receiver);
          return async (command: { constructor: { name: string } }) => {
            if (command.constructor.name === 'UpdateCommand') await prefs('p-race', ['EMAIL']);
            return target.send(command as never);
          };
        },
      }),
      table.tableName,
    );
    expect(await racing.forgetPreferences('p-race', AT)).toBe('kept');
    expect(await audience.preferences('p-race')).toMatchObject({ optOut: ['EMAIL'] });
  });
});

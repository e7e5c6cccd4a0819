/**
 * Where a send's message id is kept, on DynamoDB Local: a push's or an SMS's on the providerMessage index (SNS's
 * reports name only the message), an email's in sesMessageId, off the index (its SES reports carry our tag) — so an
 * email's send writes no index entry. Every reader finds an email's id in either attribute: the feedback that records
 * a report on it, the sweeper that settles an expired lease whose acceptance is on the item, an operator's resend and
 * the earlier send it keeps; items written before (an email's id in providerMessageId) still work.
 */
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { TABLE_SCHEMA } from '../../functions/contracts/table-schema.ts';
import type { Feedback, FeedbackTarget } from '../../functions/domain/feedback.ts';
import { notificationKey } from '../../functions/domain/keys.ts';
import { buildNotification, type NotificationItem } from '../../functions/domain/notification.ts';
import { DynamoDeliveryStore } from '../../functions/feedback/delivery-store.ts';
import { DynamoEventStore, type ResendTarget } from '../../functions/stores/event-store.ts';
import { DynamoSweepStore } from '../../functions/stores/sweep-store.ts';
import { decodeTransfer, transferEvent } from '../support/events.ts';
import { type LocalTable, newLocalTable } from '../support/local-table.ts';
import { ALICE_ID } from '../support/operator.ts';

let table: LocalTable;
let store: DynamoSweepStore;
let deliveries: DynamoDeliveryStore;
let events: DynamoEventStore;
beforeAll(async () => {
  table = await newLocalTable(inject('dynamoEndpoint'));
  store = new DynamoSweepStore(table.doc, table.tableName);
  deliveries = new DynamoDeliveryStore(table.doc, table.tableName);
  events = new DynamoEventStore(table.doc, table.tableName);
});

const NOW = Date.now();
type Channel = 'EMAIL' | 'SMS';
async function put(eventId: string, channel: Channel, over: Record<string, unknown> = {}) {
  const d = decodeTransfer(transferEvent({ eventId }));
  const n = { ...buildNotification(d.event, channel, 'x@example.com', NOW, { retentionDays: 1 }), ...over };
  await table.doc.send(new PutCommand({ TableName: table.tableName, Item: n }));
  return n as NotificationItem;
}
/** A notification put as ingest writes it, then claimed. */
async function claimed(eventId: string, channel: Channel, leaseMs = 60_000): Promise<NotificationItem> {
  await put(eventId, channel);
  const c = await store.claim(notificationKey(eventId, channel), `c-${eventId}`, NOW, leaseMs);
  if (c.kind !== 'claimed') throw new Error(c.kind);
  return c.item;
}
const item = (eventId: string, channel: Channel) => store.get(notificationKey(eventId, channel));
/** The providerMessage index's entries for a message id: what SNS's reports are matched by. */
async function indexed(messageId: string) {
  return (await table.indexItems(TABLE_SCHEMA.messageIndex, messageId)).map((i) => String(i.sk));
}
const target = (eventId: string, channel: Channel): FeedbackTarget => ({
  notificationId: `${eventId}#${channel}`,
  eventId,
  channel,
});
const delivered = (messageId: string, channel: Channel): Feedback => ({
  channel,
  messageId,
  status: 'DELIVERED',
  rank: 2,
  at: new Date(NOW + 5_000).toISOString(),
  atMs: NOW + 5_000,
  sentAtMs: NOW,
});

describe("an email's message id is off the providerMessage index; an SNS send's is on it", () => {
  it('SENT: the email writes sesMessageId (no index entry), the SMS providerMessageId (found by its id)', async () => {
    expect(await store.markSent(await claimed('mi-sent', 'EMAIL'), 'ses-mi-1', NOW + 1_000)).toBe('applied');
    expect(await store.markSent(await claimed('mi-sent', 'SMS'), 'sns-mi-1', NOW + 1_000)).toBe('applied');
    const email = await item('mi-sent', 'EMAIL');
    expect(email).toMatchObject({ status: 'SENT', sesMessageId: 'ses-mi-1' });
    expect(email).not.toHaveProperty('providerMessageId');
    expect(await indexed('ses-mi-1')).toEqual([]);
    expect(await indexed('sns-mi-1')).toEqual(['NOTIFICATION#SMS']);
    expect(await deliveries.findByMessageId('sns-mi-1')).toEqual(target('mi-sent', 'SMS'));
  });

  it("an SES report is recorded on the email it names by its tag, whichever attribute holds the email's id", async () => {
    expect(await store.markSent(await claimed('mi-report', 'EMAIL'), 'ses-mi-2', NOW + 1_000)).toBe('applied');
    await put('mi-legacy', 'EMAIL', { status: 'SENT', attempt: 1, providerMessageId: 'ses-mi-old' });
    for (const [eventId, id] of [
      ['mi-report', 'ses-mi-2'],
      ['mi-legacy', 'ses-mi-old'],
    ] as const) {
      // The fast path (one conditional write) and the read-decide-write path both recognise the send.
      expect(await deliveries.recordDelivery(target(eventId, 'EMAIL'), delivered(id, 'EMAIL'))).toMatchObject({
        kind: 'recorded',
      });
      expect(
        await deliveries.recordDelivery(target(eventId, 'EMAIL'), { ...delivered('ses-other', 'EMAIL') }),
      ).toMatchObject({ kind: 'otherSend' });
      expect(await item(eventId, 'EMAIL')).toMatchObject({ deliveryStatus: 'DELIVERED', deliveryMessageId: id });
    }
  });

  it("an expired lease whose email's acceptance is on the item (sesMessageId) is SENT by the sweeper, never resolved UNKNOWN", async () => {
    const held = await claimed('mi-lease', 'EMAIL', 1_000);
    expect(await store.extendLease(held, NOW + 2_000, NOW + 500, 'ses-mi-3')).toBe('applied');
    expect(await item('mi-lease', 'EMAIL')).toMatchObject({ status: 'SENDING', sesMessageId: 'ses-mi-3' });
    const entry = { ...held, leaseUntil: NOW + 2_000, sweepAt: Number(held.sweepAt) };
    expect(await store.resolveExpired(entry, 'UNKNOWN', NOW + 3_000, NOW + 60_000)).toBe('accepted');
    expect(await item('mi-lease', 'EMAIL')).toMatchObject({ status: 'SENT', sesMessageId: 'ses-mi-3' });
  });

  it("a late acceptance is recorded on an email's UNKNOWN item as sesMessageId, once", async () => {
    const held = await claimed('mi-late', 'EMAIL', 1_000);
    expect(await store.markUnknown(held, 'LEASE_EXPIRED', NOW + 2_000)).toBe('applied');
    expect(await store.recordLateAcceptance(held, 'ses-mi-4', NOW + 3_000)).toBe('applied');
    expect(await store.recordLateAcceptance(held, 'ses-mi-5', NOW + 4_000)).toBe('lost');
    expect(await item('mi-late', 'EMAIL')).toMatchObject({ status: 'UNKNOWN', sesMessageId: 'ses-mi-4' });
  });

  it("an operator's resend takes an email's id off the item and keeps it on its earlier send, off the index too", async () => {
    expect(await store.markSent(await claimed('mi-resend', 'EMAIL'), 'ses-mi-6', NOW + 1_000)).toBe('applied');
    const read = (await events.read('mi-resend')).notifications[0] as unknown as ResendTarget;
    const by = { by: ALICE_ID, reason: 'customer called' };
    // Not without naming the accepted send, then with it.
    expect((await events.resend(read, { ...by, accepted: undefined }, NOW + 2_000)).result).toBe('lost');
    const r = await events.resend(read, { ...by, accepted: 'ses-mi-6' }, NOW + 2_000);
    expect(r.result).toBe('applied');
    expect(r.item).toMatchObject({ status: 'PENDING', manualResends: [{ providerMessageId: 'ses-mi-6' }] });
    expect(r.item).not.toHaveProperty('sesMessageId');
    const earlier = (await table.eventItems('mi-resend')).find((i) => i.kind === 'EARLIER_SEND');
    expect(earlier).toMatchObject({ sesMessageId: 'ses-mi-6', notificationId: 'mi-resend#EMAIL' });
    expect(await indexed('ses-mi-6')).toEqual([]);
  });
});

/**
 * Every field the payloadHash covers, pinned by behaviour through the ingest path (the batch, admission included):
 * an event published again with that one field changed — to another valid value — is an EVENT_ID_CONFLICT, field by
 * field; the same event spelled differently is a duplicate. A field dropped from the hash (its slot kept) would turn
 * its conflict into a silent duplicate: the changed notice would never reach the customer, and nobody would know.
 * Written against the ingest path, not the hash's helpers, so it holds whatever shape the event contract takes.
 */
import { describe, expect, it } from 'vitest';
import { ingestBatch } from '../../functions/ingest/ingest-batch.ts';
import { mskEvent } from '../../tools/local/msk.ts';
import { transferEvent } from '../support/events.ts';
import { MemoryInboxStore, memoryBatchDeps } from '../support/memory-inbox-store.ts';

/** A TransferFailed with every optional field given, so each one can be changed alone. */
const original = (eventId: string) =>
  transferEvent({
    eventId,
    type: 'TransferFailed',
    occurredAt: '2026-11-30T09:15:00Z',
    recipient: { userId: 'u-42', locale: 'en', timeZone: 'Europe/London' },
    data: {
      transferId: 't-99',
      amount: '10000',
      currency: 'JPY',
      counterpartyName: 'Taro Yamada',
      reason: 'insufficient funds',
    },
    channels: ['EMAIL', 'PUSH', 'SMS'],
  });

type Event = ReturnType<typeof original> & { recipient: Record<string, unknown>; data: Record<string, unknown> };
const OTHER_ARN = 'arn:aws:sns:ap-northeast-1:123456789012:endpoint/APNS/bank-app/11111111-2222-4333-8444-555555555555';

/** One change per hashed field, each to a value admission accepts. */
const CHANGES: [string, (e: Event) => Record<string, unknown>][] = [
  ['type', (e) => ({ ...e, type: 'TransferCompleted', data: { ...e.data, reason: undefined } })],
  ['occurredAt', (e) => ({ ...e, occurredAt: '2026-11-30T09:15:01Z' })],
  ['recipient.userId', (e) => ({ ...e, recipient: { ...e.recipient, userId: 'u-43' } })],
  ['recipient.locale', (e) => ({ ...e, recipient: { ...e.recipient, locale: 'ja' } })],
  ['recipient.timeZone', (e) => ({ ...e, recipient: { ...e.recipient, timeZone: 'Asia/Tokyo' } })],
  ['recipient.email', (e) => ({ ...e, recipient: { ...e.recipient, email: 'other@example.com' } })],
  ['recipient.pushEndpointArn', (e) => ({ ...e, recipient: { ...e.recipient, pushEndpointArn: OTHER_ARN } })],
  ['recipient.phoneNumber', (e) => ({ ...e, recipient: { ...e.recipient, phoneNumber: '+819012345679' } })],
  ['data.transferId', (e) => ({ ...e, data: { ...e.data, transferId: 't-100' } })],
  ['data.amount', (e) => ({ ...e, data: { ...e.data, amount: '10001' } })],
  ['data.currency', (e) => ({ ...e, data: { ...e.data, currency: 'USD', amount: '10000.00' } })],
  ['data.counterpartyName', (e) => ({ ...e, data: { ...e.data, counterpartyName: 'Taro Yamada Jr' } })],
  ['data.reason', (e) => ({ ...e, data: { ...e.data, reason: 'account closed' } })],
  ['channels', (e) => ({ ...e, channels: ['EMAIL', 'SMS'] })],
];

/** The original, then `again` at the next offset: what ingest made of the second record. */
async function secondOf(eventId: string, again: Record<string, unknown>, separately: boolean) {
  const store = new MemoryInboxStore();
  const first = { topic: 'hash', partition: 0, offset: 0, value: original(eventId) };
  const second = { topic: 'hash', partition: 0, offset: 1, value: again };
  if (separately) {
    const one = await ingestBatch(mskEvent([first]), memoryBatchDeps(store));
    expect(one.results[0]?.kind).toBe('accepted');
    return (await ingestBatch(mskEvent([second]), memoryBatchDeps(store))).results[0];
  }
  const both = await ingestBatch(mskEvent([first, second]), memoryBatchDeps(store));
  expect(both.results[0]?.kind).toBe('accepted');
  return both.results[1];
}

describe('the payloadHash, field by field', () => {
  it.each(CHANGES)('a resend differing only in %s is a conflict', async (field, change) => {
    const eventId = `hash-${field}`;
    const changed = change(original(eventId) as Event);
    // In one batch (the chain settles it) and in a later delivery (the inbox look-up, then the transaction).
    for (const separately of [false, true]) {
      expect(await secondOf(eventId, changed, separately), `${field}, separately=${separately}`).toMatchObject({
        kind: 'conflict',
        eventId,
      });
    }
  });

  it('every field the contract hashes is changed above', () => {
    expect(CHANGES.map(([field]) => field).sort()).toEqual(
      [
        'type',
        'occurredAt',
        'recipient.userId',
        'recipient.locale',
        'recipient.timeZone',
        'recipient.email',
        'recipient.pushEndpointArn',
        'recipient.phoneNumber',
        'data.transferId',
        'data.amount',
        'data.currency',
        'data.counterpartyName',
        'data.reason',
        'channels',
      ].sort(),
    );
  });

  it('the same meaning spelled differently is a duplicate (key order, an equal amount, the instant, the set order)', async () => {
    const e = original('hash-respelled') as Event;
    const respelled = {
      channels: ['SMS', 'PUSH', 'EMAIL'],
      data: { ...e.data },
      recipient: { ...e.recipient },
      occurredAt: '2026-11-30T18:15:00+09:00',
      type: e.type,
      eventId: e.eventId,
    };
    for (const separately of [false, true]) {
      expect(await secondOf('hash-respelled', respelled, separately)).toMatchObject({ kind: 'duplicate' });
    }
  });
});

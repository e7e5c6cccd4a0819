/**
 * The producer's corrected resend of an event whose channels were refused (docs/event.md "A refused channel"), on the
 * in-memory store that keeps DynamoDB's conditional semantics: what counts as a repair, what stays a conflict, and
 * that a repair happens once whatever the order and the copies.
 */
import { describe, expect, it } from 'vitest';
import { ingestBatch } from '../../functions/ingest/ingest-batch.ts';
import { mskEvent } from '../../tools/local/msk.ts';
import { type EventOverrides, transferEvent } from '../support/events.ts';
import { MemoryInboxStore, memoryBatchDeps } from '../support/memory-inbox-store.ts';

let offset = 0;
const ingest = (store: MemoryInboxStore, events: object[], over: Parameters<typeof memoryBatchDeps>[1] = {}) =>
  ingestBatch(
    mskEvent(events.map((value) => ({ topic: 't', partition: 0, offset: offset++, value: JSON.stringify(value) }))),
    memoryBatchDeps(store, over),
  );
const event = (eventId: string, o: EventOverrides = {}) => transferEvent({ eventId, ...o });
const badPhone = (eventId: string, o: EventOverrides = {}) =>
  event(eventId, { ...o, recipient: { phoneNumber: '090-1234-5678', ...o.recipient } });
const fixed = (eventId: string, o: EventOverrides = {}) =>
  event(eventId, { ...o, recipient: { phoneNumber: '+81 90 1234 5678', ...o.recipient } });
const sms = (store: MemoryInboxStore, eventId: string) => store.items.get(`EVENT#${eventId}|NOTIFICATION#SMS`);

describe('a refused channel and its repair', () => {
  it('the corrected resend is a duplicate that repairs: SMS PENDING with the E.164 number, counted', async () => {
    const store = new MemoryInboxStore();
    const first = await ingest(store, [badPhone('r-1')]);
    expect(first.results[0]).toMatchObject({
      kind: 'accepted',
      channels: ['EMAIL', 'PUSH'],
      refused: [{ channel: 'SMS' }],
    });
    expect(first.figures).toMatchObject({ accepted: 1, withRefusedChannels: 1 });
    const r = await ingest(store, [fixed('r-1')]);
    expect(r.results).toEqual([{ kind: 'duplicate', eventId: 'r-1', repaired: ['SMS'] }]);
    expect(r.figures).toMatchObject({ received: 1, duplicates: 1, repairs: 1 });
    expect(sms(store, 'r-1')).toMatchObject({
      status: 'PENDING',
      recipient: '+819012345678',
      sweepKey: expect.any(String),
    });
    expect(store.inbox('r-1')).toMatchObject({ channels: ['EMAIL', 'PUSH', 'SMS'] });
    expect(store.inbox('r-1')).not.toHaveProperty('refusedChannels');
  });

  it('of two refused channels, a resend fixing one repairs that one; fixing the other later repairs the rest', async () => {
    const store = new MemoryInboxStore();
    await ingest(store, [badPhone('r-2', { recipient: { email: '花子@example.jp' } })]);
    expect(store.inbox('r-2')).toMatchObject({ channels: ['PUSH'], refusedChannels: ['EMAIL', 'SMS'] });
    const one = await ingest(store, [fixed('r-2', { recipient: { email: '花子@example.jp' } })]);
    expect(one.results[0]).toMatchObject({ repaired: ['SMS'] });
    expect(store.inbox('r-2')).toMatchObject({ refusedChannels: ['EMAIL'] });
    const two = await ingest(store, [fixed('r-2', { recipient: { email: 'hanako@example.jp' } })]);
    expect(two.results[0]).toMatchObject({ repaired: ['EMAIL'] });
    expect(store.items.get('EVENT#r-2|NOTIFICATION#EMAIL')).toMatchObject({
      status: 'PENDING',
      recipient: 'hanako@example.jp',
    });
    // Every version the inbox accepted is a duplicate from now on; nothing more is written.
    const writes = store.writes.length;
    const updates = store.updates.length;
    const again = await ingest(store, [
      badPhone('r-2', { recipient: { email: '花子@example.jp' } }),
      fixed('r-2', { recipient: { email: '花子@example.jp' } }),
      fixed('r-2', { recipient: { email: 'hanako@example.jp' } }),
    ]);
    expect(again.results.map((x) => x.kind)).toEqual(['duplicate', 'duplicate', 'duplicate']);
    expect(store.writes.length).toBe(writes);
    expect(store.updates.length).toBe(updates);
  });

  it('a listed channel without its contact point (MISSING_CONTACT) is repaired by the resend that gives it', async () => {
    const store = new MemoryInboxStore();
    const noPhone = { channels: ['EMAIL', 'SMS'], recipient: { phoneNumber: undefined } };
    await ingest(store, [event('r-9', noPhone)]);
    expect(sms(store, 'r-9')).toMatchObject({ status: 'REFUSED', refusedReason: 'MISSING_CONTACT' });
    const r = await ingest(store, [event('r-9', { channels: ['SMS', 'email'] })]);
    expect(r.results[0]).toMatchObject({ kind: 'duplicate', repaired: ['SMS'] });
    expect(sms(store, 'r-9')).toMatchObject({ status: 'PENDING', recipient: '+819012345678' });
  });

  it('still no country code: the same event, nothing to repair — a duplicate, no write', async () => {
    const store = new MemoryInboxStore();
    await ingest(store, [badPhone('r-3')]);
    const writes = store.writes.length;
    const r = await ingest(store, [event('r-3', { recipient: { phoneNumber: '03 1234 5678' } })]);
    expect(r.results).toEqual([{ kind: 'duplicate', eventId: 'r-3' }]);
    expect(store.writes.length).toBe(writes);
    expect(sms(store, 'r-3')).toMatchObject({ status: 'REFUSED' });
  });

  it('a corrected resend that changes anything else, or an email channel that was sent, is a conflict', async () => {
    const store = new MemoryInboxStore();
    await ingest(store, [badPhone('r-4')]);
    const r = await ingest(store, [
      fixed('r-4', { data: { amount: '10001' } }),
      fixed('r-4', { recipient: { email: 'other@example.com' } }),
      fixed('r-4', { channels: ['SMS'] }),
    ]);
    expect(r.results.map((x) => x.kind)).toEqual(['conflict', 'conflict', 'conflict']);
    expect(sms(store, 'r-4')).toMatchObject({ status: 'REFUSED' });
  });

  it('an event without refused channels knows no repair: another contact point is a conflict as before', async () => {
    const store = new MemoryInboxStore();
    await ingest(store, [event('r-5')]);
    const r = await ingest(store, [event('r-5', { recipient: { phoneNumber: '+14155550123' } })]);
    expect(r.results[0]).toMatchObject({ kind: 'conflict' });
  });

  it('a corrected resend too old to send repairs nothing (the age rule holds for repairs too)', async () => {
    const store = new MemoryInboxStore();
    await ingest(store, [badPhone('r-6')]);
    const r = await ingest(store, [fixed('r-6')], { now: () => Date.parse('2026-12-05T00:00:00Z') });
    expect(r.results).toEqual([{ kind: 'duplicate', eventId: 'r-6' }]);
    expect(sms(store, 'r-6')).toMatchObject({ status: 'REFUSED' });
  });

  it('another record repairing first between the read and the write: read again, then a duplicate', async () => {
    const store = new MemoryInboxStore();
    await ingest(store, [badPhone('r-7')]);
    // The first repair's write waits until the second one has committed.
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    // The second ingest starts once the first is held at its write, told so (a sleep could end before it got there).
    let held: () => void = () => undefined;
    const atWrite = new Promise<void>((resolve) => (held = resolve));
    let calls = 0;
    store.beforeWrite = async () => {
      if (++calls !== 1) return;
      held();
      await gate;
    };
    const slow = ingest(store, [fixed('r-7')]);
    await atWrite;
    const fast = ingest(store, [fixed('r-7', { recipient: { phoneNumber: '0081-90-1234-5678' } })]);
    const fastResult = await fast;
    release();
    const slowResult = await slow;
    const kinds = [fastResult.results[0], slowResult.results[0]];
    expect(kinds.filter((k) => k?.kind === 'duplicate' && k.repaired !== undefined)).toHaveLength(1);
    expect(kinds.every((k) => k?.kind === 'duplicate')).toBe(true);
    expect(sms(store, 'r-7')).toMatchObject({ status: 'PENDING', recipient: '+819012345678' });
  });

  it('a store without the repair operations keeps the old rule: another payload is a conflict', async () => {
    const store = new MemoryInboxStore();
    await ingest(store, [badPhone('r-8')]);
    const plain = Object.assign(Object.create(MemoryInboxStore.prototype) as MemoryInboxStore, store, {
      readInbox: undefined,
      repairChannels: undefined,
    });
    const r = await ingest(plain, [fixed('r-8')]);
    expect(r.results[0]).toMatchObject({ kind: 'conflict' });
  });
});

/**
 * The batch: the lowest offset is the original, records of one eventId run in order while others run concurrently,
 * the figures reconcile, and an event that yields no notification says so. On the in-memory store (DynamoDB's
 * conditional semantics), so the interleavings can be chosen.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TransientStoreError } from '../../functions/commons/errors.ts';
import { ingestBatch, reconciles } from '../../functions/ingest/ingest-batch.ts';
import { type KafkaRecordSpec, mskEvent } from '../../tools/local/msk.ts';
import { preferencesEvent, transferEvent } from '../support/events.ts';
import { BATCH_NOW, MemoryInboxStore, memoryBatchDeps } from '../support/memory-inbox-store.ts';

const _NOW = BATCH_NOW;
const deps = memoryBatchDeps;
const rec = (offset: number, value: KafkaRecordSpec['value'], partition = 0): KafkaRecordSpec => ({
  topic: 't',
  partition,
  offset,
  value,
});
const amountOf = (store: MemoryInboxStore, eventId: string) =>
  store.ofKind('NOTIFICATION').find((n) => n.eventId === eventId)?.data.amount;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('the lowest offset is the original', () => {
  it('a later record with the same eventId and another payload is the conflict, even when the original is slower', async () => {
    const store = new MemoryInboxStore();
    // The original's write is slow: run concurrently, the later record would win the race.
    store.beforeWrite = async (items) => {
      if (items[0]?.kind === 'INBOX' && (items[1] as { data?: { amount?: string } })?.data?.amount === '100') {
        await sleep(20);
      }
    };
    const event = mskEvent([
      rec(10, transferEvent({ eventId: 'same', data: { amount: '100' } })),
      rec(11, transferEvent({ eventId: 'other' })),
      rec(12, transferEvent({ eventId: 'same', data: { amount: '999' } })),
    ]);
    const summary = await ingestBatch(event, deps(store));
    expect(summary.results.map((r) => r.kind).sort()).toEqual(['accepted', 'accepted', 'conflict']);
    expect(amountOf(store, 'same')).toBe('100');
    expect(store.quarantined('t', 0, 12)?.reason).toBe('EVENT_ID_CONFLICT');
    expect(store.quarantined('t', 0, 10)).toBeUndefined();
  });

  it("different customers' events still run concurrently (one slow event does not hold the others)", async () => {
    const store = new MemoryInboxStore();
    const order: string[] = [];
    store.beforeWrite = async (items) => {
      const id = (items[0] as { eventId: string }).eventId;
      if (id === 'slow') await sleep(30);
      order.push(id);
    };
    await ingestBatch(
      mskEvent([
        rec(0, transferEvent({ eventId: 'slow', recipient: { userId: 'u-1' } })),
        rec(1, transferEvent({ eventId: 'fast', recipient: { userId: 'u-2' } })),
      ]),
      deps(store),
    );
    expect(order).toEqual(['fast', 'slow']);
  });

  it('across partitions of one batch the order is (partition, offset)', async () => {
    const store = new MemoryInboxStore();
    const event = mskEvent([
      rec(5, transferEvent({ eventId: 'x', data: { amount: '2' } }), 1),
      rec(9, transferEvent({ eventId: 'x', data: { amount: '1' } }), 0),
    ]);
    await ingestBatch(event, deps(store));
    expect(amountOf(store, 'x')).toBe('1');
    expect(store.quarantined('t', 1, 5)?.reason).toBe('EVENT_ID_CONFLICT');
  });

  it('property: two concurrent deliveries of one batch, in any interleaving, keep the lowest offset and quarantine the later ones', async () => {
    const payload = fc.record({ id: fc.constantFrom('a', 'b', 'c'), amount: fc.constantFrom('1', '2', '3') });
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(payload, fc.nat(1)), { minLength: 1, maxLength: 8 }),
        fc.scheduler(),
        async (records, s) => {
          const store = new MemoryInboxStore();
          store.beforeWrite = () => s.schedule(Promise.resolve());
          const specs = records.map(([p, partition], i) =>
            rec(i, transferEvent({ eventId: p.id, data: { amount: p.amount } }), partition),
          );
          const deliveries = [ingestBatch(mskEvent(specs), deps(store)), ingestBatch(mskEvent(specs), deps(store))];
          await s.waitFor(Promise.all(deliveries));
          const [one, two] = await Promise.all(deliveries);
          expect(one!.failure).toBeUndefined();
          expect(two!.failure).toBeUndefined();
          // The expected original of each eventId: its lowest (partition, offset).
          const sorted = [...specs].sort((x, y) => x.partition - y.partition || x.offset - y.offset);
          for (const id of ['a', 'b', 'c']) {
            const mine = sorted.filter((r) => (r.value as { eventId: string }).eventId === id);
            if (mine.length === 0) continue;
            const original = (mine[0]!.value as { data: { amount: string } }).data.amount;
            expect(amountOf(store, id)).toBe(original);
            for (const r of mine) {
              const amount = (r.value as { data: { amount: string } }).data.amount;
              const q = store.quarantined('t', r.partition, r.offset);
              expect(q?.reason).toBe(amount === original ? undefined : 'EVENT_ID_CONFLICT');
            }
          }
          expect(new Set(store.writes).size).toBe(store.writes.length);
        },
      ),
      { numRuns: 150 },
    );
  });

  it('a record that meets an outage holds back the later records of its eventId, and redelivery puts them in order', async () => {
    const store = new MemoryInboxStore();
    let outage = true;
    store.beforeWrite = (items) => {
      if (outage && (items[0] as { eventId: string }).eventId === 'held') {
        throw new TransientStoreError('throttled', ['ThrottlingError']);
      }
    };
    const event = mskEvent([
      rec(0, transferEvent({ eventId: 'held', data: { amount: '1' } })),
      rec(1, transferEvent({ eventId: 'free', recipient: { userId: 'u-other' } })),
      rec(2, transferEvent({ eventId: 'held', data: { amount: '2' } })),
      rec(3, 'not json'),
    ]);
    const first = await ingestBatch(event, deps(store));
    expect(first.failure).toBeInstanceOf(TransientStoreError);
    expect(first.figures).toMatchObject({ received: 4, accepted: 1, quarantined: 1, failed: 2 });
    expect(reconciles(first.figures)).toBe(true);
    expect(store.inbox('held')).toBeUndefined();

    outage = false;
    const second = await ingestBatch(event, deps(store));
    expect(second.failure).toBeUndefined();
    expect(second.figures).toMatchObject({
      received: 4,
      accepted: 1,
      duplicates: 1,
      conflicts: 1,
      requarantined: 1,
      failed: 0,
    });
    expect(amountOf(store, 'held')).toBe('1');
  });
});

describe('the figures reconcile', () => {
  it('delivered = accepted + duplicates + conflicts + quarantined + requarantined + failed, with the side figures', async () => {
    const store = new MemoryInboxStore();
    const noContact = { email: undefined, pushEndpointArn: undefined, phoneNumber: undefined };
    const event = mskEvent([
      rec(0, transferEvent({ eventId: 'ok' })),
      rec(1, transferEvent({ eventId: 'ok' })),
      rec(2, transferEvent({ eventId: 'ok', data: { amount: '1' } })),
      rec(3, transferEvent({ eventId: 'nobody', recipient: noContact })),
      rec(4, transferEvent({ eventId: 'old', occurredAt: '2026-11-28T09:15:00Z' })),
      rec(5, transferEvent({ eventId: 'dirty', data: { counterpartyName: 'A\r\nB' } })),
      rec(6, null),
      rec(7, transferEvent({ eventId: 'money', data: { amount: '0.004', currency: 'USD' } })),
    ]);
    const first = await ingestBatch(event, deps(store));
    expect(first.figures).toEqual({
      received: 8,
      accepted: 4,
      duplicates: 1,
      conflicts: 1,
      quarantined: 2,
      requarantined: 0,
      failed: 0,
      withoutNotifications: 1,
      tooOld: 1,
      displayTextSanitised: 1,
      cardNumbersMasked: 0,
      withRefusedChannels: 0,
      spellingsNormalised: 0,
      localeFallbacks: 0,
      timeZoneFallbacks: 0,
      repairs: 0,
    });
    expect(reconciles(first.figures)).toBe(true);

    // Redelivered: every good record is a duplicate, every bad one (incl. the conflict) is re-quarantined.
    const again = await ingestBatch(event, deps(store));
    expect(again.figures).toMatchObject({ received: 8, accepted: 0, duplicates: 5, conflicts: 0, requarantined: 3 });
    expect(reconciles(again.figures)).toBe(true);
  });
});

describe('max event age', () => {
  const old = transferEvent({ eventId: 'old', occurredAt: '2026-11-29T09:15:00Z' });

  it('an event older than MAX_EVENT_AGE_SECONDS is recorded with a marker and no notification, not quarantined', async () => {
    const store = new MemoryInboxStore();
    const summary = await ingestBatch(mskEvent([rec(0, old)]), deps(store));
    expect(summary.results).toEqual([
      {
        kind: 'accepted',
        eventId: 'old',
        channels: [],
        refused: [],
        sanitised: [],
        masked: [],
        normalised: [],
        fallbacks: [],
        skipped: 'TOO_OLD',
      },
    ]);
    expect(store.inbox('old')).toMatchObject({ skipped: 'TOO_OLD', channels: [] });
    expect(store.ofKind('NOTIFICATION')).toEqual([]);
    expect(store.ofKind('QUARANTINE')).toEqual([]);
    // Idempotent as usual: a redelivery is a duplicate, another payload under the id a conflict.
    const again = await ingestBatch(
      mskEvent([rec(0, old), rec(1, { ...old, data: { ...(old.data as object), amount: '1' } })]),
      deps(store),
    );
    expect(again.results.map((r) => r.kind)).toEqual(['duplicate', 'conflict']);
  });

  it('an event just inside the age is sent; 0 disables the rule', async () => {
    const store = new MemoryInboxStore();
    const fresh = transferEvent({ eventId: 'fresh', occurredAt: '2026-11-29T09:15:02Z' });
    const summary = await ingestBatch(mskEvent([rec(0, fresh)]), deps(store));
    expect(summary.results[0]).toMatchObject({ kind: 'accepted', channels: ['EMAIL', 'PUSH', 'SMS'] });
    const off = await ingestBatch(mskEvent([rec(1, old)]), deps(new MemoryInboxStore(), { maxEventAgeSeconds: 0 }));
    expect(off.results[0]).toMatchObject({ kind: 'accepted', channels: ['EMAIL', 'PUSH', 'SMS'] });
  });

  it('an event more than a day in the future is quarantined (a producer clock or data bug), a few hours ahead is sent', async () => {
    const store = new MemoryInboxStore();
    const ahead = transferEvent({ eventId: 'ahead', occurredAt: '2026-11-30T18:15:00Z' }); // 9 h: a local time as Z
    const future = transferEvent({ eventId: 'future', occurredAt: '2099-01-01T00:00:00Z' });
    const summary = await ingestBatch(mskEvent([rec(0, ahead), rec(1, future)]), deps(store));
    expect(summary.results[0]).toMatchObject({ kind: 'accepted', channels: ['EMAIL', 'PUSH', 'SMS'] });
    expect(summary.results[1]).toMatchObject({
      kind: 'quarantined',
      rejection: { reason: 'SCHEMA_VIOLATION', eventId: 'future', detail: expect.stringContaining('occurredAt') },
    });
    expect(store.inbox('future')).toBeUndefined();
  });
});

describe("one customer's records apply in offset order, across eventIds", () => {
  const optOut = preferencesEvent('prefs-1', '2026-11-30T09:14:00Z', ['EMAIL', 'SMS'], 'u-9');
  const transfer = transferEvent({ eventId: 'after-opt-out', recipient: { userId: 'u-9' } });
  const stranger = transferEvent({ eventId: 'someone-else', recipient: { userId: 'u-10' } });

  it('a preference the store cannot write yet holds back the transfer after it of the same customer, not the others', async () => {
    const store = new MemoryInboxStore();
    let outage = true;
    store.beforeWrite = (items) => {
      if (outage && items.some((i) => i.kind === 'PREFS'))
        throw new TransientStoreError('throttled', ['ThrottlingError']);
    };
    const event = mskEvent([rec(0, optOut), rec(1, transfer), rec(2, stranger)]);
    const first = await ingestBatch(event, deps(store));
    expect(first.failure).toBeInstanceOf(TransientStoreError);
    expect(first.figures).toMatchObject({ received: 3, accepted: 1, failed: 2 });
    expect(reconciles(first.figures)).toBe(true);
    // The transfer was not written: no notification of it can reach dispatch before the opt-out is in force.
    expect(store.inbox('after-opt-out')).toBeUndefined();
    expect(store.ofKind('NOTIFICATION').filter((n) => n.eventId === 'after-opt-out')).toEqual([]);
    expect(store.inbox('someone-else')).toBeDefined();

    outage = false;
    const again = await ingestBatch(event, deps(store));
    expect(again.failure).toBeUndefined();
    expect(store.ofKind('PREFS')).toMatchObject([{ userId: 'u-9', optOut: ['EMAIL', 'SMS'] }]);
    expect(store.inbox('after-opt-out')).toBeDefined();
  });

  it('the preference is written before the transfer after it, even when its write is the slower one', async () => {
    const store = new MemoryInboxStore();
    const order: string[] = [];
    store.beforeWrite = async (items) => {
      const id = (items[0] as { eventId: string }).eventId;
      if (id === 'prefs-1') await sleep(30);
      order.push(id);
    };
    await ingestBatch(mskEvent([rec(7, optOut), rec(8, transfer), rec(9, stranger)]), deps(store));
    expect(order.indexOf('prefs-1')).toBeLessThan(order.indexOf('after-opt-out'));
    // Another customer's event did not wait for this customer's slow preference.
    expect(order.indexOf('someone-else')).toBeLessThan(order.indexOf('prefs-1'));
  });

  it('records joined through a customer and an eventId form one chain: the lowest offset is still the original', async () => {
    const store = new MemoryInboxStore();
    store.beforeWrite = async (items) => {
      if (
        (items[0] as { eventId: string }).eventId === 'x' &&
        (items[1] as { data?: { amount?: string } })?.data?.amount === '1'
      )
        await sleep(20);
    };
    const event = mskEvent([
      rec(0, transferEvent({ eventId: 'x', data: { amount: '1' }, recipient: { userId: 'a' } })),
      rec(1, transferEvent({ eventId: 'y', recipient: { userId: 'a' } })),
      // The same eventId under another customer: a conflict, joined to the first through the eventId.
      rec(2, transferEvent({ eventId: 'x', data: { amount: '2' }, recipient: { userId: 'b' } })),
    ]);
    const summary = await ingestBatch(event, deps(store));
    expect(summary.results.map((r) => r.kind)).toEqual(['accepted', 'accepted', 'conflict']);
    expect(amountOf(store, 'x')).toBe('1');
  });
});

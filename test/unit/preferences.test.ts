/**
 * PreferencesUpdated through the inbox: idempotent like any event, quarantined when bad, newest occurredAt
 * wins whatever the arrival order. On the in-memory store, which keeps DynamoDB's conditional semantics.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { PreferencesItem } from '../../functions/domain/audience.ts';
import { ingestBatch } from '../../functions/ingest/ingest-batch.ts';
import { mskEvent } from '../../tools/local/msk.ts';
import { preferencesEvent } from '../support/events.ts';
import { BATCH_NOW, MemoryInboxStore, memoryBatchDeps } from '../support/memory-inbox-store.ts';

const NOW = BATCH_NOW;
const deps = memoryBatchDeps;
const ingest = (store: MemoryInboxStore, events: unknown[], from = 0) =>
  ingestBatch(
    mskEvent(events.map((e, i) => ({ topic: 't', partition: 0, offset: from + i, value: JSON.stringify(e) }))),
    deps(store),
  );
const prefsOf = (store: MemoryInboxStore, userId = 'u-42') =>
  store.items.get(`PREFS#${userId}|PREFS`) as PreferencesItem | undefined;

describe('PreferencesUpdated', () => {
  it('is recorded in the inbox and sets the opt-out set; a redelivery is a duplicate', async () => {
    const store = new MemoryInboxStore();
    const e = preferencesEvent('p-1', '2026-11-30T09:00:00Z', ['SMS', 'EMAIL']);
    const first = await ingest(store, [e]);
    expect(first.results).toEqual([
      {
        kind: 'accepted',
        eventId: 'p-1',
        channels: [],
        refused: [],
        sanitised: [],
        masked: [],
        normalised: [],
        fallbacks: [],
        preferences: true,
      },
    ]);
    expect(prefsOf(store)).toMatchObject({ optOut: ['EMAIL', 'SMS'], eventId: 'p-1', kind: 'PREFS' });
    expect(store.inbox('p-1')).toMatchObject({ type: 'PreferencesUpdated', channels: [] });
    expect((await ingest(store, [e], 10)).results).toEqual([{ kind: 'duplicate', eventId: 'p-1' }]);
    expect(store.ofKind('NOTIFICATION')).toEqual([]);
  });

  it('an older update arriving late is recorded as STALE and changes nothing; an empty list opts back in', async () => {
    const store = new MemoryInboxStore();
    await ingest(store, [preferencesEvent('p-new', '2026-11-30T09:00:00Z', ['SMS'])]);
    const late = await ingest(store, [preferencesEvent('p-old', '2026-11-30T08:00:00+00:00', [])], 1);
    expect(late.results[0]).toMatchObject({ kind: 'accepted', skipped: 'STALE', preferences: true });
    expect(prefsOf(store)?.optOut).toEqual(['SMS']);
    expect(store.inbox('p-old')).toMatchObject({ skipped: 'STALE' });
    await ingest(store, [preferencesEvent('p-newer', '2026-11-30T10:00:00+01:00', [])], 2); // = 09:00Z: a tie
    // The tie goes to the greater eventId ('p-newer' > 'p-new'), so both arrival orders end the same.
    expect(prefsOf(store)).toMatchObject({ optOut: [], eventId: 'p-newer' });
  });

  it('whatever the arrival order of a set of updates, the newest is in force', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(fc.integer({ min: 0, max: 1_000_000 }), { minLength: 1, maxLength: 6 }),
        fc.array(fc.subarray(['EMAIL', 'PUSH', 'SMS']), { minLength: 6, maxLength: 6 }),
        fc.array(fc.double({ noNaN: true }), { minLength: 6, maxLength: 6 }),
        async (times, sets, order) => {
          const events = times.map((t, i) =>
            preferencesEvent(`p-${i}`, new Date(NOW - t * 1000).toISOString(), sets[i] ?? []),
          );
          // Arrival order: the events sorted by an arbitrary key each.
          const arrival = events.map((e, i) => ({ e, k: order[i] ?? 0 })).sort((a, b) => a.k - b.k);
          const store = new MemoryInboxStore();
          for (const [i, { e }] of arrival.entries()) await ingest(store, [e], i);
          const newest = events[times.indexOf(Math.min(...times))]!;
          expect(prefsOf(store)?.eventId).toBe(newest.eventId);
        },
      ),
      { numRuns: 40 },
    );
  });

  it('bad preferences are quarantined with a reason: unknown channel, missing userId, no opt-out list', async () => {
    const store = new MemoryInboxStore();
    const r = await ingest(store, [
      preferencesEvent('p-a', '2026-11-30T09:00:00Z', ['PIGEON']),
      { ...preferencesEvent('p-b', '2026-11-30T09:00:00Z', []), recipient: {} },
      { ...preferencesEvent('p-d', '2026-11-30T09:00:00Z', []), data: {} },
    ]);
    expect(r.results.map((x) => (x.kind === 'quarantined' ? x.rejection.reason : x.kind))).toEqual([
      'UNKNOWN_CHANNEL',
      'SCHEMA_VIOLATION',
      'SCHEMA_VIOLATION',
    ]);
    expect(prefsOf(store)).toBeUndefined();
    expect(r.figures).toMatchObject({ received: 3, quarantined: 3 });
  });

  it('an opt-out list is a set of channel names in any case: the same meaning, the same hash, a duplicate', async () => {
    const store = new MemoryInboxStore();
    await ingest(store, [preferencesEvent('p-set', '2026-11-30T09:00:00Z', ['SMS', 'PUSH'])]);
    const r = await ingest(store, [preferencesEvent('p-set', '2026-11-30t09:00:00z', [' sms', 'Push', 'SMS'])], 1);
    expect(r.results[0]).toMatchObject({ kind: 'duplicate', eventId: 'p-set' });
    expect(prefsOf(store)?.optOut).toEqual(['PUSH', 'SMS']);
  });

  it('dated more than a day in the future: refused like a transfer, so it can never make later real opt-outs stale', async () => {
    const store = new MemoryInboxStore();
    const future = new Date(NOW + 2 * 86_400_000).toISOString();
    const r = await ingest(store, [preferencesEvent('p-future', future, [])]);
    expect(r.results[0]).toMatchObject({
      kind: 'quarantined',
      rejection: { reason: 'SCHEMA_VIOLATION', detail: 'occurredAt is more than a day in the future (at occurredAt)' },
    });
    expect(prefsOf(store)).toBeUndefined();
    // The customer's real opt-out, made now, is applied — on main the future-dated update had won for ever.
    const now = await ingest(store, [preferencesEvent('p-now', new Date(NOW).toISOString(), ['SMS'])], 1);
    expect(now.results[0]).toMatchObject({ kind: 'accepted', preferences: true });
    expect(now.results[0]).not.toHaveProperty('skipped');
    expect(prefsOf(store)?.optOut).toEqual(['SMS']);
    // Within the tolerance (clock skew, a local time written as Z) it is still accepted.
    const skewed = new Date(NOW + 12 * 3_600_000).toISOString();
    const ok = await ingest(store, [preferencesEvent('p-skew', skewed, [])], 2);
    expect(ok.results[0]).toMatchObject({ kind: 'accepted', preferences: true });
  });

  it('preferences DynamoDB refuses are quarantined as UNPROCESSABLE, not retried for ever (the partition goes on)', async () => {
    const store = new MemoryInboxStore();
    store.recordPreferences = async () => {
      throw Object.assign(new Error('refused'), { name: 'ValidationException' });
    };
    const r = await ingest(store, [preferencesEvent('p-refused', '2026-11-30T09:00:00Z', ['SMS'])]);
    expect(r.failure).toBeUndefined();
    expect(r.results[0]).toMatchObject({ kind: 'quarantined', rejection: { reason: 'UNPROCESSABLE' } });
  });

  it('the same eventId reused with another opt-out set is a conflict, quarantined', async () => {
    const store = new MemoryInboxStore();
    await ingest(store, [preferencesEvent('p-1', '2026-11-30T09:00:00Z', ['SMS'])]);
    const r = await ingest(store, [preferencesEvent('p-1', '2026-11-30T09:00:00Z', ['PUSH'])], 1);
    expect(r.results[0]).toMatchObject({ kind: 'conflict', eventId: 'p-1' });
    expect(prefsOf(store)?.optOut).toEqual(['SMS']);
  });
});

/**
 * Input never throws. Whatever the bytes — arbitrary bytes, arbitrary JSON, arbitrary Unicode (lone surrogates,
 * noncharacters, U+2028/2029, bidi controls, NUL, very long and deeply nested values) in every field of an otherwise
 * valid event — ingest never rejects, every record is written once or quarantined once, and nothing reaches the
 * store that DynamoDB would refuse (the in-memory store refuses what DynamoDB refuses, and counts it).
 */
import fc from 'fast-check';
import pLimit from 'p-limit';
import { describe, expect, it } from 'vitest';
import { type BatchDeps, ingestBatch, reconciles } from '../../functions/ingest/ingest-batch.ts';
import { type IngestResult, ingestRecord } from '../../functions/ingest/ingest-record.ts';
import { isSafeDisplayText } from '../../tools/chaos/text-oracle.ts';
import { mskEvent } from '../../tools/local/msk.ts';
import { PUSH_ARN, transferEvent } from '../support/events.ts';
import { MemoryInboxStore } from '../support/memory-inbox-store.ts';
import { TROUBLE, unicodeText } from '../support/unicode.ts';

const NOW = Date.parse('2026-11-30T09:15:01Z');
const deps = (store: MemoryInboxStore, maxEventAgeSeconds: number): BatchDeps => ({
  store,
  limit: pLimit(4),
  now: () => NOW,
  retentionDays: 35,
  maxEventBytes: 65_536,
  maxEventAgeSeconds,
  transactionAttempts: 2,
  sleep: async () => undefined,
});

/** Every field of the event, as a path. */
const FIELDS = [
  ['eventId'],
  ['type'],
  ['occurredAt'],
  ['channels'],
  ['channels', 0],
  ['recipient'],
  ['recipient', 'userId'],
  ['recipient', 'locale'],
  ['recipient', 'email'],
  ['recipient', 'pushEndpointArn'],
  ['recipient', 'phoneNumber'],
  ['data'],
  ['data', 'transferId'],
  ['data', 'amount'],
  ['data', 'currency'],
  ['data', 'counterpartyName'],
  ['data', 'reason'],
] as const;

const deep = fc
  .integer({ min: 1, max: 3000 })
  .chain((depth) => fc.constantFrom(JSON.parse(`${'['.repeat(depth)}${']'.repeat(depth)}`), { a: depth }));

/** A field's replacement: any Unicode, a valid value with trouble spliced in, any JSON, a deep or huge value. */
const fieldValue = (valid: unknown) =>
  fc.oneof(
    { weight: 4, arbitrary: unicodeText },
    {
      weight: 4,
      arbitrary: fc
        .tuple(fc.constantFrom(...TROUBLE), fc.nat())
        .map(([t, at]) =>
          typeof valid === 'string'
            ? valid.slice(0, at % (valid.length + 1)) + t + valid.slice(at % (valid.length + 1))
            : t,
        ),
    },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
    { weight: 1, arbitrary: deep },
    { weight: 1, arbitrary: fc.constantFrom('x'.repeat(70_000), 'é'.repeat(20_000), '\uD800'.repeat(5_000)) },
  );

const baseEvent = fc.record({
  eventId: fc.constantFrom('e1', 'e2', 'e3'),
  type: fc.constantFrom('TransferCompleted', 'TransferFailed'),
  amount: fc.constantFrom('10', '10.5', '10.50', '0.004'),
  currency: fc.constantFrom('USD', 'JPY', 'BHD'),
  channels: fc.option(fc.constantFrom(['EMAIL'], ['PUSH', 'EMAIL'], ['SMS', 'PUSH', 'EMAIL']), { nil: undefined }),
  occurredAt: fc.constantFrom('2026-11-30T09:15:00Z', '2026-11-30T09:15:00+00:00', '2026-11-28T09:15:00Z'),
});

/** A valid event with 0–3 fields replaced. */
const mutatedEvent = fc.tuple(baseEvent, fc.array(fc.constantFrom(...FIELDS), { maxLength: 3 })).chain(([b, paths]) => {
  const event = transferEvent({
    eventId: b.eventId,
    type: b.type,
    occurredAt: b.occurredAt,
    data: { amount: b.amount, currency: b.currency, reason: 'insufficient funds' },
    recipient: { pushEndpointArn: PUSH_ARN },
    ...(b.channels === undefined ? {} : { channels: [...b.channels] }),
  });
  return fc.tuple(...paths.map((p) => fieldValue(get(event, p)))).map((values) => {
    const copy = structuredClone(event);
    for (const [i, p] of paths.entries()) set(copy, p, values[i]);
    return copy;
  });
});

function get(o: unknown, path: readonly (string | number)[]): unknown {
  return path.reduce<unknown>((v, k) => (v !== null && typeof v === 'object' ? (v as never)[k] : undefined), o);
}
function set(o: unknown, path: readonly (string | number)[], value: unknown): void {
  const parent = get(o, path.slice(0, -1));
  if (parent !== null && typeof parent === 'object') (parent as Record<string | number, unknown>)[path.at(-1)!] = value;
}

/** One Kafka record value: bytes, JSON text, or an event (JSON.stringify escapes lone surrogates, JSON.parse restores them). */
const recordValue = fc.oneof(
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 300 }).map((b) => Buffer.from(b)) },
  { weight: 1, arbitrary: fc.json({ maxDepth: 4 }) },
  { weight: 1, arbitrary: fc.constant(null) },
  { weight: 6, arbitrary: mutatedEvent.map((e) => JSON.stringify(e)) },
  {
    weight: 1,
    // A valid event's bytes with one byte changed.
    arbitrary: fc.tuple(mutatedEvent, fc.nat(), fc.integer({ min: 0, max: 255 })).map(([e, at, byte]) => {
      const b = Buffer.from(JSON.stringify(e));
      b[at % b.length] = byte;
      return b;
    }),
  },
);

const everyStringWellFormed = (v: unknown): boolean =>
  typeof v === 'string'
    ? v.isWellFormed()
    : Array.isArray(v)
      ? v.every(everyStringWellFormed)
      : v !== null && typeof v === 'object'
        ? Object.entries(v).every(([k, x]) => k.isWellFormed() && everyStringWellFormed(x))
        : true;

describe('input never throws', () => {
  it('property: a batch of arbitrary records — never rejects, each record written once or quarantined once, redelivery changes nothing', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(recordValue, { minLength: 1, maxLength: 8 }),
        fc.constantFrom(0, 86_400),
        async (values, maxAge) => {
          const store = new MemoryInboxStore();
          const specs = values.map((value, offset) => ({ topic: 't', partition: offset % 2, offset, value }));
          const event = mskEvent(specs);
          const first = await ingestBatch(event, deps(store, maxAge));

          expect(first.failure).toBeUndefined();
          expect(first.results).toHaveLength(values.length);
          expect(reconciles(first.figures)).toBe(true);
          // Nothing DynamoDB would refuse reached the store, and the last-resort guard never had to act.
          expect(store.refused).toEqual([]);
          expect(first.results.filter(unprocessable)).toEqual([]);
          // Conditional puts: no key written twice.
          expect(new Set(store.writes).size).toBe(store.writes.length);

          for (const spec of specs) {
            const quarantined = store.quarantined('t', spec.partition, spec.offset);
            const inboxes = store.ofKind('INBOX').filter((i) => i.source.offset === spec.offset);
            // Exactly one of: this record wrote its event, or it was quarantined, or it was a duplicate of one written.
            expect(Number(quarantined !== undefined) + inboxes.length).toBeLessThanOrEqual(1);
          }
          for (const r of first.results) {
            if (r.kind === 'duplicate' || r.kind === 'accepted') expect(store.inbox(r.eventId)).toBeDefined();
          }
          const quarantines = first.results.filter((r) => r.kind === 'quarantined' || r.kind === 'conflict').length;
          expect(store.ofKind('QUARANTINE')).toHaveLength(quarantines);
          expect(store.ofKind('INBOX')).toHaveLength(first.results.filter((r) => r.kind === 'accepted').length);

          for (const n of store.ofKind('NOTIFICATION')) {
            expect(everyStringWellFormed(n)).toBe(true);
            for (const text of [n.data.counterpartyName, n.data.reason]) {
              if (text !== undefined) expect(isSafeDisplayText(text) && text !== '').toBe(true);
            }
          }

          const writes = store.writes.length;
          const updates = store.updates.length;
          const again = await ingestBatch(event, deps(store, maxAge));
          expect(again.failure).toBeUndefined();
          expect(store.writes.length).toBe(writes);
          // A repair (a corrected resend in the batch) happens once: its redelivery is a duplicate.
          expect(store.updates.length).toBe(updates);
          expect(again.figures.accepted + again.figures.conflicts + again.figures.quarantined).toBe(0);
          expect(reconciles(again.figures)).toBe(true);
        },
      ),
      { numRuns: 400 },
    );
    // 400 runs of two deliveries each: 5 s on an idle machine, 24 s in a CI clone under a load of 12 — the timeout
    // only catches a hang.
  }, 120_000);

  it('property: ingestRecord alone never rejects on arbitrary values, including values that are not base64 strings', async () => {
    const anyValue = fc.oneof(
      recordValue.map((v) => (v === null ? null : (Buffer.isBuffer(v) ? v : Buffer.from(v)).toString('base64'))),
      unicodeText,
      fc.anything(),
    );
    await fc.assert(
      fc.asyncProperty(anyValue, async (value) => {
        const store = new MemoryInboxStore();
        const result = await ingestRecord(
          { source: { topic: 't', partition: 0, offset: 1 }, value },
          deps(store, 86_400),
        );
        expect(['accepted', 'quarantined']).toContain(result.kind);
        expect(store.refused).toEqual([]);
        expect(unprocessable(result)).toBe(false);
        expect(store.writes.length).toBeGreaterThan(0);
      }),
      { numRuns: 400 },
    );
  });
});

const unprocessable = (r: IngestResult) => r.kind === 'quarantined' && r.rejection.reason === 'UNPROCESSABLE';

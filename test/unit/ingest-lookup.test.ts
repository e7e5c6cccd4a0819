/**
 * Issue 15: a known event costs a fraction of a request. Before the transactions, one look-up reads the inbox items of
 * the batch's eventIds; a known event with the same payload is a duplicate with no write, one with another payload a
 * conflict; the transaction stays the guard for everything the look-up did not see.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { BatchGetCommand, type BatchGetCommandInput, DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { describe, expect, it } from 'vitest';
import { BATCH_GET_MAX_KEYS, DynamoInboxStore } from '../../functions/ingest/inbox-store.ts';
import { ingestBatch, reconciles } from '../../functions/ingest/ingest-batch.ts';
import { type KafkaRecordSpec, mskEvent } from '../../tools/local/msk.ts';
import { preferencesEvent, transferEvent } from '../support/events.ts';
import { BATCH_NOW, MemoryInboxStore, memoryBatchDeps } from '../support/memory-inbox-store.ts';

const _NOW = BATCH_NOW;
const deps = memoryBatchDeps;
let offset = 0;
const batch = (values: KafkaRecordSpec['value'][]) =>
  mskEvent(values.map((value) => ({ topic: 't', partition: 0, offset: offset++, value })));

/** Counts the transactions the use case sends. */
function counting(store: MemoryInboxStore) {
  const calls = { transactions: 0 };
  const record = store.recordEvent.bind(store);
  store.recordEvent = (inbox, notifications) => {
    calls.transactions++;
    return record(inbox, notifications);
  };
  return calls;
}

describe('the look-up before the transactions', () => {
  it('a batch redelivered whole: one look-up, no transaction, every record a duplicate, nothing written', async () => {
    const store = new MemoryInboxStore();
    const values = Array.from({ length: 50 }, (_, i) => transferEvent({ eventId: `whole-${i}` }));
    await ingestBatch(batch(values), deps(store));
    const writes = store.writes.length;
    const calls = counting(store);
    const again = await ingestBatch(batch(values), deps(store));
    expect(again.results.every((r) => r.kind === 'duplicate')).toBe(true);
    expect(again.figures).toMatchObject({ received: 50, duplicates: 50, accepted: 0 });
    expect(reconciles(again.figures)).toBe(true);
    expect(calls.transactions).toBe(0);
    expect(store.lookups.at(-1)).toHaveLength(50);
    expect(store.writes).toHaveLength(writes);
  });

  it('a known eventId with another payload is a conflict: quarantined, no transaction', async () => {
    const store = new MemoryInboxStore();
    await ingestBatch(batch([transferEvent({ eventId: 'reused', data: { amount: '100' } })]), deps(store));
    const calls = counting(store);
    const event = batch([transferEvent({ eventId: 'reused', data: { amount: '999' } })]);
    const r = await ingestBatch(event, deps(store));
    expect(r.results.map((x) => x.kind)).toEqual(['conflict']);
    expect(calls.transactions).toBe(0);
    const source = event.records['t-0']?.[0];
    expect(store.quarantined('t', 0, source?.offset ?? -1)?.reason).toBe('EVENT_ID_CONFLICT');
    expect(store.ofKind('NOTIFICATION').find((n) => n.eventId === 'reused')?.data.amount).toBe('100');
  });

  it('a mixed batch: only unseen events go to their transaction', async () => {
    const store = new MemoryInboxStore();
    const old = Array.from({ length: 9 }, (_, i) => transferEvent({ eventId: `mixed-old-${i}` }));
    await ingestBatch(batch(old), deps(store));
    const calls = counting(store);
    const r = await ingestBatch(batch([...old, transferEvent({ eventId: 'mixed-new' })]), deps(store));
    expect(r.figures).toMatchObject({ accepted: 1, duplicates: 9 });
    expect(calls.transactions).toBe(1);
  });

  it('the same new event twice in one batch: the first is written, the second is a duplicate without a transaction', async () => {
    const store = new MemoryInboxStore();
    const calls = counting(store);
    const e = transferEvent({ eventId: 'twice-in-batch' });
    const r = await ingestBatch(batch([e, e]), deps(store));
    expect(r.results.map((x) => x.kind)).toEqual(['accepted', 'duplicate']);
    expect(calls.transactions).toBe(1);
    // BatchGetItem refuses a key named twice: the adapter dedupes, the use case may ask twice.
    expect(store.lookups.at(-1)).toEqual(['twice-in-batch', 'twice-in-batch']);
  });

  it('a PreferencesUpdated event redelivered is settled by the look-up too: duplicate, or conflict under another payload', async () => {
    const store = new MemoryInboxStore();
    const e = preferencesEvent('prefs-known', '2026-11-30T09:00:00Z', ['SMS']);
    await ingestBatch(batch([e]), deps(store));
    let transactions = 0;
    const record = store.recordPreferences.bind(store);
    store.recordPreferences = (...args) => {
      transactions++;
      return record(...args);
    };
    const again = await ingestBatch(
      batch([e, preferencesEvent('prefs-known', '2026-11-30T09:00:00Z', ['EMAIL'])]),
      deps(store),
    );
    expect(again.results.map((x) => x.kind)).toEqual(['duplicate', 'conflict']);
    expect(transactions).toBe(0);
  });

  it('a failure before the first write (the shard mark) writes nothing and counts every record as failed', async () => {
    const store = new MemoryInboxStore();
    const r = await ingestBatch(batch([transferEvent({ eventId: 'mark-down' }), 'not json']), {
      ...deps(store),
      beforeWrites: async () => {
        throw new Error('ThrottlingException');
      },
    });
    expect(r.failure).toBeInstanceOf(Error);
    expect(r.figures).toMatchObject({ received: 2, failed: 2 });
    expect(reconciles(r.figures)).toBe(true);
    expect(store.writes).toEqual([]);
  });

  it('the transaction stays the guard: an event written between the look-up and its transaction is a duplicate', async () => {
    const store = new MemoryInboxStore();
    const e = transferEvent({ eventId: 'raced' });
    // The look-up sees nothing; meanwhile another delivery of the same record writes it (its own look-up also empty).
    let first = true;
    store.findInboxes = async () => {
      if (first) {
        first = false;
        await ingestBatch(batch([e]), deps(store));
      }
      return new Map();
    };
    const r = await ingestBatch(batch([e]), deps(store));
    expect(r.results.map((x) => x.kind)).toEqual(['duplicate']);
    expect(store.ofKind('INBOX').filter((i) => i.eventId === 'raced')).toHaveLength(1);
  });

  it('a failed look-up costs nothing but the optimisation: every event goes to its transaction', async () => {
    const store = new MemoryInboxStore();
    const e = transferEvent({ eventId: 'lookup-down' });
    await ingestBatch(batch([e]), deps(store));
    store.findInboxes = async () => {
      throw new Error('ProvisionedThroughputExceededException');
    };
    const calls = counting(store);
    const r = await ingestBatch(batch([e, transferEvent({ eventId: 'lookup-down-new' })]), deps(store));
    expect(r.results.map((x) => x.kind)).toEqual(['duplicate', 'accepted']);
    expect(r.failure).toBeUndefined();
    expect(calls.transactions).toBe(2);
  });
});

describe('DynamoInboxStore.findInboxes (BatchGetItem)', () => {
  const table = 'tbl';
  const inbox = (id: string, payloadHash: string) => ({ pk: `EVENT#${id}`, payloadHash });
  const keysOf = (input: BatchGetCommandInput) => (input.RequestItems?.[table]?.Keys ?? []) as { pk: string }[];

  it('reads strongly consistently, 100 keys a request, each key once', async () => {
    const mock = mockClient(DynamoDBDocumentClient);
    mock.on(BatchGetCommand).callsFake(async (input: BatchGetCommandInput) => ({
      Responses: {
        [table]: keysOf(input)
          .filter((_, i) => i % 2 === 0)
          .map((k) => inbox(k.pk.slice('EVENT#'.length), 'h')),
      },
    }));
    const store = new DynamoInboxStore(DynamoDBDocumentClient.from(new DynamoDBClient({})), table);
    const ids = Array.from({ length: 250 }, (_, i) => `e${i}`);
    const known = await store.findInboxes([...ids, 'e0', 'e1']);
    const calls = mock.commandCalls(BatchGetCommand);
    expect(calls.map((c) => keysOf(c.args[0].input).length).sort((a, b) => b - a)).toEqual([
      BATCH_GET_MAX_KEYS,
      BATCH_GET_MAX_KEYS,
      50,
    ]);
    expect(calls.every((c) => c.args[0].input.RequestItems?.[table]?.ConsistentRead === true)).toBe(true);
    expect(known.size).toBe(125);
    // Everything settling a record against the stored item needs, so a conflict costs no further read.
    expect(known.get('e0')).toEqual({ payloadHash: 'h', complete: true, channels: [] });
    expect(mock.commandCalls(BatchGetCommand)[0]?.args[0].input.RequestItems?.[table]?.ProjectionExpression).toBe(
      'pk, payloadHash, channels, refusedChannels, repairHash, repairedHashes',
    );
    mock.restore();
  });

  it('retries UnprocessedKeys with backoff; keys still unprocessed are left to their transactions', async () => {
    const mock = mockClient(DynamoDBDocumentClient);
    const key = (id: string) => ({ pk: `EVENT#${id}`, sk: 'INBOX' });
    mock
      .on(BatchGetCommand)
      .resolvesOnce({
        Responses: { [table]: [inbox('a', 'ha')] },
        UnprocessedKeys: { [table]: { Keys: [key('b'), key('c')] } },
      })
      .resolvesOnce({ Responses: { [table]: [inbox('b', 'hb')] }, UnprocessedKeys: { [table]: { Keys: [key('c')] } } })
      .resolves({ UnprocessedKeys: { [table]: { Keys: [key('c')] } } });
    const waits: number[] = [];
    const store = new DynamoInboxStore(DynamoDBDocumentClient.from(new DynamoDBClient({})), table, {
      attempts: 3,
      sleep: async (ms) => {
        waits.push(ms);
      },
    });
    const known = await store.findInboxes(['a', 'b', 'c']);
    expect([...known].map(([id, k]) => [id, k.payloadHash])).toEqual([
      ['a', 'ha'],
      ['b', 'hb'],
    ]);
    const calls = mock.commandCalls(BatchGetCommand);
    expect(calls.map((c) => keysOf(c.args[0].input).map((k) => k.pk))).toEqual([
      ['EVENT#a', 'EVENT#b', 'EVENT#c'],
      ['EVENT#b', 'EVENT#c'],
      ['EVENT#c'],
    ]);
    expect(waits).toHaveLength(2);
    mock.restore();
  });
});

/**
 * Writing the evidence index (stores/evidence-index.ts): a batch's event items are put in BatchWriteItem calls of at
 * most 25, what DynamoDB leaves unprocessed sent again after a growing, jittered wait, and what still stays unprocessed
 * counted — the batch then left unindexed, for the sweeper; a customer's item of an event, which the writers of its
 * channels share, is added to (UpdateItem), never put. A batch whose earlier copy stands is added to, never put.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { BatchWriteCommand, DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { batchName, type IndexedSend, indexEntriesOf } from '../../functions/domain/evidence-batch.ts';
import { sliceBatchName } from '../../functions/domain/evidence-spool.ts';
import { writeBatch } from '../../functions/stores/evidence-batch-writer.ts';
import { DynamoEvidenceIndex, indexItemsOf, UNPROCESSED_RETRIES } from '../../functions/stores/evidence-index.ts';
import { MemoryGaps, MemoryStore } from '../support/evidence-memory.ts';

const dynamo = mockClient(DynamoDBDocumentClient);
const doc = DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'us-east-1' }));
const NAME = batchName('dispatch', Date.parse('2026-11-01T10:00:00Z'), 'unitbatch0001');
const sends = (n: number): IndexedSend[] =>
  Array.from({ length: n }, (_, i) => ({
    userId: `customer-${i}`,
    acceptedAt: '2026-11-01T10:00:00.000Z',
    notificationId: `event-${i}#EMAIL`,
    sha256: i.toString(16).padStart(64, '0'),
  }));
const entries = (n: number) => indexEntriesOf(NAME, sends(n)).map((entry) => ({ entry, expiresAt: 2_000_000_000 }));
const puts = (call: number) =>
  (dynamo.commandCalls(BatchWriteCommand)[call]?.args[0].input.RequestItems?.index ?? []).map(
    (w) => w.PutRequest?.Item?.pk as string,
  );

beforeEach(() => dynamo.reset());

describe('the evidence index, put whole', () => {
  it("puts 30 events' items in calls of at most 25, resending what came back unprocessed after a wait, and adds to their customers' items", async () => {
    const waits: number[] = [];
    const index = new DynamoEvidenceIndex(doc, 'index', { wait: async (ms) => waits.push(ms) });
    dynamo
      .on(BatchWriteCommand)
      .resolvesOnce({
        UnprocessedItems: {
          index: [{ PutRequest: { Item: { pk: 'e#event-3', sk: 'x' } } }],
        },
      })
      .resolves({})
      .on(UpdateCommand)
      .resolves({});
    expect(await index.putBatch(entries(30))).toBe(0);
    expect(dynamo.commandCalls(BatchWriteCommand).map((c) => c.args[0].input.RequestItems?.index?.length)).toEqual([
      25, 1, 5,
    ]);
    expect(puts(1)).toEqual(['e#event-3']);
    expect(waits).toHaveLength(1);
    expect(waits[0]).toBeLessThanOrEqual(UNPROCESSED_RETRIES.baseMs);
    expect(dynamo.commandCalls(UpdateCommand)).toHaveLength(30);
  });

  it('counts what stays unprocessed after the last retry, each wait longer at most than the one before it could be', async () => {
    const waits: number[] = [];
    const index = new DynamoEvidenceIndex(doc, 'index', { wait: async (ms) => waits.push(ms) });
    dynamo
      .on(BatchWriteCommand)
      .callsFake((input) => ({
        // DynamoDB keeps refusing two of whatever it is sent.
        UnprocessedItems: { index: input.RequestItems.index.slice(0, 2) },
      }))
      .on(UpdateCommand)
      .resolves({});
    expect(await index.putBatch(entries(3))).toBe(2);
    expect(dynamo.commandCalls(BatchWriteCommand)).toHaveLength(UNPROCESSED_RETRIES.attempts);
    expect(waits).toHaveLength(UNPROCESSED_RETRIES.attempts - 1);
    waits.forEach((ms, i) => {
      expect(ms).toBeLessThanOrEqual(Math.min(UNPROCESSED_RETRIES.maxMs, UNPROCESSED_RETRIES.baseMs * 2 ** i));
    });
  });
});

describe('a batch and its index', () => {
  const record = (i: number) => ({
    record: {
      kind: 'SEND',
      retainUntil: '2033-11-01T10:00:00.000Z',
      notificationId: `event-${i}#EMAIL`,
      eventId: `event-${i}`,
      channel: 'EMAIL',
      userId: `customer-${i}`,
      acceptedAt: '2026-11-01T10:00:00.000Z',
      sha256: i.toString(16).padStart(64, '0'),
    } as never,
    bytes: Buffer.from(`record ${i}`),
  });

  it('written now: its index put whole; items left unprocessed leave it unindexed, counted, for the sweeper', async () => {
    dynamo
      .on(BatchWriteCommand)
      .callsFake((input) => ({ UnprocessedItems: { index: input.RequestItems.index.slice(0, 1) } }))
      .on(UpdateCommand)
      .resolves({});
    const index = new DynamoEvidenceIndex(doc, 'index', { wait: async () => undefined });
    const written = await writeBatch(
      { store: new MemoryStore(), gaps: new MemoryGaps(), index: { index, retentionDays: 2_557 } },
      { name: NAME, writer: 'dispatch', records: [record(1), record(2)] },
      { timeoutMs: 1_000, now: Date.now() },
    );
    expect(written).toMatchObject({ outcome: 'written', stored: 'written', indexed: false, unindexedItems: 1 });
    expect(dynamo.commandCalls(UpdateCommand)).toHaveLength(2);
  });

  it('already in the store (an earlier copy stands): its sends added to the items there, never put over them', async () => {
    dynamo.on(UpdateCommand).resolves({});
    const store = new MemoryStore();
    const index = new DynamoEvidenceIndex(doc, 'index');
    const outlets = { store, gaps: new MemoryGaps(), index: { index, retentionDays: 2_557 } };
    const batch = { name: NAME, writer: 'dispatch' as const, records: [record(1)] };
    await writeBatch(outlets, batch, { timeoutMs: 1_000, now: Date.now() });
    dynamo.reset();
    dynamo.on(UpdateCommand).resolves({});
    const again = await writeBatch(outlets, batch, { timeoutMs: 1_000, now: Date.now() });
    expect(again).toMatchObject({ stored: 'alreadyThere', indexed: true });
    expect(dynamo.commandCalls(BatchWriteCommand)).toHaveLength(0);
    expect(dynamo.commandCalls(UpdateCommand).map((c) => c.args[0].input.UpdateExpression)).toEqual([
      'ADD s :s SET expiresAt = :e',
      'SET expiresAt = :e',
    ]);
  });
});

describe("an event's channels, written by two invocations", () => {
  const SLICE = sliceBatchName(Date.parse('2026-11-01T10:00:30Z'), 2_557);
  const sliceEntries = (s: IndexedSend[]) =>
    indexEntriesOf(SLICE, s).map((entry) => ({ entry, expiresAt: 2_000_000_000 }));
  const [email, sms] = [
    { userId: 'c-1', acceptedAt: '2026-11-01T10:00:31.000Z', notificationId: 'ev-1#EMAIL', sha256: 'a'.repeat(64) },
    { userId: 'c-1', acceptedAt: '2026-11-01T10:00:32.000Z', notificationId: 'ev-1#SMS', sha256: 'b'.repeat(64) },
  ] as [IndexedSend, IndexedSend];
  const markOf = (x: IndexedSend) => [...(indexItemsOf(sliceEntries([x]))[0]?.s ?? [])];

  it("each adds its send to the customer's item of the event (never a put over the other's); the first puts the event's item, the second finds the first's send and does not", async () => {
    dynamo
      .on(UpdateCommand)
      .resolvesOnce({})
      .resolvesOnce({ Attributes: { s: new Set(markOf(email)) } })
      .on(BatchWriteCommand)
      .resolves({});
    const index = new DynamoEvidenceIndex(doc, 'index');
    expect(await index.putBatch(sliceEntries([email]))).toBe(0);
    expect(await index.putBatch(sliceEntries([sms]))).toBe(0);
    const adds = dynamo.commandCalls(UpdateCommand).map((c) => c.args[0].input);
    expect(adds.map((a) => [a.Key, a.UpdateExpression, a.ReturnValues])).toEqual([
      [{ pk: 'u#c-1', sk: '2026-11-01#ev-1' }, 'ADD s :s SET expiresAt = :e', 'UPDATED_OLD'],
      [{ pk: 'u#c-1', sk: '2026-11-01#ev-1' }, 'ADD s :s SET expiresAt = :e', 'UPDATED_OLD'],
    ]);
    expect(dynamo.commandCalls(BatchWriteCommand)).toHaveLength(1);
    expect(puts(0)).toEqual(['e#ev-1']);
  });

  it("a writer finding only its own send there (its retry: the event's item may not be written) puts the event's item again", async () => {
    dynamo
      .on(UpdateCommand)
      .resolves({ Attributes: { s: new Set(markOf(email)) } })
      .on(BatchWriteCommand)
      .resolves({});
    expect(await new DynamoEvidenceIndex(doc, 'index').putBatch(sliceEntries([email]))).toBe(0);
    expect(puts(0)).toEqual(['e#ev-1']);
  });
});

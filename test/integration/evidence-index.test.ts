/**
 * The evidence index and the intents of evidence batches on DynamoDB Local (docs/table.md): a customer with thousands
 * of sends a month is indexed in small items, one per event — none grows toward DynamoDB's 400 KB, each write is
 * billed on its own small item — found whole, by a day range, and by event; in a table of its own, an event's
 * channels added to one item by each writer (a spool slice's writers of one minute too); items kept in the main table before,
 * of the layout before the compact one and of the earlier month layout, are read alike. An intent whose recovery
 * failed is held back without hiding how old it is.
 */
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { localEvidenceIndexTableName } from '../../functions/contracts/evidence-index-schema.ts';
import {
  batchName,
  type IndexedSend,
  indexBatchPart,
  indexDigest,
  indexEntriesOf,
  indexRef,
  indexSend,
} from '../../functions/domain/evidence-batch.ts';
import { sliceBatchName } from '../../functions/domain/evidence-spool.ts';
import { eventIndexSk } from '../../functions/domain/keys.ts';
import { indexBatch } from '../../functions/stores/evidence-batch-writer.ts';
import { DynamoEvidenceIndex, indexExpiresAt } from '../../functions/stores/evidence-index.ts';
import { DynamoEvidenceIntents } from '../../functions/stores/evidence-intents.ts';
import { queryAll } from '../../functions/stores/paged-query.ts';
import { scanAll } from '../../tools/local/dynamodb-local.ts';
import { type LocalTable, newLocalTable } from '../support/local-table.ts';

let table: LocalTable;
let index: DynamoEvidenceIndex;
let indexTable: string;
const RETENTION_DAYS = 2_557;
const START = Date.parse('2026-11-01T00:00:00.000Z');
const HOUR = 3_600_000;
const digest = (i: number) => i.toString(16).padStart(64, '0');
/** A digest whose first 128 bits (all a compact mark keeps) tell it from its neighbours', as real records' do. */
const headed = (i: number) => i.toString(16).padStart(8, '0').padEnd(64, '0');

beforeAll(async () => {
  table = await newLocalTable(inject('dynamoEndpoint'));
  indexTable = localEvidenceIndexTableName(table.tableName);
  index = new DynamoEvidenceIndex(table.doc, indexTable, { formerTable: table.tableName });
});

describe('the evidence index', () => {
  it('a customer with 4,000 sends in a month across 200 batches: an item per event, none over 400 B, all found, by day and by event', async () => {
    const batches: string[] = [];
    for (let b = 0; b < 200; b++) {
      const at = START + b * 3 * HOUR;
      const name = batchName('dispatch', at, `busy${String(b).padStart(8, '0')}`);
      batches.push(name);
      // 20 sends a batch: 10 events on two channels each.
      const sends: IndexedSend[] = Array.from({ length: 20 }, (_, i) => ({
        userId: 'busy-customer',
        acceptedAt: new Date(at).toISOString(),
        notificationId: `card-payment-${b}-${i >> 1}#${i % 2 === 0 ? 'PUSH' : 'SMS'}`,
        sha256: digest(b * 20 + i),
      }));
      expect(await indexBatch({ index: { index, retentionDays: RETENTION_DAYS } }, name, sends)).toBeUndefined();
    }
    const items = await queryAll(table.doc, {
      TableName: indexTable,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': 'u#busy-customer' },
    });
    // One item per event, each holding its two channels' sends: bounded by the event, never by the customer.
    expect(items).toHaveLength(2_000);
    const sizes = items.map((i) => JSON.stringify([...(i.s as Set<string>)]).length + String(i.sk).length);
    expect(Math.max(...sizes)).toBeLessThan(400);
    // Nothing the key says again: no kind, no userId; the batch after its day, without `batches/<day>/`: the writer's
    // initial, its second of the day in base64url (00:00:00, `AAA`) and its id; the channel as its initial.
    expect(Object.keys(items[0] ?? {}).sort()).toEqual(['expiresAt', 'pk', 's', 'sk']);
    expect(batches[0]).toBe('batches/2026-11-01/000000-dispatch-busy00000000');
    const first = [...((items.find((i) => i.sk === '2026-11-01#card-payment-0-0')?.s ?? []) as Set<string>)];
    expect(first.map((m) => m.slice(22)).sort()).toEqual(['DAAAbusy00000000 P', 'DAAAbusy00000000 S']);

    const all = await index.sendsOf('busy-customer');
    expect(all).toHaveLength(4_000);
    // Oldest batch first; each send with the digest its SENT write carried, its first 128 bits.
    expect(all[0]).toMatchObject({ batch: batches[0], sha256: digest(0).slice(0, 32) });
    expect(all.at(-1)?.batch).toBe(batches[199]);
    // 2026-11-05: batches 32 to 39 (every third hour).
    const day = await index.sendsOf('busy-customer', { from: '2026-11-05', to: '2026-11-05' });
    expect(new Set(day.map((s) => s.batch))).toEqual(new Set(batches.slice(32, 40)));
    expect(day).toHaveLength(160);
    // By event: its two channels, in the one batch that holds them.
    expect(await index.sendsOfEvent('card-payment-7-3')).toEqual([
      { batch: batches[7], notificationId: 'card-payment-7-3#PUSH', sha256: digest(7 * 20 + 6).slice(0, 32) },
      { batch: batches[7], notificationId: 'card-payment-7-3#SMS', sha256: digest(7 * 20 + 7).slice(0, 32) },
    ]);
  });

  it('writing a batch again (a retry, the sweeper indexing what a rebuild could not) adds to its item, never replaces it', async () => {
    const name = batchName('dispatch', START, 'again00000001');
    const send = (n: number): IndexedSend => ({
      userId: 'again',
      acceptedAt: new Date(START).toISOString(),
      notificationId: `ev-${n}#EMAIL`,
      sha256: digest(n),
    });
    await indexBatch({ index: { index, retentionDays: RETENTION_DAYS } }, name, [send(1), send(2)]);
    await indexBatch({ index: { index, retentionDays: RETENTION_DAYS } }, name, [send(2), send(3)]);
    expect((await index.sendsOf('again')).map((s) => s.notificationId)).toEqual([
      'ev-1#EMAIL',
      'ev-2#EMAIL',
      'ev-3#EMAIL',
    ]);
  });

  it('items of the earlier layout (one per customer-month, refs without a digest), kept in the main table, are still read, in order and in a range', async () => {
    const old = batchName('dispatch', Date.parse('2026-10-20T10:00:00Z'), 'oldlayout0001');
    await putMonthItem('long-time', indexRef(old, 'ev-old#EMAIL'));
    const name = batchName('dispatch', START, 'newlayout0001');
    const sends = [
      {
        userId: 'long-time',
        acceptedAt: new Date(START).toISOString(),
        notificationId: 'ev-new#SMS',
        sha256: digest(9),
      },
    ];
    await indexBatch({ index: { index, retentionDays: RETENTION_DAYS } }, name, sends);
    expect(await index.sendsOf('long-time')).toEqual([
      { batch: old, notificationId: 'ev-old#EMAIL' },
      { batch: name, notificationId: 'ev-new#SMS', sha256: digest(9).slice(0, 32) },
    ]);
    expect((await index.sendsOf('long-time', { from: '2026-10-25' })).map((s) => s.notificationId)).toEqual([
      'ev-old#EMAIL',
      'ev-new#SMS',
    ]);
    expect(await index.sendsOf('long-time', { from: '2026-11-02' })).toEqual([]);
  });

  it("a send of the month layout rebuilt into the compact one (docs/evidence-and-privacy.md 'Rebuilding the index') is one send, with the rebuild's digest and attempt", async () => {
    const old = batchName('dispatch', Date.parse('2026-10-21T10:00:00Z'), 'oldlayout0002');
    await putMonthItem('rebuilt', indexRef(old, 'ev-rebuilt#EMAIL'));
    const send = {
      userId: 'rebuilt',
      acceptedAt: '2026-10-21T10:00:01.000Z',
      notificationId: 'ev-rebuilt#EMAIL',
      sha256: digest(11),
      attempt: 1,
    };
    await indexBatch({ index: { index, retentionDays: RETENTION_DAYS } }, old, [send]);
    expect(await index.sendsOf('rebuilt')).toEqual([
      { batch: old, notificationId: 'ev-rebuilt#EMAIL', sha256: digest(11).slice(0, 32), attempt: 1 },
    ]);
  });
});

describe('the evidence index in a table of its own', () => {
  const put = (name: string, sends: IndexedSend[]) =>
    index.putBatch(
      indexEntriesOf(name, sends).map((entry) => ({ entry, expiresAt: indexExpiresAt(entry.day, RETENTION_DAYS) })),
    );

  it('a batch written now: an item per customer, day and event (added to), one per event, day and customer (put, 25 a call), none in the main table; written again, the same', async () => {
    const name = batchName('dispatch', START, 'wholebatch0001');
    // 30 customers, each one event on two channels (30 event items: two calls), and one event whose two channels were
    // accepted either side of midnight: two customer items, two event items (one per day).
    const sends: IndexedSend[] = Array.from({ length: 60 }, (_, i) => ({
      userId: `whole-${i >> 1}`,
      acceptedAt: new Date(START).toISOString(),
      notificationId: `whole-ev-${i >> 1}#${i % 2 === 0 ? 'EMAIL' : 'SMS'}`,
      sha256: digest(1_000 + i),
    }));
    sends.push(
      {
        userId: 'midnight',
        acceptedAt: '2026-11-01T23:59:59.900Z',
        notificationId: 'late-ev#EMAIL',
        sha256: digest(1),
      },
      { userId: 'midnight', acceptedAt: '2026-11-02T00:00:00.100Z', notificationId: 'late-ev#PUSH', sha256: digest(2) },
    );
    expect(await put(name, sends)).toBe(0);
    expect(await put(name, sends)).toBe(0);
    const items = await scanAll(table.endpoint, indexTable);
    // 30 + 2 customer items, 30 + 2 event items.
    expect(items.filter((i) => /^u#(whole-|midnight$)/.test(String(i.pk)))).toHaveLength(32);
    expect(items.filter((i) => /^e#(whole-ev-|late-ev$)/.test(String(i.pk)))).toHaveLength(32);
    expect((await table.allItems()).filter((i) => /^[ue]#/.test(String(i.pk)))).toEqual([]);
    expect((await index.sendsOfEvent('late-ev')).map((s) => s.notificationId)).toEqual([
      'late-ev#EMAIL',
      'late-ev#PUSH',
    ]);
    expect(await index.sendsOf('midnight', { from: '2026-11-02' })).toEqual([
      { batch: name, notificationId: 'late-ev#PUSH', sha256: digest(2).slice(0, 32) },
    ]);
    expect(await index.sendsOf('whole-7')).toHaveLength(2);
  });

  it('a send indexed in the main table before the index had a table, and again in its own by a rebuild: found once', async () => {
    const name = batchName('dispatch', START, 'twotables0001');
    const send: IndexedSend = {
      userId: 'two-tables',
      acceptedAt: new Date(START).toISOString(),
      notificationId: 'two-ev#EMAIL',
      sha256: digest(3),
    };
    await putLayoutBefore(table.tableName, 'two-tables', 'two-ev', name, [send]);
    expect(await put(name, [send])).toBe(0);
    const found = { batch: name, notificationId: 'two-ev#EMAIL', sha256: digest(3) };
    expect(await index.sendsOf('two-tables')).toEqual([found]);
    expect(await index.sendsOfEvent('two-ev')).toEqual([found]);
    // A rebuild since marks carry the attempt: still once, where first named, with the attempt the rebuild read.
    expect(await put(name, [{ ...send, attempt: 1 }])).toBe(0);
    expect(await index.sendsOf('two-tables')).toEqual([{ ...found, attempt: 1 }]);
    expect(await index.sendsOfEvent('two-ev')).toEqual([{ ...found, attempt: 1 }]);
  });

  it('items of the layout before the compact one (written by stages deployed before it, until their TTL) are still read beside it: by customer, in a range, by event', async () => {
    const before = batchName('dispatch', START, 'laybefore0001');
    const now = batchName('dispatch', START + HOUR, 'compact000001');
    const send = (n: number, channel: string): IndexedSend => ({
      userId: 'both-layouts',
      acceptedAt: new Date(START).toISOString(),
      notificationId: `both-ev-${n}#${channel}`,
      sha256: digest(500 + n),
    });
    await putLayoutBefore(indexTable, 'both-layouts', 'both-ev-1', before, [send(1, 'EMAIL')]);
    expect(await put(now, [send(1, 'SMS'), send(2, 'EMAIL')])).toBe(0);
    const old = { batch: before, notificationId: 'both-ev-1#EMAIL', sha256: digest(501) };
    const compact = (n: number, channel: string) => ({
      batch: now,
      notificationId: `both-ev-${n}#${channel}`,
      sha256: digest(500 + n).slice(0, 32),
    });
    expect(await index.sendsOf('both-layouts')).toEqual([old, compact(1, 'SMS'), compact(2, 'EMAIL')]);
    expect(await index.sendsOf('both-layouts', { from: '2026-11-01', to: '2026-11-01' })).toHaveLength(3);
    expect(await index.sendsOf('both-layouts', { from: '2026-11-02' })).toEqual([]);
    expect(await index.sendsOfEvent('both-ev-1')).toEqual([old, compact(1, 'SMS')]);
    expect(await index.sendsOfEvent('both-ev-2')).toEqual([compact(2, 'EMAIL')]);
  });

  it('a customer item a stage deployed before wrote (its marks spaced, the batch and channel whole) is added to and read beside the short marks: by customer, by event, a send in both forms once', async () => {
    const slice = sliceBatchName(START + 60_000, RETENTION_DAYS);
    const own = batchName('dispatch', START + 61_000, 'spacedmarks01');
    const send = (channel: string, n: number): IndexedSend => ({
      userId: 'spaced-customer',
      acceptedAt: new Date(START + 61_000).toISOString(),
      notificationId: `spaced-ev#${channel}`,
      sha256: digest(800 + n),
    });
    const spaced = (s: IndexedSend, batch: string) =>
      `${indexDigest(s.sha256)} ${indexBatchPart('2026-11-01', batch)} ${s.notificationId.slice('spaced-ev'.length)}`;
    // As the writer before wrote it: the item, its event's item, the EMAIL send spooled, the SMS in its own batch.
    await table.doc.send(
      new PutCommand({
        TableName: indexTable,
        Item: {
          pk: 'u#spaced-customer',
          sk: '2026-11-01#spaced-ev',
          s: new Set([spaced(send('EMAIL', 1), slice), spaced(send('SMS', 2), own)]),
          expiresAt: indexExpiresAt('2026-11-01', RETENTION_DAYS),
        },
      }),
    );
    await table.doc.send(
      new PutCommand({
        TableName: indexTable,
        Item: { pk: 'e#spaced-ev', sk: '2026-11-01#spaced-customer', expiresAt: indexExpiresAt('2026-11-01', 30) },
      }),
    );
    // This writer: the PUSH send, and the SMS send again (a rebuild of its batch); an event item of this form too.
    expect(await put(own, [send('PUSH', 3)])).toBe(0);
    await table.doc.send(
      new PutCommand({
        TableName: indexTable,
        Item: { pk: 'e#spaced-ev', sk: eventIndexSk('2026-11-01', 'spaced-customer'), expiresAt: 2_023_430_400 },
      }),
    );
    expect(
      await indexBatch({ index: { index, retentionDays: RETENTION_DAYS } }, own, [send('SMS', 2)]),
    ).toBeUndefined();
    const items = await queryAll(table.doc, {
      TableName: indexTable,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': 'u#spaced-customer' },
    });
    expect(items).toHaveLength(1);
    expect([...((items[0]?.s ?? []) as Set<string>)].map((m) => m.slice(22)).sort()).toEqual([
      ' 000100-sweeper-spooldays2557 #EMAIL',
      ' 000101-dispatch-spacedmarks01 #SMS',
      'DAA9spacedmarks01 P',
      'DAA9spacedmarks01 S',
    ]);
    const expected = [
      { batch: slice, notificationId: 'spaced-ev#EMAIL', sha256: digest(801).slice(0, 32) },
      { batch: own, notificationId: 'spaced-ev#PUSH', sha256: digest(803).slice(0, 32) },
      { batch: own, notificationId: 'spaced-ev#SMS', sha256: digest(802).slice(0, 32) },
    ];
    expect(await index.sendsOf('spaced-customer')).toEqual(expected);
    expect(await index.sendsOf('spaced-customer', { from: '2026-11-01', to: '2026-11-01' })).toEqual(expected);
    expect(await index.sendsOfEvent('spaced-ev')).toEqual(expected);
  });

  it('a send a stage deployed before marked spaced, and its event item never put: indexing it again in the short form puts the event item (the same send, not another writer)', async () => {
    const own = batchName('dispatch', START + 62_000, 'respacedmark1');
    const send: IndexedSend = {
      userId: 'respaced-customer',
      acceptedAt: new Date(START + 62_000).toISOString(),
      notificationId: 'respaced-ev#PUSH',
      sha256: digest(900),
    };
    const spaced = `${indexDigest(send.sha256)} ${indexBatchPart('2026-11-01', own)} #PUSH`;
    await table.doc.send(
      new PutCommand({
        TableName: indexTable,
        Item: {
          pk: 'u#respaced-customer',
          sk: '2026-11-01#respaced-ev',
          s: new Set([spaced]),
          expiresAt: indexExpiresAt('2026-11-01', RETENTION_DAYS),
        },
      }),
    );
    expect(await index.sendsOfEvent('respaced-ev')).toEqual([]);
    expect(await put(own, [send])).toBe(0);
    expect(await index.sendsOfEvent('respaced-ev')).toEqual([
      { batch: own, notificationId: 'respaced-ev#PUSH', sha256: digest(900).slice(0, 32) },
    ]);
  });

  it("a spool slice indexed by two invocations of its minute, each with one channel of an event: neither's sends replace the other's", async () => {
    const slice = sliceBatchName(START + 30_000, RETENTION_DAYS);
    const send = (channel: string, n: number): IndexedSend => ({
      userId: 'slice-customer',
      acceptedAt: new Date(START + 30_000 + n).toISOString(),
      notificationId: `slice-ev#${channel}`,
      sha256: digest(700 + n),
    });
    expect(await put(slice, [send('EMAIL', 1)])).toBe(0);
    expect(await put(slice, [send('SMS', 2)])).toBe(0);
    const both = ['slice-ev#EMAIL', 'slice-ev#SMS'];
    expect((await index.sendsOf('slice-customer')).map((s) => s.notificationId)).toEqual(both);
    expect((await index.sendsOfEvent('slice-ev')).map((s) => s.notificationId)).toEqual(both);
    expect((await index.sendsOf('slice-customer')).map((s) => s.batch)).toEqual([slice, slice]);
  });

  it("each send keeps its record's attempt: two attempts of one notification in one slice (an operator's resend within the minute, each invocation's writer adding its own) are two sends, each read with its attempt; one written without (a stage deployed before) reads with none", async () => {
    const slice = sliceBatchName(START + 90_000, RETENTION_DAYS);
    const send = (n: number, attempt?: number): IndexedSend => ({
      userId: 'attempt-customer',
      acceptedAt: new Date(START + 90_000 + n).toISOString(),
      notificationId: 'attempt-ev#SMS',
      sha256: headed(900 + n),
      ...(attempt === undefined ? {} : { attempt }),
    });
    // Attempt 2's writer first, attempt 1's after it (two invocations of the minute: a slice is its writer's
    // invocation-start minute, and only an operator's resend comes that soon — an automatic retry waits a lease), and
    // an EMAIL send an earlier version indexed without its attempt.
    expect(await put(slice, [send(2, 2)])).toBe(0);
    expect(await put(slice, [send(1, 1)])).toBe(0);
    expect(await put(slice, [{ ...send(3), notificationId: 'attempt-ev#EMAIL' }])).toBe(0);
    const [item] = await queryAll(table.doc, {
      TableName: indexTable,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': 'u#attempt-customer' },
    });
    // Stored as `<digest><attempt>.<batch> <channel>`: two bytes a send more than without.
    expect([...((item?.s ?? []) as Set<string>)].map((m) => m.slice(22)).sort()).toEqual([
      '1.~ABn9 S',
      '2.~ABn9 S',
      '~ABn9 E',
    ]);
    const expected = [
      { batch: slice, notificationId: 'attempt-ev#EMAIL', sha256: headed(903).slice(0, 32) },
      { batch: slice, notificationId: 'attempt-ev#SMS', sha256: headed(901).slice(0, 32), attempt: 1 },
      { batch: slice, notificationId: 'attempt-ev#SMS', sha256: headed(902).slice(0, 32), attempt: 2 },
    ];
    const byDigest = (refs: readonly { sha256?: string }[]) =>
      [...refs].sort((a, b) => String(a.sha256).localeCompare(String(b.sha256)));
    expect(byDigest(await index.sendsOf('attempt-customer'))).toEqual(byDigest(expected));
    expect(byDigest(await index.sendsOfEvent('attempt-ev'))).toEqual(byDigest(expected));
  });

  it('two attempts of one notification in one slice whose marks carry no attempt (written before marks did) are two sends, told by their digests', async () => {
    const slice = sliceBatchName(START + 150_000, RETENTION_DAYS);
    const send = (n: number): IndexedSend => ({
      userId: 'no-attempt-customer',
      acceptedAt: new Date(START + 150_000 + n).toISOString(),
      notificationId: 'no-attempt-ev#SMS',
      sha256: headed(950 + n),
    });
    expect(await put(slice, [send(1)])).toBe(0);
    expect(await put(slice, [send(2)])).toBe(0);
    const expected = [1, 2].map((n) => ({
      batch: slice,
      notificationId: 'no-attempt-ev#SMS',
      sha256: headed(950 + n).slice(0, 32),
    }));
    const byDigest = (refs: readonly { sha256?: string }[]) =>
      [...refs].sort((a, b) => String(a.sha256).localeCompare(String(b.sha256)));
    expect(byDigest(await index.sendsOf('no-attempt-customer'))).toEqual(byDigest(expected));
    expect(byDigest(await index.sendsOfEvent('no-attempt-ev'))).toEqual(byDigest(expected));
  });

  it("a later writer of a shared customer item kept for a shorter retention (a deploy lowered it) adds its sends and never shortens the item's TTL; a longer one raises it", async () => {
    const name = (n: number) => batchName('dispatch', START + n * 1_000, `ttl${String(n).padStart(8, '0')}`);
    const send = (channel: string, n: number): IndexedSend => ({
      userId: 'ttl-customer',
      acceptedAt: new Date(START + n * 1_000).toISOString(),
      notificationId: `ttl-ev#${channel}`,
      sha256: digest(800 + n),
    });
    const add = (n: number, channel: string, expiresAt: number) =>
      index.putBatch(indexEntriesOf(name(n), [send(channel, n)]).map((entry) => ({ entry, expiresAt })));
    const ttl = async () => {
      const items = await scanAll(table.endpoint, indexTable);
      return items.find((i) => String(i.pk) === 'u#ttl-customer')?.expiresAt;
    };
    expect(await add(1, 'EMAIL', 2_000_000_000)).toBe(0);
    expect(await add(2, 'SMS', 1_900_000_000)).toBe(0);
    expect(await ttl()).toBe(2_000_000_000);
    expect((await index.sendsOf('ttl-customer')).map((s) => s.notificationId)).toEqual(['ttl-ev#EMAIL', 'ttl-ev#SMS']);
    // The sweeper's add (a gap's fill, a rebuild) too.
    for (const entry of indexEntriesOf(name(3), [send('PUSH', 3)])) await index.add(entry, 1_800_000_000);
    expect(await ttl()).toBe(2_000_000_000);
    expect(await add(4, 'EMAIL', 2_100_000_000)).toBe(0);
    expect(await ttl()).toBe(2_100_000_000);
    expect((await index.sendsOf('ttl-customer')).map((s) => s.notificationId)).toEqual([
      'ttl-ev#EMAIL',
      'ttl-ev#SMS',
      'ttl-ev#PUSH',
      'ttl-ev#EMAIL',
    ]);
  });
});

describe('a range of days in the compact layout', () => {
  it("holds every event of its last day, whatever its id sorts after (the sort key is the day, then the event's id)", async () => {
    const name = batchName('dispatch', START, 'rangeends0001');
    const sends = ['~tilde', 'zz', 'ÿ-latin'].map((eventId, i) => ({
      userId: 'range-ends',
      acceptedAt: new Date(START + i).toISOString(),
      notificationId: `${eventId}#EMAIL`,
      sha256: digest(900 + i),
    }));
    await indexBatch({ index: { index, retentionDays: RETENTION_DAYS } }, name, sends);
    const day = await index.sendsOf('range-ends', { from: '2026-11-01', to: '2026-11-01' });
    expect(day.map((s) => s.notificationId).sort()).toEqual(sends.map((s) => s.notificationId).sort());
    expect(await index.sendsOf('range-ends', { to: '2026-10-31' })).toEqual([]);
  });
});

/** Items of the layout before the compact one, as deployed stages wrote them: whole digests, kind and userId. */
async function putLayoutBefore(
  tableName: string,
  userId: string,
  eventId: string,
  batch: string,
  sends: IndexedSend[],
) {
  const day = (sends[0] as IndexedSend).acceptedAt.slice(0, 10);
  const refs = new Set(sends.map((s) => indexSend(s.sha256, s.notificationId)));
  const expiresAt = indexExpiresAt(day, RETENTION_DAYS);
  for (const Item of [
    { pk: `EVIDENCE_INDEX#${userId}`, sk: `${day}#${batch}`, kind: 'EVIDENCE_INDEX', userId, expiresAt, sends: refs },
    { pk: `EVIDENCE_EVENT#${eventId}`, sk: batch, kind: 'EVIDENCE_EVENT', expiresAt, sends: refs },
  ]) {
    await table.doc.send(new PutCommand({ TableName: tableName, Item }));
  }
}

describe('the intents of evidence batches', () => {
  it('an intent whose recovery failed is held back until its retry time, counted, and still the oldest one open', async () => {
    const intents = new DynamoEvidenceIntents(table.doc, table.tableName);
    const poisoned = { name: batchName('dispatch', START, 'poisoned0001'), dueMs: START, notificationIds: ['p#SMS'] };
    const healthy = {
      name: batchName('dispatch', START + HOUR, 'healthy00001'),
      dueMs: START + HOUR,
      notificationIds: ['h#SMS'],
    };
    await intents.open(poisoned);
    await intents.open(healthy);
    const now = START + 2 * HOUR;
    expect((await intents.overdue(now, 10)).map((i) => i.name).sort()).toEqual([poisoned.name, healthy.name].sort());
    await intents.failed(poisoned, now + 60_000, 'ValidationException');
    // Held back: the healthy one is taken, the poisoned one waits for its retry time, then comes back counted.
    expect((await intents.overdue(now, 10)).map((i) => i.name)).toEqual([healthy.name]);
    expect(await intents.overdue(now + 60_000, 10)).toContainEqual({
      ...poisoned,
      attempts: 1,
      retryAt: now + 60_000,
      lastError: 'ValidationException',
    });
    // Its age is not hidden by the backing off: it is still the oldest open intent.
    expect(await intents.oldestDueMs()).toBe(START);
    expect((await intents.find(poisoned.name))?.attempts).toBe(1);
    // A failure recorded on an intent closed meanwhile does not bring it back.
    await intents.close(healthy);
    await intents.failed(healthy, now, 'Late');
    expect(await intents.find(healthy.name)).toBeUndefined();
    await intents.close(poisoned);
    expect(await intents.oldestDueMs()).toBeUndefined();
  });
});

/** A customer's item of the earliest layout (one per customer-month in the main table, refs without a digest). */
async function putMonthItem(userId: string, ref: string) {
  await table.doc.send(
    new PutCommand({
      TableName: table.tableName,
      Item: {
        pk: `EVIDENCE_INDEX#${userId}`,
        sk: '2026-10',
        kind: 'EVIDENCE_INDEX',
        userId,
        refs: new Set([ref]),
        expiresAt: 2_000_000_000,
      },
    }),
  );
}

/**
 * The spool's items compressed with a preset dictionary (functions/stores/spool-codec.ts), on DynamoDB Local: records of
 * every channel put, read back by a reader and rolled into their minute's object byte-exact; an item written before the
 * dictionary (Brotli) still read and rolled; an item naming a dictionary this version does not have set apart like any
 * item it cannot read, the rest rolled; a set-apart copy never rolled again.
 */
import { brotliCompressSync } from 'node:zlib';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { beforeEach, describe, expect, inject, it } from 'vitest';
import { type EvidenceRecord, evidenceBody } from '../../functions/domain/evidence.ts';
import { batchObjectKey, readBatch, sha256Hex } from '../../functions/domain/evidence-batch.ts';
import { SPOOL_CLOSED_AFTER_MS, sliceBatchName, spoolShardOf } from '../../functions/domain/evidence-spool.ts';
import { DynamoEvidenceSpool, type SpooledRecord, spoolItem } from '../../functions/stores/evidence-spool.ts';
import { rollUpEvidence } from '../../functions/sweeper/roll-up-evidence.ts';
import { catalogueValues, sampleRecords, transferValues } from '../../tools/scripts/spool-samples.ts';
import { MemoryStore } from '../support/evidence-memory.ts';
import { type LocalTable, newLocalTable } from '../support/local-table.ts';

let table: LocalTable;
beforeEach(async () => {
  table = await newLocalTable(inject('dynamoEndpoint'));
});

const START = Date.parse('2026-11-30T09:15:00Z');
const SLICE = sliceBatchName(START, 2_557);
const spooled = (r: EvidenceRecord): SpooledRecord => {
  const bytes = evidenceBody(r);
  return { slice: SLICE, sha256: sha256Hex(bytes), notificationId: r.notificationId, recordKind: r.kind, bytes };
};
const roll = (spool: DynamoEvidenceSpool, store: MemoryStore, now: number) =>
  rollUpEvidence({ spool, store, now: () => now, deadline: now + 30_000, limit: 1_000, timeoutMs: 2_000 });
const put = (Item: Record<string, unknown>) => table.doc.send(new PutCommand({ TableName: table.tableName, Item }));

describe('spool items compressed with a dictionary', () => {
  it("a send of every channel and a report: read back by a reader and rolled into the minute's object byte for byte, each its digest", async () => {
    const spool = new DynamoEvidenceSpool(table.doc, table.tableName);
    const records = (await sampleRecords([...catalogueValues(), ...transferValues('codec', 1)])).map(spooled);
    const byKind = new Map<string, SpooledRecord>();
    for (const r of records) {
      const record = JSON.parse(r.bytes.toString('utf8')) as EvidenceRecord;
      byKind.set(record.kind === 'SEND' ? `${record.channel} ${record.locale}` : 'FEEDBACK', r);
    }
    const chosen = [...byKind.values()];
    expect([...byKind.keys()].sort()).toEqual([
      'EMAIL en',
      'EMAIL ja',
      'FEEDBACK',
      'PUSH en',
      'PUSH ja',
      'SMS en',
      'SMS ja',
    ]);
    await spool.put(chosen, START);

    const read = await spool.ofSlice(SLICE);
    expect(read.map((r) => r.sha256).sort()).toEqual(chosen.map((r) => r.sha256).sort());
    for (const r of read) expect(sha256Hex(r.bytes)).toBe(r.sha256);

    const store = new MemoryStore();
    expect(await roll(spool, store, START + SPOOL_CLOSED_AFTER_MS)).toMatchObject({
      slices: 1,
      records: chosen.length,
      objects: 1,
      errors: [],
      setAside: [],
    });
    const object = readBatch(store.objects.get(batchObjectKey(SLICE))?.body ?? Buffer.alloc(0));
    expect(object.bad).toEqual([]);
    const rolled = new Map(object.records.map((r) => [r.entry.sha256, r.bytes]));
    for (const r of chosen) expect(rolled.get(r.sha256)?.equals(r.bytes)).toBe(true);
  });

  it('an item written before the dictionary (Brotli, no dictionary) is still read and rolled byte-exact beside a new one', async () => {
    const spool = new DynamoEvidenceSpool(table.doc, table.tableName);
    const [older, newer] = (await sampleRecords(transferValues('codec-old', 1))).map(spooled);
    if (older === undefined || newer === undefined) throw new Error('no sample records');
    // As the version before wrote it: `br`, no `dz` nor `dict`.
    const { dz: _dz, dict: _dict, ...key } = await spoolItem(older);
    await put({ ...key, br: brotliCompressSync(older.bytes) });
    await spool.put([newer], START);

    expect((await spool.ofSlice(SLICE)).map((r) => r.sha256).sort()).toEqual([older.sha256, newer.sha256].sort());
    const store = new MemoryStore();
    expect(await roll(spool, store, START + SPOOL_CLOSED_AFTER_MS)).toMatchObject({
      records: 2,
      objects: 1,
      errors: [],
    });
    const object = readBatch(store.objects.get(batchObjectKey(SLICE))?.body ?? Buffer.alloc(0));
    expect(object.records.find((r) => r.entry.sha256 === older.sha256)?.bytes.equals(older.bytes)).toBe(true);
  });

  it("an item naming a dictionary this version does not have is set apart (key and id in the roll-up's report) and every other record, of its minute, of later minutes and of every shard, rolls", async () => {
    const spool = new DynamoEvidenceSpool(table.doc, table.tableName);
    const samples = await sampleRecords(transferValues('codec-new', 3));
    const [odd, ...rest] = samples.map(spooled);
    if (odd === undefined || rest.length < 11) throw new Error('no sample records');
    // A later version's item (another dictionary) met during a rollback, or a writer of the table's forged id.
    const item = await spoolItem(odd);
    await put({ ...item, dict: 'deadbeef' });
    // A record of its minute, and ten minutes of records after it over the other partitions.
    const later = rest.slice(0, 11).map((r, i) => ({ ...r, slice: sliceBatchName(START + i * 60_000, 2_557) }));
    await spool.put(later, START + 1);
    expect(new Set(later.map((r) => spoolShardOf(r.sha256))).size).toBeGreaterThan(3);
    expect((await spool.ofSlice(SLICE)).map((r) => r.sha256)).toEqual([later[0]?.sha256]);

    const store = new MemoryStore();
    const rolled = await roll(spool, store, START + 11 * 60_000 + SPOOL_CLOSED_AFTER_MS);
    expect(rolled).toMatchObject({ slices: 11, records: 11, objects: 11, errors: [], unreadable: 0 });
    expect(rolled.setAside).toEqual([
      `${String(item.pk)} ${String(item.sk)}: its dictionary "deadbeef" is not one this version has`,
    ]);
    expect((await spool.cursor()).rolledBefore).toBeGreaterThanOrEqual(START + 11 * 60_000);
    // Set apart whole, as any item this version cannot read: a copy with no TTL, kept for the on-call.
    const copy = (await table.allItems()).find((i) => i.sk === `BAD#${String(item.sk)}`);
    expect(copy).toMatchObject({ dict: 'deadbeef', bad: 'its dictionary "deadbeef" is not one this version has' });
    expect(copy?.expiresAt).toBeUndefined();
  });

  it('a set-apart copy is never rolled again, at any hour, even one this version reads: an erasure that removed its minute from the store stays removed', async () => {
    const spool = new DynamoEvidenceSpool(table.doc, table.tableName);
    const [kept, erased] = (await sampleRecords(transferValues('codec-back', 1))).map(spooled);
    if (kept === undefined || erased === undefined) throw new Error('no sample records');
    const store = new MemoryStore();
    await spool.put([kept], START);
    expect(await roll(spool, store, START + SPOOL_CLOSED_AFTER_MS)).toMatchObject({ objects: 1, errors: [] });
    // A version from before the dictionaries set the customer's item apart as it does: `BAD#<its key>`, no TTL.
    const { expiresAt: _ttl, ...item } = await spoolItem(erased);
    await put({ ...item, sk: `BAD#${String(item.sk)}`, bad: 'its body does not unzip', setAsideAt: 'x' });
    // A court-ordered erasure removed the minute's object before its spool script ran.
    store.objects.clear();
    for (const now of ['2026-11-30T10:00:10Z', '2026-11-30T10:30:10Z', '2026-11-30T11:00:10Z']) {
      expect(await roll(spool, store, Date.parse(now))).toMatchObject({ records: 0, objects: 0, late: 0, errors: [] });
    }
    expect(store.objects.size).toBe(0);
    expect((await table.allItems()).find((i) => i.sk === `BAD#${String(item.sk)}`)?.expiresAt).toBeUndefined();
  });

  it("the roll-up's errors name the item and why it was set apart, and keep the error's message", async () => {
    const spool = new DynamoEvidenceSpool(table.doc, table.tableName);
    const [odd] = (await sampleRecords(transferValues('codec-why', 1))).map(spooled);
    if (odd === undefined) throw new Error('no sample records');
    const item = await spoolItem(odd);
    await put({ ...item, dict: '0badd1c7' });
    const refusing = Object.assign(Object.create(spool) as DynamoEvidenceSpool, {
      setAside: () =>
        Promise.reject(
          Object.assign(new Error('Rate of requests exceeds the allowed throughput'), { name: 'ThrottlingException' }),
        ),
    });
    const rolled = await roll(refusing, new MemoryStore(), START + SPOOL_CLOSED_AFTER_MS);
    expect(rolled.errors).toEqual([
      `${String(item.pk)} ${String(item.sk)} (its dictionary "0badd1c7" is not one this version has): ThrottlingException: Rate of requests exceeds the allowed throughput`,
    ]);
    // Not set apart: its minute is held (the next run meets it again), the item's bytes are in no error.
    expect((await spool.cursor()).rolledBefore).toBeLessThanOrEqual(START);
    expect(rolled.errors.join('')).not.toContain(odd.notificationId);
  });
});

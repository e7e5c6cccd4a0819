/**
 * The spool's items compressed with a preset dictionary (functions/stores/spool-codec.ts), on DynamoDB Local: records of
 * every channel put, read back by a reader and rolled into their minute's object byte-exact; an item written before the
 * dictionary (Brotli) still read and rolled; an item naming a dictionary this version does not have neither read nor
 * rolled — its minute stays spooled, nothing set apart — until a version that has it runs.
 */
import { brotliCompressSync } from 'node:zlib';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { beforeEach, describe, expect, inject, it } from 'vitest';
import { type EvidenceRecord, evidenceBody } from '../../functions/domain/evidence.ts';
import { batchObjectKey, readBatch, sha256Hex } from '../../functions/domain/evidence-batch.ts';
import {
  lateBatchName,
  SPOOL_CLOSED_AFTER_MS,
  SPOOL_KEEP_DAYS,
  sliceBatchName,
} from '../../functions/domain/evidence-spool.ts';
import { DynamoEvidenceSpool, type SpooledRecord, spoolItem } from '../../functions/stores/evidence-spool.ts';
import { UnknownSpoolDictionary } from '../../functions/stores/spool-codec.ts';
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

  it('an item naming a dictionary this version does not have: the reader refuses it, the roll-up leaves its minute spooled and sets nothing apart', async () => {
    const spool = new DynamoEvidenceSpool(table.doc, table.tableName);
    const [record] = (await sampleRecords(transferValues('codec-new', 1))).map(spooled);
    if (record === undefined) throw new Error('no sample records');
    const item = await spoolItem(record);
    // A later version's item (another dictionary), met by this one during a deploy or a rollback.
    await put({ ...item, dict: '0badd1c7' });

    await expect(spool.ofSlice(SLICE)).rejects.toThrow(UnknownSpoolDictionary);
    const store = new MemoryStore();
    const rolled = await roll(spool, store, START + SPOOL_CLOSED_AFTER_MS);
    expect(rolled).toMatchObject({ objects: 0, setAside: [] });
    expect(rolled.errors).toEqual([expect.stringMatching(/UnknownSpoolDictionary/)]);
    expect(store.objects.size).toBe(0);
    // The cursor stays before the minute: a version that has the dictionary rolls it.
    expect((await spool.cursor()).rolledBefore).toBeLessThanOrEqual(START);
    expect(await spool.oldestSliceMs(0)).toBe(START);
  });

  it('after a rollback to a version before the dictionaries set their items apart, the next hour locks each one it reads beside its minute and lets the copy expire; a copy set apart for its bytes stays', async () => {
    const spool = new DynamoEvidenceSpool(table.doc, table.tableName);
    const [kept, lost, forged] = (await sampleRecords(transferValues('codec-back', 1))).map(spooled);
    if (kept === undefined || lost === undefined || forged === undefined) throw new Error('no sample records');
    // The older version rolled the minute with what it could read, and set the other item apart as it does: a copy
    // under `BAD#<its key>`, no TTL, and the cursor past the minute.
    const store = new MemoryStore();
    await spool.put([kept], START);
    expect(await roll(spool, store, START + SPOOL_CLOSED_AFTER_MS)).toMatchObject({ objects: 1, errors: [] });
    const aside = async (r: SpooledRecord, bytes = r.bytes) => {
      const { expiresAt: _ttl, ...item } = await spoolItem({ ...r, bytes });
      await put({ ...item, sk: `BAD#${String(item.sk)}`, bad: 'its body does not unzip', setAsideAt: 'x' });
      return `BAD#${String(item.sk)}`;
    };
    const lostAside = await aside(lost);
    const forgedAside = await aside(forged, lost.bytes);

    // Not at the hour: nothing looked for.
    const atHour = Date.parse('2026-11-30T10:00:30Z');
    expect(await roll(spool, store, atHour - 60_000)).toMatchObject({ records: 0, late: 0 });
    const rolled = await roll(spool, store, atHour);
    expect(rolled).toMatchObject({ records: 1, late: 1, errors: [] });
    const beside = store.objects.get(batchObjectKey(lateBatchName(SLICE, [lost.sha256])));
    expect(readBatch(beside?.body ?? Buffer.alloc(0)).records.map((r) => r.bytes)).toEqual([lost.bytes]);
    // Released, not deleted (the roll-up deletes nothing): the copy expires as a spool item does; the other stays.
    const copies = (await table.allItems()).filter((i) => String(i.sk).startsWith('BAD#'));
    expect(copies.find((i) => i.sk === lostAside)).toMatchObject({
      expiresAt: Math.floor(atHour / 1000) + SPOOL_KEEP_DAYS * 86_400,
      lockedAt: new Date(atHour).toISOString(),
    });
    expect(copies.find((i) => i.sk === forgedAside)?.expiresAt).toBeUndefined();
    // The next hour finds nothing more to lock.
    expect(await roll(spool, store, atHour + 3_600_000)).toMatchObject({ records: 0, late: 0, errors: [] });
  });
});

/**
 * How a spool item holds its record (functions/stores/spool-codec.ts): compressed with a preset dictionary the item
 * names, byte-exact back; an item written before (Brotli, no dictionary) still read; an item of a dictionary this
 * version does not have refused, never decoded without it. Records of every notice type, channel and language as
 * dispatch builds them (tools/scripts/spool-samples.ts).
 */
import { createHash } from 'node:crypto';
import { brotliCompressSync, deflateRawSync } from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import { type EvidenceRecord, evidenceBody } from '../../functions/domain/evidence.ts';
import { sha256Hex } from '../../functions/domain/evidence-batch.ts';
import { sliceBatchName } from '../../functions/domain/evidence-spool.ts';
import { spoolItem } from '../../functions/stores/evidence-spool.ts';
import {
  CURRENT_SPOOL_DICTIONARIES,
  decodeSpoolBody,
  encodeSpoolBody,
  spoolDictionary,
  spoolDictionaryFor,
  spoolDictionaryIds,
  UnknownSpoolDictionary,
} from '../../functions/stores/spool-codec.ts';
import { dynamoItemBytes } from '../../tools/bench/spool-cost.ts';
import { catalogueValues, sampleRecords, transferValues } from '../../tools/scripts/spool-samples.ts';

let records: EvidenceRecord[];
beforeAll(async () => {
  // Other customers, amounts and ids than the dictionary was built from: records it has never seen.
  const values = [...catalogueValues(), ...transferValues('unseen', 3)].map((v) => ({
    ...v,
    eventId: `other-${String(v.eventId)}`,
  }));
  records = await sampleRecords(values);
});

const itemOf = (r: EvidenceRecord) => {
  const bytes = evidenceBody(r);
  return spoolItem({
    slice: sliceBatchName(Date.parse('2026-11-30T09:15:00Z'), 2_557),
    sha256: sha256Hex(bytes),
    notificationId: r.notificationId,
    recordKind: r.kind,
    bytes,
  });
};

describe('a spool item', () => {
  it("holds every channel's send and every report byte-exact, compressed with its language's dictionary, which it names", async () => {
    const kinds = new Set<string>();
    const dictionaries = new Set<unknown>();
    for (const r of records) {
      const bytes = evidenceBody(r);
      const item = await itemOf(r);
      dictionaries.add(item.dict);
      // A report has no language: the default's dictionary (en).
      expect(item.dict).toBe(CURRENT_SPOOL_DICTIONARIES[r.kind === 'SEND' ? r.locale : 'en']);
      expect(item).not.toHaveProperty('br');
      const back = await decodeSpoolBody(item);
      expect(back?.equals(bytes)).toBe(true);
      expect(sha256Hex(back ?? Buffer.alloc(0))).toBe(sha256Hex(bytes));
      kinds.add(r.kind === 'SEND' ? r.channel : 'FEEDBACK');
    }
    expect([...kinds].sort()).toEqual(['EMAIL', 'FEEDBACK', 'PUSH', 'SMS']);
    expect(dictionaries.size).toBe(2);
  });

  it('is one write unit (at most 1 KB as DynamoDB bills it) for an email of every notice type and language, and for every push, SMS and report', async () => {
    const over: string[] = [];
    for (const r of records) {
      const bytes = dynamoItemBytes(await itemOf(r));
      if (bytes > 1024) over.push(`${r.notificationId} ${r.kind}: ${bytes} B`);
    }
    expect(over).toEqual([]);
    // Not vacuous: the emails are there, each about 20 KB before compression.
    const emails = records.filter((r) => r.kind === 'SEND' && r.channel === 'EMAIL');
    expect(emails.length).toBeGreaterThanOrEqual(20);
    expect(Math.min(...emails.map((r) => evidenceBody(r).length))).toBeGreaterThan(15_000);
  });

  it("of a language no dictionary is for, or none, is written with the default language's", () => {
    const record = (locale: string) => Buffer.from(`${JSON.stringify({ kind: 'SEND', locale, text: 'x' }, null, 2)}\n`);
    expect(spoolDictionaryFor(record('ja'))).toBe(CURRENT_SPOOL_DICTIONARIES.ja);
    expect(spoolDictionaryFor(record('fr'))).toBe(CURRENT_SPOOL_DICTIONARIES.en);
    expect(spoolDictionaryFor(record('constructor'))).toBe(CURRENT_SPOOL_DICTIONARIES.en);
    expect(spoolDictionaryFor(Buffer.from('{"kind":"FEEDBACK"}'))).toBe(CURRENT_SPOOL_DICTIONARIES.en);
  });

  it('written before the dictionary (Brotli, no dictionary) still reads byte-exact', async () => {
    const bytes = evidenceBody(records.find((r) => r.kind === 'SEND' && r.channel === 'EMAIL') as EvidenceRecord);
    expect((await decodeSpoolBody({ br: brotliCompressSync(bytes) }))?.equals(bytes)).toBe(true);
  });

  it('naming a dictionary this version does not have is refused with an error naming it, never decoded without it', async () => {
    const bytes = evidenceBody(records[0] as EvidenceRecord);
    const { dz } = await encodeSpoolBody(bytes);
    await expect(decodeSpoolBody({ dz, dict: '0badd1c7' })).rejects.toThrow(UnknownSpoolDictionary);
    await expect(decodeSpoolBody({ dz, dict: '0badd1c7' })).rejects.toThrow(/0badd1c7 is not one this version has/);
    // A dictionary id is looked up as such: nothing inherited from Object passes for one.
    await expect(decodeSpoolBody({ dz, dict: 'constructor' })).rejects.toThrow(UnknownSpoolDictionary);
  });

  it('whose body does not inflate with its dictionary reads as nothing (set apart by its reader), not as bytes', async () => {
    expect(await decodeSpoolBody({ dz: Buffer.from('not deflate at all'), dict: CURRENT_SPOOL_DICTIONARIES.en })).toBe(
      undefined,
    );
    const { dz } = await encodeSpoolBody(evidenceBody(records[0] as EvidenceRecord));
    expect(await decodeSpoolBody({ dz })).toBe(undefined);
    expect(await decodeSpoolBody({ dict: CURRENT_SPOOL_DICTIONARIES.en })).toBe(undefined);
  });

  it('crafted to inflate past any record (a few KB to tens of MB) reads as nothing, in every layout', async () => {
    const id = CURRENT_SPOOL_DICTIONARIES.en as string;
    const bomb = Buffer.alloc(20 * 1024 * 1024, 0x61);
    const dz = deflateRawSync(bomb, { dictionary: await spoolDictionary(id), level: 9 });
    expect(dz.length).toBeLessThan(400_000);
    expect(await decodeSpoolBody({ dz, dict: id })).toBe(undefined);
    expect(await decodeSpoolBody({ br: brotliCompressSync(bomb) })).toBe(undefined);
  });
});

describe('the dictionaries', () => {
  it('are each the bytes their id names (the first 8 hex digits of their SHA-256): one is never edited in place', async () => {
    expect(spoolDictionaryIds()).toEqual(expect.arrayContaining(Object.values(CURRENT_SPOOL_DICTIONARIES)));
    for (const id of spoolDictionaryIds()) {
      const bytes = await spoolDictionary(id);
      expect(bytes.length).toBeGreaterThan(10_000);
      // Raw deflate matches at most 32 KB back (less zlib's lookahead): a longer dictionary's head is dead weight.
      expect(bytes.length).toBeLessThanOrEqual(32 * 1024 - 262);
      expect(createHash('sha256').update(bytes).digest('hex').slice(0, 8)).toBe(id);
    }
  });

  it('read every id ever shipped: an item or a set-aside copy may name any of them (append to this list, never remove)', () => {
    const shipped = ['b6c019ba', 'ade35344'];
    expect(spoolDictionaryIds()).toEqual(expect.arrayContaining(shipped));
  });
});

describe('the deflate level', () => {
  // The worst a producer's fields can make of a record: a long run of a two-letter alphabet, where deflate's match
  // search is longest (level 9 spends ~0.5 s on 260 KB of it, in dispatch's event loop). Its CPU is a figure of the
  // bench's host, not of a test; what a test pins is the level each size is written with.
  const twoLetters = (n: number) => {
    // A fixed pseudo-random sequence (a linear congruential generator): the same bytes every run.
    let seed = 20_261_130;
    return Buffer.from(
      Array.from({ length: n }, () => {
        seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
        return seed & 0x10000 ? 'a' : 'b';
      }).join(''),
    );
  };
  const deflated = async (bytes: Buffer, level: number) =>
    deflateRawSync(bytes, { level, dictionary: await spoolDictionary(spoolDictionaryFor(bytes)) });

  it('is 6 up to 32 KiB (every email) and 1 above it, where a long search would cost dispatch tens of ms a record', async () => {
    for (const [size, level] of [
      [32_768, 6],
      [32_769, 1],
      [266_240, 1],
    ] as const) {
      const bytes = twoLetters(size);
      const written = await encodeSpoolBody(bytes);
      expect(written.dz.equals(await deflated(bytes, level))).toBe(true);
      expect((await decodeSpoolBody(written))?.equals(bytes)).toBe(true);
    }
  });
});

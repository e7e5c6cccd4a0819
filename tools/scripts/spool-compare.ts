/**
 * How a spool item's record compresses, per channel: Brotli at quality 5 (the items before the dictionary), Brotli at
 * 11, raw deflate with the current dictionaries at level 9 and at the level written (stores/spool-codec.ts), and zstd with the same
 * dictionaries (node:zlib's zstd is experimental in Node 24, not used) — the mean and the largest item as DynamoDB
 * bills it, and the CPU time a record takes. The records are ones the dictionaries were not built from (other
 * customers, amounts and ids), of every notice type, channel and language, in the example's brand or a deploy's; and
 * the CPU deflate takes on the worst input a producer can make (a record of two letters, up to 260 KB):
 *
 *   npx tsx tools/scripts/spool-compare.ts [--settings FILE]
 *
 * The dictionaries hold the example's brand: another brand's name, colour and footer in every email are bytes of its
 * own (measured with a made-up one: an email's item about 0.8 KB, at most 1 KB, where the example's is 0.6 KB).
 */
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import * as zlib from 'node:zlib';
import { type EvidenceRecord, evidenceBody } from '../../functions/domain/evidence.ts';
import { sha256Hex } from '../../functions/domain/evidence-batch.ts';
import { sliceBatchName } from '../../functions/domain/evidence-spool.ts';
import { spoolItem } from '../../functions/stores/evidence-spool.ts';
import { spoolDeflateLevel, spoolDictionary, spoolDictionaryFor } from '../../functions/stores/spool-codec.ts';
import { dynamoItemBytes } from '../bench/spool-cost.ts';
import { brandFromSettings, EXAMPLE_BRAND } from '../local/example-brand.ts';
import { catalogueValues, sampleRecords, transferValues } from './spool-samples.ts';

const { constants } = zlib;
const brotli = (quality: number) => (b: Buffer) =>
  zlib.brotliCompressSync(b, {
    params: {
      [constants.BROTLI_PARAM_QUALITY]: quality,
      [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
      [constants.BROTLI_PARAM_SIZE_HINT]: b.length,
    },
  });
type Zstd = (b: Buffer, o: { dictionary: Buffer; params: Record<number, number> }) => Buffer;
const zstdCompressSync = (zlib as unknown as { zstdCompressSync?: Zstd }).zstdCompressSync;

async function main() {
  const { values: flags } = parseArgs({ options: { settings: { type: 'string' } } });
  const brand = flags.settings === undefined ? EXAMPLE_BRAND : brandFromSettings(resolve(flags.settings));
  const values = [...catalogueValues(), ...transferValues('compare', 5)].map((v) => ({
    ...v,
    eventId: `compare-${String(v.eventId)}`,
  }));
  const records = await sampleRecords(values, brand);
  const dictionaries = new Map<string, Buffer>();
  for (const r of records) {
    const id = spoolDictionaryFor(evidenceBody(r));
    dictionaries.set(id, await spoolDictionary(id));
  }
  const dictionaryOf = (b: Buffer) => dictionaries.get(spoolDictionaryFor(b)) as Buffer;
  const codecs: Record<string, (b: Buffer) => Buffer> = {
    'Brotli q5 (before)': brotli(5),
    'Brotli q11': brotli(11),
    'deflateRaw q9 + dictionary': (b) => zlib.deflateRawSync(b, { level: 9, dictionary: dictionaryOf(b) }),
    'deflateRaw + dictionary (now)': (b) =>
      zlib.deflateRawSync(b, { level: spoolDeflateLevel(b), dictionary: dictionaryOf(b) }),
    ...(zstdCompressSync === undefined
      ? {}
      : {
          'zstd 3 + dictionary': (b: Buffer) =>
            zstdCompressSync(b, {
              dictionary: dictionaryOf(b),
              params: { [constants.ZSTD_c_compressionLevel]: 3, [constants.ZSTD_c_contentSizeFlag]: 0 },
            }),
        }),
  };
  // The item around each body: its key and `expiresAt` (as spoolItem writes them), and the body's attribute name —
  // `dz` and `dict` (the dictionary's 8 characters) with a dictionary, `br` without.
  const around = async (r: EvidenceRecord, bytes: Buffer) => {
    const {
      dz: _dz,
      dict: _dict,
      ...key
    } = await spoolItem({
      slice: sliceBatchName(Date.parse('2026-11-30T09:15:00Z'), 2_557),
      sha256: sha256Hex(bytes),
      notificationId: r.notificationId,
      recordKind: r.kind,
      bytes,
    });
    return dynamoItemBytes(key);
  };
  const groups = new Map<string, EvidenceRecord[]>();
  for (const r of records) {
    const key = r.kind === 'SEND' ? r.channel : 'FEEDBACK (a report)';
    groups.set(key, [...(groups.get(key) ?? []), r]);
  }
  for (const [group, rs] of groups) {
    const raw = rs.map(evidenceBody);
    process.stdout.write(`\n${group}: ${rs.length} records, ${mean(raw.map((b) => b.length))} B each before\n`);
    const keys = await Promise.all(rs.map((r, i) => around(r, raw[i] as Buffer)));
    for (const [name, compress] of Object.entries(codecs)) {
      const attrs = name.startsWith('Brotli') ? 'br'.length : 'dz'.length + 'dict'.length + 8;
      const sizes = raw.map((b, i) => compress(b).length + (keys[i] as number) + attrs);
      const wru = mean(
        sizes.map((s) => Math.ceil(s / 1024)),
        2,
      );
      process.stdout.write(
        `  ${name.padEnd(34)} item ${mean(sizes)} B (max ${Math.max(...sizes)}), ${wru} WRU, ${cpuMicros(compress, raw)} µs\n`,
      );
    }
  }
  worstInputs(dictionaries.get(spoolDictionaryFor(Buffer.alloc(0))) as Buffer);
}

/**
 * The worst a producer's fields can make of a record for deflate's CPU: a long run of a two-letter alphabet, where its
 * match search is longest — at level 9 (the level before) and at the level now written, per record.
 */
function worstInputs(dictionary: Buffer) {
  process.stdout.write("\na record of a two-letter alphabet (the worst input for deflate's CPU):\n");
  for (const size of [20_000, 32_768, 133_120, 266_240]) {
    const b = Buffer.from(Array.from({ length: size }, () => (Math.random() < 0.5 ? '0' : '1')).join(''));
    for (const level of [9, spoolDeflateLevel(b)]) {
      const us = cpuMicros((x) => zlib.deflateRawSync(x, { level, dictionary }), [b]);
      process.stdout.write(`  ${String(size).padStart(7)} B at level ${level}: ${(Number(us) / 1000).toFixed(1)} ms\n`);
    }
  }
}

/** CPU time per record: the least of a few rounds over the records (the machine is shared: the least is its own). */
function cpuMicros(compress: (b: Buffer) => Buffer, raw: readonly Buffer[]): string {
  for (const b of raw) compress(b);
  const rounds = Array.from({ length: 7 }, () => {
    const t0 = process.cpuUsage();
    for (const b of raw) compress(b);
    const used = process.cpuUsage(t0);
    return (used.user + used.system) / raw.length;
  });
  return Math.min(...rounds).toFixed(0);
}

const mean = (xs: readonly number[], digits = 0) =>
  Number((xs.reduce((a, x) => a + x, 0) / Math.max(1, xs.length)).toFixed(digits));

await main();

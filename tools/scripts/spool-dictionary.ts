/**
 * Builds the evidence spool's compression dictionaries (functions/stores/spool-codec.ts), one per language of the
 * templates, from records of every notice type and channel as dispatch builds them (spool-samples.ts), and writes each
 * as a module of its own, functions/stores/spool-dictionaries/<id>.ts (id: the first 8 hex digits of its SHA-256):
 *
 *   npx tsx tools/scripts/spool-dictionary.ts
 *
 * Then name the new ids in spool-codec.ts's DICTIONARIES and CURRENT_SPOOL_DICTIONARIES — keeping every earlier one in
 * DICTIONARIES (see there why and how long). Rebuild them when a language is added, or when the templates have drifted
 * so far that the codec's test finds an email's item above one write unit; never edit one in place: another
 * dictionary is another id. (tools/scripts/spool-compare.ts measures what they save.)
 *
 * What one holds: raw deflate reads back at most 32 KB, so not every sample whole. A language's records in order of
 * weight (byWeight) — of each, only the runs of 24 bytes or more the dictionary does not hold yet, while they fit.
 * The first in that order lands last, nearest to the record (deflate codes a near match in fewer bits).
 */
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { type EvidenceRecord, evidenceBody, type SendEvidence } from '../../functions/domain/evidence.ts';
import { LOCALES } from '../../functions/domain/locale.ts';
import { catalogueValues, sampleRecords, transferValues } from './spool-samples.ts';

/** Deflate's window (32 KB) less the lookahead zlib keeps (MIN_LOOKAHEAD, 262 bytes): farther back is never matched. */
export const DICTIONARY_MAX_BYTES = 32 * 1024 - 262;
/** A run shorter than this is not worth a match of its own: left to the record's own bytes. */
const MIN_RUN = 24;
const LINE_CHARS = 100;

/** The runs of `record` the dictionary has no match of MIN_RUN bytes for, gaps under MIN_RUN merged, 4 bytes around. */
export function uncoveredRuns(dictionary: Buffer, record: Buffer): Buffer[] {
  const runs: [number, number][] = [];
  let p = 0;
  while (p < record.length) {
    if (p + MIN_RUN <= record.length && dictionary.includes(record.subarray(p, p + MIN_RUN))) {
      let length = MIN_RUN;
      while (p + length < record.length && dictionary.includes(record.subarray(p, p + length + 16))) length += 16;
      p += length;
      continue;
    }
    const last = runs.at(-1);
    if (last !== undefined && p - last[1] < MIN_RUN) last[1] = p + 1;
    else runs.push([p, p + 1]);
    p++;
  }
  return runs.map(([a, b]) => record.subarray(Math.max(0, a - 4), Math.min(record.length, b + 4)));
}

/**
 * A language's records in order of weight, what its dictionary must hold first: an email (the layout every notice
 * type shares, and a transfer's text), every other type's email (its own text: an email is what must stay within one
 * write unit), a push, an SMS and a report of each channel (their fields), then the other types' pushes and SMS.
 */
export function byWeight(records: readonly EvidenceRecord[], locale: string): EvidenceRecord[] {
  const sends = records.filter((r) => r.kind === 'SEND' && r.locale === locale) as SendEvidence[];
  const of = (channel: string) => sends.filter((r) => r.channel === channel);
  const first = (channel: string) =>
    of(channel).sort(
      (a, b) => Number(b.noticeType === 'TransferCompleted') - Number(a.noticeType === 'TransferCompleted'),
    );
  const reports = ['EMAIL', 'SMS', 'PUSH'].flatMap((c) => {
    const report = records.find((r) => r.kind === 'FEEDBACK' && r.channel === c);
    return report === undefined ? [] : [report];
  });
  const [email, ...emails] = first('EMAIL');
  const [push, ...pushes] = first('PUSH');
  const [sms, ...texts] = first('SMS');
  return [email, ...emails, push, sms, ...reports, ...pushes, ...texts].filter(
    (r): r is EvidenceRecord => r !== undefined,
  );
}

/** A language's dictionary: each record's runs not held yet, put before what is there, while they fit. */
export function buildDictionary(
  records: readonly EvidenceRecord[],
  locale: string,
  maxBytes = DICTIONARY_MAX_BYTES,
): Buffer {
  let dictionary = Buffer.alloc(0);
  for (const r of byWeight(records, locale)) {
    const runs = Buffer.concat(uncoveredRuns(dictionary, evidenceBody(r)));
    if (dictionary.length + runs.length <= maxBytes) dictionary = Buffer.concat([runs, dictionary]);
  }
  return dictionary;
}

export const dictionaryId = (dictionary: Uint8Array) =>
  createHash('sha256').update(dictionary).digest('hex').slice(0, 8);

/** The module of a dictionary: its bytes in base64, in lines the formatter keeps as they are. */
export function dictionaryModule(dictionary: Buffer, locale: string): string {
  const b64 = dictionary.toString('base64');
  const lines: string[] = [];
  for (let i = 0; i < b64.length; i += LINE_CHARS) lines.push(`  '${b64.slice(i, i + LINE_CHARS)}',`);
  return [
    `/** The spool's dictionary ${dictionaryId(dictionary)} of records in ${locale} (${dictionary.length} bytes, base64): built`,
    ' * by tools/scripts/spool-dictionary.ts, never edited (spool-codec.ts decodes the items it encoded with it). */',
    'export const DICTIONARY: readonly string[] = [',
    ...lines,
    '];',
    '',
  ].join('\n');
}

async function main() {
  const records = await sampleRecords([...catalogueValues(), ...transferValues('dictionary', 1)]);
  for (const locale of LOCALES) {
    const dictionary = buildDictionary(records, locale);
    const id = dictionaryId(dictionary);
    const file = fileURLToPath(new URL(`../../functions/stores/spool-dictionaries/${id}.ts`, import.meta.url));
    writeFileSync(file, dictionaryModule(dictionary, locale));
    process.stdout.write(`${locale}: ${file}, dictionary ${id}, ${dictionary.length} bytes\n`);
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();

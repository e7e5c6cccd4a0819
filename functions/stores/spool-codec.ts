/**
 * How a spool item holds its record's bytes (stores/evidence-spool.ts). A record is mostly what every record of its
 * channel shares — an email's is about 20 KB of which the MJML layout and the brand's text are nearly all — so each is
 * compressed with a preset dictionary of what records share (raw deflate, node:zlib's `dictionary`): an email's item
 * comes to about 0.6 KB instead of 3.3 KB with Brotli alone, one write unit instead of four, in less CPU (docs/
 * evidence-and-privacy.md "How a spooled item holds its record"). The item names its dictionary: `dz` (the bytes) and
 * `dict` (the dictionary's id, the first 8 hex digits of its SHA-256). Items written before the dictionary hold
 * `br` (Brotli, no dictionary), an earlier layout's `body` (gzip): both still read.
 *
 * A dictionary is a module of its own (spool-dictionaries/<id>.ts, built by tools/scripts/spool-dictionary.ts), loaded
 * when the first record is compressed or read — a chunk beside the bundle, never read at cold start — and checked
 * against its id once loaded. An item naming a dictionary this version does not have is refused, never decoded
 * without it (UnknownSpoolDictionary): the roll-up sets it apart as an item it cannot read (stores/evidence-spool.ts
 * readItem) and rolls the rest of its minute.
 */
import { createHash } from 'node:crypto';
import { brotliDecompressSync, deflateRawSync, gunzipSync, inflateRawSync } from 'node:zlib';
import { DEFAULT_LOCALE } from '../domain/locale.ts';

/**
 * Every dictionary an item may name, by id. Keep each one here — never edited, never removed — for SPOOL_KEEP_DAYS
 * (domain/evidence-spool.ts: an item expires that long after its minute, plus the few days DynamoDB's TTL may take)
 * after the last deploy that wrote with it, and while a set-aside copy (`BAD#…`, kept with no TTL) names it.
 */
const DICTIONARIES: Readonly<Record<string, () => Promise<{ readonly DICTIONARY: readonly string[] }>>> = {
  b6c019ba: () => import('./spool-dictionaries/b6c019ba.ts'),
  ade35344: () => import('./spool-dictionaries/ade35344.ts'),
};
/**
 * The dictionaries new items are written with, by the record's language. A new one is written with only from the
 * release after the one that added it to DICTIONARIES: during a deploy, or a rollback by one release, the older
 * sweeper then reads every item the newer writer wrote (one it cannot read is set apart, and no version rolls a
 * set-apart copy again). By language, as an email's text is most of what a type's emails do not share, and one
 * dictionary of 32 KB (all raw deflate reads back) holds the layout and every type's text of one language, not of
 * two. A record of another language, or none (a report), takes DEFAULT_LOCALE's.
 */
export const CURRENT_SPOOL_DICTIONARIES: Readonly<Record<string, string>> = { en: 'b6c019ba', ja: 'ade35344' };

/**
 * Deflate's level by the record's size, so that no record costs dispatch more than a few ms of its event loop: level 6
 * up to 32 KiB (every email, about 20 KB: ≤ 0.7 KB, 0.1–0.2 ms; the worst input of that size, a two-letter alphabet,
 * ~5 ms), level 1 above it (its match search is short: ~2.5 ms for 260 KB of such input, where level 6 takes ~40 ms
 * and level 9 half a second). Measured on Node 24 with the en dictionary: `npx tsx tools/scripts/spool-compare.ts`.
 */
export const spoolDeflateLevel = (bytes: Uint8Array): number => (bytes.length <= 32_768 ? 6 : 1);

/** An item names a dictionary this version does not have: never decoded without it. */
export class UnknownSpoolDictionary extends Error {
  override name = 'UnknownSpoolDictionary';
}

const loaded = new Map<string, Promise<Buffer>>();

/** A dictionary's bytes, loaded once and checked against its id (the first 8 hex digits of their SHA-256). */
export function spoolDictionary(id: string): Promise<Buffer> {
  const load = Object.hasOwn(DICTIONARIES, id) ? DICTIONARIES[id] : undefined;
  if (load === undefined) {
    return Promise.reject(
      new UnknownSpoolDictionary(`spool dictionary ${id} is not one this version has: its items are not decoded`),
    );
  }
  let dictionary = loaded.get(id);
  if (dictionary === undefined) {
    dictionary = load().then(({ DICTIONARY }) => {
      const bytes = Buffer.from(DICTIONARY.join(''), 'base64');
      if (createHash('sha256').update(bytes).digest('hex').slice(0, 8) !== id) {
        throw new Error(`spool dictionary ${id}: its bytes are not the digest its id names`);
      }
      return bytes;
    });
    // A load that failed is tried again on the next record.
    dictionary.catch(() => loaded.delete(id));
    loaded.set(id, dictionary);
  }
  return dictionary;
}

/** The ids of every dictionary this version reads. */
export const spoolDictionaryIds = (): string[] => Object.keys(DICTIONARIES);

/**
 * The language a record is in: its `locale` field, read from its canonical bytes (domain/evidence.ts evidenceBody: a
 * top-level field is a line of its own, indented two spaces, within its first few hundred bytes) without parsing the
 * whole record. What it finds only chooses the dictionary (the item names it): never what is stored.
 */
const LOCALE_LINE = /^ {2}"locale": "([A-Za-z-]{1,35})",$/m;
const localeOf = (bytes: Uint8Array) => LOCALE_LINE.exec(Buffer.from(bytes).subarray(0, 2_048).toString('latin1'))?.[1];

/** The id of the dictionary a record is written with (see CURRENT_SPOOL_DICTIONARIES). */
export function spoolDictionaryFor(bytes: Uint8Array): string {
  const locale = localeOf(bytes) ?? DEFAULT_LOCALE;
  const id = Object.hasOwn(CURRENT_SPOOL_DICTIONARIES, locale) ? CURRENT_SPOOL_DICTIONARIES[locale] : undefined;
  return id ?? (CURRENT_SPOOL_DICTIONARIES[DEFAULT_LOCALE] as string);
}

/** A record's bytes as the item holds them: compressed with its language's dictionary, which the item names. */
export async function encodeSpoolBody(bytes: Uint8Array): Promise<{ dz: Buffer; dict: string }> {
  const dict = spoolDictionaryFor(bytes);
  const dictionary = await spoolDictionary(dict);
  return { dz: deflateRawSync(bytes, { level: spoolDeflateLevel(bytes), dictionary }), dict };
}

/** The body attributes of an item, whichever layout wrote it (values as the document client reads them). */
export interface SpoolBody {
  readonly dz?: unknown;
  readonly dict?: unknown;
  readonly br?: unknown;
  readonly body?: unknown;
}

/**
 * A record's bytes back from its item: undefined when they do not decompress (the caller checks them against the
 * digest its key names either way). Throws UnknownSpoolDictionary for a dictionary this version does not have.
 */
export async function decodeSpoolBody(item: SpoolBody): Promise<Buffer | undefined> {
  if (item.dz !== undefined || item.dict !== undefined) {
    // Half an item of this layout is no item: set apart by its reader, as a body that does not decompress.
    if (item.dz === undefined || typeof item.dict !== 'string') return undefined;
    const dictionary = await spoolDictionary(item.dict);
    return attempt(() => inflateRawSync(item.dz as Uint8Array, { dictionary, maxOutputLength: MAX_RECORD_BYTES }));
  }
  if (item.br !== undefined) {
    return attempt(() => brotliDecompressSync(item.br as Uint8Array, { maxOutputLength: MAX_RECORD_BYTES }));
  }
  return attempt(() => gunzipSync(item.body as Uint8Array, { maxOutputLength: MAX_RECORD_BYTES }));
}

/**
 * The most a record's bytes may inflate to: far above any record (a notice's record is tens of KB; its event at most
 * MAX_EVENT_BYTES), so an item a writer of the table crafted to inflate a thousandfold (400 KB to 400 MB) is set
 * apart as a body that does not decompress instead of taking the sweeper's memory.
 */
const MAX_RECORD_BYTES = 16 * 1024 * 1024;

function attempt(decode: () => Buffer): Buffer | undefined {
  try {
    return decode();
  } catch {
    return undefined;
  }
}

/**
 * Evidence batches (docs/evidence-and-privacy.md "The store"): the records one writer produced together — a dispatch
 * invocation's sends, a feedback invocation's reports — kept as one compressed object
 * instead of one object per record. Pure: the writer names the batch (its clock and its random id come from outside)
 * and the adapters store the bytes encoded here, never re-encoded.
 *
 * The object is gzip of one header line (JSON: every record's ids, where its bytes start and end, their SHA-256) and
 * then each record's own bytes (domain/evidence.ts evidenceBody), one after the other. So a record is exactly the bytes
 * it was as a single object, found without parsing its neighbours, and checked against its own hash; and the batch
 * compresses as a whole (an email's HTML repeats from one record to the next: 27× smaller than the records alone on the
 * bench's mix, docs/measurements.md).
 *
 * Why a record can still be found without listing the bucket: a send names its batch on the notification (the SENT
 * write, docs/table.md) and in the customer's evidence index; a feedback invocation's batch of reports is named by an
 * item per send batch it holds reports on (stores/evidence-reports.ts); reports written before that are under their
 * send batch's own prefix, `<batch>.reports/`, so one short List of that prefix finds them.
 */
import { createHash } from 'node:crypto';
import { gunzipSync, gzipSync } from 'node:zlib';
import type { Channel } from './channels.ts';
import { type EvidenceRecord, evidenceBody, type FeedbackEvidence, type SendEvidence } from './evidence.ts';

export const BATCH_VERSION = 1;

/** Who wrote a batch: dispatch (sends), feedback (reports), or the sweeper (a batch it recovered or rebuilt). */
export type BatchWriter = 'dispatch' | 'feedback' | 'sweeper';

/** One record of a batch, as its header lists it. */
export interface BatchEntry {
  readonly kind: EvidenceRecord['kind'];
  readonly notificationId: string;
  readonly eventId: string;
  readonly channel: Channel;
  /** A send's customer (the evidence index is by customer); absent on a report. */
  readonly userId?: string;
  readonly providerMessageId: string;
  /** A send's acceptedAt, a report's at. */
  readonly at: string;
  /** A report's status. */
  readonly status?: string;
  /** Where the record's bytes are, after the header line. */
  readonly offset: number;
  readonly length: number;
  /** SHA-256 of the record's bytes (hex): what a dispute checks a copy against, and the rebuild is verified by. */
  readonly sha256: string;
}

export interface BatchHeader {
  readonly evidenceBatch: typeof BATCH_VERSION;
  /** The batch's name (its key without `.jsonl.gz`). */
  readonly name: string;
  readonly writer: BatchWriter;
  readonly records: readonly BatchEntry[];
}

/** A record of a batch and its exact bytes. */
export interface BatchRecord {
  readonly entry: BatchEntry;
  readonly bytes: Buffer;
}

const OBJECT_SUFFIX = '.jsonl.gz';
const REPORTS = '.reports/';

/**
 * A batch's name: `batches/<yyyy-mm-dd>/<hhmmss>-<writer>-<id>`. The day first, so a day of evidence is one prefix
 * (lifecycle, inventory, replication reports); the writer's random id after the time spreads the keys of one second
 * over S3's partitions. `id` is the writer's own (random, [0-9a-z]), never derived from a record.
 */
export function batchName(writer: BatchWriter, atMs: number, id: string): string {
  if (!/^[0-9a-z]{8,40}$/.test(id)) throw new Error(`batch id must be 8–40 of [0-9a-z], got ${JSON.stringify(id)}`);
  const iso = new Date(atMs).toISOString();
  return `batches/${iso.slice(0, 10)}/${iso.slice(11, 19).replaceAll(':', '')}-${writer}-${id}`;
}

/**
 * The prefix the reports on the sends of `sendBatch` were written under before a feedback invocation wrote all its
 * reports as one batch of its own (`<sendBatch>.reports/<hhmmss>-feedback-<id>`): still read.
 */
export const reportsPrefix = (sendBatch: string) => `${sendBatch}${REPORTS}`;
export const batchObjectKey = (name: string) => `${name}${OBJECT_SUFFIX}`;
/** A batch's name from its object key, or undefined for any other key (a record of the per-send layout, an audit). */
export const batchNameOfKey = (key: string): string | undefined =>
  key.startsWith('batches/') && key.endsWith(OBJECT_SUFFIX) ? key.slice(0, -OBJECT_SUFFIX.length) : undefined;
/** Whether a batch name is a send batch (not a reports batch under one). */
export const isSendBatch = (name: string) => !name.includes(REPORTS);

export const sha256Hex = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

/** A record's entry fields, from the record itself. */
function entryOf(r: EvidenceRecord): Omit<BatchEntry, 'offset' | 'length' | 'sha256'> {
  const ids = {
    kind: r.kind,
    notificationId: r.notificationId,
    eventId: r.eventId,
    channel: r.channel,
    providerMessageId: r.providerMessageId,
  };
  return r.kind === 'SEND'
    ? { ...ids, userId: r.userId, at: r.acceptedAt }
    : { ...ids, at: (r as FeedbackEvidence).at, status: (r as FeedbackEvidence).status };
}

/** The bytes of a record as the batch keeps it, with its entry. The same bytes a single-record object held. */
export function batchRecord(r: EvidenceRecord): { readonly record: EvidenceRecord; readonly bytes: Buffer } {
  return { record: r, bytes: evidenceBody(r) };
}

/** The object of a batch: gzip of the header line and the records' bytes. */
export function encodeBatch(
  name: string,
  writer: BatchWriter,
  records: readonly { readonly record: EvidenceRecord; readonly bytes: Buffer }[],
): Buffer {
  let offset = 0;
  const entries: BatchEntry[] = records.map(({ record, bytes }) => {
    const entry = { ...entryOf(record), offset, length: bytes.length, sha256: sha256Hex(bytes) };
    offset += bytes.length;
    return entry;
  });
  const header: BatchHeader = { evidenceBatch: BATCH_VERSION, name, writer, records: entries };
  const head = Buffer.from(`${JSON.stringify(header)}\n`, 'utf8');
  return gzipSync(Buffer.concat([head, ...records.map((r) => r.bytes)]), { level: 9 });
}

export class EvidenceBatchFormatError extends Error {
  override name = 'EvidenceBatchFormatError';
}

/** A record of a batch whose bytes are not what its header says (cut short, or another hash): which, and why. */
export interface BadRecord {
  readonly entry: BatchEntry;
  /** Its place in the batch. */
  readonly record: number;
  readonly reason: string;
}

/**
 * The header and every record of a batch object, each record's bytes checked against its hash on its own: a record
 * that does not match is set apart (`bad`), so one damaged record never hides its neighbours' evidence.
 */
export function readBatch(object: Uint8Array): { header: BatchHeader; records: BatchRecord[]; bad: BadRecord[] } {
  let plain: Buffer;
  try {
    plain = gunzipSync(object);
  } catch {
    throw new EvidenceBatchFormatError('evidence batch is not gzip');
  }
  const newline = plain.indexOf(0x0a);
  let header: BatchHeader;
  try {
    header = JSON.parse(plain.subarray(0, newline).toString('utf8')) as BatchHeader;
  } catch {
    throw new EvidenceBatchFormatError('evidence batch header is not JSON');
  }
  if (header?.evidenceBatch !== BATCH_VERSION || !Array.isArray(header.records)) {
    throw new EvidenceBatchFormatError(`evidence batch of an unknown version (${String(header?.evidenceBatch)})`);
  }
  const body = plain.subarray(newline + 1);
  const records: BatchRecord[] = [];
  const bad: BadRecord[] = [];
  header.records.forEach((entry, record) => {
    const bytes = Buffer.from(body.subarray(entry.offset, entry.offset + entry.length));
    if (bytes.length !== entry.length) bad.push({ entry, record, reason: `${bytes.length} of ${entry.length} bytes` });
    else if (sha256Hex(bytes) !== entry.sha256) bad.push({ entry, record, reason: 'its bytes do not match its hash' });
    else records.push({ entry, bytes });
  });
  return { header, records, bad };
}

/** The header and every record of a batch object; throws when any record does not match its hash. */
export function decodeBatch(object: Uint8Array): { header: BatchHeader; records: BatchRecord[] } {
  const { header, records, bad } = readBatch(object);
  const [first] = bad;
  if (first !== undefined) {
    throw new EvidenceBatchFormatError(
      `record ${first.entry.notificationId} of ${header.name} does not match its hash`,
    );
  }
  return { header, records };
}

/** The latest retain-until date of a batch's records: the object is locked as long as its longest-kept record. */
export const batchRetainUntil = (records: readonly { readonly record: EvidenceRecord }[]) =>
  new Date(Math.max(...records.map((r) => Date.parse(r.record.retainUntil))));

// ── the customer's evidence index (docs/table.md "evidence index") ──

/**
 * A send as the index kept it before it was one item per customer and batch: `<batch name> <notificationId>`, in a
 * customer-month's set (still read: such items stay until their retention ends). A batch name has no space, so the
 * first space ends it whatever the eventId holds.
 */
export const indexRef = (batch: string, notificationId: string) => `${batch} ${notificationId}`;
export function parseIndexRef(ref: string): { batch: string; notificationId: string } | undefined {
  const at = ref.indexOf(' ');
  if (at <= 0) return undefined;
  return { batch: ref.slice(0, at), notificationId: ref.slice(at + 1) };
}

/**
 * A send as the index kept it on its batch's item before the compact layout: `<sha256> <notificationId>`, the whole
 * digest in hex (still read: such items stay until their retention ends). The digest is 64 hex digits, so the first
 * space ends it whatever the eventId holds. Written now only by tests of that layout.
 */
export const indexSend = (sha256: string, notificationId: string) => `${sha256} ${notificationId}`;

/**
 * A send as the compact layout keeps it on its customer's item of its event: `<digest><batch> <channel…>`, the digest
 * the first 128 bits of the record's SHA-256 in base64url (22 characters, against 64 hex digits), the batch as little
 * as names it after the item's day (`shortBatchPart`: a spool slice `~<minute><days>`, an invocation's batch
 * `<D|F|S><second><id>`, the numbers in base64url), and what the notification id adds to the event's id with its
 * channel as one letter (`E` for `#EMAIL`, a resend's `S#E2` for `#SMS#E2`). Every byte of it is kept seven years,
 * once a send. The digest is the record's, as the SENT write carried it: the anchor from outside the object that
 * outlives the notification item — a reader checks the stored record against it (`digestMatches`); another record
 * with the same first 128 bits is a second preimage, 2^128 work. A batch name has no space.
 *
 * After the digest, the attempt of the record (the claim that sent it, SendEvidence `attempt`) and a dot, `2.` for
 * attempt 2: what tells this attempt's send from an earlier one's a frozen holder recorded late (sweeper/
 * recover-evidence.ts `namesThisAttempt`). Two bytes a send. A mark without it (written before; or a send whose
 * record's attempt is not known) is read as before: a reader falls back on the batches resends name.
 *
 * Marks written before this (`<digest> <batch> <#CHANNEL…>`: a space after the digest, the batch as `indexBatchPart`
 * names it, the channel whole) are read as well: the space after the digest tells them apart. A reader of a version
 * before the attempt (a stack update's minutes, a rollback) reads a mark with one as none (its MARK allows no digit
 * and dot after the digest) — never as another notification's, but not as its own either: its sweeper counts such a
 * send naming no record unconfirmed, and its `ops evidence`, export and `spool-keys` leave the send out, unsaid.
 */
export const INDEX_DIGEST_HEX = 32;
export const indexDigest = (sha256: string) =>
  Buffer.from(sha256.slice(0, INDEX_DIGEST_HEX), 'hex').toString('base64url');
/** A mark's digest's characters: 128 bits in base64url, unpadded (MARK's first group). */
export const INDEX_DIGEST_B64 = 22;
export function indexMark(
  sha256: string,
  day: string,
  batch: string,
  eventId: string,
  notificationId: string,
  attempt?: number,
) {
  // A number that is not a whole one is no claim's: left out, the mark is read by the batch rule. A safe integer has
  // at most 16 digits, as many as MARK reads.
  const claim = attempt !== undefined && Number.isSafeInteger(attempt) && attempt >= 0 ? `${attempt}.` : '';
  const rest = shortIdRest(notificationId.slice(eventId.length));
  return `${indexDigest(sha256)}${claim}${shortBatchPart(day, batch)} ${rest}`;
}
/**
 * A mark: the digest, then a space and the batch as before, or its attempt and a dot (if any) and the batch as
 * `shortBatchPart` names it — one of its forms, so that a whole hex digest of the layout before (`indexSend`) is not
 * read as one; its date form has a dash after its digits, never a dot — then its rest.
 */
const MARK =
  /^([A-Za-z0-9_-]{22})(?:( )(\S+)|(?:(\d{1,16})\.)?(~[A-Za-z0-9_-]{3,}|[A-Z][A-Za-z0-9_-]{3}[0-9a-z]+|\d{4}-\d{2}-\d{2}\/\S+|\/\S+)) (.*)$/s;
/** A send of the compact layout read back (`indexMark`), on the item of `eventId` and `day`; undefined if not one. */
export function parseIndexMark(
  mark: string,
  day: string,
  eventId: string,
): { batch: string; notificationId: string; sha256: string; attempt?: number } | undefined {
  const m = MARK.exec(mark);
  if (m === null) return undefined;
  const [, digest, space, spacedPart, attempt, shortPart, rest] = m as unknown as (string | undefined)[];
  const spaced = space === ' ';
  const part = (spaced ? spacedPart : shortPart) as string;
  return {
    batch: spaced ? batchOfIndexPart(day, part) : batchOfShortPart(day, part),
    notificationId: `${eventId}${spaced ? rest : idRestOfShort(rest as string)}`,
    sha256: Buffer.from(digest as string, 'base64url').toString('hex'),
    ...(attempt === undefined ? {} : { attempt: Number(attempt) }),
  };
}

/** A send of the layout before (`indexSend`): its notification and its record's whole SHA-256 (hex). */
export function parseIndexSend(ref: string): { sha256: string; notificationId: string } | undefined {
  const whole = /^([0-9a-f]{64}) (.+)$/s.exec(ref);
  return whole === null ? undefined : { sha256: whole[1] as string, notificationId: whole[2] as string };
}

/** Whether a record's SHA-256 (hex) is the digest a SENT write or the index carried: the whole, or its first 128 bits. */
export const digestMatches = (carried: string, sha256: string) =>
  carried.length >= INDEX_DIGEST_HEX && sha256.startsWith(carried);

/**
 * The batch as a compact index item names it after the day of acceptance its sort key holds: `batches/<day>/<rest>` as
 * `<rest>` when the batch is of that day (nearly always), `<batch day>/<rest>` when not (a send accepted before
 * midnight, dispatched after; a batch a rebuild wrote later), and any other name whole after a `/`.
 */
export function indexBatchPart(day: string, batch: string): string {
  if (batch.startsWith(`batches/${day}/`)) return batch.slice(`batches/${day}/`.length);
  if (/^batches\/\d{4}-\d{2}-\d{2}\//.test(batch)) return batch.slice('batches/'.length);
  return `/${batch}`;
}
/** The batch an index item's sort key part names (`indexBatchPart` read back). */
export function batchOfIndexPart(day: string, part: string): string {
  if (part.startsWith('/')) return part.slice(1);
  if (/^\d{4}-\d{2}-\d{2}\//.test(part)) return `batches/${part}`;
  return `batches/${day}/${part}`;
}

/** A writer's batch of the item's day as a mark names it: the writer's initial, its time and id, no dashes. */
const WRITER_INITIAL = { dispatch: 'D', feedback: 'F', sweeper: 'S' } as const satisfies Record<BatchWriter, string>;
const WRITER_OF_INITIAL = new Map<string, string>(Object.entries(WRITER_INITIAL).map(([w, i]) => [i, w]));

/** Base64url digits of a whole number, most significant first, at least `width` (zeros are `A`). */
const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
function b64(n: number, width = 1): string {
  let out = '';
  for (let rest = n; rest > 0; rest = Math.floor(rest / 64)) out = `${B64[rest % 64]}${out}`;
  return out.padStart(width, 'A');
}
const ofB64 = (digits: string) => [...digits].reduce((n, c) => n * 64 + B64.indexOf(c), 0);
const two = (n: number) => String(n).padStart(2, '0');

/**
 * The batch as a mark names it (`indexMark`): a spool slice of the item's day (`<hhmm>00-sweeper-spooldays<days>`)
 * as `~`, its minute of the day in two base64url digits and its retention days in as many as they take (`~Irn9` for
 * `091500-sweeper-spooldays2557`); a writer's batch of that day (`<hhmmss>-<writer>-<id>`) as its initial, its second
 * of the day in three base64url digits and its id (`DIIX<id>` for `091503-dispatch-<id>`); any other as
 * `indexBatchPart` names it when that is another day's (`<yyyy-mm-dd>/…`), else whole after a `/` — never `~` nor a
 * letter first.
 */
export function shortBatchPart(day: string, batch: string): string {
  const part = indexBatchPart(day, batch);
  const slice = /^([01]\d|2[0-3])([0-5]\d)00-sweeper-spooldays([1-9]\d{0,8})$/.exec(part);
  if (slice !== null) return `~${b64(Number(slice[1]) * 60 + Number(slice[2]), 2)}${b64(Number(slice[3]))}`;
  const own = /^([01]\d|2[0-3])([0-5]\d)([0-5]\d)-(dispatch|feedback|sweeper)-([0-9a-z]+)$/.exec(part);
  if (own !== null) {
    const second = Number(own[1]) * 3_600 + Number(own[2]) * 60 + Number(own[3]);
    return `${WRITER_INITIAL[own[4] as BatchWriter]}${b64(second, 3)}${own[5]}`;
  }
  return /^\d{4}-\d{2}-\d{2}\//.test(part) ? part : `/${batch}`;
}
/** The batch a mark's part names (`shortBatchPart` read back). */
export function batchOfShortPart(day: string, part: string): string {
  const slice = /^~([A-Za-z0-9_-]{2})([A-Za-z0-9_-]+)$/.exec(part);
  if (slice !== null) {
    const minute = ofB64(slice[1] as string);
    const hhmm = `${two(Math.floor(minute / 60))}${two(minute % 60)}`;
    return `batches/${day}/${hhmm}00-sweeper-spooldays${ofB64(slice[2] as string)}`;
  }
  const own = /^([A-Z])([A-Za-z0-9_-]{3})([0-9a-z]+)$/.exec(part);
  const writer = own === null ? undefined : WRITER_OF_INITIAL.get(own[1] as string);
  if (own !== null && writer !== undefined) {
    const second = ofB64(own[2] as string);
    const hhmmss = `${two(Math.floor(second / 3_600))}${two(Math.floor(second / 60) % 60)}${two(second % 60)}`;
    return `batches/${day}/${hhmmss}-${writer}-${own[3]}`;
  }
  return batchOfIndexPart(day, part);
}

/** A channel as a mark names it: its initial. */
const CHANNEL_INITIAL = { EMAIL: 'E', PUSH: 'P', SMS: 'S' } as const satisfies Record<Channel, string>;
const CHANNEL_OF_INITIAL = new Map<string, string>(Object.entries(CHANNEL_INITIAL).map(([c, i]) => [i, c]));
/**
 * What a notification id adds to its event's, as a mark keeps it: `#<CHANNEL>…` as the channel's initial and the
 * rest (`#SMS#E2` → `S#E2`); anything else as it is (`#` or nothing first: never a letter).
 */
export function shortIdRest(rest: string): string {
  const m = /^#(EMAIL|PUSH|SMS)(#.*)?$/s.exec(rest);
  return m === null ? rest : `${CHANNEL_INITIAL[m[1] as Channel]}${m[2] ?? ''}`;
}
/** `shortIdRest` read back. */
export function idRestOfShort(short: string): string {
  const channel = CHANNEL_OF_INITIAL.get(short.slice(0, 1));
  return channel === undefined ? short : `#${channel}${short.slice(1)}`;
}
/** The day (UTC, `yyyy-mm-dd`) a send is indexed under: its acceptance's. */
export const indexDay = (acceptedAt: string) => acceptedAt.slice(0, 10);

/** A send as the index needs it: whose, when, which notification, its record's digest, and the claim that sent it. */
export interface IndexedSend {
  readonly userId: string;
  readonly acceptedAt: string;
  readonly notificationId: string;
  readonly sha256: string;
  /** The record's attempt; absent when the writer does not know it (a reference written before it named one). */
  readonly attempt?: number;
}

/** The sends among a batch's records. */
export const sendsOf = (
  records: readonly { readonly record: EvidenceRecord; readonly bytes: Buffer }[],
): IndexedSend[] =>
  records.flatMap(({ record, bytes }) => {
    if (record.kind !== 'SEND') return [];
    const s = record as SendEvidence;
    const { userId, acceptedAt, notificationId, attempt } = s;
    return [{ userId, acceptedAt, notificationId, sha256: sha256Hex(bytes), attempt }];
  });

/** One customer's sends in one batch on one day: one small index item, never a set that grows with the customer. */
export interface IndexEntry {
  readonly userId: string;
  readonly day: string;
  readonly batch: string;
  readonly sends: readonly { readonly notificationId: string; readonly sha256: string; readonly attempt?: number }[];
}

/** A batch's sends, by customer and day of acceptance. */
export function indexEntriesOf(batch: string, sends: readonly IndexedSend[]): IndexEntry[] {
  const byCustomer = new Map<
    string,
    { userId: string; day: string; batch: string; sends: IndexEntry['sends'][number][] }
  >();
  for (const s of sends) {
    const day = indexDay(s.acceptedAt);
    const key = JSON.stringify([s.userId, day]);
    const entry = byCustomer.get(key) ?? { userId: s.userId, day, batch, sends: [] };
    entry.sends.push({
      notificationId: s.notificationId,
      sha256: s.sha256,
      ...(s.attempt === undefined ? {} : { attempt: s.attempt }),
    });
    byCustomer.set(key, entry);
  }
  return [...byCustomer.values()];
}

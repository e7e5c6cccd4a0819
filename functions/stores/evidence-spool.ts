/**
 * The evidence spool in the table (domain/evidence-spool.ts): each record's exact bytes, compressed, waiting for the
 * sweeper to roll its slice into one object. Item: pk `EVIDENCE_SPOOL#<shard of its digest>`, sk `<slice start, 13
 * digits>#<retention days>#<sha256, base64url>`, `dz` and `dict` (the record's bytes deflated with a preset dictionary,
 * and that dictionary's id: spool-codec.ts; items written before it hold `br`, Brotli), `expiresAt` — nothing else: the
 * slice's name follows from its start and retention, the notification and the record's kind from the bytes, and every
 * byte of an item is billed on its put (1 write unit a KB). The key holds the record's digest, so the same record
 * spooled twice (a retried put, a rebuild of a batch whose put had landed) is one item. No `kind`: the dispatch
 * triggers' filter takes notifications only, so a spool item never invokes dispatch.
 *
 * Never deleted by the roll-up: an item expires by the table's TTL (SPOOL_KEEP_DAYS after its slice, free), and the
 * roll-up keeps a cursor (`EVIDENCE_SPOOL#ROLLED`): every slice starting before `rolledBefore` is in the store, and
 * the next run reads from there. Items of the earlier layout (sk `<start>#<slice batch>#<sha256 hex>`, gzipped `body`,
 * no TTL) are still read, rolled and — they never expire — deleted once rolled; the main table's former spool is
 * drained from its start every run, with no cursor (`former`).
 */
import { BatchWriteCommand, type DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { sha256Hex } from '../domain/evidence-batch.ts';
import {
  parseSliceBatch,
  SPOOL_KEEP_DAYS,
  SPOOL_SHARDS,
  sliceBatchName,
  spoolPartitionKey,
  spoolShardOf,
} from '../domain/evidence-spool.ts';
import { isConditionFailure, refusedItem } from './condition-failure.ts';
import { type Item, queryAll, queryItems } from './paged-query.ts';

/** A record as the spool keeps it. */
export interface SpooledRecord {
  /** The slice batch it lands in. */
  readonly slice: string;
  readonly sha256: string;
  readonly notificationId: string;
  readonly recordKind: 'SEND' | 'FEEDBACK';
  /** The record's exact bytes. */
  readonly bytes: Buffer;
}

export interface SpoolKey {
  readonly pk: string;
  readonly sk: string;
}

/** A spool item the roll-up must not roll: its body does not unzip, or its bytes are not the digest its key names. */
export interface BadSpoolItem {
  readonly bad: string;
  readonly key: SpoolKey;
}

/**
 * What a partition's read gives: a record (`legacy`: deleted once rolled — of the earlier layout, or any of the drained
 * former spool), or an item set apart.
 */
export type SpoolRead = (SpooledRecord & { key: SpoolKey; legacy?: true }) | BadSpoolItem;
export const isBadSpoolItem = (r: SpoolRead): r is BadSpoolItem => 'bad' in r;

/** How far the roll-up has gone: every slice starting before `rolledBefore` is in the store. `version` orders writes. */
export interface SpoolCursor {
  readonly rolledBefore: number;
  readonly version: number;
}

/**
 * A put found another body under the record's key (written once, never replaced): the record did not land. The roll-up
 * sets that item apart (its bytes are not the digest its key names), so a later put of the record lands.
 */
export class EvidenceSpoolConflict extends Error {
  override name = 'EvidenceSpoolConflict';
}

export interface EvidenceSpool {
  /** Each record written once (`attribute_not_exists`): the same bytes already there are landed, others refused. */
  put(records: readonly SpooledRecord[], nowMs: number): Promise<void>;
  /**
   * Up to about `limit` records of slices started at or after `fromMs` and before `beforeMs`, oldest first, in whole
   * minutes (a slice is never cut in two: the roll-up writes it as one object), from partition `shard`.
   */
  closed(shard: number, fromMs: number, beforeMs: number, limit: number): Promise<SpoolRead[]>;
  /** The records a slice batch holds in the spool (a reader's look-up before the roll-up). */
  ofSlice(slice: string): Promise<SpooledRecord[]>;
  /**
   * The records of the minutes starting at `startsMs`, every retention class, in this table (the sweeper's look-up of
   * a dead holder's record: sweeper/spooled-send.ts).
   */
  ofMinutes(startsMs: readonly number[]): Promise<SpooledRecord[]>;
  /**
   * The records of the minute starting at `startMs` in partition `shard`, every retention class, in this table: read
   * page by page as they are taken, `max` items at most (the sweeper's bounded look-up: sweeper/spooled-send.ts).
   */
  minuteOf(startMs: number, shard: number, max: number): AsyncIterable<SpooledRecord>;
  /**
   * The record of a slice with this digest (hex), by its key: one read, in this table (the sweeper's look-up of a
   * record its lease extension named: sweeper/spooled-send.ts). Undefined when absent, or an item set apart would be.
   */
  recordAt(slice: string, sha256: string): Promise<SpooledRecord | undefined>;
  /** Deletes items of the earlier layout once rolled (they have no TTL); the current layout's expire by themselves. */
  retire(keys: readonly SpoolKey[]): Promise<void>;
  /** Copies a bad item out of the roll-up's way (`BAD#<its key>` in its partition, with why), kept for the on-call. */
  setAside(item: BadSpoolItem, nowMs: number): Promise<void>;
  /** The start of the oldest slice at or after `fromMs` still spooled (epoch ms), undefined when none is. */
  oldestSliceMs(fromMs: number): Promise<number | undefined>;
  /** The roll-up's cursor ({0, 0} before its first run). */
  cursor(): Promise<SpoolCursor>;
  /** Moves the cursor to `rolledBefore` unless another write moved it since `from` was read (then false). */
  advance(from: SpoolCursor, rolledBefore: number): Promise<boolean>;
  /**
   * After a put of a record of the slice starting at `sliceStartMs`: true when the slice is not rolled yet (the cursor
   * is bumped, so a roll-up that read the spool before the put cannot mark the slice rolled), false when it is.
   */
  claimUnrolled(sliceStartMs: number): Promise<boolean>;
}

/**
 * How an item holds its record (spool-codec.ts), loaded with the first record compressed or read: a chunk of its own
 * with its dictionaries, never read at cold start.
 */
const codec = () => import('./spool-codec.ts');
const spoolPk = spoolPartitionKey;
const CURSOR_KEY = { pk: 'EVIDENCE_SPOOL#ROLLED', sk: 'CURSOR' } as const;
/** A set-apart item's sort key: after every slice's (digits), so no read by slice ever meets it. */
const SET_ASIDE = 'BAD#';
const pad = (ms: number) => String(ms).padStart(13, '0');
const BATCH_WRITE_MAX = 25;
const RETIRE_ATTEMPTS = 5;
const CURSOR_ATTEMPTS = 5;
const DAY_S = 86_400;
/** A digest as the key holds it (base64url: 43 characters, not 64), and back. */
const DIGEST_KEY_CHARS = 43;
const keyDigest = (hex: string) => Buffer.from(hex, 'hex').toString('base64url');
const hexDigest = (b64: string) => Buffer.from(b64, 'base64url').toString('hex');

/** A spool item of a record: only what the roll-up and the readers need, every byte billed (see the header). */
export async function spoolItem(r: SpooledRecord): Promise<Item> {
  const slice = parseSliceBatch(r.slice);
  if (slice === undefined) throw new Error(`not a slice batch: ${r.slice}`);
  return {
    pk: spoolPk(spoolShardOf(r.sha256)),
    sk: `${pad(slice.startMs)}#${slice.days}#${keyDigest(r.sha256)}`,
    ...(await (await codec()).encodeSpoolBody(r.bytes)),
    expiresAt: Math.floor(slice.startMs / 1000) + SPOOL_KEEP_DAYS * DAY_S,
  };
}

/**
 * Where a record of a slice is in the spool, from its digest (hex: whole, or its first 128 bits as the index keeps
 * it): its partition and its sort key, or — from a part of the digest — the sort key's prefix (the whole base64url
 * characters the part gives). What a court-ordered erasure finds the customer's spooled records by.
 */
export function spoolKeyOf(slice: string, sha256: string): { pk: string; skPrefix: string } | undefined {
  const s = parseSliceBatch(slice);
  if (s === undefined || !/^[0-9a-f]{32,64}$/.test(sha256) || sha256.length % 2 !== 0) return undefined;
  // A whole digest is the whole key; a part gives the characters all of whose 6 bits it holds.
  const chars = sha256.length === 64 ? DIGEST_KEY_CHARS : Math.floor((sha256.length * 4) / 6);
  return {
    pk: spoolPk(spoolShardOf(sha256)),
    skPrefix: `${pad(s.startMs)}#${s.days}#${keyDigest(sha256).slice(0, chars)}`,
  };
}

/**
 * The spool as its writers (dispatch, feedback) reach it: puts only. A class of its own so that their bundles leave
 * out the roll-up's and the readers' code (a class's methods are bundled whole).
 */
export class DynamoSpoolPut implements Pick<EvidenceSpool, 'put'> {
  /**
   * `formerTable`: the main table, where an earlier version spooled — read too by `ofSlice`. `drain`: the former
   * spool as the sweeper drains it (see `former`).
   */
  constructor(
    protected readonly client: DynamoDBDocumentClient,
    protected readonly tableName: string,
    protected readonly options: { readonly formerTable?: string | undefined; readonly drain?: true } = {},
  ) {}

  async put(records: readonly SpooledRecord[], _nowMs: number): Promise<void> {
    // One put each, in parallel: a record is 0.2–4 KB compressed, BatchWriteItem would save no unit.
    await Promise.all(records.map((r) => this.putOne(r)));
  }

  private async putOne(r: SpooledRecord): Promise<void> {
    try {
      await this.client.send(
        new PutCommand({
          TableName: this.tableName,
          Item: await spoolItem(r),
          ConditionExpression: 'attribute_not_exists(pk)',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      // Already there: landed when it holds these bytes (a retried put, a rebuild), refused otherwise.
      // The item DynamoDB answered with (refusedItem: unmarshalled, or nothing when not in wire format), in whichever
      // of this layout's encodings it was written.
      const old = refusedItem(error);
      const stored = await (await codec()).decodeSpoolBody({ dz: old?.dz, dict: old?.dict, br: old?.br });
      if (stored === undefined || sha256Hex(stored) !== r.sha256) {
        throw new EvidenceSpoolConflict(`spool item of ${r.notificationId} holds other bytes than ${r.sha256}`);
      }
    }
  }
}

/** The whole spool: the writers' puts, the roll-up's reads and cursor, the readers' look-up. */
export class DynamoEvidenceSpool extends DynamoSpoolPut implements EvidenceSpool {
  /**
   * The same spool in the former table, as the sweeper drains it; undefined when there is none. Drained, not rolled
   * behind a cursor: every closed minute is read from the start each run, and every item rolled is deleted, so the
   * read stays as small as what is left. An earlier version's sweeper still running at a deploy spools a rebuilt
   * record into a minute long closed (unconditionally, with no TTL); a cursor would have passed it, never to be
   * rolled nor deleted.
   */
  former(): DynamoEvidenceSpool | undefined {
    const t = this.options.formerTable;
    return t === undefined || t === this.tableName
      ? undefined
      : new DynamoEvidenceSpool(this.client, t, { drain: true });
  }

  async closed(shard: number, fromMs: number, beforeMs: number, limit: number): Promise<SpoolRead[]> {
    const found: SpoolRead[] = [];
    for await (const item of queryItems(this.client, {
      TableName: this.tableName,
      // `<before>#…` sorts after `<before>`: the slice starting at beforeMs is not read.
      KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :before',
      ExpressionAttributeValues: { ':pk': spoolPk(shard), ':from': pad(fromMs), ':before': pad(beforeMs) },
      ConsistentRead: true,
    })) {
      const read = await readItem(item);
      // Drained: every record rolled is deleted, whatever its layout (nothing else would ever remove it).
      const record = this.options.drain === true && !isBadSpoolItem(read) ? { ...read, legacy: true as const } : read;
      // Whole minutes only (every retention's slice of it): past the limit, stop where the next minute starts.
      if (found.length >= limit && found.at(-1)?.key.sk.slice(0, 13) !== String(item.sk).slice(0, 13)) break;
      found.push(record);
    }
    return found;
  }

  async ofSlice(slice: string): Promise<SpooledRecord[]> {
    return this.inBoth((spool) => spool.ofSliceHere(slice));
  }

  /** Both spools while the main table may hold an earlier version's items (a minute of the deploy is in both). */
  private async inBoth(read: (spool: DynamoEvidenceSpool) => Promise<SpooledRecord[]>): Promise<SpooledRecord[]> {
    const former = this.former();
    const [here, before] = await Promise.all([read(this), former === undefined ? [] : read(former)]);
    const seen = new Set(here.map((r) => r.sha256));
    return [...here, ...before.filter((r) => !seen.has(r.sha256))];
  }

  /**
   * The records of a slice the roll-up has not rolled yet — what a reader may show: once rolled, a slice is read from
   * its objects only, so a record a court-ordered erasure removed from the store is not read back from here (the items
   * stay until their TTL). Each table's cursor is read before its items: a slice rolled between the two is still
   * shown, as its object is (the roll-up deletes nothing). A record that landed after its slice was rolled is not
   * shown either: its rebuild writes it beside the slice's object.
   */
  async unrolled(slice: string): Promise<SpooledRecord[]> {
    return this.inBoth((spool) => spool.unrolledHere(slice));
  }

  private async unrolledHere(slice: string): Promise<SpooledRecord[]> {
    const start = parseSliceBatch(slice)?.startMs;
    if (start === undefined || (await this.cursor()).rolledBefore > start) return [];
    return this.ofSliceHere(slice);
  }

  private async ofSliceHere(slice: string): Promise<SpooledRecord[]> {
    const s = parseSliceBatch(slice);
    if (s === undefined) return [];
    return (await this.ofMinutes([s.startMs])).filter((r) => r.slice === slice);
  }

  async ofMinutes(startsMs: readonly number[]): Promise<SpooledRecord[]> {
    // A minute's records are in every partition (by their digests): one Query each, its minute (every retention).
    const items = await Promise.all(
      startsMs.flatMap((startMs) =>
        Array.from({ length: SPOOL_SHARDS }, (_, shard) =>
          queryAll(this.client, {
            TableName: this.tableName,
            KeyConditionExpression: 'pk = :pk AND begins_with(sk, :start)',
            ExpressionAttributeValues: { ':pk': spoolPk(shard), ':start': `${pad(startMs)}#` },
            ConsistentRead: true,
          }),
        ),
      ),
    );
    // A bad item is no record (the roll-up sets it apart).
    return (await Promise.all(items.flat().map(readItem)))
      .filter((r): r is SpooledRecord & { key: SpoolKey } => !isBadSpoolItem(r))
      .map(({ key: _key, legacy: _legacy, ...r }: SpooledRecord & { key: SpoolKey; legacy?: true }) => r);
  }

  async *minuteOf(startMs: number, shard: number, max: number): AsyncIterable<SpooledRecord> {
    const query = {
      TableName: this.tableName,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :start)',
      ExpressionAttributeValues: { ':pk': spoolPk(shard), ':start': `${pad(startMs)}#` },
      ConsistentRead: true,
    };
    for await (const item of queryItems(this.client, query, max)) {
      const read = await readItem(item);
      // A bad item is no record (the roll-up sets it apart).
      if (isBadSpoolItem(read)) continue;
      const { key: _key, legacy: _legacy, ...record } = read;
      yield record;
    }
  }

  async recordAt(slice: string, sha256: string): Promise<SpooledRecord | undefined> {
    const at = sha256.length === 64 ? spoolKeyOf(slice, sha256) : undefined;
    if (at === undefined) return undefined;
    const got = await this.client.send(
      new GetCommand({ TableName: this.tableName, Key: { pk: at.pk, sk: at.skPrefix }, ConsistentRead: true }),
    );
    const read = got.Item === undefined ? undefined : await readItem(got.Item);
    if (read === undefined || isBadSpoolItem(read)) return undefined;
    const { key: _key, legacy: _legacy, ...record } = read;
    return record;
  }

  async retire(keys: readonly SpoolKey[]): Promise<void> {
    for (let i = 0; i < keys.length; i += BATCH_WRITE_MAX) {
      let requests = keys.slice(i, i + BATCH_WRITE_MAX).map((Key) => ({ DeleteRequest: { Key: { ...Key } } }));
      for (let attempt = 0; requests.length > 0; attempt++) {
        if (attempt === RETIRE_ATTEMPTS)
          throw Object.assign(new Error('spool items unprocessed'), { name: 'Unprocessed' });
        // Unprocessed items are throttled ones: back off (full jitter) before asking again.
        if (attempt > 0) await sleep(Math.random() * 50 * 2 ** attempt);
        const answer = await this.client.send(new BatchWriteCommand({ RequestItems: { [this.tableName]: requests } }));
        requests = (answer.UnprocessedItems?.[this.tableName] ?? []) as typeof requests;
      }
    }
  }

  async setAside(item: BadSpoolItem, nowMs: number): Promise<void> {
    const [stored] = await queryAll(this.client, {
      TableName: this.tableName,
      KeyConditionExpression: 'pk = :pk AND sk = :sk',
      ExpressionAttributeValues: { ':pk': item.key.pk, ':sk': item.key.sk },
      ConsistentRead: true,
    });
    if (stored === undefined) return;
    // A copy without the TTL, kept for the on-call; the item itself expires (an earlier layout's is deleted).
    const { expiresAt: _ttl, ...kept } = stored;
    await this.client.send(
      new PutCommand({
        TableName: this.tableName,
        Item: { ...kept, sk: `${SET_ASIDE}${item.key.sk}`, bad: item.bad, setAsideAt: new Date(nowMs).toISOString() },
      }),
    );
    if (stored.expiresAt === undefined) await this.retire([item.key]);
  }

  async oldestSliceMs(fromMs: number): Promise<number | undefined> {
    const firsts = await Promise.all(
      Array.from({ length: SPOOL_SHARDS }, async (_, shard) => {
        for await (const item of queryItems(
          this.client,
          {
            TableName: this.tableName,
            KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :aside',
            ExpressionAttributeValues: { ':pk': spoolPk(shard), ':from': pad(fromMs), ':aside': SET_ASIDE },
            ProjectionExpression: 'sk',
          },
          1,
        )) {
          return Number(String(item.sk).slice(0, 13));
        }
        return undefined;
      }),
    );
    const starts = firsts.filter((s): s is number => s !== undefined);
    return starts.length === 0 ? undefined : Math.min(...starts);
  }

  async cursor(): Promise<SpoolCursor> {
    // Drained: read from the start every run (see `former`), no cursor item read or written.
    if (this.options.drain === true) return { rolledBefore: 0, version: 0 };
    const [item] = await queryAll(this.client, {
      TableName: this.tableName,
      KeyConditionExpression: 'pk = :pk AND sk = :sk',
      ExpressionAttributeValues: { ':pk': CURSOR_KEY.pk, ':sk': CURSOR_KEY.sk },
      ConsistentRead: true,
    });
    return {
      rolledBefore: typeof item?.rolledBefore === 'number' ? item.rolledBefore : 0,
      version: typeof item?.version === 'number' ? item.version : 0,
    };
  }

  async advance(from: SpoolCursor, rolledBefore: number): Promise<boolean> {
    if (this.options.drain === true) return true;
    return this.writeCursor(from, {
      rolledBefore: Math.max(from.rolledBefore, rolledBefore),
      version: from.version + 1,
    });
  }

  async claimUnrolled(sliceStartMs: number): Promise<boolean> {
    for (let attempt = 0; attempt < CURSOR_ATTEMPTS; attempt++) {
      const now = await this.cursor();
      if (now.rolledBefore > sliceStartMs) return false;
      if (await this.writeCursor(now, { ...now, version: now.version + 1 })) return true;
    }
    throw Object.assign(new Error('the spool cursor kept moving'), { name: 'SpoolCursorBusy' });
  }

  /** One write of the cursor, only over the version read (none yet: version 0). */
  private async writeCursor(from: SpoolCursor, to: SpoolCursor): Promise<boolean> {
    try {
      await this.client.send(
        new PutCommand({
          TableName: this.tableName,
          Item: { ...CURSOR_KEY, rolledBefore: to.rolledBefore, version: to.version },
          ConditionExpression: from.version === 0 ? 'attribute_not_exists(pk)' : 'version = :v',
          ...(from.version === 0 ? {} : { ExpressionAttributeValues: { ':v': from.version } }),
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The notification and kind a record's bytes name (read leniently: a record the parser refuses still rolls). */
function namedBy(bytes: Buffer): { notificationId: string; recordKind: 'SEND' | 'FEEDBACK' } {
  try {
    const r = JSON.parse(bytes.toString('utf8')) as { notificationId?: unknown; kind?: unknown } | null;
    return {
      notificationId: typeof r?.notificationId === 'string' ? r.notificationId : '',
      recordKind: r?.kind === 'FEEDBACK' ? 'FEEDBACK' : 'SEND',
    };
  } catch {
    return { notificationId: '', recordKind: 'SEND' };
  }
}

/**
 * An item as a record, or set apart: a body that does not decompress, one naming a dictionary this version does not
 * have (never decoded without it: spool-codec.ts), or bytes that are not its key's digest.
 */
async function readItem(item: Item): Promise<SpoolRead> {
  const sk = String(item.sk);
  const key = { pk: String(item.pk), sk };
  const legacy = sk.includes('#batches/');
  // `<start: 13 digits>#<days>#<digest: 43 characters>`; the earlier layout `<start>#<slice batch>#<digest: 64 hex>`.
  const sha256 = legacy ? sk.slice(-64) : hexDigest(sk.slice(-DIGEST_KEY_CHARS));
  const { decodeSpoolBody, UnknownSpoolDictionary } = await codec();
  let bytes: Buffer | undefined;
  try {
    bytes = await decodeSpoolBody(legacy ? { body: item.body } : item);
  } catch (error) {
    // One item must not hold its minute, nor the spool: set apart like any item this version cannot read. The id is
    // the item's own attribute (a writer of the table may have put anything there): quoted, cut short.
    if (!(error instanceof UnknownSpoolDictionary)) throw error;
    return { bad: `its dictionary ${JSON.stringify(String(item.dict).slice(0, 40))} is not one this version has`, key };
  }
  if (bytes === undefined) return { bad: 'its body does not unzip', key };
  if (sha256Hex(bytes) !== sha256) return { bad: 'its bytes are not the digest its key names', key };
  if (legacy) {
    return {
      slice: sk.slice(14, -65),
      sha256,
      notificationId: String(item.notificationId),
      recordKind: item.recordKind === 'FEEDBACK' ? 'FEEDBACK' : 'SEND',
      bytes,
      key,
      legacy: true,
    };
  }
  const slice = sliceBatchName(Number(sk.slice(0, 13)), Number(sk.slice(14, -DIGEST_KEY_CHARS - 1)));
  return { slice, sha256, ...namedBy(bytes), bytes, key };
}

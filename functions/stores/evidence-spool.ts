/**
 * The evidence spool in the table (domain/evidence-spool.ts): each record's exact bytes, gzipped, waiting for the
 * sweeper to roll its slice into one object. Item: pk `EVIDENCE_SPOOL#<shard of its digest>`, sk `<slice start, 13 digits>#<slice
 * batch>#<sha256>`, `body` (gzip of the record's bytes), `notificationId`, `recordKind`, `since`. The key holds the
 * record's digest, so the same record spooled twice (a retried put, a rebuild of a batch whose put had landed) is one
 * item. Kind `EVIDENCE_SPOOL`: the dispatch triggers' filter takes notifications only, so a spool item never invokes
 * dispatch. No TTL: an item leaves when its slice's object holds it (the roll-up deletes it), never by time — the
 * EvidenceSpoolOldestAge alarm says one is waiting too long.
 */
import { gunzipSync, gzipSync } from 'node:zlib';
import { BatchWriteCommand, type DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import { sha256Hex } from '../domain/evidence-batch.ts';
import { parseSliceBatch, SPOOL_SHARDS, spoolShardOf } from '../domain/evidence-spool.ts';
import { isConditionFailure } from './condition-failure.ts';
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

/** What a partition's read gives: a record, or an item set apart. */
export type SpoolRead = (SpooledRecord & { key: SpoolKey }) | BadSpoolItem;
export const isBadSpoolItem = (r: SpoolRead): r is BadSpoolItem => 'bad' in r;

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
   * Up to about `limit` records of slices started before `beforeMs`, oldest first, in whole minutes (a slice is never
   * cut in two: the roll-up writes it as one object), from partition `shard`.
   */
  closed(shard: number, beforeMs: number, limit: number): Promise<SpoolRead[]>;
  /** The records a slice batch holds in the spool (a reader's look-up before the roll-up). */
  ofSlice(slice: string): Promise<SpooledRecord[]>;
  retire(keys: readonly SpoolKey[]): Promise<void>;
  /** Moves a bad item out of the roll-up's way (`BAD#<its key>` in its partition, with why), kept for the on-call. */
  setAside(item: BadSpoolItem, nowMs: number): Promise<void>;
  /** The start of the oldest slice still spooled (epoch ms), undefined when the spool is empty. */
  oldestSliceMs(): Promise<number | undefined>;
}

const spoolPk = (shard: number) => `EVIDENCE_SPOOL#${shard}`;
/** A set-apart item's sort key: after every slice's (digits), so no read by slice ever meets it. */
const SET_ASIDE = 'BAD#';
const pad = (ms: number) => String(ms).padStart(13, '0');
const BATCH_WRITE_MAX = 25;
const RETIRE_ATTEMPTS = 5;

export class DynamoEvidenceSpool implements EvidenceSpool {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async put(records: readonly SpooledRecord[], nowMs: number): Promise<void> {
    // One put each, in parallel: a record is 0.2–4 KB gzipped, BatchWriteItem would save no unit.
    await Promise.all(records.map((r) => this.putOne(r, nowMs)));
  }

  private async putOne(r: SpooledRecord, nowMs: number): Promise<void> {
    const slice = parseSliceBatch(r.slice);
    if (slice === undefined) throw new Error(`not a slice batch: ${r.slice}`);
    try {
      await this.client.send(
        new PutCommand({
          TableName: this.tableName,
          Item: {
            pk: spoolPk(spoolShardOf(r.sha256)),
            sk: `${pad(slice.startMs)}#${r.slice}#${r.sha256}`,
            kind: 'EVIDENCE_SPOOL',
            body: gzipSync(r.bytes),
            notificationId: r.notificationId,
            recordKind: r.recordKind,
            since: new Date(nowMs).toISOString(),
          },
          ConditionExpression: 'attribute_not_exists(pk)',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      // Already there: landed when it holds these bytes (a retried put, a rebuild), refused otherwise.
      const stored = decoded(error.Item?.body?.B);
      if (stored === undefined || sha256Hex(stored) !== r.sha256) {
        throw new EvidenceSpoolConflict(`spool item of ${r.notificationId} holds other bytes than ${r.sha256}`);
      }
    }
  }

  async closed(shard: number, beforeMs: number, limit: number): Promise<SpoolRead[]> {
    const found: SpoolRead[] = [];
    for await (const item of queryItems(this.client, {
      TableName: this.tableName,
      KeyConditionExpression: 'pk = :pk AND sk < :before',
      ExpressionAttributeValues: { ':pk': spoolPk(shard), ':before': pad(beforeMs) },
      ConsistentRead: true,
    })) {
      const record = readItem(item);
      // Whole minutes only (every retention's slice of it): past the limit, stop where the next minute starts.
      if (found.length >= limit && found.at(-1)?.key.sk.slice(0, 13) !== String(item.sk).slice(0, 13)) break;
      found.push(record);
    }
    return found;
  }

  async ofSlice(slice: string): Promise<SpooledRecord[]> {
    const s = parseSliceBatch(slice);
    if (s === undefined) return [];
    // A slice's records are in every partition (by their digests): one Query each.
    const items = await Promise.all(
      Array.from({ length: SPOOL_SHARDS }, (_, shard) =>
        queryAll(this.client, {
          TableName: this.tableName,
          KeyConditionExpression: 'pk = :pk AND begins_with(sk, :slice)',
          ExpressionAttributeValues: { ':pk': spoolPk(shard), ':slice': `${pad(s.startMs)}#${slice}#` },
          ConsistentRead: true,
        }),
      ),
    );
    // A bad item is no record of the slice (the roll-up sets it apart).
    return items
      .flat()
      .map(readItem)
      .filter((r): r is SpooledRecord & { key: SpoolKey } => !isBadSpoolItem(r))
      .map(({ key: _key, ...r }) => r);
  }

  async retire(keys: readonly SpoolKey[]): Promise<void> {
    for (let i = 0; i < keys.length; i += BATCH_WRITE_MAX) {
      let requests = keys.slice(i, i + BATCH_WRITE_MAX).map((Key) => ({ DeleteRequest: { Key: { ...Key } } }));
      for (let attempt = 0; requests.length > 0; attempt++) {
        if (attempt === RETIRE_ATTEMPTS)
          throw Object.assign(new Error('spool items unprocessed'), { name: 'Unprocessed' });
        const answer = await this.client.send(new BatchWriteCommand({ RequestItems: { [this.tableName]: requests } }));
        requests = (answer.UnprocessedItems?.[this.tableName] ?? []) as typeof requests;
      }
    }
  }

  async setAside(item: BadSpoolItem, nowMs: number): Promise<void> {
    const got = await queryAll(this.client, {
      TableName: this.tableName,
      KeyConditionExpression: 'pk = :pk AND sk = :sk',
      ExpressionAttributeValues: { ':pk': item.key.pk, ':sk': item.key.sk },
      ConsistentRead: true,
    });
    const [stored] = got;
    if (stored === undefined) return;
    // The copy first, then the delete: a crash between leaves the item to be set apart again (the same copy).
    await this.client.send(
      new PutCommand({
        TableName: this.tableName,
        Item: { ...stored, sk: `${SET_ASIDE}${item.key.sk}`, bad: item.bad, setAsideAt: new Date(nowMs).toISOString() },
      }),
    );
    await this.retire([item.key]);
  }

  async oldestSliceMs(): Promise<number | undefined> {
    const firsts = await Promise.all(
      Array.from({ length: SPOOL_SHARDS }, async (_, shard) => {
        for await (const item of queryItems(
          this.client,
          {
            TableName: this.tableName,
            KeyConditionExpression: 'pk = :pk AND sk < :aside',
            ExpressionAttributeValues: { ':pk': spoolPk(shard), ':aside': SET_ASIDE },
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
}

function decoded(body: unknown): Buffer | undefined {
  try {
    return gunzipSync(body as Uint8Array);
  } catch {
    return undefined;
  }
}

/** An item as a record, or set apart: a body that does not unzip, or bytes that are not its key's digest. */
function readItem(item: Item): SpoolRead {
  const sk = String(item.sk);
  const key = { pk: String(item.pk), sk };
  const sha256 = sk.slice(-64);
  const bytes = decoded(item.body);
  if (bytes === undefined) return { bad: 'its body does not unzip', key };
  if (sha256Hex(bytes) !== sha256) return { bad: 'its bytes are not the digest its key names', key };
  return {
    slice: sk.slice(14, -65),
    sha256,
    notificationId: String(item.notificationId),
    recordKind: item.recordKind === 'FEEDBACK' ? 'FEEDBACK' : 'SEND',
    bytes,
    key,
  };
}

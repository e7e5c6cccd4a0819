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
import { parseSliceBatch, SPOOL_SHARDS, spoolShardOf } from '../domain/evidence-spool.ts';
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

export interface EvidenceSpool {
  put(records: readonly SpooledRecord[], nowMs: number): Promise<void>;
  /**
   * Up to about `limit` records of slices started before `beforeMs`, oldest first, in whole minutes (a slice is never
   * cut in two: the roll-up writes it as one object), from partition `shard`.
   */
  closed(shard: number, beforeMs: number, limit: number): Promise<(SpooledRecord & { key: SpoolKey })[]>;
  /** The records a slice batch holds in the spool (a reader's look-up before the roll-up). */
  ofSlice(slice: string): Promise<SpooledRecord[]>;
  retire(keys: readonly SpoolKey[]): Promise<void>;
  /** The start of the oldest slice still spooled (epoch ms), undefined when the spool is empty. */
  oldestSliceMs(): Promise<number | undefined>;
}

const spoolPk = (shard: number) => `EVIDENCE_SPOOL#${shard}`;
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
    await Promise.all(
      records.map((r) => {
        const slice = parseSliceBatch(r.slice);
        if (slice === undefined) throw new Error(`not a slice batch: ${r.slice}`);
        return this.client.send(
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
          }),
        );
      }),
    );
  }

  async closed(shard: number, beforeMs: number, limit: number): Promise<(SpooledRecord & { key: SpoolKey })[]> {
    const found: (SpooledRecord & { key: SpoolKey })[] = [];
    for await (const item of queryItems(this.client, {
      TableName: this.tableName,
      KeyConditionExpression: 'pk = :pk AND sk < :before',
      ExpressionAttributeValues: { ':pk': spoolPk(shard), ':before': pad(beforeMs) },
      ConsistentRead: true,
    })) {
      const record = recordOf(item);
      // Whole minutes only (every retention's slice of it): past the limit, stop where the next minute starts.
      if (found.length >= limit && found.at(-1)?.key.sk.slice(0, 13) !== String(item.sk).slice(0, 13)) break;
      found.push({ ...record, key: { pk: String(item.pk), sk: String(item.sk) } });
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
    return items.flat().map(recordOf);
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

  async oldestSliceMs(): Promise<number | undefined> {
    const firsts = await Promise.all(
      Array.from({ length: SPOOL_SHARDS }, async (_, shard) => {
        for await (const item of queryItems(
          this.client,
          {
            TableName: this.tableName,
            KeyConditionExpression: 'pk = :pk',
            ExpressionAttributeValues: { ':pk': spoolPk(shard) },
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

function recordOf(item: Item): SpooledRecord {
  const sk = String(item.sk);
  const sha256 = sk.slice(-64);
  return {
    slice: sk.slice(14, -65),
    sha256,
    notificationId: String(item.notificationId),
    recordKind: item.recordKind === 'FEEDBACK' ? 'FEEDBACK' : 'SEND',
    bytes: gunzipSync(item.body as Uint8Array),
  };
}

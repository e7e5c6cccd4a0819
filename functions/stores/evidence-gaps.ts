/**
 * Evidence gaps: evidence that could not be written to the store at once (the store slow or refusing) — a batch of
 * records (domain/evidence-batch.ts), or, from before batches, one record or a customer's pointer. The object's exact
 * bytes wait here, in the table, until the sweeper writes them (functions/sweeper/fill-evidence.ts): re-rendering
 * later could differ (a template deployed since), so the bytes are kept, gzipped, not the inputs.
 *
 * Item: pk `EVIDENCE_GAP#<hex>` (the first hex digit of the key's SHA-256: 16 partitions, so a store outage that
 * makes every batch a gap spreads its writes), sk the evidence key, `body` (gzip), `retainUntil`, `since`. A body over
 * a DynamoDB item's 400 KB is kept in parts (sk `<key>#part-<i>-of-<n>`), read back whole. No TTL: a gap is closed by
 * being filled, never by time (the EvidenceGapsOpen alarm says one is waiting).
 */
import { gunzipSync, gzipSync } from 'node:zlib';
import { DeleteCommand, type DynamoDBDocumentClient, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { EVIDENCE_GAP_SHARDS, evidenceGapPartition, evidenceGapPk } from '../domain/keys.ts';

export interface EvidenceGap {
  readonly key: string;
  readonly body: Uint8Array;
  readonly retainUntil: Date;
  readonly since: string;
}

export interface EvidenceGaps {
  add(gap: EvidenceGap): Promise<void>;
  /** Up to `limit` open gaps, oldest shard first. */
  list(limit: number): Promise<EvidenceGap[]>;
  close(key: string): Promise<void>;
}

/** The most body bytes one gap item holds: a DynamoDB item is at most 400 KB, keys and attributes included. */
export const GAP_PART_BYTES = 350_000;
const PART = /^(.*)#part-(\d+)-of-(\d+)$/;

export class DynamoEvidenceGaps implements EvidenceGaps {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async add(gap: EvidenceGap): Promise<void> {
    const body = gzipSync(gap.body);
    const parts = Math.max(1, Math.ceil(body.length / GAP_PART_BYTES));
    // Unconditional: a second gap for the same key carries the same bytes (the object is deterministic per batch).
    for (let i = 0; i < parts; i++) {
      await this.client.send(
        new PutCommand({
          TableName: this.tableName,
          Item: {
            pk: evidenceGapPk(gap.key),
            sk: parts === 1 ? gap.key : `${gap.key}#part-${i + 1}-of-${parts}`,
            kind: 'EVIDENCE_GAP',
            body: body.subarray(i * GAP_PART_BYTES, (i + 1) * GAP_PART_BYTES),
            retainUntil: gap.retainUntil.toISOString(),
            since: gap.since,
          },
        }),
      );
    }
  }

  async list(limit: number): Promise<EvidenceGap[]> {
    const gaps: EvidenceGap[] = [];
    for (const shard of EVIDENCE_GAP_SHARDS) {
      const parts = new Map<string, { of: number; chunks: Map<number, Uint8Array>; item: Record<string, unknown> }>();
      let start: Record<string, unknown> | undefined;
      do {
        const page = await this.client.send(
          new QueryCommand({
            TableName: this.tableName,
            KeyConditionExpression: 'pk = :pk',
            ExpressionAttributeValues: { ':pk': evidenceGapPartition(shard) },
            Limit: Math.max(1, limit - gaps.length),
            ExclusiveStartKey: start,
          }),
        );
        for (const item of page.Items ?? []) {
          const part = PART.exec(String(item.sk));
          if (part === null) {
            gaps.push(gapOf(String(item.sk), item, item.body as Uint8Array));
            continue;
          }
          const key = part[1] as string;
          const entry = parts.get(key) ?? { of: Number(part[3]), chunks: new Map(), item };
          entry.chunks.set(Number(part[2]), item.body as Uint8Array);
          parts.set(key, entry);
          // A body in parts is a gap once every part is read (one still being written waits for the next run).
          if (entry.chunks.size === entry.of) {
            const ordered = [...entry.chunks.entries()].sort(([a], [b]) => a - b).map(([, c]) => c);
            gaps.push(gapOf(key, entry.item, Buffer.concat(ordered)));
            parts.delete(key);
          }
        }
        start = page.LastEvaluatedKey;
        if (gaps.length >= limit) return gaps;
      } while (start !== undefined);
    }
    return gaps;
  }

  async close(key: string): Promise<void> {
    const pk = evidenceGapPk(key);
    const page = await this.client.send(
      new QueryCommand({
        TableName: this.tableName,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :key)',
        ExpressionAttributeValues: { ':pk': pk, ':key': key },
        ProjectionExpression: 'sk',
      }),
    );
    const sks = (page.Items ?? []).map((i) => String(i.sk)).filter((sk) => sk === key || PART.exec(sk)?.[1] === key);
    // Parts are few (a body over 350 KB is rare): one delete each, the whole key last.
    for (const sk of sks.length === 0 ? [key] : sks) {
      await this.client.send(new DeleteCommand({ TableName: this.tableName, Key: { pk, sk } }));
    }
  }
}

function gapOf(key: string, item: Record<string, unknown>, body: Uint8Array): EvidenceGap {
  return {
    key,
    body: gunzipSync(body),
    retainUntil: new Date(String(item.retainUntil)),
    since: String(item.since),
  };
}

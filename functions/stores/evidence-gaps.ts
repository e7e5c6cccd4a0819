/**
 * Evidence gaps: evidence that could not be written to the store at once (the store slow or refusing) — a batch of
 * records (domain/evidence-batch.ts), or, from before batches, one record or a customer's pointer. The object's exact
 * bytes wait here, in the table, until the sweeper writes them (functions/sweeper/fill-evidence.ts): re-rendering
 * later could differ (a template deployed since), so the bytes are kept, gzipped, not the inputs.
 *
 * Item: pk `EVIDENCE_GAP#<hex>` (the first hex digit of the key's SHA-256: 16 partitions, so a store outage that
 * makes every batch a gap spreads its writes), sk the evidence key, `body` (gzip), `retainUntil`, `since`. A body over
 * a DynamoDB item's 400 KB is kept in parts (sk `<key>#part-<i>-of-<n>`), read back whole; one whose later parts were
 * never written (its writer failed between them) is listed as incomplete, so it is counted, never silently kept. No
 * TTL: a gap is closed by being filled, never by time (the EvidenceGapsOpen alarm says one is waiting).
 */
import { gunzipSync, gzipSync } from 'node:zlib';
import { DeleteCommand, type DynamoDBDocumentClient, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { EVIDENCE_GAP_SHARDS, evidenceGapPartition, evidenceGapPk } from '../domain/keys.ts';
import { isConditionFailure } from './condition-failure.ts';
import { queryAll } from './paged-query.ts';

export interface EvidenceGap {
  readonly key: string;
  readonly body: Uint8Array;
  readonly retainUntil: Date;
  readonly since: string;
  /**
   * A body in parts some of which are missing (its writer failed between two parts): no bytes to write. The filler
   * counts it open, and removes it once the object is in the store (a rebuild wrote it).
   */
  readonly incomplete?: { readonly parts: number; readonly of: number };
}

export interface EvidenceGaps {
  add(gap: EvidenceGap): Promise<void>;
  /** Up to `limit` open gaps, oldest shard first (a gap whose parts are not all there among them, marked). */
  list(limit: number): Promise<EvidenceGap[]>;
  close(key: string): Promise<void>;
  /** Whether the object of `key` waits here (whole or in part), and since when. */
  find(key: string): Promise<{ since: string } | undefined>;
  /**
   * Removes the parts of one torn write (an incomplete gap as `list` gave it): its own `of` and `since`, never a whole
   * gap written later under the same key (a rebuild's), nor the parts of another write.
   */
  removeTorn(gap: EvidenceGap): Promise<void>;
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
          // A body in parts is a gap once every part is read.
          if (entry.chunks.size === entry.of) {
            const ordered = [...entry.chunks.entries()].sort(([a], [b]) => a - b).map(([, c]) => c);
            gaps.push(gapOf(key, entry.item, Buffer.concat(ordered)));
            parts.delete(key);
          }
        }
        start = page.LastEvaluatedKey;
        // A key's parts sort together: any still missing parts once the scan passed them are not there.
        const last = lastKeyOf(page.Items);
        for (const [key, entry] of parts) {
          if (key === last) continue;
          gaps.push(incompleteGap(key, entry));
          parts.delete(key);
        }
        if (gaps.length >= limit) return gaps;
      } while (start !== undefined);
      for (const [key, entry] of parts) gaps.push(incompleteGap(key, entry));
    }
    return gaps;
  }

  async find(key: string): Promise<{ since: string } | undefined> {
    const items = await queryAll(this.client, {
      TableName: this.tableName,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :key)',
      ExpressionAttributeValues: { ':pk': evidenceGapPk(key), ':key': key },
      ProjectionExpression: 'sk, since',
    });
    const item = items.find((i) => i.sk === key || PART.exec(String(i.sk))?.[1] === key);
    return item === undefined ? undefined : { since: String(item.since) };
  }

  async removeTorn(gap: EvidenceGap): Promise<void> {
    if (gap.incomplete === undefined) return;
    const pk = evidenceGapPk(gap.key);
    const items = await queryAll(this.client, {
      TableName: this.tableName,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :key)',
      ExpressionAttributeValues: { ':pk': pk, ':key': `${gap.key}#part-` },
      ProjectionExpression: 'sk, since',
    });
    const torn = items.filter((i) => {
      const part = PART.exec(String(i.sk));
      return part?.[1] === gap.key && Number(part[3]) === gap.incomplete?.of && String(i.since) === gap.since;
    });
    for (const i of torn) {
      await this.client
        .send(
          new DeleteCommand({
            TableName: this.tableName,
            Key: { pk, sk: i.sk },
            // Only while it is still that write's part: a later writer's part under the same sk is kept.
            ConditionExpression: '#since = :since',
            ExpressionAttributeNames: { '#since': 'since' },
            ExpressionAttributeValues: { ':since': gap.since },
          }),
        )
        .catch((error: unknown) => {
          if (!isConditionFailure(error)) throw error;
        });
    }
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

/** The evidence key the last item of a page is (or is a part of). */
function lastKeyOf(items: Record<string, unknown>[] | undefined): string | undefined {
  const sk = items?.at(-1)?.sk;
  if (sk === undefined) return undefined;
  return PART.exec(String(sk))?.[1] ?? String(sk);
}

function incompleteGap(
  key: string,
  entry: { of: number; chunks: Map<number, Uint8Array>; item: Record<string, unknown> },
): EvidenceGap {
  return {
    key,
    body: new Uint8Array(0),
    retainUntil: new Date(String(entry.item.retainUntil)),
    since: String(entry.item.since),
    incomplete: { parts: entry.chunks.size, of: entry.of },
  };
}

function gapOf(key: string, item: Record<string, unknown>, body: Uint8Array): EvidenceGap {
  return {
    key,
    body: gunzipSync(body),
    retainUntil: new Date(String(item.retainUntil)),
    since: String(item.since),
  };
}

/**
 * Evidence gaps: a send whose evidence could not be written to the store at once (the store slow or refusing). The
 * record's exact bytes wait here, in the table, until the sweeper writes them (functions/sweeper/fill-evidence.ts):
 * re-rendering later could differ (a template deployed since), so the bytes are kept, gzipped, not the inputs.
 *
 * Item: pk `EVIDENCE_GAP#<hex>` (the first hex digit of the key's SHA-256: 16 partitions, so a store outage that
 * makes every send a gap spreads its writes), sk the evidence key, `body` (gzip), `retainUntil`, `since`. No TTL: a gap
 * is closed by being filled, never by time (the EvidenceGapsOpen alarm says one is waiting).
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

export class DynamoEvidenceGaps implements EvidenceGaps {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async add(gap: EvidenceGap): Promise<void> {
    // Unconditional: a second gap for the same key carries the same bytes (the record is deterministic per send).
    await this.client.send(
      new PutCommand({
        TableName: this.tableName,
        Item: {
          pk: evidenceGapPk(gap.key),
          sk: gap.key,
          kind: 'EVIDENCE_GAP',
          body: gzipSync(gap.body),
          retainUntil: gap.retainUntil.toISOString(),
          since: gap.since,
        },
      }),
    );
  }

  async list(limit: number): Promise<EvidenceGap[]> {
    const gaps: EvidenceGap[] = [];
    for (const shard of EVIDENCE_GAP_SHARDS) {
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
          gaps.push({
            key: String(item.sk),
            body: gunzipSync(item.body as Uint8Array),
            retainUntil: new Date(String(item.retainUntil)),
            since: String(item.since),
          });
        }
        start = page.LastEvaluatedKey;
        if (gaps.length >= limit) return gaps;
      } while (start !== undefined);
    }
    return gaps;
  }

  async close(key: string): Promise<void> {
    await this.client.send(new DeleteCommand({ TableName: this.tableName, Key: { pk: evidenceGapPk(key), sk: key } }));
  }
}

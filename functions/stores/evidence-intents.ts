/**
 * A dispatch invocation's evidence batch while its sends are under way (docs/evidence-and-privacy.md "Never delays a
 * send, never causes a second one"): written before the first send, closed once the batch object landed (or its
 * records waited in the table as a gap). One that is still open after its due time belongs to an invocation that
 * died between a send and its batch: the sweeper rebuilds that batch from the notifications it names
 * (functions/sweeper/recover-evidence.ts), each record checked against the digest its SENT write carried.
 *
 * Item: pk `EVIDENCE_BATCH#<hex>`, sk `<due>#<batch name>`, `notifications` (the notificationIds the invocation was
 * handed), `writtenAt`. No TTL: an intent ends by being closed, never by time (EvidenceBatchesRecovered says one was).
 */
import { DeleteCommand, type DynamoDBDocumentClient, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import {
  EVIDENCE_BATCH_SHARDS,
  evidenceBatchPartition,
  evidenceBatchPk,
  evidenceBatchSk,
  parseEvidenceBatchSk,
} from '../domain/keys.ts';

export interface EvidenceIntent {
  readonly name: string;
  /** After this (epoch ms) the invocation is over: an intent still open is the sweeper's. */
  readonly dueMs: number;
  readonly notificationIds: readonly string[];
}

export interface EvidenceIntents {
  open(intent: EvidenceIntent): Promise<void>;
  close(intent: Pick<EvidenceIntent, 'name' | 'dueMs'>): Promise<void>;
  /** Up to `limit` intents due at or before `now`. */
  overdue(now: number, limit: number): Promise<EvidenceIntent[]>;
}

export class DynamoEvidenceIntents implements EvidenceIntents {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async open(intent: EvidenceIntent): Promise<void> {
    await this.client.send(
      new PutCommand({
        TableName: this.tableName,
        Item: {
          pk: evidenceBatchPk(intent.name),
          sk: evidenceBatchSk(intent.dueMs, intent.name),
          kind: 'EVIDENCE_BATCH',
          notifications: [...intent.notificationIds],
        },
      }),
    );
  }

  async close(intent: Pick<EvidenceIntent, 'name' | 'dueMs'>): Promise<void> {
    await this.client.send(
      new DeleteCommand({
        TableName: this.tableName,
        Key: { pk: evidenceBatchPk(intent.name), sk: evidenceBatchSk(intent.dueMs, intent.name) },
      }),
    );
  }

  async overdue(now: number, limit: number): Promise<EvidenceIntent[]> {
    const found: EvidenceIntent[] = [];
    // Every sort key due at or before now is below the next millisecond's 13 digits ('#' sorts before a digit).
    const before = String(now + 1).padStart(13, '0');
    for (const shard of EVIDENCE_BATCH_SHARDS) {
      let start: Record<string, unknown> | undefined;
      do {
        const page = await this.client.send(
          new QueryCommand({
            TableName: this.tableName,
            KeyConditionExpression: 'pk = :pk AND sk < :before',
            ExpressionAttributeValues: { ':pk': evidenceBatchPartition(shard), ':before': before },
            Limit: Math.max(1, limit - found.length),
            ExclusiveStartKey: start,
          }),
        );
        for (const item of page.Items ?? []) {
          const key = parseEvidenceBatchSk(String(item.sk));
          if (key === undefined) continue;
          found.push({ ...key, notificationIds: (item.notifications as string[] | undefined) ?? [] });
        }
        start = page.LastEvaluatedKey;
        if (found.length >= limit) return found;
      } while (start !== undefined);
    }
    return found;
  }
}

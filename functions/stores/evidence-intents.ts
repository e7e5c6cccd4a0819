/**
 * A dispatch invocation's evidence batch while its sends are under way (docs/evidence-and-privacy.md "Never delays a
 * send, never causes a second one"): written before the first send, closed once the batch object landed (or its
 * records waited in the table as a gap). One that is still open after its due time belongs to an invocation that
 * died between a send and its batch: the sweeper rebuilds that batch from the notifications it names
 * (functions/sweeper/recover-evidence.ts), each record checked against the digest its SENT write carried.
 *
 * Item: pk `EVIDENCE_BATCH#<hex>`, sk `<due>#<batch name>`, `notifications` (the notificationIds the invocation was
 * handed); after a recovery that failed, `attempts`, `retryAt` (epoch ms) and `lastError`. No TTL: an intent ends by
 * being closed, never by time (EvidenceBatchesRecovered says one was; EvidenceIntentOldestAge how late the oldest is).
 */
import { DeleteCommand, type DynamoDBDocumentClient, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import {
  EVIDENCE_BATCH_SHARDS,
  evidenceBatchPartition,
  evidenceBatchPk,
  evidenceBatchSk,
  parseEvidenceBatchSk,
} from '../domain/keys.ts';
import { isConditionFailure } from './condition-failure.ts';
import { type Item, queryAll, queryItems } from './paged-query.ts';

export interface EvidenceIntent {
  readonly name: string;
  /** After this (epoch ms) the invocation is over: an intent still open is the sweeper's. */
  readonly dueMs: number;
  readonly notificationIds: readonly string[];
  /** Recoveries of it that failed so far (absent: none). */
  readonly attempts?: number;
  /** Not retried before this (epoch ms) after a failed recovery. */
  readonly retryAt?: number;
  readonly lastError?: string;
}

export interface EvidenceIntents {
  open(intent: EvidenceIntent): Promise<void>;
  close(intent: Pick<EvidenceIntent, 'name' | 'dueMs'>): Promise<void>;
  /**
   * Up to `limit` intents due at or before `now` and not backing off, starting at partition `start` (the sweeper
   * varies it, so the oldest intents of one partition never starve the others).
   */
  overdue(now: number, limit: number, start?: number): Promise<EvidenceIntent[]>;
  /** A recovery of the intent failed: count it and hold it back until `retryAt`. */
  failed(intent: Pick<EvidenceIntent, 'name' | 'dueMs'>, retryAt: number, error: string): Promise<void>;
  /** The due time of the oldest open intent (epoch ms), backing off or not; undefined when none is open. */
  oldestDueMs(): Promise<number | undefined>;
  /** The open intent of a batch, if any (the reader's "pending recovery"). */
  find(name: string): Promise<EvidenceIntent | undefined>;
}

/** What dispatch does with an intent: open it before its first send, close it once its batch landed. */
export type EvidenceIntentWriter = Pick<EvidenceIntents, 'open' | 'close'>;

/** Dispatch's half (its bundle leaves the sweeper's and the readers' look-ups out). */
export class DynamoEvidenceIntentWriter implements EvidenceIntentWriter {
  constructor(
    protected readonly client: DynamoDBDocumentClient,
    protected readonly tableName: string,
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
}

/** The sweeper's and the readers': the open intents found, held back after a failed recovery. */
export class DynamoEvidenceIntents extends DynamoEvidenceIntentWriter implements EvidenceIntents {
  async overdue(now: number, limit: number, start = 0): Promise<EvidenceIntent[]> {
    const found: EvidenceIntent[] = [];
    const shards = EVIDENCE_BATCH_SHARDS.length;
    for (let i = 0; i < shards && found.length < limit; i++) {
      const shard = EVIDENCE_BATCH_SHARDS[(start + i) % shards] as string;
      // Every sort key due at or before now is below the next millisecond's 13 digits ('#' sorts before a digit).
      for await (const item of queryItems(
        this.client,
        {
          TableName: this.tableName,
          KeyConditionExpression: 'pk = :pk AND sk < :before',
          FilterExpression: 'attribute_not_exists(retryAt) OR retryAt <= :now',
          ExpressionAttributeValues: {
            ':pk': evidenceBatchPartition(shard),
            ':before': String(now + 1).padStart(13, '0'),
            ':now': now,
          },
        },
        limit - found.length,
      )) {
        const intent = intentOf(item);
        if (intent !== undefined) found.push(intent);
        if (found.length >= limit) break;
      }
    }
    return found;
  }

  async failed(intent: Pick<EvidenceIntent, 'name' | 'dueMs'>, retryAt: number, error: string): Promise<void> {
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk: evidenceBatchPk(intent.name), sk: evidenceBatchSk(intent.dueMs, intent.name) },
          UpdateExpression: 'SET retryAt = :at, lastError = :error ADD attempts :one',
          // Closed meanwhile (by the invocation itself, late): nothing to hold back.
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeValues: { ':at': retryAt, ':error': error.slice(0, 200), ':one': 1 },
        }),
      );
    } catch (e) {
      if (!isConditionFailure(e)) throw e;
    }
  }

  async oldestDueMs(): Promise<number | undefined> {
    const firsts = await Promise.all(
      EVIDENCE_BATCH_SHARDS.map(async (shard) => {
        for await (const item of queryItems(
          this.client,
          {
            TableName: this.tableName,
            KeyConditionExpression: 'pk = :pk',
            ExpressionAttributeValues: { ':pk': evidenceBatchPartition(shard) },
            ProjectionExpression: 'sk',
          },
          1,
        )) {
          return parseEvidenceBatchSk(String(item.sk))?.dueMs;
        }
        return undefined;
      }),
    );
    const dues = firsts.filter((d): d is number => d !== undefined);
    return dues.length === 0 ? undefined : Math.min(...dues);
  }

  async find(name: string): Promise<EvidenceIntent | undefined> {
    // A partition holds only the intents still open (a closed one is deleted): a few, read whole.
    const items = await queryAll(this.client, {
      TableName: this.tableName,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': evidenceBatchPk(name) },
      ConsistentRead: true,
    });
    return items.map(intentOf).find((i) => i?.name === name);
  }
}

function intentOf(item: Item): EvidenceIntent | undefined {
  const key = parseEvidenceBatchSk(String(item.sk));
  if (key === undefined) return undefined;
  return {
    ...key,
    notificationIds: (item.notifications as string[] | undefined) ?? [],
    ...(typeof item.attempts === 'number' ? { attempts: item.attempts } : {}),
    ...(typeof item.retryAt === 'number' ? { retryAt: item.retryAt } : {}),
    ...(typeof item.lastError === 'string' ? { lastError: item.lastError } : {}),
  };
}

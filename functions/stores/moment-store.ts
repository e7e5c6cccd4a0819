/**
 * DynamoDB adapter of the right moment's two reads and one count (docs/dispatch.md "The right moment"): the newest
 * notice of a series (the items ingest writes in each event's transaction, keys.ts seriesPk), and the flood guard's
 * count of one customer's notices of a type on a channel in a fixed window (keys.ts floodKey) — a conditional ADD of
 * the notification's id to the window's set that refuses to pass the limit. The set counts notices, not attempts: a
 * notice the provider throttled and retried, or the stream redelivered, finds its id there and is not counted again.
 */
import { type DynamoDBDocumentClient, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { seriesNewerThan } from '../domain/keys.ts';
import { isConditionFailure } from './condition-failure.ts';

export interface NewerNotice {
  readonly eventId: string;
  readonly occurredAt: string;
}

/** The window's item, and the notification that takes (or gives back) a slot in it. */
export interface FloodSlotKey {
  readonly pk: string;
  readonly sk: string;
  readonly notificationId: string;
}

export interface MomentStore {
  /** The newest notice of the series that occurred strictly after `occurredAtMs` (a consistent read), or undefined. */
  newerNotice(seriesPk: string, occurredAtMs: number): Promise<NewerNotice | undefined>;
  /**
   * Counts the notice in the window when it is under `limit`, or already counted there (a retry of the same notice):
   * true; false when the window is full of other notices.
   */
  takeFloodSlot(key: FloodSlotKey, limit: number, expiresAt: number): Promise<boolean>;
  /** A slot taken for a send that then did not start (no time left, validity ended): counted back. */
  giveBackFloodSlot(key: FloodSlotKey): Promise<void>;
}

export class DynamoMomentStore implements MomentStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async newerNotice(seriesPk: string, occurredAtMs: number): Promise<NewerNotice | undefined> {
    const r = await this.client.send(
      new QueryCommand({
        TableName: this.tableName,
        KeyConditionExpression: 'pk = :pk AND sk > :after',
        ExpressionAttributeValues: { ':pk': seriesPk, ':after': seriesNewerThan(occurredAtMs) },
        ScanIndexForward: false,
        Limit: 1,
        ConsistentRead: true,
      }),
    );
    const newest = r.Items?.[0];
    if (newest === undefined) return undefined;
    return { eventId: String(newest.eventId), occurredAt: String(newest.occurredAt) };
  }

  async takeFloodSlot(slot: FloodSlotKey, limit: number, expiresAt: number): Promise<boolean> {
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk: slot.pk, sk: slot.sk },
          ConditionExpression: 'attribute_not_exists(#ids) OR contains(#ids, :id) OR size(#ids) < :limit',
          UpdateExpression: 'ADD #ids :one SET expiresAt = :expiresAt',
          ExpressionAttributeNames: { '#ids': 'notificationIds' },
          ExpressionAttributeValues: {
            ':id': slot.notificationId,
            ':one': new Set([slot.notificationId]),
            ':limit': limit,
            ':expiresAt': expiresAt,
          },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  async giveBackFloodSlot(slot: FloodSlotKey): Promise<void> {
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk: slot.pk, sk: slot.sk },
          // Only an existing window: a give-back never writes an item without its expiry.
          ConditionExpression: 'attribute_exists(#ids)',
          UpdateExpression: 'DELETE #ids :one',
          ExpressionAttributeNames: { '#ids': 'notificationIds' },
          ExpressionAttributeValues: { ':one': new Set([slot.notificationId]) },
        }),
      );
    } catch {
      // DynamoDB refused: the window then counts one send too many — fewer sends, never more.
    }
  }
}

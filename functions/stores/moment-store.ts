/**
 * DynamoDB adapter of the right moment's two reads and one count (docs/dispatch.md "The right moment"): the newest
 * notice of a series (the items ingest writes in each event's transaction, keys.ts seriesPk), and the flood guard's
 * count of one customer's notices of a type on a channel in a fixed window (keys.ts floodKey) — a conditional ADD that
 * refuses to pass the limit, as the pacer's token windows do.
 */
import { type DynamoDBDocumentClient, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { seriesNewerThan } from '../domain/keys.ts';
import { isConditionFailure } from './condition-failure.ts';

export interface NewerNotice {
  readonly eventId: string;
  readonly occurredAt: string;
}

export interface FloodSlotKey {
  readonly pk: string;
  readonly sk: string;
}

export interface MomentStore {
  /** The newest notice of the series that occurred strictly after `occurredAtMs` (a consistent read), or undefined. */
  newerNotice(seriesPk: string, occurredAtMs: number): Promise<NewerNotice | undefined>;
  /** Counts one more notice in the window when it is under `limit`: true; false when the window is full. */
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

  async takeFloodSlot(key: FloodSlotKey, limit: number, expiresAt: number): Promise<boolean> {
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: key,
          ConditionExpression: 'attribute_not_exists(#count) OR #count < :limit',
          UpdateExpression: 'ADD #count :one SET expiresAt = :expiresAt',
          ExpressionAttributeNames: { '#count': 'count' },
          ExpressionAttributeValues: { ':one': 1, ':limit': limit, ':expiresAt': expiresAt },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  async giveBackFloodSlot(key: FloodSlotKey): Promise<void> {
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: key,
          ConditionExpression: '#count > :zero',
          UpdateExpression: 'ADD #count :minusOne',
          ExpressionAttributeNames: { '#count': 'count' },
          ExpressionAttributeValues: { ':zero': 0, ':minusOne': -1 },
        }),
      );
    } catch (error) {
      // Nothing to give back, or DynamoDB refused: the window then counts one send too many — fewer sends, never more.
      if (!isConditionFailure(error)) return;
    }
  }
}

/**
 * Where the sweeper's lease pass stopped, per sweep partition it did not finish in a run: one item,
 * (SWEEP#LEASES, CURSORS), holding each unfinished partition's LastEvaluatedKey. Written only when a run leaves a
 * partition unfinished (a backlog larger than a run reads) or clears what an earlier run left; read once a run.
 * The next run resumes there, so a large backlog is read through over a few runs instead of its start every run.
 */
import type { DynamoDBDocumentClient, NativeAttributeValue } from '@aws-sdk/lib-dynamodb';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { SWEEP_LEASE_CURSORS_KEY } from '../domain/keys.ts';

export type LeaseCursors = Record<string, Record<string, NativeAttributeValue>>;

export interface LeaseCursorStore {
  load(): Promise<LeaseCursors>;
  save(cursors: LeaseCursors, now: number): Promise<void>;
}

export class DynamoLeaseCursors implements LeaseCursorStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async load(): Promise<LeaseCursors> {
    // Eventually consistent: runs are a minute apart, and a stale cursor only re-reads part of a partition.
    const r = await this.client.send(new GetCommand({ TableName: this.tableName, Key: SWEEP_LEASE_CURSORS_KEY }));
    const cursors = r.Item?.cursors as unknown;
    return typeof cursors === 'object' && cursors !== null ? (cursors as LeaseCursors) : {};
  }

  async save(cursors: LeaseCursors, now: number): Promise<void> {
    // The stream filter passes only kind NOTIFICATION: this item never reaches dispatch.
    await this.client.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: SWEEP_LEASE_CURSORS_KEY,
        UpdateExpression: 'SET kind = :kind, cursors = :cursors, updatedAt = :now',
        ExpressionAttributeValues: {
          ':kind': 'SWEEP_LEASES',
          ':cursors': withinItem(cursors),
          ':now': new Date(now).toISOString(),
        },
      }),
    );
  }
}

/** What the item keeps at most of the cursors: under DynamoDB's 400 KB an item, with room for its keys. */
export const LEASE_CURSORS_MAX_BYTES = 350_000;

/**
 * The cursors that fit the item, in the order given (the lease pass's: critical partitions first). Every partition
 * unfinished at the most shards (2,304 of them) may not fit: one left out is read next run from where the due round
 * stops in it — again, not lost.
 */
export function withinItem(cursors: LeaseCursors): LeaseCursors {
  const kept: LeaseCursors = {};
  let bytes = 0;
  for (const [key, cursor] of Object.entries(cursors)) {
    bytes += key.length + JSON.stringify(cursor).length;
    if (bytes > LEASE_CURSORS_MAX_BYTES) break;
    kept[key] = cursor;
  }
  return kept;
}

/**
 * A region's heartbeat in the global table (docs/regions.md "The keeper"): `HEARTBEAT#<region>`, written by the keeper
 * every minute and by its promotion, so the other region sees it alive and its replication flowing
 * (`PeerHeartbeatStale`). One key per region, written in that region's replica only: no conflict under last writer wins.
 */
import { type DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { isConditionFailure } from './condition-failure.ts';

export const heartbeatKey = (region: string) => ({ pk: `HEARTBEAT#${region}`, sk: 'HEARTBEAT' }) as const;

export class DynamoHeartbeat {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  /**
   * `epoch`: the region's fence's, so a promotion in the other region sees how far this one had gone. Never lowered:
   * a keeper that read its fence just before a promotion beat at the new epoch would otherwise write the old one over
   * it for a minute — such a beat is refused and the newer one kept (both are this region's, in its own replica).
   */
  async beat(region: string, at: number, epoch?: number): Promise<void> {
    const item = { ...heartbeatKey(region), at, owner: region, ...(epoch === undefined ? {} : { epoch }) };
    const notLower =
      epoch === undefined
        ? {}
        : {
            ConditionExpression: 'attribute_not_exists(epoch) OR epoch <= :epoch',
            ExpressionAttributeValues: { ':epoch': epoch },
          };
    try {
      await this.client.send(new PutCommand({ TableName: this.tableName, Item: item, ...notLower }));
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
  }

  /**
   * `region`'s last beat as this region's replica holds it: when, and the epoch it carried (none from before beats
   * carried it); undefined when it never beat.
   */
  async read(region: string): Promise<{ at: number; epoch?: number } | undefined> {
    const r = await this.client.send(
      new GetCommand({ TableName: this.tableName, Key: heartbeatKey(region), ConsistentRead: true }),
    );
    const { at, epoch } = r.Item ?? {};
    if (typeof at !== 'number') return undefined;
    return typeof epoch === 'number' ? { at, epoch } : { at };
  }
}

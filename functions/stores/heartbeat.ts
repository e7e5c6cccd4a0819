/**
 * A region's heartbeat in the global table (docs/regions.md "The keeper"): `HEARTBEAT#<region>`, written by the keeper
 * every minute, so the other region sees it alive and its replication flowing (`PeerHeartbeatStale`). One key per
 * region: no conflict under last writer wins.
 */
import { type DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';

export const heartbeatKey = (region: string) => ({ pk: `HEARTBEAT#${region}`, sk: 'HEARTBEAT' }) as const;

export class DynamoHeartbeat {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  /** `epoch`: the region's fence's, so a promotion in the other region sees how far this one had gone. */
  async beat(region: string, at: number, epoch?: number): Promise<void> {
    const item = { ...heartbeatKey(region), at, owner: region, ...(epoch === undefined ? {} : { epoch }) };
    await this.client.send(new PutCommand({ TableName: this.tableName, Item: item }));
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

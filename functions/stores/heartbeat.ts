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

  /** When `region`'s keeper last beat, as this region's replica holds it; undefined when it never has. */
  async lastBeat(region: string): Promise<number | undefined> {
    const r = await this.client.send(
      new GetCommand({ TableName: this.tableName, Key: heartbeatKey(region), ConsistentRead: true }),
    );
    const at = r.Item?.at;
    return typeof at === 'number' ? at : undefined;
  }
}

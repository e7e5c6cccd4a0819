/**
 * Reads DynamoDB Local's own stream (DescribeStream / GetShardIterator / GetRecords) and hands the records over in
 * the shape Lambda's event source mapping delivers them.
 *
 * DynamoDB Local (3.x) writes an empty map in a stream image as `{}`, without its `M` (GetItem and the DynamoDB
 * service write `{"M":{}}`), and an attribute value without a type cannot be read: unmarshall throws "No value
 * defined", dispatch fails the record, and the mapping hands it over again and again. An empty list keeps its `L`, so
 * a typeless `{}` has one reading — the empty map — and is given it back (test/tools/local-stream.test.ts
 * checks both against the table).
 */

import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import {
  type _Record,
  DescribeStreamCommand,
  DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
} from '@aws-sdk/client-dynamodb-streams';
import type { DynamoDBRecord } from 'aws-lambda';
import { localClient } from './dynamodb-local.ts';

const PAGE = 1000;

export class StreamReader {
  private readonly streams: DynamoDBStreamsClient;
  private streamArn = '';
  /** shardId → next iterator; null once a closed shard is read to its end. */
  private readonly iterators = new Map<string, string | null>();
  /** Whether the next poll asks DescribeStream for new shards. */
  private discover = true;

  constructor(
    private readonly endpoint: string,
    private readonly tableName: string,
    /**
     * `onClose`: look for new shards only at the first poll and after a shard closed — a stream's new shards are the
     * children of a closed one — instead of on every poll, and end a shard's poll at a page shorter than the limit
     * (what is left comes at the next poll): a round trip or two less a poll, for the region drill's many.
     */
    private readonly shards: 'everyPoll' | 'onClose' = 'everyPoll',
  ) {
    this.streams = new DynamoDBStreamsClient({
      endpoint,
      region: 'us-east-1',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });
  }

  /** Every record written since the last call, oldest first within each shard. */
  async poll(): Promise<DynamoDBRecord[]> {
    if (this.streamArn === '') {
      const db = localClient(this.endpoint);
      const table = await db.send(new DescribeTableCommand({ TableName: this.tableName }));
      db.destroy();
      this.streamArn = table.Table?.LatestStreamArn ?? '';
      if (this.streamArn === '') throw new Error(`table ${this.tableName} has no stream`);
    }
    const description =
      this.discover || this.shards === 'everyPoll'
        ? await this.streams.send(new DescribeStreamCommand({ StreamArn: this.streamArn }))
        : undefined;
    this.discover = false;
    for (const shard of description?.StreamDescription?.Shards ?? []) {
      const id = shard.ShardId;
      if (id === undefined || this.iterators.has(id)) continue;
      const it = await this.streams.send(
        new GetShardIteratorCommand({ StreamArn: this.streamArn, ShardId: id, ShardIteratorType: 'TRIM_HORIZON' }),
      );
      this.iterators.set(id, it.ShardIterator ?? null);
    }
    const out: DynamoDBRecord[] = [];
    for (const [shardId, iterator] of this.iterators) {
      let next = iterator;
      while (next) {
        const page = await this.streams.send(new GetRecordsCommand({ ShardIterator: next, Limit: PAGE }));
        out.push(...(page.Records ?? []).map((r) => this.toLambdaShape(r)));
        next = page.NextShardIterator ?? null;
        const read = (page.Records ?? []).length;
        if (read === 0 || (this.shards === 'onClose' && read < PAGE)) break;
      }
      if (next === null && iterator !== null) this.discover = true;
      this.iterators.set(shardId, next);
    }
    return out;
  }

  close(): void {
    this.streams.destroy();
  }

  private toLambdaShape(r: _Record): DynamoDBRecord {
    const d = r.dynamodb ?? {};
    return {
      eventID: r.eventID,
      eventName: r.eventName as DynamoDBRecord['eventName'],
      eventVersion: r.eventVersion ?? '1.1',
      eventSource: 'aws:dynamodb',
      awsRegion: 'us-east-1',
      eventSourceARN: this.streamArn,
      dynamodb: {
        ApproximateCreationDateTime: Math.floor((d.ApproximateCreationDateTime?.getTime() ?? Date.now()) / 1000),
        Keys: d.Keys as never,
        ...(d.NewImage ? { NewImage: typedImage(d.NewImage) as never } : {}),
        ...(d.OldImage ? { OldImage: typedImage(d.OldImage) as never } : {}),
        SequenceNumber: d.SequenceNumber,
        SizeBytes: d.SizeBytes,
        StreamViewType: d.StreamViewType,
      },
    } as DynamoDBRecord;
  }
}

/** An image with a type on every value: a typeless `{}` is the empty map DynamoDB Local wrote without its `M`. */
function typedImage(image: Record<string, AttributeValue>): Record<string, AttributeValue> {
  return Object.fromEntries(Object.entries(image).map(([name, value]) => [name, typedValue(value)]));
}

function typedValue(value: AttributeValue): AttributeValue {
  if (Object.keys(value).length === 0) return { M: {} };
  if (value.M !== undefined) return { M: typedImage(value.M) };
  if (value.L !== undefined) return { L: value.L.map(typedValue) };
  return value;
}

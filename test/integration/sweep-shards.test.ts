/**
 * Issue 18 on DynamoDB Local: the shard count changes between deploys (64 at a 10,000/s peak, then back to 8) and the
 * sweeper still finds every due item, because every writer raised the shard mark before writing and the sweeper visits
 * max(mark, its own count).
 */
import { DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { shardOfSweepPartition, sweepKey } from '../../functions/domain/keys.ts';
import { buildNotification } from '../../functions/domain/notification.ts';
import { DynamoSweepShardMark } from '../../functions/stores/sweep-shard-mark.ts';
import { DynamoSweepStore } from '../../functions/stores/sweep-store.ts';
import { localClient } from '../../tools/local/dynamodb-local.ts';
import { decodeTransfer, transferEvent } from '../support/events.ts';
import { type LocalTable, newLocalTable } from '../support/local-table.ts';
import { sweepWith } from '../support/sweep-deps.ts';

let table: LocalTable;
let doc: DynamoDBDocumentClient;
beforeAll(async () => {
  table = await newLocalTable(inject('dynamoEndpoint'));
  doc = DynamoDBDocumentClient.from(localClient(table.endpoint), { marshallOptions: { removeUndefinedValues: true } });
});

const sweepShards = (shards: number, now: number) =>
  sweepWith(new DynamoSweepStore(doc, table.tableName, 8), now, {
    sendRates: { EMAIL: 10_000, PUSH: 10_000, SMS: 10_000 },
    shards,
  });

describe('changing the shard count between deploys', () => {
  it('items written under 64 shards are all found by a sweeper deployed with 8', async () => {
    const now = Date.now();
    const mark = new DynamoSweepShardMark(doc, table.tableName);
    // The 10,000/s deploy: its ingest raises the mark before it writes.
    expect(await mark.raise(64, now)).toBe(64);
    const ids: string[] = [];
    for (let i = 0; i < 60; i++) {
      const d = decodeTransfer(transferEvent({ eventId: `shard-change-${i}` }));
      const n = buildNotification(
        d.event,
        'EMAIL',
        'x@example.com',
        now - 3_600_000,
        { retentionDays: 1 },
        {
          pendingThresholdMs: 60_000,
          sweepShards: 64,
        },
      );
      ids.push(n.notificationId);
      await doc.send(new PutCommand({ TableName: table.tableName, Item: n }));
    }
    // Most of them sit in shards 8…63, which an 8-shard sweeper alone would never query.
    const beyondEight = ids.filter((id) => (shardOfSweepPartition(sweepKey('PENDING', 'EMAIL', id, 64)) ?? 0) >= 8);
    expect(beyondEight.length).toBeGreaterThan(30);

    // The next deploy is back at 8 shards. The mark says 64: that is what its sweeper visits.
    const shards = await mark.raise(8, now);
    expect(shards).toBe(64);
    const r = await sweepShards(shards, now);
    expect(r.redriven.map((e) => e.notificationId).sort()).toEqual([...ids].sort());
  });

  it('without the mark, a sweeper visiting only 8 shards would miss items (what the mark is for)', async () => {
    const now = Date.now();
    const ids: string[] = [];
    for (let i = 0; i < 40; i++) {
      const d = decodeTransfer(transferEvent({ eventId: `no-mark-${i}` }));
      const n = buildNotification(
        d.event,
        'PUSH',
        'arn:x',
        now - 3_600_000,
        { retentionDays: 1 },
        {
          pendingThresholdMs: 60_000,
          sweepShards: 64,
        },
      );
      ids.push(n.notificationId);
      await doc.send(new PutCommand({ TableName: table.tableName, Item: n }));
    }
    const r = await sweepShards(8, now);
    const found = r.redriven.filter((e) => e.notificationId.startsWith('no-mark-')).length;
    expect(found).toBeLessThan(ids.length);
  });
});

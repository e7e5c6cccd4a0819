/**
 * The sweeper's reads of the sparse sweep index: a partition's items up to a sweepAt, paged with LastEvaluatedKey.
 * sweepAt is the index's sort key, so it bounds the Query and cannot be filtered on; status and leaseUntil are
 * projected and can. A filter cuts what is returned, not what is read (and billed).
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { TABLE_SCHEMA } from '../contracts/table-schema.ts';
import { type SweepPartition, sweepPartition } from '../domain/keys.ts';
import type { SweepEntry, SweepPage, SweepStartKey, SweepWindow } from './notification-port.ts';

type StartKey = SweepStartKey | undefined;

/** Up to `window.until`, less live leases: a live lease is neither due nor stuck, and never reaches the client. */
export function duePage(
  client: DynamoDBDocumentClient,
  tableName: string,
  partition: SweepPartition,
  window: SweepWindow,
  limit: number,
  startKey: StartKey,
): Promise<SweepPage> {
  return sweepPage(client, tableName, partition, window.until, startKey, {
    filter: 'NOT (#status = :sending AND leaseUntil >= :now)',
    now: window.now,
    limit,
  });
}

/** Expired leases only, up to `until`. No Limit: 1 MB pages. */
export function expiredLeasePage(
  client: DynamoDBDocumentClient,
  tableName: string,
  partition: SweepPartition,
  now: number,
  until: number,
  startKey: StartKey,
): Promise<SweepPage> {
  return sweepPage(client, tableName, partition, until, startKey, {
    filter: '#status = :sending AND leaseUntil < :now',
    now,
  });
}

async function sweepPage(
  client: DynamoDBDocumentClient,
  tableName: string,
  partition: SweepPartition,
  until: number,
  startKey: StartKey,
  q: { filter: string; now: number; limit?: number },
): Promise<SweepPage> {
  const index = TABLE_SCHEMA.sweepIndex;
  const r = await client.send(
    new QueryCommand({
      TableName: tableName,
      IndexName: index.indexName,
      KeyConditionExpression: '#key = :key AND #at <= :until',
      FilterExpression: q.filter,
      ExpressionAttributeNames: { '#key': index.partitionKey, '#at': index.sortKey, '#status': 'status' },
      ExpressionAttributeValues: {
        ':key': sweepPartition(partition),
        ':until': until,
        ':sending': 'SENDING',
        ':now': q.now,
      },
      ...(q.limit === undefined ? {} : { Limit: q.limit }),
      ...(startKey === undefined ? {} : { ExclusiveStartKey: startKey }),
    }),
  );
  return { entries: (r.Items ?? []) as SweepEntry[], next: r.LastEvaluatedKey };
}

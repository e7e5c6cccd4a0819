/**
 * DynamoDB adapter for the notices a failover held (docs/regions.md "Ownership", "Runbook"): listed page by page from
 * the sweep index's `HELD#<channel>#<shard>` partitions (no scan), read with their original from the event's
 * partition, and decided by an operator with one conditional write — only from the status, epoch and waiting sweep key
 * the decision read, so a reconciliation deciding the same notice meanwhile wins or loses whole: sent once.
 */
import type { DynamoDBDocumentClient, NativeAttributeValue } from '@aws-sdk/lib-dynamodb';
import { TABLE_SCHEMA } from '../contracts/table-schema.ts';
import type { Channel } from '../domain/channels.ts';
import { HELD_SHARDS, heldPartition } from '../domain/failover.ts';
import { parseNotificationId } from '../domain/keys.ts';
import type { NotificationStatus } from '../domain/state-machine.ts';
import { queryItems } from './paged-query.ts';
import { DynamoSuccessorStore, type OwnedNotification } from './successor-store.ts';

/** A held notice read whole, with its original as this replica shows it (absent: its record never arrived). */
export interface HeldRead {
  readonly item: OwnedNotification | undefined;
  readonly original: OwnedNotification | undefined;
}

export interface HeldPage {
  readonly items: OwnedNotification[];
  /** Pass it back as `after` for the next page; absent on the last. */
  readonly next?: string;
}

/** Where a page stopped: the index of the partition, and the key within it. */
interface Cursor {
  readonly p: number;
  readonly k?: Record<string, NativeAttributeValue>;
}

const encode = (c: Cursor) => Buffer.from(JSON.stringify(c)).toString('base64url');

function decode(after: string | undefined): Cursor {
  if (after === undefined) return { p: 0 };
  try {
    const c = JSON.parse(Buffer.from(after, 'base64url').toString('utf8')) as Cursor;
    if (Number.isInteger(c.p) && c.p >= 0) return c;
  } catch {
    // Said below: the caller passed something no page printed.
  }
  throw new RangeError(`"${after}" is not a page mark a listing printed`);
}

export interface HeldStore {
  page(channels: readonly Channel[], limit: number, after?: string): Promise<HeldPage>;
  read(notificationId: string): Promise<HeldRead>;
  /**
   * Moves a held notice `item.status` → `to` (or, `to` = its status, only stops its waiting), with `fields`, only if
   * it still has that status and epoch and still waits (its `HELD#` sweep key): `false` when it moved meanwhile.
   */
  decide(
    item: OwnedNotification,
    to: NotificationStatus,
    fields: Record<string, NativeAttributeValue>,
    now: number,
  ): Promise<boolean>;
}

export class DynamoHeldStore implements HeldStore {
  private readonly successors: DynamoSuccessorStore;

  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    sweepShards: number,
  ) {
    this.successors = new DynamoSuccessorStore(client, tableName, sweepShards);
  }

  async page(channels: readonly Channel[], limit: number, after?: string): Promise<HeldPage> {
    const partitions = channels.flatMap((c) => Array.from({ length: HELD_SHARDS }, (_, n) => heldPartition(c, n)));
    const index = TABLE_SCHEMA.sweepIndex;
    const items: OwnedNotification[] = [];
    let cursor = decode(after);
    while (cursor.p < partitions.length && items.length < limit) {
      let last: Record<string, NativeAttributeValue> | undefined;
      const want = limit - items.length;
      let read = 0;
      const entries = queryItems(
        this.client,
        {
          TableName: this.tableName,
          IndexName: index.indexName,
          KeyConditionExpression: '#key = :key',
          ExpressionAttributeNames: { '#key': index.partitionKey },
          ExpressionAttributeValues: { ':key': partitions[cursor.p] },
          ...(cursor.k === undefined ? {} : { ExclusiveStartKey: cursor.k }),
        },
        want,
      );
      for await (const entry of entries) {
        read++;
        last = { pk: entry.pk, sk: entry.sk, [index.partitionKey]: entry[index.partitionKey], sweepAt: entry.sweepAt };
        const item = await this.successors.get({ pk: String(entry.pk), sk: String(entry.sk) });
        if (item !== undefined) items.push(item);
      }
      // As many entries as asked for: this partition may hold more, read from after the last one.
      cursor = read >= want && last !== undefined ? { p: cursor.p, k: last } : { p: cursor.p + 1 };
    }
    return cursor.p < partitions.length ? { items, next: encode(cursor) } : { items };
  }

  async read(notificationId: string): Promise<HeldRead> {
    const ref = parseNotificationId(notificationId);
    if (ref === undefined) return { item: undefined, original: undefined };
    const family = await this.successors.family(ref.eventId, ref.channel);
    const item = family.find((i) => i.notificationId === notificationId);
    const original = item?.supersedes === undefined ? undefined : family.find((i) => i.sk === item.supersedes);
    return { item, original };
  }

  async decide(
    item: OwnedNotification,
    to: NotificationStatus,
    fields: Record<string, NativeAttributeValue>,
    now: number,
  ): Promise<boolean> {
    return this.successors.move(item, to, 'held', fields, now, { whileWaiting: true });
  }
}

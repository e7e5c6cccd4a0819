/**
 * DynamoDB adapter for the writes a promotion and a reconciliation make about another epoch's notifications
 * (docs/regions.md "Ownership"): finding what a region had not finished, creating successors once, and moving a
 * successor — or, in a demoted and quiet region, its original — only from the state and epoch the decision read.
 */
import {
  type DynamoDBDocumentClient,
  GetCommand,
  type NativeAttributeValue,
  PutCommand,
  QueryCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { TABLE_SCHEMA } from '../contracts/table-schema.ts';
import { CHANNELS, type Channel } from '../domain/channels.ts';
import { HELD_SHARDS, heldPartition } from '../domain/failover.ts';
import { FIRST_EPOCH } from '../domain/fence.ts';
import { eventPk, notificationSk, sweepPartition } from '../domain/keys.ts';
import type { NotificationItem } from '../domain/notification.ts';
import { pendingSweepKey } from '../domain/notification.ts';
import { type Mover, moveCondition, type NotificationStatus } from '../domain/state-machine.ts';
import { DEFAULT_SWEEP_PLACEMENT } from '../domain/sweep-index.ts';
import { DynamoInboxStore } from '../ingest/inbox-store.ts';
import { heldInboxSk } from '../ingest/owned-inbox-store.ts';
import { sweepPartitions } from '../sweeper/sweep.ts';
import { isConditionFailure } from './condition-failure.ts';
import { DynamoHeartbeat } from './heartbeat.ts';
import type { NotificationKey } from './notification-store.ts';
import { queryItems } from './paged-query.ts';

/** A notification as a reconciliation reads it: its owner and epoch, and, for a successor, whose notice it carries. */
export type OwnedNotification = NotificationItem & {
  owner?: string;
  epoch?: number;
  supersedes?: string;
  heldReason?: string;
  secondCopy?: boolean;
  late?: boolean;
};

/** Where a paged listing of the unfinished entries stands: a sweep partition's number, and the key it ended at. */
export interface UnfinishedCursor {
  readonly partition: number;
  readonly after?: Record<string, NativeAttributeValue>;
}

export interface UnfinishedPage {
  readonly items: readonly OwnedNotification[];
  readonly next?: UnfinishedCursor;
}

/**
 * An epoch a replica has seen of a region, and when: carried by its heartbeat, or by one of its notifications
 * (`notificationId`, `at` its creation).
 */
export interface SeenEpoch {
  readonly epoch: number;
  readonly at: number;
  readonly notificationId?: string;
}

/**
 * The newest entries of each partition read for the epoch they carry (any one of the lost region's newest carries
 * it), partitions read at once, and the clocks' margin past the pending threshold.
 */
const NEWEST_PER_PARTITION = 2;
/** Entries a partition's Query evaluates a page (its filter leaves out held notices), and the pages it may take. */
const NEWEST_READ_PER_PARTITION = 100;
const NEWEST_PAGES_PER_PARTITION = 5;
const NEWEST_AT_ONCE = 32;
const NEWEST_SKEW_MS = 60_000;

export class DynamoSuccessorStore {
  private readonly inbox: Pick<DynamoInboxStore, 'inboxItems'>;

  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly sweepShards: number,
    /** The stage's pending threshold: a notice written now is due by now + it (lastSeenEpoch's look). */
    private readonly pendingThresholdMs = DEFAULT_SWEEP_PLACEMENT.pendingThresholdMs,
  ) {
    this.inbox = new DynamoInboxStore(client, tableName);
  }

  async get(key: NotificationKey): Promise<OwnedNotification | undefined> {
    const r = await this.client.send(new GetCommand({ TableName: this.tableName, Key: key, ConsistentRead: true }));
    return r.Item as OwnedNotification | undefined;
  }

  /**
   * Whether the region of this replica took the event: any inbox item of it — `INBOX`, or a held `INBOX#E<n>` of an
   * epoch before `activeEpoch` —, by ingest's own Query on the event's partition. An event that region held and
   * released was taken as surely as one it wrote `INBOX` for: after a failback, the held one is all there is. The
   * active epoch's own held item (`INBOX#E<activeEpoch>`, replicated here) says nothing of what this region took.
   */
  async tookEvent(eventId: string, activeEpoch: number): Promise<boolean> {
    const own = heldInboxSk(activeEpoch);
    return (await this.inbox.inboxItems(eventId)).some((i) => i.sk !== own);
  }

  /** Every item this replica's sweep index lists as unfinished (PENDING, SENDING), read whole. */
  async *unfinished(): AsyncGenerator<OwnedNotification> {
    const keys = sweepPartitions(this.sweepShards).map(sweepPartition);
    yield* this.listed(keys);
  }

  /**
   * One page of the sweep index's unfinished entries, from a cursor (the partition's number and the key the page
   * before ended at), each item read whole — `limit` entries at most, their reads in parallel. `next` is where the
   * following page starts; undefined once every partition is listed.
   */
  async unfinishedPage(cursor: UnfinishedCursor, limit: number): Promise<UnfinishedPage> {
    const partitions = sweepPartitions(this.sweepShards).map(sweepPartition);
    const partition = partitions[cursor.partition];
    if (partition === undefined) return { items: [] };
    const page = await this.client.send(
      new QueryCommand({
        ...this.sweepQuery(partition),
        Limit: limit,
        ...(cursor.after === undefined ? {} : { ExclusiveStartKey: cursor.after }),
      }),
    );
    const read = await Promise.all((page.Items ?? []).map((e) => this.get({ pk: String(e.pk), sk: String(e.sk) })));
    const items = read.filter((i): i is OwnedNotification => i !== undefined);
    const last = page.LastEvaluatedKey;
    if (last !== undefined) return { items, next: { partition: cursor.partition, after: last } };
    return cursor.partition + 1 < partitions.length ? { items, next: { partition: cursor.partition + 1 } } : { items };
  }

  /**
   * How many entries the sweep index lists as unfinished, counted by DynamoDB (Select COUNT: no item is read), up to
   * `upTo`: a preview answers in seconds whatever the backlog. `atLeast` when it stopped there.
   */
  async countUnfinished(upTo: number): Promise<{ count: number; atLeast: boolean }> {
    let count = 0;
    for (const partition of sweepPartitions(this.sweepShards).map(sweepPartition)) {
      let start: Record<string, NativeAttributeValue> | undefined;
      do {
        const page = await this.client.send(
          new QueryCommand({
            ...this.sweepQuery(partition),
            Select: 'COUNT',
            ...(start === undefined ? {} : { ExclusiveStartKey: start }),
          }),
        );
        count += page.Count ?? 0;
        if (count >= upTo) return { count, atLeast: true };
        start = page.LastEvaluatedKey;
      } while (start !== undefined);
    }
    return { count, atLeast: false };
  }

  /**
   * The epoch each region's keeper last wrote with its heartbeat, as this replica holds it (a heartbeat from before
   * heartbeats carried the epoch says none): the highest epoch this replica has seen of a region it cannot reach.
   */
  async heartbeatEpoch(region: string): Promise<{ epoch: number; at: number } | undefined> {
    const beat = await new DynamoHeartbeat(this.client, this.tableName).read(region);
    return beat?.epoch === undefined ? undefined : { epoch: beat.epoch, at: beat.at };
  }

  /**
   * A heartbeat of `region` at `epoch`, written by its promotion the moment its fence moved: the keeper beats once a
   * minute, and a region lost within that minute would otherwise leave no trace of its new epoch in the other replica.
   */
  async beat(region: string, at: number, epoch: number): Promise<void> {
    await new DynamoHeartbeat(this.client, this.tableName).beat(region, at, epoch);
  }

  /**
   * The highest epoch this replica has seen of `region`: its heartbeat's, or that of its newest notifications,
   * whichever is higher. A region lost within a keeper interval of its own promotion (or whose heartbeat predates the
   * epoch field) has no heartbeat here at its epoch, yet what it wrote at it carries it: its newest notices are the
   * last entries of each sweep partition due by now + the pending threshold (a write sets sweepAt to its time plus the
   * threshold; far retries sit beyond it, quiet hours' held notices are paged past), and its own promotion's
   * successors sit in the HELD partitions. A few entries of each are read whole. Older notices due in that window
   * (deferrals nobody re-drove) can still be the last entries: its promotion's heartbeat is the first witness.
   */
  async lastSeenEpoch(region: string, now = Date.now()): Promise<SeenEpoch | undefined> {
    const [beat, item] = await Promise.all([this.heartbeatEpoch(region), this.newestItemEpoch(region, now)]);
    if (beat === undefined) return item;
    return item !== undefined && item.epoch > beat.epoch ? item : beat;
  }

  private async newestItemEpoch(region: string, now: number): Promise<SeenEpoch | undefined> {
    const index = TABLE_SCHEMA.sweepIndex;
    const query = (partition: string, horizon: number | undefined, start?: Record<string, NativeAttributeValue>) =>
      new QueryCommand({
        TableName: this.tableName,
        IndexName: index.indexName,
        KeyConditionExpression: horizon === undefined ? '#key = :key' : '#key = :key AND #at <= :horizon',
        ExpressionAttributeNames: {
          '#key': index.partitionKey,
          '#status': 'status',
          ...(horizon === undefined ? {} : { '#at': 'sweepAt' }),
        },
        ExpressionAttributeValues: {
          ':key': partition,
          ':held': 'HELD',
          ...(horizon === undefined ? {} : { ':horizon': horizon }),
        },
        // Quiet hours' held notices sit among the PENDING entries at their release: not what was written last.
        FilterExpression: '#status <> :held',
        ScanIndexForward: false,
        Limit: NEWEST_READ_PER_PARTITION,
        ...(start === undefined ? {} : { ExclusiveStartKey: start }),
      });
    // The Limit counts entries before the filter: a partition whose last entries are all held (a zone's quiet hours
    // open at one instant) is paged on, up to NEWEST_PAGES_PER_PARTITION pages, until it gives the entries asked for.
    const newest = async (partition: string, horizon?: number) => {
      const found: Record<string, NativeAttributeValue>[] = [];
      let start: Record<string, NativeAttributeValue> | undefined;
      for (let page = 0; page < NEWEST_PAGES_PER_PARTITION; page++) {
        const r = await this.client.send(query(partition, horizon, start));
        found.push(...(r.Items ?? []));
        start = r.LastEvaluatedKey;
        if (found.length >= NEWEST_PER_PARTITION || start === undefined) break;
      }
      return found.slice(0, NEWEST_PER_PARTITION);
    };
    const horizon = now + this.pendingThresholdMs + NEWEST_SKEW_MS;
    const looks = [
      ...sweepPartitions(this.sweepShards).map((p) => () => newest(sweepPartition(p), horizon)),
      ...CHANNELS.flatMap((c) => Array.from({ length: HELD_SHARDS }, (_, n) => () => newest(heldPartition(c, n)))),
    ];
    let seen: SeenEpoch | undefined;
    for (let i = 0; i < looks.length; i += NEWEST_AT_ONCE) {
      const entries = await Promise.all(looks.slice(i, i + NEWEST_AT_ONCE).map((look) => look()));
      const items = await Promise.all(entries.flat().map((e) => this.get({ pk: String(e.pk), sk: String(e.sk) })));
      for (const item of items) {
        if (item?.owner !== region || item.epoch === undefined || item.epoch <= (seen?.epoch ?? -1)) continue;
        seen = { epoch: item.epoch, at: Date.parse(item.createdAt), notificationId: item.notificationId };
      }
    }
    return seen;
  }

  /** Every successor waiting for its original (FAILOVER_HELD, or UNKNOWN because the original was in flight). */
  async *waiting(channels: readonly Channel[]): AsyncGenerator<OwnedNotification> {
    yield* this.listed(channels.flatMap((c) => Array.from({ length: HELD_SHARDS }, (_, n) => heldPartition(c, n))));
  }

  /** The original a successor carries on, and every successor of an original (one per epoch), in one partition. */
  async family(eventId: string, channel: Channel): Promise<OwnedNotification[]> {
    const r = await this.client.send(
      new QueryCommand({
        TableName: this.tableName,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :sk)',
        ExpressionAttributeValues: { ':pk': eventPk(eventId), ':sk': notificationSk(channel) },
        ConsistentRead: true,
      }),
    );
    return (r.Items ?? []) as OwnedNotification[];
  }

  /** Creates a successor once: `false` when one is there already (another path reached it first). */
  async create(successor: OwnedNotification): Promise<boolean> {
    try {
      await this.client.send(
        new PutCommand({ TableName: this.tableName, Item: successor, ConditionExpression: 'attribute_not_exists(pk)' }),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  /**
   * Moves a notification `from` → `to`, only if it still has that status and the epoch the decision read: `false`
   * otherwise. PENDING puts it back in the sweep index (sent by the region that owns it); anything else takes it out.
   * `whileWaiting`: only while it still waits for its original (its `HELD#` sweep key) — and `to` may then be its own
   * status, no move: it only stops waiting (an operator's settlement of an UNKNOWN successor).
   */
  async move(
    item: OwnedNotification,
    to: NotificationStatus,
    by: Mover,
    fields: Record<string, NativeAttributeValue>,
    now: number,
    options: { readonly whileWaiting?: boolean } = {},
  ): Promise<boolean> {
    const waiting = options.whileWaiting === true;
    const move =
      waiting && to === item.status
        ? { expression: '#status = :fromStatus', values: { ':fromStatus': to } }
        : moveCondition(item.status, to, by);
    const epoch = item.epoch ?? FIRST_EPOCH;
    const set = { ...fields, updatedAt: new Date(now).toISOString() };
    const pending =
      to === 'PENDING'
        ? {
            sweepKey: pendingSweepKey(item.template, item.channel, item.notificationId, this.sweepShards),
            sweepAt: now,
          }
        : {};
    const all: Record<string, NativeAttributeValue> = { ...set, ...pending };
    const names = Object.keys(all);
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk: item.pk, sk: item.sk },
          ConditionExpression: `${move.expression} AND ${epoch === FIRST_EPOCH ? '(attribute_not_exists(epoch) OR epoch = :epoch)' : 'epoch = :epoch'}${waiting ? ' AND begins_with(sweepKey, :held)' : ''}`,
          UpdateExpression: `SET #status = :to, ${names.map((n) => `#${n} = :${n}`).join(', ')}${to === 'PENDING' ? ' REMOVE leaseUntil, retryAt' : ' REMOVE sweepKey, sweepAt, leaseUntil, retryAt'}`,
          ExpressionAttributeNames: { '#status': 'status', ...Object.fromEntries(names.map((n) => [`#${n}`, n])) },
          ExpressionAttributeValues: {
            ...move.values,
            ':to': to,
            ':epoch': epoch,
            ...(waiting ? { ':held': 'HELD#' } : {}),
            ...Object.fromEntries(names.map((n) => [`:${n}`, all[n]])),
          },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  /**
   * A successor whose outcome is settled where it stands (UNKNOWN, as its original): it waits no more. Only while it
   * still waits (`false` once anyone settled it), stamped with the reconciliation run that settled it.
   */
  async stopWaiting(item: OwnedNotification, now: number, runId: string): Promise<boolean> {
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk: item.pk, sk: item.sk },
          ConditionExpression: '#status = :status AND epoch = :epoch AND begins_with(sweepKey, :held)',
          UpdateExpression: 'SET updatedAt = :now, reconcileRun = :run REMOVE sweepKey, sweepAt',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: {
            ':status': item.status,
            ':epoch': item.epoch ?? FIRST_EPOCH,
            ':now': new Date(now).toISOString(),
            ':held': 'HELD#',
            ':run': runId,
          },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  /** One partition of the sweep index, as every listing here asks for it. */
  private sweepQuery(partition: string) {
    const index = TABLE_SCHEMA.sweepIndex;
    return {
      TableName: this.tableName,
      IndexName: index.indexName,
      KeyConditionExpression: '#key = :key',
      ExpressionAttributeNames: { '#key': index.partitionKey },
      ExpressionAttributeValues: { ':key': partition },
    };
  }

  private async *listed(partitions: readonly string[]): AsyncGenerator<OwnedNotification> {
    for (const partition of partitions) {
      const entries = queryItems(this.client, this.sweepQuery(partition));
      for await (const entry of entries) {
        const item = await this.get({ pk: String(entry.pk), sk: String(entry.sk) });
        if (item !== undefined) yield item;
      }
    }
  }
}

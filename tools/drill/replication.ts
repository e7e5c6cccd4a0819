/**
 * The drill's stand-in for DynamoDB global tables' MREC replication (docs/regions.md "What AWS gives"): per direction,
 * it reads a region's stream and applies each write to the other region — PutItem of the new image, DeleteItem of a
 * removal — item by item, with a lag drawn per write (a long tail), partitions that queue writes, and reordering.
 * Last writer wins per item: each version is stamped with the simulated time its region's stream was read (the shim
 * reads a region's stream before it applies anything there, so a local write is stamped before it is compared), and a
 * replicated version older than the item's current one is dropped.
 *
 * The shim tells its own writes from a region's by a private attribute, `_replica` (a fresh number on each replicated
 * put): a record whose new image carries a `_replica` its old image did not is the shim's, and is not sent back. The
 * product never reads it; real MREC writes no such attribute (docs/regions.md "Replicated stream records"), which is
 * why notifier's own `owner` does that work.
 *
 * It also watches for the invariant the drill checks on writes: a write by a region's functions to an item another
 * region owns (its old image's `owner`), apart from the replication's own writes.
 */
import { DeleteCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBRecord } from 'aws-lambda';
import type { Region } from './region.ts';

interface Version {
  readonly key: string;
  readonly pk: string;
  readonly sk: string;
  /** The new image, or undefined for a removal. */
  readonly image: Record<string, unknown> | undefined;
  readonly stamp: number;
  readonly deliverAt: number;
  readonly seq: number;
}

export interface ForeignWrite {
  readonly region: string;
  readonly key: string;
  readonly owner: string;
}

/** One direction of replication: from → to. */
export class ReplicationLink {
  partitioned = false;
  private readonly queue: Version[] = [];
  private seq = 0;

  constructor(
    readonly from: Region,
    readonly to: Region,
    private readonly state: ReplicaState,
    private readonly lagMs: () => number,
  ) {}

  /** Takes the source's stream records read this tick and queues every local write, stamped now. */
  read(now: number, records: readonly DynamoDBRecord[]): void {
    for (const record of records) {
      const version = this.state.stamp(this.from, record, now);
      if (version === undefined) continue;
      this.queue.push({ ...version, deliverAt: now + this.lagMs(), seq: this.seq++ });
    }
  }

  /** Applies every queued write that is due, in its (reordered) delivery order, last writer wins per item. */
  async deliver(now: number): Promise<void> {
    if (this.partitioned || !this.from.alive || !this.to.alive) return;
    this.queue.sort((a, b) => a.deliverAt - b.deliverAt || a.seq - b.seq);
    while (this.queue.length > 0 && (this.queue[0]?.deliverAt ?? Number.POSITIVE_INFINITY) <= now) {
      const version = this.queue.shift() as Version;
      await this.state.apply(this.to, version);
    }
  }

  /** When the next queued write is due (Infinity when none, or while the link is down). */
  nextDue(): number {
    if (this.partitioned || !this.from.alive || !this.to.alive) return Number.POSITIVE_INFINITY;
    return this.queue.reduce((min, v) => Math.min(min, v.deliverAt), Number.POSITIVE_INFINITY);
  }

  /** Writes still on the way. */
  get pending(): number {
    return this.queue.length;
  }
}

/** What each replica holds, per item: the stamp of its current version, and which versions the shim wrote itself. */
export class ReplicaState {
  private readonly stamps = new Map<string, Map<string, number>>();
  /** Keys the shim removed, per region: their REMOVE records are its own. */
  private readonly removed = new Map<string, Map<string, number>>();
  private replica = 0;
  /** The `_replica` the shim last put on each item, per region. */
  private readonly marks = new Map<string, Map<string, Set<number>>>();
  private order = 0;
  readonly foreignWrites: ForeignWrite[] = [];
  /** Keys whose foreign writes are the operator's reconciliation (allowed): region → key. */
  readonly allowed = new Set<string>();
  conflictsDropped = 0;

  stamp(region: Region, record: DynamoDBRecord, now: number): Omit<Version, 'deliverAt' | 'seq'> | undefined {
    const d = record.dynamodb;
    if (d?.Keys === undefined) return undefined;
    const keys = unmarshall(d.Keys as never) as { pk: string; sk: string };
    const key = `${keys.pk}|${keys.sk}`;
    const image = d.NewImage === undefined ? undefined : (unmarshall(d.NewImage as never) as Record<string, unknown>);
    const old = d.OldImage === undefined ? undefined : (unmarshall(d.OldImage as never) as Record<string, unknown>);
    const marks = this.map(this.marks, region.name);
    const mark = image?._replica;
    if (typeof mark === 'number' && mark !== old?._replica && marks.get(key)?.delete(mark) === true) {
      return undefined; // the shim's own put, seen in the target's stream
    }
    const removed = this.map(this.removed, region.name);
    if (image === undefined && (removed.get(key) ?? 0) > 0) {
      removed.set(key, (removed.get(key) ?? 1) - 1);
      return undefined; // the shim's own write, replicated here: not sent back
    }
    const owner = old?.owner;
    if (typeof owner === 'string' && owner !== region.name && !this.allowed.has(`${region.name}|${key}`)) {
      this.foreignWrites.push({ region: region.name, key, owner });
    }
    // Versions read together keep their stream order: a later write never carries an earlier (or equal) stamp.
    const stamp = now * 1_000 + (this.order++ % 1_000);
    this.map(this.stamps, region.name).set(key, stamp);
    return { key, pk: keys.pk, sk: keys.sk, image, stamp };
  }

  async apply(to: Region, version: Version): Promise<void> {
    const stamps = this.map(this.stamps, to.name);
    const current = stamps.get(version.key);
    if (current !== undefined && current > version.stamp) {
      this.conflictsDropped++;
      return; // last writer wins: an older version is dropped
    }
    stamps.set(version.key, version.stamp);
    if (version.image === undefined) {
      const removed = this.map(this.removed, to.name);
      removed.set(version.key, (removed.get(version.key) ?? 0) + 1);
      await to.replicaDoc.send(new DeleteCommand({ TableName: to.table, Key: { pk: version.pk, sk: version.sk } }));
    } else {
      const item = { ...version.image, _replica: ++this.replica };
      const marks = this.map(this.marks, to.name);
      marks.set(version.key, (marks.get(version.key) ?? new Set()).add(item._replica));
      await to.replicaDoc.send(new PutCommand({ TableName: to.table, Item: item }));
    }
  }

  private map<V>(maps: Map<string, Map<string, V>>, region: string): Map<string, V> {
    let m = maps.get(region);
    if (m === undefined) {
      m = new Map();
      maps.set(region, m);
    }
    return m;
  }
}

/**
 * The drill's Kafka (docs/regions.md "The drill"): a one-partition topic per region's cluster, MSK Replicator from the
 * primary's cluster to the recovery's (identical topic names, the `__mskmr` header, lag, partition), and its consumer
 * group offset sync: every few simulated seconds, translated from the last sample — so behind — and only while the
 * target group is idle. The recovery region's ingest starts at the synced offset: the low-water mark, from which it
 * reads again what the primary had already taken.
 */
import { type KafkaRecordSpec, mskEvent } from '../local/msk.ts';

export const TOPIC = 'bank-events';

export interface KafkaRecord {
  readonly offset: number;
  readonly eventId: string;
  readonly value: Record<string, unknown>;
  readonly producedAt: number;
  /** Set on a record MSK Replicator copied here: the source cluster, and its offset there. */
  readonly replicatedFrom?: { readonly cluster: string; readonly offset: number };
}

export class Cluster {
  readonly records: KafkaRecord[] = [];
  /** The consumer group's committed offset: the next record its ingest reads. */
  committed = 0;
  /** The cluster is gone for good (the `cluster-destroyed` scenario): nothing is read from it, or replicated, again. */
  destroyed = false;

  constructor(readonly name: string) {}

  produce(eventId: string, value: Record<string, unknown>, now: number): void {
    this.records.push({ offset: this.records.length, eventId, value, producedAt: now });
  }

  /** The next batch the mapping would deliver, as MSK delivers it. */
  batch(max: number) {
    const records = this.destroyed ? [] : this.records.slice(this.committed, this.committed + max);
    const specs: KafkaRecordSpec[] = records.map((r) => ({
      topic: TOPIC,
      partition: 0,
      offset: r.offset,
      value: r.value,
      timestamp: r.producedAt,
      ...(r.replicatedFrom === undefined ? {} : { headers: { __mskmr: `${r.replicatedFrom.cluster}/${TOPIC}` } }),
    }));
    return { records, event: mskEvent(specs) };
  }
}

export class Replicator {
  partitioned = false;
  private next = 0;
  private readonly inFlight: { record: KafkaRecord; deliverAt: number }[] = [];
  /** source offset → target offset, as replicated. */
  private readonly mapping: [number, number][] = [];
  /** The source group's committed offset at the previous sync: the translation runs one sample behind. */
  private sampled = 0;
  private lastSync = Number.NEGATIVE_INFINITY;

  constructor(
    readonly from: Cluster,
    readonly to: Cluster,
    private readonly lagMs: () => number,
    private readonly syncEveryMs: number,
  ) {}

  tick(now: number, targetGroupIdle: boolean): void {
    if (this.partitioned || this.from.destroyed) return;
    for (; this.next < this.from.records.length; this.next++) {
      const record = this.from.records[this.next] as KafkaRecord;
      if (record.replicatedFrom !== undefined) continue; // never copied back
      this.inFlight.push({ record, deliverAt: now + this.lagMs() });
    }
    // The Replicator keeps the order of a partition: a record is delivered after every earlier one.
    while (this.inFlight.length > 0 && (this.inFlight[0]?.deliverAt ?? Number.POSITIVE_INFINITY) <= now) {
      const { record } = this.inFlight.shift() as { record: KafkaRecord };
      const offset = this.to.records.length;
      this.to.records.push({ ...record, offset, replicatedFrom: { cluster: this.from.name, offset: record.offset } });
      this.mapping.push([record.offset, offset]);
    }
    if (now - this.lastSync >= this.syncEveryMs) {
      this.lastSync = now;
      if (targetGroupIdle) this.to.committed = Math.max(this.to.committed, this.translate(this.sampled));
      this.sampled = this.from.committed;
    }
  }

  /** Whether the source's record at this offset reached the target cluster. */
  replicated(sourceOffset: number): boolean {
    return this.mapping.some(([source]) => source === sourceOffset);
  }

  /** When the next record in flight is due (Infinity when none, or while the link is down). */
  nextDue(): number {
    if (this.partitioned || this.from.destroyed) return Number.POSITIVE_INFINITY;
    const undelivered = this.next < this.from.records.length ? 0 : Number.POSITIVE_INFINITY;
    return Math.min(undelivered, this.inFlight[0]?.deliverAt ?? Number.POSITIVE_INFINITY);
  }

  /** The target offset below which every record was consumed in the source, by the last mapping known. */
  private translate(sourceCommitted: number): number {
    let target = 0;
    for (const [source, t] of this.mapping) if (source < sourceCommitted) target = Math.max(target, t + 1);
    return target;
  }
}

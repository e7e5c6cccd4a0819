/**
 * The evidence spool (docs/evidence-and-privacy.md "Batches"): at a low rate a writer's invocation holds about one
 * record, and one object per invocation is one object per record. A writer that holds few records therefore puts each
 * record's exact bytes in the table (the spool) instead, and the sweeper rolls each closed time-slice of the spool into
 * ONE object (sweeper/roll-up-evidence.ts). Pure: where a record lands, and when its slice is closed.
 *
 * Where a record lands is known when it is written, so the SENT write and the evidence index name the object before it
 * exists: the slice of the writer's invocation start (a minute) and the record's retention in days (the object is
 * locked as long as its records are kept, so records of two retentions never share an object) — every writer's
 * records of that minute and retention, sends and reports alike, in ONE object. The name is a batch name
 * (evidence-batch.ts), written by the sweeper: `batches/<day>/<hhmm>00-sweeper-spooldays<days>`. In the table a
 * record's item is in one of SPOOL_SHARDS partitions by its digest, so a busy minute's writes spread. Records that
 * reach the spool after their slice was rolled (a rebuild of a dead invocation's batch held back for a while) land in
 * an object of their own beside it, `…-sweeper-spooldays<days>late<hash>`, found by listing the slice's prefix.
 */
import { createHash } from 'node:crypto';
import type { EvidenceRecord } from './evidence.ts';
import { batchName } from './evidence-batch.ts';

/** The length of a slice. */
export const SPOOL_SLICE_MS = 60_000;
/** Partitions of the spool: one slice's records spread over them by their digest (not part of the object's name). */
export const SPOOL_SHARDS = 8;
/**
 * A writer spools only when its invocation is surely over by this long after its slice's start (its deadline is
 * known when it starts); else it writes its batch itself. The slice is rolled up only after SPOOL_CLOSED_AFTER_MS.
 */
export const SPOOL_WRITE_BY_MS = 150_000;
/** A slice is closed, and rolled, this long after its start: its writers' last puts had 30 s to land. */
export const SPOOL_CLOSED_AFTER_MS = 180_000;
/**
 * A spool item expires (the table's TTL: a delete nobody pays for) this long after its slice's start. The roll-up never
 * deletes an item: it records how far it has rolled (the spool's cursor) and reads on from there. Long enough for a
 * sweeper down over a long weekend to roll its backlog when it is back: EvidenceSpoolOldestAge pages at 10 minutes.
 */
export const SPOOL_KEEP_DAYS = 8;
/**
 * A writer handed at least this many records writes its batch as an object of its own (dense enough: 25 records make
 * at most 0.04 objects a notification); fewer go to the spool (docs/measurements.md "Evidence at a low rate").
 */
export const SPOOL_BELOW_RECORDS = 25;

const DAY_MS = 86_400_000;

export const sliceStartOf = (atMs: number) => Math.floor(atMs / SPOOL_SLICE_MS) * SPOOL_SLICE_MS;

/** A spool partition's key in the table (stores/evidence-spool.ts); its writers may put items under these alone. */
export const spoolPartitionKey = (shard: number) => `EVIDENCE_SPOOL#${shard}`;
/** Every partition's key: not the roll-up's cursor (`EVIDENCE_SPOOL#ROLLED`), which only the sweeper writes. */
export const SPOOL_PARTITION_KEYS: readonly string[] = Array.from({ length: SPOOL_SHARDS }, (_, s) =>
  spoolPartitionKey(s),
);

/** The spool partition of a record, by its digest (hex). */
export const spoolShardOf = (sha256: string) => Number.parseInt(sha256.slice(0, 8), 16) % SPOOL_SHARDS;

/** Whole days a record is kept: its retention class. */
export const retentionDaysOf = (
  r: Pick<EvidenceRecord, 'retainUntil'> & { readonly acceptedAt?: string; readonly at?: string },
) => Math.round((Date.parse(r.retainUntil) - Date.parse(r.acceptedAt ?? r.at ?? r.retainUntil)) / DAY_MS);

/** The batch a spooled record lands in: its invocation's slice, its retention class. */
export function sliceBatchName(invocationStartMs: number, days: number): string {
  return batchName('sweeper', sliceStartOf(invocationStartMs), `spooldays${days}`);
}

const SLICE = /^batches\/(\d{4}-\d{2}-\d{2})\/(\d{2})(\d{2})00-sweeper-spooldays(\d+)$/;

/** A slice batch's start and retention class; undefined for any other batch (a late object's too). */
export function parseSliceBatch(name: string): { startMs: number; days: number } | undefined {
  const m = SLICE.exec(name);
  if (m === null) return undefined;
  const [, day, hh, mm, days] = m as unknown as [string, string, string, string, string];
  return { startMs: Date.parse(`${day}T${hh}:${mm}:00.000Z`), days: Number(days) };
}

/** Whether a batch a notification names is a slice an invocation started at `invocationStartMs` spooled to. */
export const isSliceOfInvocation = (slice: string, invocationStartMs: number) =>
  parseSliceBatch(slice)?.startMs === sliceStartOf(invocationStartMs);

/** Whether a writer whose invocation ends by `deadlineMs` may spool records of a slice started at `startMs`. */
export const maySpool = (invocationStartMs: number, deadlineMs: number) =>
  deadlineMs <= sliceStartOf(invocationStartMs) + SPOOL_WRITE_BY_MS;

/** A slice is closed (no writer may still add to it) at `nowMs`. */
export const sliceClosed = (startMs: number, nowMs: number) => nowMs >= startMs + SPOOL_CLOSED_AFTER_MS;

/**
 * The object for records that reached the spool after their slice's object was written: named by their digests. The
 * roll-up and the rebuild name one record's object by its own digest, so two sweepers writing it write one object.
 */
export function lateBatchName(slice: string, digests: readonly string[]): string {
  const hash = createHash('sha256')
    .update([...digests].sort().join('\n'))
    .digest('hex')
    .slice(0, 16);
  return `${slice}late${hash}`;
}

/** The prefix every object of a slice's records is under (the slice's own, and its late ones). */
export const slicePrefix = (slice: string) => slice;

const BATCH = /^batches\/(\d{4}-\d{2}-\d{2})\/(\d{2})(\d{2})(\d{2})-[a-z]+-([0-9a-z]{8,40})$/;

/** The start (to the second) and the id of the invocation a batch name was made for (batchName); undefined if none. */
export function invocationOfBatch(name: string): { startMs: number; id: string } | undefined {
  const m = BATCH.exec(name);
  if (m === null) return undefined;
  const [, day, hh, mm, ss, id] = m as unknown as [string, string, string, string, string, string];
  return { startMs: Date.parse(`${day}T${hh}:${mm}:${ss}.000Z`), id };
}

/** Whether a notification's batch is a slice the invocation of `batch` spooled its records to. */
export function isSliceOfBatch(slice: string, batch: string): boolean {
  const inv = invocationOfBatch(batch);
  return inv !== undefined && isSliceOfInvocation(slice, inv.startMs);
}

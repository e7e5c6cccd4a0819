/**
 * What the evidence spool costs at a rate (functions/domain/evidence-spool.ts): an invocation of fewer than
 * SPOOL_BELOW_RECORDS records puts each record's compressed bytes in the spool's own table (one put, billed on the
 * item's size; no delete: the item expires by TTL, which is not billed), and the sweeper rolls each minute's records
 * of one retention into ONE object — written only for a minute that has any — and moves its cursor (one small put).
 * The spool's table is regional and outside AWS Backup (lib/evidence-spool-table.ts): no replica writes, no backup;
 * its items are stored, with point-in-time recovery, until their TTL takes them. What it reads: the cursor, a Query
 * per partition and run, the items' bytes once. Pure.
 */
import { SPOOL_BELOW_RECORDS, SPOOL_KEEP_DAYS, SPOOL_SHARDS } from '../../functions/domain/evidence-spool.ts';

export const SPOOL_ASSUMPTIONS = {
  /**
   * A spool item's key and attributes besides the record's compressed bytes (stores/evidence-spool.ts spoolItem): its
   * keys, `expiresAt`, and the dictionary's id (`dict`, 12 bytes).
   */
  itemOverheadBytes: 112,
  /** DynamoDB's own overhead per stored item (storage only, not billed on writes). */
  storedItemOverheadBytes: 100,
  /** TTL deletes an expired item "typically within a few days": taken as 2 days past SPOOL_KEEP_DAYS. */
  ttlLagDays: 2,
  /** Retention classes: one today (a uniform retention), so one object per minute with records. */
  retentionClasses: 1,
  sweeperRunsPerMinute: 1,
  /**
   * Read units of one run besides the items: the cursor read twice (the roll-up, the age metric; strongly consistent,
   * 1 each), a strongly consistent Query per partition (1 each at least), the age metric's first-item Query per
   * partition (0.5 each) — for the spool's own table and again for the main table's earlier spool it drains.
   */
  runReadUnits: 2 * (2 + SPOOL_SHARDS + SPOOL_SHARDS * 0.5),
} as const;

export interface SpoolWriter {
  readonly recordsPerInvocation: number;
  readonly recordsPerNotification: number;
  /**
   * This writer's own measured item (a report's is far smaller than a send's); absent, the inputs' `item`. Each
   * writer's records are billed on their own items: a report is not priced as a send.
   */
  readonly item?: { readonly bytes: number; readonly wru: number };
}

export interface SpoolInputs {
  readonly ratePerSec: number;
  /** Records per invocation of each writer at the rate, and its share of the notifications' records. */
  readonly writers: readonly SpoolWriter[];
  /** A record's gzipped bytes alone: what a spool item's record is estimated from when no item was measured. */
  readonly gzippedRecordBytes: number;
  /** Measured: a spooled record's item, its mean bytes and mean write units (full-cost.ts builds the run's items). */
  readonly item?: { readonly bytes: number; readonly wru: number };
  readonly spoolBelow?: number;
}

export interface SpoolCost {
  /** Records per notification that go through the spool. */
  readonly spooledRecords: number;
  /** Invocations per notification that spool (their own object is not written). */
  readonly spoolingInvocations: number;
  /** Objects per notification the roll-up writes: one per minute (and retention class) that has spooled records. */
  readonly sliceObjects: number;
  /** Write units per notification: each spooled record's put (no delete), and the cursor's put per rolled minute. */
  readonly wru: number;
  /** Replicated write units per notification: none, the spool's table is regional (a global table would double wru). */
  readonly replicaWru: number;
  /** Read units per notification: the roll-up's reads each run (empty or not), and the items read once. */
  readonly rru: number;
  /** GB-months per notification the items are stored (until their TTL takes them), each with point-in-time recovery. */
  readonly storageGbMonths: number;
  /** A spooled record's item, the mean over the spooled records of every writer: bytes and write units. */
  readonly itemBytes: number;
  readonly itemWru: number;
}

const KB = 1024;
const GB = 1024 ** 3;

/** The bytes DynamoDB bills an item on: each attribute's name and value (a number: about 1 byte per 2 digits, +1). */
export function dynamoItemBytes(item: Readonly<Record<string, unknown>>): number {
  let bytes = 0;
  for (const [name, value] of Object.entries(item)) {
    bytes += Buffer.byteLength(name);
    if (typeof value === 'string') bytes += Buffer.byteLength(value);
    else if (value instanceof Uint8Array) bytes += value.length;
    else if (typeof value === 'number')
      bytes += Math.ceil(String(Math.abs(value)).replace(/^0+|\./g, '').length / 2) + 1;
    else bytes += Buffer.byteLength(JSON.stringify(value) ?? '');
  }
  return bytes;
}

export function spoolCostAt(input: SpoolInputs): SpoolCost {
  const A = SPOOL_ASSUMPTIONS;
  const below = input.spoolBelow ?? SPOOL_BELOW_RECORDS;
  const spooling = input.writers.filter((w) => w.recordsPerInvocation < below);
  const spooledRecords = spooling.reduce((a, w) => a + w.recordsPerNotification, 0);
  const spoolingInvocations = spooling.reduce((a, w) => a + w.recordsPerNotification / w.recordsPerInvocation, 0);
  const perMinute = input.ratePerSec * 60;
  // Poisson invocations: a minute has spooled records with probability 1 − e^(−invocations a minute).
  const minutesWithRecords = spooledRecords === 0 ? 0 : 1 - Math.exp(-perMinute * spoolingInvocations);
  const sliceObjects = (minutesWithRecords * A.retentionClasses) / perMinute;
  const sendBytes = input.item?.bytes ?? input.gzippedRecordBytes + A.itemOverheadBytes;
  const itemOf = (w: SpoolWriter) => {
    const bytes = w.item?.bytes ?? sendBytes;
    return { bytes, wru: w.item?.wru ?? input.item?.wru ?? Math.ceil(bytes / KB) };
  };
  // Per notification: the spooled records' item bytes and write units, each writer's records on their own items.
  const sum = (f: (i: { bytes: number; wru: number }) => number) =>
    spooling.reduce((a, w) => a + w.recordsPerNotification * f(itemOf(w)), 0);
  const spooledBytes = sum((i) => i.bytes);
  const spooledWru = sum((i) => i.wru);
  const itemBytes = spooledRecords === 0 ? sendBytes : spooledBytes / spooledRecords;
  const itemWru = spooledRecords === 0 ? Math.ceil(sendBytes / KB) : spooledWru / spooledRecords;
  // The cursor moves once a run that rolled a minute (one put under 1 KB).
  const wru = spooledWru + (spooledRecords === 0 ? 0 : minutesWithRecords / perMinute);
  const runs = A.sweeperRunsPerMinute / perMinute;
  // Consistent Queries: 1 unit per 4 KB read.
  const rru = runs * A.runReadUnits + spooledBytes / (4 * KB);
  const storageGbMonths =
    ((spooledBytes + spooledRecords * A.storedItemOverheadBytes) * ((SPOOL_KEEP_DAYS + A.ttlLagDays) / 30.44)) / GB;
  return {
    spooledRecords,
    spoolingInvocations,
    sliceObjects,
    wru,
    replicaWru: 0,
    rru,
    storageGbMonths,
    itemBytes,
    itemWru,
  };
}

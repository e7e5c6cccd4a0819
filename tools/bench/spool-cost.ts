/**
 * What the evidence spool costs at a rate (functions/domain/evidence-spool.ts): an invocation of fewer than
 * SPOOL_BELOW_RECORDS records puts each record's gzipped bytes in the table (a put, later a delete: both billed on the
 * item's size), and the sweeper rolls each minute's records of one retention into ONE object — written only for a
 * minute that has any. What it reads: a Query per spool partition and run, and the items' bytes once. Pure.
 */
import { SPOOL_BELOW_RECORDS, SPOOL_SHARDS } from '../../functions/domain/evidence-spool.ts';

export const SPOOL_ASSUMPTIONS = {
  /** A spool item's key and attributes besides the record's gzipped bytes. */
  itemOverheadBytes: 250,
  /** Retention classes: one today (a uniform retention), so one object per minute with records. */
  retentionClasses: 1,
  sweeperRunsPerMinute: 1,
} as const;

export interface SpoolInputs {
  readonly ratePerSec: number;
  /** Records per invocation of each writer at the rate, and its share of the notifications' records. */
  readonly writers: readonly { readonly recordsPerInvocation: number; readonly recordsPerNotification: number }[];
  /** A record's gzipped bytes alone (what a spool item holds). */
  readonly gzippedRecordBytes: number;
  readonly spoolBelow?: number;
}

export interface SpoolCost {
  /** Records per notification that go through the spool. */
  readonly spooledRecords: number;
  /** Invocations per notification that spool (their own object is not written). */
  readonly spoolingInvocations: number;
  /** Objects per notification the roll-up writes: one per minute (and retention class) that has spooled records. */
  readonly sliceObjects: number;
  /** Write units per notification: each spooled record's put and its delete. */
  readonly wru: number;
  /** Read units per notification: the roll-up's Queries (one per partition and run, empty or not) and the items read. */
  readonly rru: number;
}

const KB = 1024;

export function spoolCostAt(input: SpoolInputs): SpoolCost {
  const below = input.spoolBelow ?? SPOOL_BELOW_RECORDS;
  const spooling = input.writers.filter((w) => w.recordsPerInvocation < below);
  const spooledRecords = spooling.reduce((a, w) => a + w.recordsPerNotification, 0);
  const spoolingInvocations = spooling.reduce((a, w) => a + w.recordsPerNotification / w.recordsPerInvocation, 0);
  const perMinute = input.ratePerSec * 60;
  // Poisson invocations: a minute has spooled records with probability 1 − e^(−invocations a minute).
  const minutesWithRecords = spooledRecords === 0 ? 0 : 1 - Math.exp(-perMinute * spoolingInvocations);
  const sliceObjects = (minutesWithRecords * SPOOL_ASSUMPTIONS.retentionClasses) / perMinute;
  const itemBytes = input.gzippedRecordBytes + SPOOL_ASSUMPTIONS.itemOverheadBytes;
  const wru = spooledRecords * 2 * Math.ceil(itemBytes / KB);
  // Consistent Queries: 1 unit per 4 KB read, at least one per Query.
  const queries = (SPOOL_SHARDS * SPOOL_ASSUMPTIONS.sweeperRunsPerMinute) / perMinute;
  const rru = queries + (spooledRecords * itemBytes) / (4 * KB);
  return { spooledRecords, spoolingInvocations, sliceObjects, wru, rru };
}

/**
 * Records MSK Replicator copied from the other region's cluster (docs/regions.md "Events read again"). With identical
 * topic names the Replicator marks every record it writes with the header `__mskmr`, naming its source; a record
 * without it was produced in this region's cluster. In a stage with two regions there is one other cluster, so the
 * header's presence is all the rule reads (its value is only logged and kept: AWS documents no more of it).
 *
 * The rule: a region takes a replicated record only while it is ACTIVE with the other region as its predecessor — the
 * region whose cluster the record comes from, whose records this one inherited. Then, whatever the record's
 * `occurredAt` (a producer may have written to the old cluster after the cut, and the old region may have taken it):
 * - predecessor not reconciled (a failover): **held**, as an event read again is, for `ops reconcile` to decide;
 * - predecessor reconciled: **looked up** in the old region, which must still say FENCED; found there, a duplicate,
 *   absent, new; no answer, held; ACTIVE again (promoted since), not taken. Not bounded by `lookupUntil`: a late
 *   replicated record is rare, and the look-up is the one answer that is right both for a producer still writing to
 *   the fenced cluster and for a predecessor promoted again since.
 * Otherwise — no predecessor, as for the old region healed after a failover with its fence still ACTIVE — it is not
 * taken: the region active in the source cluster takes it there, and this region must never send what that region
 * sends. Pure: the ingest's store reads the fence and acts.
 */
import type { FenceControl } from './fence.ts';

/** MSK Replicator's header on every record it copied (identical topic names). */
export const REPLICATED_HEADER = '__mskmr';

/** Where a record came from, when that changes how it is taken: a copy from the other region's cluster. */
export interface RecordOrigin {
  /** Its `__mskmr` header, as text. */
  readonly replicatedFrom: string;
}

/** What ingest does with a replicated record: hold it, look it up in the old region, or not take it at all. */
export type ReplicatedRule = 'hold' | 'lookup' | 'notTaken';

export function replicatedRecordRule(control: FenceControl | undefined, region: string): ReplicatedRule {
  const predecessor = control?.predecessor;
  if (control?.state !== 'ACTIVE' || predecessor === undefined || predecessor.region === region) return 'notTaken';
  return predecessor.reconciledAt === undefined ? 'hold' : 'lookup';
}

/** A replicated record this region does not take: its quarantine item says why (ingest-record.ts). */
export class ReplicatedNotTaken extends Error {
  override name = 'ReplicatedNotTaken';
}

/** Why a replicated record was not taken, as its quarantine item says it (no value of the record in it). */
export function notTakenDetail(control: FenceControl | undefined, region: string, source: string): string {
  const why =
    control?.predecessor === undefined
      ? 'this region has no predecessor'
      : `this region's predecessor is ${control.predecessor.region}`;
  return `replicated from another cluster (${REPLICATED_HEADER} ${source.slice(0, 120)}) while ${region} is not its region's active successor (${why}): the region active there takes it`;
}

/**
 * Replaying the batches the MSK mapping parked in S3 after its retries (docs/operations.md "The MSK mapping"): each
 * parked invocation's event fed to the ingest function again, oldest first. The inbox makes records written before
 * the failure duplicates, so a replay sends nothing twice.
 *
 * Input: since when. Output: each batch replayed (its key, when it was parked, its records).
 * Steps: list the parked objects since then and read each one's event (the preview: what would be replayed);
 * audited; invoke ingest with each.
 */
import type { MSKEvent } from 'aws-lambda';
import { type OperatorAction, ok, refused } from './action.ts';

export interface ParkedBatch {
  readonly key: string;
  /** When the mapping parked it (ISO 8601). */
  readonly lastModified: string;
  readonly records: number;
}

interface Read {
  readonly available: boolean;
  readonly batches: readonly (ParkedBatch & { readonly event: MSKEvent })[];
}

export interface ReplayBatchesRequest {
  /** The batches parked at or after this instant (ISO 8601); all without it. */
  readonly sinceIso?: string;
}

export const replayFailedBatches: OperatorAction<ReplayBatchesRequest, Read, Read['batches'], ParkedBatch[]> = {
  audit: 'REPLAY_BATCHES',
  target: (request) => `parked batches since ${request.sinceIso ?? 'ever'}`,
  kind: () => 'REPLAY',

  async read(ports, request) {
    if (ports.parked === undefined) return { available: false, batches: [] };
    const since = request.sinceIso === undefined ? undefined : new Date(request.sinceIso);
    const batches = [];
    for (const o of await ports.parked.list(since)) {
      const event = await ports.parked.event(o.key);
      batches.push({
        key: o.key,
        lastModified: o.lastModified.toISOString(),
        event,
        records: Object.values(event.records).flat().length,
      });
    }
    return { available: true, batches };
  },

  decide: (read) =>
    read.available
      ? ok(read.batches)
      : refused('INVALID', 'the parked batches are in the S3 bucket of a deployed stack: the local run parks nothing'),

  shown: (batches) => ({ batches: batches.map(({ event: _event, ...batch }) => batch) }),
  // A parked object is written once under its own key: its key and size are what an approval compares.
  fingerprint: (batches) => batches.map((b) => [b.key, b.records]),

  async perform(ports, batches) {
    for (const b of batches) await ports.invokeIngest(b.event);
    return ok(batches.map(({ event: _event, ...batch }) => batch));
  },

  done: (batches) => ({ batches: batches.map((b) => b.key) }),
};

/**
 * The later pass that closes evidence gaps (stores/evidence-gaps.ts): each object a writer could not store at once —
 * a batch of records, or, from before batches, one record or a customer's pointer — is written now, byte for byte as
 * its writer built it, a batch's sends are indexed, then its gap is closed. An object already in the store (the first
 * write landed after all, its reply lost) answers "already there" and closes the gap the same way. A store still
 * failing leaves the gap open for the next run; `open` is what the EvidenceGapsOpen alarm reads — a gap whose parts
 * are not all there (its writer failed between two) among them, until it is removed as a leftover.
 */
import { sendAttemptOf } from '../domain/evidence.ts';
import { batchNameOfKey, type IndexedSend, readBatch } from '../domain/evidence-batch.ts';
import { type BatchOutlets, indexBatch } from '../stores/evidence-batch-writer.ts';
import type { EvidenceGap, EvidenceGaps } from '../stores/evidence-gaps.ts';
import type { EvidenceStore } from '../stores/evidence-store.ts';

export interface FillDeps {
  readonly gaps: EvidenceGaps;
  readonly store: EvidenceStore;
  /** The customers' index a filled batch's sends are added to (absent: no index, as before batches). */
  readonly index?: BatchOutlets['index'];
  readonly now: () => number;
  /** Stop starting writes after this (epoch ms). */
  readonly deadline: number;
  readonly limit: number;
}

export interface FillResult {
  readonly filled: number;
  /** Gaps seen and still open after this pass (a failed write, or no time left). */
  readonly open: number;
  readonly errors: string[];
  /** Gaps whose parts were never all written, removed once their writer was surely done (leftoverParts). */
  readonly removed: string[];
  /**
   * Records of a filled batch whose bytes do not match their hash (kept as its writer gave them): written and closed
   * all the same — writing again changes nothing — with the rest of the batch indexed; said, never silent.
   */
  readonly damaged: string[];
}

export async function fillEvidenceGaps(deps: FillDeps): Promise<FillResult> {
  const gaps = await deps.gaps.list(deps.limit);
  let filled = 0;
  const errors: string[] = [];
  const removed: string[] = [];
  const damaged: string[] = [];
  for (const gap of gaps) {
    if (deps.now() >= deps.deadline) break;
    if (gap.incomplete !== undefined) {
      const { parts, of } = gap.incomplete;
      if (await leftoverParts(gap, deps)) removed.push(`${gap.key}: ${parts} of ${of} parts`);
      else errors.push(`${gap.key}: IncompleteGap (${parts} of ${of} parts)`);
      continue;
    }
    try {
      await deps.store.put(gap.key, gap.body, gap.retainUntil);
      const name = batchNameOfKey(gap.key);
      if (name !== undefined) {
        const { sends, bad } = sendsIn(gap.body);
        damaged.push(...bad.map((why) => `${gap.key}: ${why}`));
        const failed = await indexBatch({ index: deps.index }, name, sends);
        if (failed !== undefined) throw Object.assign(new Error(`index: ${failed}`), { name: failed });
      }
      await deps.gaps.close(gap.key);
      filled++;
    } catch (error) {
      errors.push(`${gap.key}: ${(error as Error)?.name ?? 'Error'}`);
    }
  }
  return { filled, open: gaps.length - filled - removed.length, errors, removed, damaged };
}

/**
 * A gap whose later parts were never written has no bytes to write, and is the only copy of nothing: its writer took
 * the failed part as a failed gap — it counted the evidence lost (EvidenceLost), or kept its intent for the sweeper's
 * rebuild (which writes the batch, or a whole new gap under the same key), or failed its feedback for a retry under a
 * new name. Once its writer is surely done (INCOMPLETE_GRACE_MS) its parts are removed (true); until then it is open.
 */
async function leftoverParts(gap: EvidenceGap, deps: FillDeps): Promise<boolean> {
  if (deps.now() - Date.parse(gap.since) < INCOMPLETE_GRACE_MS) return false;
  try {
    // That write's parts only: a whole gap a rebuild wrote later under the same key is the batch's only copy.
    await deps.gaps.removeTorn(gap);
    return true;
  } catch {
    return false;
  }
}

/**
 * A writer writes a gap's parts one after the other within its invocation, and the rebuild of a dispatch batch comes
 * within minutes (its intent's due time): a part missing after this never comes.
 */
export const INCOMPLETE_GRACE_MS = 15 * 60_000;

/**
 * The sends a batch object holds, as the index needs them — each record checked on its own, so one damaged record
 * never keeps its neighbours out of the index — and the records that do not match their hash.
 */
function sendsIn(object: Uint8Array): { sends: IndexedSend[]; bad: string[] } {
  const { records, bad } = readBatch(object);
  return {
    sends: records.flatMap(({ entry, bytes }) =>
      entry.kind === 'SEND' && entry.userId !== undefined
        ? [
            {
              userId: entry.userId,
              acceptedAt: entry.at,
              notificationId: entry.notificationId,
              sha256: entry.sha256,
              // The batch's header does not list it: from the record (one the parser refuses: none, the batch rule).
              attempt: sendAttemptOf(bytes),
            },
          ]
        : [],
    ),
    bad: bad.map((b) => `record ${b.record} (${b.entry.notificationId}): ${b.reason}`),
  };
}

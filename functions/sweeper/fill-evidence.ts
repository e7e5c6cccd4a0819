/**
 * The later pass that closes evidence gaps (stores/evidence-gaps.ts): each object a writer could not store at once —
 * a batch of records, or, from before batches, one record or a customer's pointer — is written now, byte for byte as
 * its writer built it, a batch's sends are indexed, then its gap is closed. An object already in the store (the first
 * write landed after all, its reply lost) answers "already there" and closes the gap the same way. A store still
 * failing leaves the gap open for the next run; `open` is what the EvidenceGapsOpen alarm reads.
 */
import { batchNameOfKey, decodeBatch, type IndexedSend } from '../domain/evidence-batch.ts';
import { type BatchOutlets, indexBatch } from '../stores/evidence-batch-writer.ts';
import type { EvidenceGaps } from '../stores/evidence-gaps.ts';
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
}

export async function fillEvidenceGaps(deps: FillDeps): Promise<FillResult> {
  const gaps = await deps.gaps.list(deps.limit);
  let filled = 0;
  const errors: string[] = [];
  for (const gap of gaps) {
    if (deps.now() >= deps.deadline) break;
    try {
      await deps.store.put(gap.key, gap.body, gap.retainUntil);
      const name = batchNameOfKey(gap.key);
      if (name !== undefined) {
        const failed = await indexBatch({ index: deps.index }, name, sendsIn(gap.body));
        if (failed !== undefined) throw Object.assign(new Error(`index: ${failed}`), { name: failed });
      }
      await deps.gaps.close(gap.key);
      filled++;
    } catch (error) {
      errors.push(`${gap.key}: ${(error as Error)?.name ?? 'Error'}`);
    }
  }
  return { filled, open: gaps.length - filled, errors };
}

/** The sends a batch object lists (its header), as the index needs them. */
function sendsIn(object: Uint8Array): IndexedSend[] {
  return decodeBatch(object).records.flatMap(({ entry }) =>
    entry.kind === 'SEND' && entry.userId !== undefined
      ? [{ userId: entry.userId, acceptedAt: entry.at, notificationId: entry.notificationId }]
      : [],
  );
}

/**
 * Writing one evidence batch (domain/evidence-batch.ts), the same way for every writer — dispatch at the end of an
 * invocation, feedback at the end of its batch, the sweeper for a batch it recovered or a gap it fills: the object
 * once (If-None-Match: an object already there answers so and counts as written), locked until its longest-kept
 * record's date; then each customer's refs to its sends in the evidence index. A store that fails or hangs (given at
 * most `timeoutMs`) leaves the batch's exact bytes in the table as a gap the sweeper writes later; only when the
 * table refuses the gap too is the batch lost — counted and alarmed by the caller, logged with ids only.
 */
import pLimit from 'p-limit';
import type { EvidenceRecord } from '../domain/evidence.ts';
import {
  type BatchWriter,
  batchObjectKey,
  batchRetainUntil,
  encodeBatch,
  type IndexedSend,
  indexEntriesOf,
  sendsOf,
} from '../domain/evidence-batch.ts';
import type { EvidenceGaps } from './evidence-gaps.ts';
import { type EvidenceIndex, indexExpiresAt } from './evidence-index.ts';
import type { EvidenceStore } from './evidence-store.ts';

export interface BatchOutlets {
  readonly store: EvidenceStore;
  readonly gaps: EvidenceGaps;
  /** The customers' index of sends; absent for a batch of reports (found under their send batch's prefix). */
  readonly index?: { readonly index: EvidenceIndex; readonly retentionDays: number };
}

export type EvidenceOutcome = 'written' | 'gap' | 'lost';

export interface BatchWritten {
  readonly outcome: EvidenceOutcome;
  /** Written now, or found already there (a batch written before: the first copy stands). */
  readonly stored?: 'written' | 'alreadyThere';
  /** The batch's object key. */
  readonly key: string;
  readonly records: number;
  /** Every customer's refs are in the index (true without an index). A batch left unindexed is the sweeper's. */
  readonly indexed: boolean;
  /**
   * Stored but not indexed, and asked to (`unindexedAsGap`: no intent will finish it): whether the batch was kept as a
   * gap too, for the filler to index once it finds the object already there.
   */
  readonly indexGap?: 'added' | 'refused';
  readonly error?: string;
}

export async function writeBatch(
  outlets: BatchOutlets,
  batch: {
    readonly name: string;
    readonly writer: BatchWriter;
    readonly records: readonly { readonly record: EvidenceRecord; readonly bytes: Buffer }[];
  },
  options: {
    readonly timeoutMs: number;
    readonly now: number;
    /**
     * A batch no intent covers (a record written alone after its intent was refused): when its index write fails,
     * keep it as a gap as well, so the gap filler indexes it — else nothing would, and after its notification's TTL
     * no customer or event query would find it.
     */
    readonly unindexedAsGap?: boolean;
  },
): Promise<BatchWritten> {
  const key = batchObjectKey(batch.name);
  const count = batch.records.length;
  if (count === 0) return { outcome: 'written', key, records: 0, indexed: true };
  const body = encodeBatch(batch.name, batch.writer, batch.records);
  const retainUntil = batchRetainUntil(batch.records);
  let stored: 'written' | 'alreadyThere';
  try {
    if (options.timeoutMs <= 0) throw Object.assign(new Error('no time left'), { name: 'NoTimeLeft' });
    stored = await outlets.store.put(key, body, retainUntil, AbortSignal.timeout(options.timeoutMs));
  } catch (e) {
    const error = (e as Error)?.name ?? 'Error';
    try {
      await outlets.gaps.add({ key, body, retainUntil, since: new Date(options.now).toISOString() });
      // The gap's filler indexes the batch once it writes it (functions/sweeper/fill-evidence.ts).
      return { outcome: 'gap', key, records: count, indexed: true, error };
    } catch (g) {
      return { outcome: 'lost', key, records: count, indexed: false, error: `${error}; gap: ${(g as Error)?.name}` };
    }
  }
  const indexed = await indexBatch(outlets, batch.name, sendsOf(batch.records));
  if (indexed === undefined) return { outcome: 'written', stored, key, records: count, indexed: true };
  const unindexed = {
    outcome: 'written',
    stored,
    key,
    records: count,
    indexed: false,
    error: `index: ${indexed}`,
  } as const;
  if (options.unindexedAsGap !== true) return unindexed;
  try {
    await outlets.gaps.add({ key, body, retainUntil, since: new Date(options.now).toISOString() });
    return { ...unindexed, indexGap: 'added' };
  } catch {
    return { ...unindexed, indexGap: 'refused' };
  }
}

/**
 * The batch's sends in the index, by customer and by event (stores/evidence-index.ts): one small item each; the name
 * of the first error, or undefined when all were added.
 */
export async function indexBatch(
  outlets: Pick<BatchOutlets, 'index'>,
  name: string,
  sends: readonly IndexedSend[],
): Promise<string | undefined> {
  if (outlets.index === undefined || sends.length === 0) return undefined;
  const { index, retentionDays } = outlets.index;
  // One add per customer and day of the batch, a few at a time.
  const limit = pLimit(8);
  const results = await Promise.allSettled(
    indexEntriesOf(name, sends).map((e) => limit(() => index.add(e, indexExpiresAt(e.day, retentionDays)))),
  );
  const failed = results.find((r) => r.status === 'rejected');
  return failed === undefined ? undefined : ((failed.reason as Error)?.name ?? 'Error');
}

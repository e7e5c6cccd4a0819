/**
 * Writing one evidence batch (domain/evidence-batch.ts), the same way for every writer — dispatch at the end of an
 * invocation, feedback at the end of its batch, the sweeper for a batch it recovered or a gap it fills: the object
 * once (If-None-Match: an object already there answers so and counts as written), locked until its longest-kept
 * record's date; then each customer's refs to its sends in the evidence index: put whole in BatchWriteItem calls when
 * the object was written now (it holds exactly these sends), added to what is there when an earlier copy stands. A store that fails or hangs (given at
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
  readonly index?: { readonly index: Pick<EvidenceIndex, 'add' | 'putBatch'>; readonly retentionDays: number };
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
  /** Index items DynamoDB left unprocessed after the retries (the batch is then not indexed: the sweeper's). */
  readonly unindexedItems?: number;
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
  const sends = sendsOf(batch.records);
  const index =
    stored === 'written' ? await putIndex(outlets, batch.name, sends) : await addToIndex(outlets, batch.name, sends);
  const written = { outcome: 'written', stored, key, records: count, ...index } as const;
  if (index.indexed || options.unindexedAsGap !== true) return written;
  try {
    await outlets.gaps.add({ key, body, retainUntil, since: new Date(options.now).toISOString() });
    return { ...written, indexGap: 'added' };
  } catch {
    return { ...written, indexGap: 'refused' };
  }
}

/** A batch already in the store (a retry, a recovery): its sends added to the index items, never put over them. */
async function addToIndex(
  outlets: Pick<BatchOutlets, 'index'>,
  name: string,
  sends: readonly IndexedSend[],
): Promise<Pick<BatchWritten, 'indexed' | 'error'>> {
  const indexed = await indexBatch(outlets, name, sends);
  return indexed === undefined ? { indexed: true } : { indexed: false, error: `index: ${indexed}` };
}

/**
 * A batch written now, indexed whole (stores/evidence-index.ts putBatch): BatchWriteItem calls, their unprocessed items
 * retried; what still stays unprocessed is counted, and the batch left to the sweeper as one not indexed.
 */
export async function putIndex(
  outlets: Pick<BatchOutlets, 'index'>,
  name: string,
  sends: readonly IndexedSend[],
): Promise<Pick<BatchWritten, 'indexed' | 'unindexedItems' | 'error'>> {
  return putIndexOf(outlets, [{ name, sends }]);
}

/**
 * Batches written now, indexed together (a spool writer's slices, one a retention class): the sends of one customer,
 * day and event in one item and one write, whichever of them holds each.
 */
export async function putIndexOf(
  outlets: Pick<BatchOutlets, 'index'>,
  batches: readonly { readonly name: string; readonly sends: readonly IndexedSend[] }[],
): Promise<Pick<BatchWritten, 'indexed' | 'unindexedItems' | 'error'>> {
  if (outlets.index === undefined || batches.every((b) => b.sends.length === 0)) return { indexed: true };
  const { index, retentionDays } = outlets.index;
  const entries = batches.flatMap(({ name, sends }) =>
    indexEntriesOf(name, sends).map((entry) => ({ entry, expiresAt: indexExpiresAt(entry.day, retentionDays) })),
  );
  try {
    const unprocessed = await index.putBatch(entries);
    return unprocessed === 0
      ? { indexed: true }
      : { indexed: false, unindexedItems: unprocessed, error: `index: ${unprocessed} items unprocessed` };
  } catch (e) {
    return { indexed: false, error: `index: ${(e as Error)?.name ?? 'Error'}` };
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

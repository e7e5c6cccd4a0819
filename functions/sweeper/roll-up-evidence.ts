/**
 * The roll-up of the evidence spool (domain/evidence-spool.ts): each closed slice's spooled records become ONE object,
 * written once (If-None-Match) and locked until its records' retain-until. No item is deleted (each expires by the
 * table's TTL, free): the spool's cursor says how far the roll-up has gone, and the next run reads from there.
 *
 * Crash-safe and idempotent: the object's key is the slice's own (its start and retention class), and the cursor moves
 * only after every slice before it is in the store — so a sweeper that died after the PUT and before moving the cursor
 * reads the slice again on its next run, finds the object "already there", and writes only what it lacks: never a
 * second copy, never an item dropped. Records the object does not hold (spooled after their slice was rolled) are
 * written as objects of their own beside it, one per record, named by its digest (`lateBatchName`): two sweepers at
 * once write the same names. The customers' index names the slice (its writer knew where each record lands); each send
 * rolled is checked there, and one its writer did not index (it died, or the index refused it) is indexed now.
 *
 * The cursor is written only over the version this run read: a rebuild that spooled a record meanwhile bumps it
 * (recover-evidence.ts), and then this run's move is refused — the next run reads that slice again and finds it.
 *
 * Bounded per run: at most about `limit` records a partition, whole slices only (a slice's records are spread over
 * the partitions by their digests), and no new slice once the deadline passed.
 */
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { count, logger } from '../commons/powertools.ts';
import { type EvidenceRecord, parseEvidence, retainUntil } from '../domain/evidence.ts';
import { batchObjectKey, batchRetainUntil, encodeBatch, indexEntriesOf, sendsOf } from '../domain/evidence-batch.ts';
import {
  lateBatchName,
  parseSliceBatch,
  SPOOL_CLOSED_AFTER_MS,
  SPOOL_SHARDS,
  SPOOL_SLICE_MS,
  sliceStartOf,
} from '../domain/evidence-spool.ts';
import { type DynamoEvidenceIndex, type EvidenceIndex, indexExpiresAt } from '../stores/evidence-index.ts';
import { digestsStored } from '../stores/evidence-slice-reader.ts';
import {
  type BadSpoolItem,
  type EvidenceSpool,
  isBadSpoolItem,
  type SpoolCursor,
  type SpooledRecord,
  type SpoolKey,
} from '../stores/evidence-spool.ts';
import type { EvidenceStore } from '../stores/evidence-store.ts';

export interface RollUpDeps {
  readonly spool: EvidenceSpool;
  readonly store: EvidenceStore;
  readonly now: () => number;
  /** Start no slice after this (epoch ms). */
  readonly deadline: number;
  /** Records read at most per shard and run (whole slices: one slice may take it past). */
  readonly limit: number;
  /** The PUT's own time limit. */
  readonly timeoutMs: number;
  /**
   * The customers' index, checked for each send a slice rolls (its writer may have died after its SENT write and before
   * its index write: no intent covers a spooled send) and filled where it lacks one. Without it: not checked.
   */
  readonly index?: {
    readonly index: Pick<EvidenceIndex, 'add'> & Pick<DynamoEvidenceIndex, 'lacking'>;
    readonly retentionDays: number;
  };
}

export interface RollUpResult {
  /** Slices rolled into the store and retired from the spool. */
  readonly slices: number;
  /** Records they held. */
  readonly records: number;
  /** Objects written now (a slice found already written is counted in `slices`, not here). */
  readonly objects: number;
  /** Records written as a late object beside their slice's. */
  readonly late: number;
  /** Slices left for the next run (a store or the table refusing, or no time left). */
  readonly open: number;
  readonly errors: string[];
  /**
   * Items set apart, never rolled nor deleted (a body that does not unzip, a dictionary this version does not have,
   * bytes not the key's digest): key and why.
   */
  readonly setAside: string[];
  /** Spools whose cursor or a partition could not be read this run: nothing of them rolled (EvidenceSpoolUnreadable). */
  readonly unreadable: number;
  /** Sends of the slices rolled that the index lacked, indexed now (EvidenceIndexFilled). */
  readonly indexFilled: number;
}

type Spooled = SpooledRecord & { key: SpoolKey; legacy?: true };

/**
 * An error as the roll-up reports it: its name and message, which name the item, the dictionary or the refusal (the
 * spool's and the store's errors carry keys and ids, never a record's bytes), cut to one short line.
 */
const why = (error: unknown): string => {
  const e = error as Error | undefined;
  const message = typeof e?.message === 'string' && e.message !== '' ? `: ${e.message}` : '';
  return `${e?.name ?? 'Error'}${message}`.replace(/\s+/g, ' ').slice(0, 300);
};

export async function rollUpEvidence(deps: RollUpDeps): Promise<RollUpResult> {
  const result = {
    slices: 0,
    records: 0,
    objects: 0,
    late: 0,
    open: 0,
    errors: [] as string[],
    setAside: [] as string[],
    unreadable: 0,
    indexFilled: 0,
  };
  // Slices started before this are closed: their writers are done.
  const bad: BadSpoolItem[] = [];
  let cursor: SpoolCursor;
  try {
    cursor = await deps.spool.cursor();
  } catch (error) {
    return { ...result, open: 1, unreadable: 1, errors: [`spool cursor: ${why(error)}`] };
  }
  const read = await closedSlices(
    deps,
    cursor.rolledBefore,
    deps.now() - SPOOL_CLOSED_AFTER_MS + 1,
    result.errors,
    bad,
  );
  // A bad item not yet set apart holds the cursor at its minute: the next run meets it again.
  let heldAt = Number.POSITIVE_INFINITY;
  for (const item of bad) {
    // Never rolled: copied out of the roll-up's way, the rest of its minute rolls.
    try {
      await deps.spool.setAside(item, deps.now());
      result.setAside.push(`${item.key.pk} ${item.key.sk}: ${item.bad}`);
    } catch (error) {
      heldAt = Math.min(heldAt, Number(item.key.sk.slice(0, 13)));
      result.errors.push(`${item.key.pk} ${item.key.sk} (${item.bad}): ${why(error)}`);
    }
  }
  if (read === undefined) return { ...result, open: 1, unreadable: 1 };
  // The cursor moves to the first slice left open (every slice before it is in the store), else past all read.
  let rolledBefore = Math.min(read.wholeBefore, heldAt);
  for (const [slice, held] of read.slices) {
    const startMs = parseSliceBatch(slice)?.startMs ?? 0;
    if (deps.now() >= deps.deadline) {
      result.open++;
      rolledBefore = Math.min(rolledBefore, startMs);
      continue;
    }
    try {
      const { written, late } = await rollSlice(slice, held, deps);
      // Rolled: its sends' index checked and filled. A check that fails holds the slice open: read again next run.
      result.indexFilled += await fillIndexOf(slice, held, deps);
      // Items of the earlier layout (and the drained main table's) have no TTL: deleted once rolled. The rest expire.
      const legacy = held.filter((r) => r.legacy === true).map((r) => r.key);
      if (legacy.length > 0) await deps.spool.retire(legacy);
      result.slices++;
      result.records += held.length;
      result.objects += written;
      result.late += late;
    } catch (error) {
      result.open++;
      rolledBefore = Math.min(rolledBefore, startMs);
      result.errors.push(`${slice}: ${why(error)}`);
    }
  }
  await moveCursor(deps.spool, cursor, rolledBefore, result.errors);
  return result;
}

/** The cursor to `rolledBefore`; refused when a rebuild spooled meanwhile (the next run reads the slices again). */
async function moveCursor(spool: EvidenceSpool, from: SpoolCursor, rolledBefore: number, errors: string[]) {
  if (rolledBefore <= from.rolledBefore) return;
  try {
    if (!(await spool.advance(from, rolledBefore))) errors.push('spool cursor: moved meanwhile, read again next run');
  } catch (error) {
    errors.push(`spool cursor: ${why(error)}`);
  }
}

/**
 * The closed slices' records from every partition, whole: a partition read up to the limit stops at a slice's end,
 * so a slice is taken only if it starts before the first slice any partition may have left unread. Undefined when a
 * partition could not be read (no slice is whole then).
 */
async function closedSlices(
  deps: RollUpDeps,
  from: number,
  before: number,
  errors: string[],
  bad: BadSpoolItem[],
): Promise<{ slices: Map<string, Spooled[]>; wholeBefore: number } | undefined> {
  const records: Spooled[] = [];
  let wholeBefore = before;
  for (let shard = 0; shard < SPOOL_SHARDS; shard++) {
    try {
      const items = await deps.spool.closed(shard, from, before, deps.limit);
      const read = items.filter((r) => !isBadSpoolItem(r)) as Spooled[];
      bad.push(...(items.filter(isBadSpoolItem) as BadSpoolItem[]));
      records.push(...read);
      const last = read.at(-1);
      // Read up to the limit: slices from the last one read on may go on past it in this partition.
      if (items.length >= deps.limit && last !== undefined) {
        wholeBefore = Math.min(wholeBefore, sliceStartOf(parseSliceBatch(last.slice)?.startMs ?? 0) + SPOOL_SLICE_MS);
      }
    } catch (error) {
      errors.push(`spool shard ${shard}: ${why(error)}`);
      return undefined;
    }
  }
  const whole = records.filter((r) => (parseSliceBatch(r.slice)?.startMs ?? 0) < wholeBefore);
  return { slices: bySlice(whole), wholeBefore };
}

function bySlice(records: readonly Spooled[]): Map<string, Spooled[]> {
  const slices = new Map<string, Spooled[]>();
  for (const r of records) slices.set(r.slice, [...(slices.get(r.slice) ?? []), r]);
  return slices;
}

/**
 * The slice's object, or — when one stands already — what it lacks as a late object beside it. A record the strict
 * parser refuses (another evidence version, a field it does not know) is locked byte-exact all the same, as an
 * object of its own beside the slice's (named as a late one, by its digest): it never holds up its minute.
 */
async function rollSlice(
  slice: string,
  held: readonly Spooled[],
  deps: RollUpDeps,
): Promise<{ written: number; late: number }> {
  // Sorted by digest: the same records always make the same object.
  const records = [...held].sort((a, b) => a.sha256.localeCompare(b.sha256)).map((r) => lenient(slice, r));
  const strict = records.filter((r) => r.strict);
  let written = 0;
  for (const odd of records.filter((r) => !r.strict)) {
    // Its own name is its digest's: already there means these very bytes.
    if ((await putOnce(lateBatchName(slice, [odd.sha256]), [odd], deps)) === 'written') written++;
  }
  if (strict.length === 0) return { written, late: 0 };
  if ((await putOnce(slice, strict, deps)) === 'written') return { written: written + 1, late: 0 };
  const missing = await notYetStored(slice, strict, deps.store);
  for (const r of missing) {
    // One object per late record, named by its digest: a second sweeper at once writes the same name, not a copy.
    if ((await putOnce(lateBatchName(slice, [r.sha256]), [r], deps)) === 'written') written++;
  }
  return { written, late: missing.length };
}

type Parsed = Spooled & { readonly record: EvidenceRecord; readonly strict: boolean };

/**
 * A record as the object's header needs it: parsed strictly, else read leniently (its JSON as it is, its retain-until
 * from it when it is a date, else its slice's retention class and a day more: never shorter than it asks).
 */
function lenient(slice: string, r: Spooled): Parsed {
  try {
    return { ...r, record: parseEvidence(r.bytes) as EvidenceRecord, strict: true };
  } catch {
    let json: Record<string, unknown> = {};
    try {
      const value: unknown = JSON.parse(r.bytes.toString('utf8'));
      if (typeof value === 'object' && value !== null && !Array.isArray(value)) json = value as Record<string, unknown>;
    } catch {
      // not JSON: its bytes are locked all the same
    }
    const s = parseSliceBatch(slice);
    const own = typeof json.retainUntil === 'string' ? Date.parse(json.retainUntil) : Number.NaN;
    const until = Number.isNaN(own) ? retainUntil(s?.startMs ?? 0, (s?.days ?? 0) + 1) : new Date(own).toISOString();
    return { ...r, record: { ...json, retainUntil: until } as unknown as EvidenceRecord, strict: false };
  }
}

async function putOnce(
  name: string,
  records: readonly Parsed[],
  deps: RollUpDeps,
): Promise<'written' | 'alreadyThere'> {
  const body = encodeBatch(name, 'sweeper', records);
  return deps.store.put(batchObjectKey(name), body, batchRetainUntil(records), AbortSignal.timeout(deps.timeoutMs));
}

/** The records no object of the slice holds yet (the slice's own and its late ones, each checked by its digest). */
async function notYetStored<R extends SpooledRecord>(
  slice: string,
  records: readonly R[],
  store: EvidenceStore,
): Promise<R[]> {
  const held = await digestsStored(slice, store);
  return records.filter((r) => !held.has(r.sha256));
}

/**
 * The sends of a rolled slice the customers' index lacks, indexed now under the slice: how many. A writer indexes its
 * spooled sends at its invocation's end, and no intent covers that write — a writer that died after its SENT write,
 * or whose index write the table refused, left its sends found by their notification only; this finds them by their
 * customer and event again, within the slice's closing and a run. Erased or not, as its writer would have.
 */
async function fillIndexOf(slice: string, held: readonly Spooled[], deps: RollUpDeps): Promise<number> {
  if (deps.index === undefined) return 0;
  const { index, retentionDays } = deps.index;
  const sends = sendsOf(
    held.flatMap((r) => {
      try {
        return [{ record: parseEvidence(r.bytes), bytes: r.bytes }];
      } catch {
        return []; // a record the strict parser refuses is locked as it is, and named by no index
      }
    }),
  );
  if (sends.length === 0) return 0;
  const entries = indexEntriesOf(slice, sends).map((entry) => ({
    entry,
    expiresAt: indexExpiresAt(entry.day, retentionDays),
  }));
  const lacking = await index.lacking(entries, deps);
  for (const { entry, expiresAt } of lacking) await index.add(entry, expiresAt);
  return lacking.reduce((n, { entry }) => n + entry.sends.length, 0);
}

/**
 * Each spool rolled in turn (its own table's, then the main table's an earlier version filled: empty once drained, a
 * read of its cursor and its partitions a run), one result.
 */
export async function rollUpSpools(
  spools: readonly EvidenceSpool[],
  deps: (spool: EvidenceSpool) => RollUpDeps,
): Promise<RollUpResult> {
  const results: RollUpResult[] = [];
  for (const spool of spools) results.push(await rollUpEvidence(deps(spool)));
  const sum = (k: 'slices' | 'records' | 'objects' | 'late' | 'open' | 'unreadable' | 'indexFilled') =>
    results.reduce((a, r) => a + r[k], 0);
  return {
    slices: sum('slices'),
    records: sum('records'),
    objects: sum('objects'),
    late: sum('late'),
    open: sum('open'),
    errors: results.flatMap((r) => r.errors),
    setAside: results.flatMap((r) => r.setAside),
    unreadable: sum('unreadable'),
    indexFilled: sum('indexFilled'),
  };
}

/**
 * The run's roll-up in metrics and the log, and how old the oldest spooled slice is (0 when the spool is empty): the
 * EvidenceSpoolOldestAge alarm reads it against the promised landing delay. Every run also counts the spool's reads
 * that failed (EvidenceSpoolUnreadable, 0 when none did): a spool the sweeper cannot read gives no age, and its records
 * would expire unlocked (SPOOL_KEEP_DAYS) with nothing else to page.
 */
export async function reportRolledUp(r: RollUpResult, spools: readonly EvidenceSpool[], nowMs: number): Promise<void> {
  count('EvidenceSlicesRolled', r.slices);
  // Sends whose index write never landed (no intent covers a spooled send's): found by customer again now.
  count('EvidenceIndexFilled', r.indexFilled);
  if (r.indexFilled > 0) logger.warn('evidence index filled for spooled sends it lacked', { sends: r.indexFilled });
  let unreadable = r.unreadable;
  try {
    // The oldest slice not rolled yet: at or after each spool's cursor (the items before it are in the store).
    const starts = await Promise.all(spools.map(async (s) => s.oldestSliceMs((await s.cursor()).rolledBefore)));
    const found = starts.filter((s): s is number => s !== undefined);
    const oldest = found.length === 0 ? undefined : Math.min(...found);
    count(
      'EvidenceSpoolOldestAge',
      oldest === undefined ? 0 : Math.max(0, Math.round((nowMs - oldest) / 1000)),
      MetricUnit.Seconds,
    );
  } catch (error) {
    // No age this run: counted unreadable instead, which pages when it goes on (the age's own alarm cannot).
    unreadable++;
    logger.error('the oldest spooled evidence could not be read', { error: why(error) });
  }
  count('EvidenceSpoolUnreadable', unreadable);
  if (r.late > 0) logger.warn('evidence spooled after its slice was rolled: written beside it', { late: r.late });
  count('EvidenceSpoolSetAside', r.setAside.length);
  if (r.setAside.length > 0) {
    logger.error('evidence spool items set apart, not rolled: each its key and why this version cannot roll it', {
      items: r.setAside.slice(0, 10),
    });
  }
  if (r.errors.length > 0) logger.error('evidence slices still spooled', { errors: r.errors.slice(0, 10) });
}

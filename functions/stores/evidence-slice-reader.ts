/**
 * Reading the sends a spool slice holds (domain/evidence-spool.ts): the slice's object once the sweeper rolled it, a
 * late object beside it for a record spooled after that, and — before the roll-up — the spool itself, so the minutes
 * between a send and its object never show its evidence as missing. A record read from the spool is its exact bytes,
 * checked against the digest the SENT write or the index carried, and said to be not yet in the locked store. Once
 * its slice is rolled, the spool's copy is never shown (its items stay until their TTL): the objects are the record,
 * and what a court-ordered erasure removes from them stays removed.
 */
import { parseEvidence, type SendEvidence } from '../domain/evidence.ts';
import { batchNameOfKey, batchObjectKey, digestMatches, readBatch, sha256Hex } from '../domain/evidence-batch.ts';
import { parseSliceBatch, SPOOL_CLOSED_AFTER_MS, SPOOL_SLICE_MS } from '../domain/evidence-spool.ts';
import { eachNamed, type SendProof, type SendsFound, unnamedDigest } from './evidence-proof.ts';
import type { SpooledRecord } from './evidence-spool.ts';
import type { EvidenceStore } from './evidence-store.ts';

type Ids = ReadonlyMap<string, ReadonlySet<string>>;

export interface SliceReading {
  /** The sends of one stored object of the slice (the reader's own batch read), the reports on them found by the slice. */
  readonly inObject: (name: string, ids: Ids) => Promise<SendsFound>;
  /** The spool's records of the slice while the roll-up has not rolled it (none after); undefined without the table. */
  readonly unrolled?: (slice: string) => Promise<SpooledRecord[]>;
  /** The reports on a send of the slice, and warnings about them. */
  readonly reportsOf: (send: SendEvidence) => Promise<Pick<SendProof, 'feedback' | 'warnings'>>;
  /** Named sends none of the above holds: what the table says of them. */
  readonly notInStore: (ids: Ids) => Promise<SendsFound['unfound']>;
  readonly raw?: boolean;
}

export async function sendsInSlice(
  store: EvidenceStore,
  slice: string,
  ids: Ids,
  how: SliceReading,
): Promise<SendsFound> {
  // The spool before the objects: its cursor said "not rolled", so a roll-up since wrote an object listed below.
  const spooled = (await how.unrolled?.(slice)) ?? [];
  // Each notification's named digests no record read yet matches (two attempts of one in a minute: two records, in
  // one object or in the slice's and a late one): a notification is done when all are, or — none named — once read.
  const left = new Map([...ids].map(([id, digests]) => [id, new Set(digests)]));
  const proofs: SendProof[] = [];
  const unfound: SendsFound['unfound'] = [];
  const read = (id: string, sha256: string) => {
    const digests = left.get(id);
    for (const d of digests ?? []) if (digestMatches(d, sha256)) digests?.delete(d);
  };
  const done = (shown: Iterable<string>) => {
    for (const id of shown) if (left.get(id)?.size === 0) left.delete(id);
  };
  for (const key of await sliceObjects(store, slice)) {
    const object = await store.get(key);
    if (object === undefined) continue;
    const entries = readBatch(object).header.records.filter((e) => e.kind === 'SEND' && left.has(e.notificationId));
    if (entries.length === 0) continue;
    // Every record of these notifications here, each warned only when no digest named for it matches it.
    const here = new Map(entries.map((e) => [e.notificationId, ids.get(e.notificationId) ?? new Set<string>()]));
    const found = await how.inObject(batchNameOfKey(key) as string, here);
    proofs.push(...found.proofs);
    unfound.push(...found.unfound);
    for (const e of entries) read(e.notificationId, e.sha256);
    done(here.keys());
  }
  if (left.size === 0) return { proofs, unfound };
  const shown = new Set<string>();
  for (const record of spooled) {
    if (record.recordKind !== 'SEND' || !left.has(record.notificationId)) continue;
    proofs.push(await spooledProof(slice, record, ids.get(record.notificationId) ?? new Set(), how));
    read(record.notificationId, record.sha256);
    shown.add(record.notificationId);
  }
  done(shown);
  if (left.size > 0) unfound.push(...(await how.notInStore(left)));
  return { proofs, unfound };
}

/** The objects holding a slice's records: its own and its late ones (a longer retention's slice is another name). */
export async function sliceObjects(store: EvidenceStore, slice: string): Promise<string[]> {
  const own = batchObjectKey(slice);
  return (await store.list(slice)).filter(
    (k) => k === own || (k.startsWith(`${slice}late`) && k.endsWith('.jsonl.gz')),
  );
}

async function spooledProof(
  slice: string,
  record: SpooledRecord,
  digests: ReadonlySet<string>,
  how: SliceReading,
): Promise<SendProof> {
  const send = parseEvidence(record.bytes) as SendEvidence;
  const sha256 = sha256Hex(record.bytes);
  const start = parseSliceBatch(slice)?.startMs ?? 0;
  const reports = await how.reportsOf(send);
  const warnings = [
    `not in the locked store yet: read from the spool, rolled into ${batchObjectKey(slice)} from ${new Date(start + SPOOL_CLOSED_AFTER_MS).toISOString()}`,
    ...unnamedDigest("spooled record's", sha256, digests),
    ...(reports.warnings ?? []),
  ];
  return {
    key: batchObjectKey(slice),
    sha256,
    send,
    feedback: reports.feedback,
    warnings,
    ...(how.raw === true ? { bytes: record.bytes.toString('base64') } : {}),
  };
}

/** The digests of every record the objects of a slice hold (its own and its late ones). */
export async function digestsStored(slice: string, store: EvidenceStore): Promise<Set<string>> {
  const held = new Set<string>();
  for (const key of await sliceObjects(store, slice)) {
    const object = await store.get(key);
    if (object === undefined) continue;
    for (const r of readBatch(object).records) held.add(r.entry.sha256);
  }
  return held;
}

/** Whether a record of a slice (its digest) is kept already: in the spool, or in one of the slice's objects. */
export async function sliceHolds(
  slice: string,
  sha256: string,
  spooled: (slice: string) => Promise<readonly SpooledRecord[]>,
  store: EvidenceStore,
): Promise<boolean> {
  if ((await spooled(slice)).some((r) => r.sha256 === sha256)) return true;
  return (await digestsStored(slice, store)).has(sha256);
}

/**
 * A SENT send whose record a spool slice does not hold yet, neither spooled nor rolled (its writer still putting it,
 * or dead and its rebuild due): what an erasure or a resend waits for, and until about when; undefined when held.
 * The rebuild renders the record from the notification, so its data must stay until then.
 */
export async function sliceRecordPending(
  slice: string,
  sha256: string | undefined,
  spooled: (slice: string) => Promise<readonly SpooledRecord[]>,
  store: EvidenceStore,
  nowMs: number,
): Promise<{ batch: string; dueMs: number } | undefined> {
  const start = parseSliceBatch(slice)?.startMs;
  if (start === undefined) return undefined;
  if (sha256 !== undefined && (await sliceHolds(slice, sha256, spooled, store))) return undefined;
  return { batch: slice, dueMs: Math.max(start + SPOOL_CLOSED_AFTER_MS, nowMs + SPOOL_SLICE_MS) };
}

/** How long after its slice closed a send the spool and the store do not hold is still said to be on its way. */
export const SLICE_PENDING_MS = 3_600_000;

/**
 * Named sends of a slice neither the spool nor its objects hold: on their way (a writer's put in flight, a dead
 * writer's record waiting for its rebuild: the intent names the invocation, not the slice) until an hour after the
 * slice closed — the longest a failing rebuild is held back — and lost after, as EvidenceLost counted it.
 */
export function sliceUnfound(slice: string, ids: Ids, nowMs: number): SendsFound['unfound'] {
  const closes = (parseSliceBatch(slice)?.startMs ?? 0) + SPOOL_CLOSED_AFTER_MS;
  const pending = nowMs < closes + SLICE_PENDING_MS;
  return eachNamed(ids).map(([notificationId, sha256]) => {
    const named = `named in batch ${slice}${sha256 === undefined ? '' : ` (sha256 ${sha256})`}`;
    return {
      notificationId,
      batch: slice,
      ...(sha256 === undefined ? {} : { sha256 }),
      state: pending ? ('pending' as const) : ('lost' as const),
      says: pending
        ? `${named}; not in the spool or the store yet: on its way (a writer's put in flight, or a dead writer's record the sweeper rebuilds once its intent is due)`
        : `${named}; neither the spool nor the store holds it an hour after its slice closed: lost, unless its invocation's intent is still open (EvidenceIntentOldestAge; EvidenceLost names a lost record)`,
    };
  });
}

/**
 * Reading the sends a spool slice holds (domain/evidence-spool.ts): the slice's object once the sweeper rolled it, a
 * late object beside it for a record spooled after that, and — before the roll-up — the spool itself, so the minutes
 * between a send and its object never show its evidence as missing. A record read from the spool is its exact bytes,
 * checked against the digest the SENT write or the index carried, and said to be not yet in the locked store.
 */
import { parseEvidence, type SendEvidence } from '../domain/evidence.ts';
import { batchNameOfKey, batchObjectKey, readBatch, sha256Hex } from '../domain/evidence-batch.ts';
import { parseSliceBatch, SPOOL_CLOSED_AFTER_MS } from '../domain/evidence-spool.ts';
import type { SendProof, SendsFound } from './evidence-proof.ts';
import type { SpooledRecord } from './evidence-spool.ts';
import type { EvidenceStore } from './evidence-store.ts';

type Ids = ReadonlyMap<string, ReadonlySet<string>>;

export interface SliceReading {
  /** The sends of one stored object of the slice (the reader's own batch read), the reports on them found by the slice. */
  readonly inObject: (name: string, ids: Ids) => Promise<SendsFound>;
  /** The spool's records of the slice; undefined without the table. */
  readonly spooled?: (slice: string) => Promise<SpooledRecord[]>;
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
  const left = new Map(ids);
  const proofs: SendProof[] = [];
  const unfound: SendsFound['unfound'] = [];
  for (const key of await sliceObjects(store, slice)) {
    const object = await store.get(key);
    if (object === undefined) continue;
    const listed = new Set(readBatch(object).header.records.map((e) => e.notificationId));
    const here = new Map([...left].filter(([id]) => listed.has(id)));
    if (here.size === 0) continue;
    const found = await how.inObject(batchNameOfKey(key) as string, here);
    proofs.push(...found.proofs);
    unfound.push(...found.unfound);
    for (const id of here.keys()) left.delete(id);
  }
  if (left.size === 0) return { proofs, unfound };
  for (const record of (await how.spooled?.(slice)) ?? []) {
    if (record.recordKind !== 'SEND' || !left.has(record.notificationId)) continue;
    proofs.push(await spooledProof(slice, record, left.get(record.notificationId) ?? new Set(), how));
    left.delete(record.notificationId);
  }
  if (left.size > 0) unfound.push(...(await how.notInStore(left)));
  return { proofs, unfound };
}

/** The objects holding a slice's records: its own and its late ones (a longer retention's slice is another name). */
async function sliceObjects(store: EvidenceStore, slice: string): Promise<string[]> {
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
    ...[...digests]
      .filter((d) => d !== sha256)
      .map((d) => `the spooled record's sha256 ${sha256} is not the ${d} its SENT write or the index carried`),
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

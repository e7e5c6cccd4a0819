/**
 * Two attempts of one notification whose records share a batch (an operator's resend within the minute: one spool
 * slice), as the index names them — each by its digest. The reader shows each record once, warns of none that a
 * named digest matches, and reports a named record no batch holds (review 54a finding 2).
 */
import { expect, it } from 'vitest';
import type { SendEvidence } from '../../functions/domain/evidence.ts';
import { batchObjectKey, encodeBatch, sha256Hex } from '../../functions/domain/evidence-batch.ts';
import { lateBatchName, sliceBatchName } from '../../functions/domain/evidence-spool.ts';
import { findSends } from '../../functions/stores/evidence-reader.ts';
import { MemoryStore } from '../support/evidence-memory.ts';

const T0 = Date.parse('2026-11-01T10:00:05Z');
const SLICE = sliceBatchName(T0, 2557);
const KEPT = new Date(T0 + 3_000 * 86_400_000);

const attempt = (n: number) => {
  const record = {
    evidenceVersion: 1,
    kind: 'SEND',
    notificationId: 'ev-54#SMS',
    eventId: 'ev-54',
    channel: 'SMS',
    userId: 'u-54',
    noticeType: 'TransferCompleted',
    locale: 'en',
    attempt: n,
    providerMessageId: `m-${n}`,
    acceptedAt: new Date(T0 + n * 1_000).toISOString(),
    retainUntil: KEPT.toISOString(),
    request: { channel: 'SMS', api: 'sns:Publish', phoneNumber: '+81', text: 'code', encoding: 'GSM', segments: 1 },
  } as unknown as SendEvidence;
  const bytes = Buffer.from(`${JSON.stringify(record, null, 2)}\n`);
  return { record, bytes, sha256: sha256Hex(bytes) };
};
const [a1, a2] = [attempt(1), attempt(2)] as const;
/** The refs the index gives: each attempt's record by its digest's first 128 bits, with its attempt. */
const refs: { batch: string; notificationId: string; sha256: string; attempt: number }[] = [a1, a2].map((p) => ({
  batch: SLICE,
  notificationId: 'ev-54#SMS',
  sha256: p.sha256.slice(0, 32),
  attempt: p.record.attempt,
}));
const attemptsOf = (found: Awaited<ReturnType<typeof findSends>>) => found.proofs.map((p) => p.send.attempt);

it("both attempts in the slice's object: both shown, neither warned as not the digest carried", async () => {
  const store = new MemoryStore();
  await store.put(batchObjectKey(SLICE), encodeBatch(SLICE, 'sweeper', [a1, a2]), KEPT);
  const found = await findSends(store, refs);
  expect(attemptsOf(found)).toEqual([1, 2]);
  expect(found.proofs.flatMap((p) => p.warnings ?? [])).toEqual([]);
  expect(found.unfound).toEqual([]);
});

it("attempt 2's record missing from the slice's object: reported unfound once by its digest (named by the item's reference whole and by the index's 128 bits), attempt 1's shown unwarned", async () => {
  const store = new MemoryStore();
  await store.put(batchObjectKey(SLICE), encodeBatch(SLICE, 'sweeper', [a1]), KEPT);
  const found = await findSends(store, refs);
  expect(attemptsOf(found)).toEqual([1]);
  expect(found.proofs[0]?.warnings).toBeUndefined();
  expect(found.unfound).toEqual([
    expect.objectContaining({ notificationId: 'ev-54#SMS', batch: SLICE, sha256: a2.sha256.slice(0, 32) }),
  ]);
  const itemRef = { batch: SLICE, notificationId: 'ev-54#SMS', sha256: a2.sha256 };
  const both = await findSends(store, [...refs, itemRef]);
  expect(both.unfound).toEqual([expect.objectContaining({ sha256: a2.sha256 })]);
});

it("attempt 2 in a late object beside the slice's (named by the slice and by the late name): each shown once, unwarned", async () => {
  const store = new MemoryStore();
  const late = lateBatchName(SLICE, [a2.sha256]);
  await store.put(batchObjectKey(SLICE), encodeBatch(SLICE, 'sweeper', [a1]), KEPT);
  await store.put(batchObjectKey(late), encodeBatch(late, 'sweeper', [a2]), KEPT);
  // The item's reference (the slice, the whole digest) and the recovery's index entry (the late name) beside both.
  const named = [
    ...refs,
    { ...(refs[1] as (typeof refs)[number]), batch: late },
    { batch: SLICE, notificationId: 'ev-54#SMS', sha256: a2.sha256 },
  ];
  const found = await findSends(store, named);
  expect(attemptsOf(found)).toEqual([1, 2]);
  expect(found.proofs.flatMap((p) => p.warnings ?? [])).toEqual([]);
  expect(found.unfound).toEqual([]);
});

it('both attempts in the spool of a slice not rolled yet: both shown; one the spool lacks is on its way', async () => {
  const spooled = (ps: (typeof a1)[]) =>
    ps.map((p) => ({
      slice: SLICE,
      sha256: p.sha256,
      notificationId: 'ev-54#SMS',
      recordKind: 'SEND' as const,
      bytes: p.bytes,
    }));
  const read = (ps: (typeof a1)[]) =>
    findSends(new MemoryStore(), refs, { locator: { unrolled: async () => spooled(ps) } });
  const both = await read([a1, a2]);
  expect(attemptsOf(both)).toEqual([1, 2]);
  expect(both.proofs.flatMap((p) => p.warnings ?? []).filter((w) => w.includes('is not the'))).toEqual([]);
  expect(both.unfound).toEqual([]);
  const one = await read([a1]);
  expect(attemptsOf(one)).toEqual([1]);
  expect(one.unfound).toEqual([expect.objectContaining({ sha256: a2.sha256.slice(0, 32), batch: SLICE })]);
});

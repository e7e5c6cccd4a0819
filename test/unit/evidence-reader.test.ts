/**
 * Reading evidence for a dispute or an operator (docs/evidence-and-privacy.md "Finding a record"): a record is checked
 * against the digest its SENT write (or the index) carried, and a mismatch is said; one damaged record is reported on
 * its own and never hides its neighbours; a send whose batch is not in the store is named with what the table says of
 * it (a gap, pending recovery, or lost) — never shown as "not sent"; a dispute's export carries the record's exact
 * bytes. And the sweeper's recovery of dead invocations' batches holds back one that keeps failing and stops at its
 * deadline, whatever the count.
 */
import { gunzipSync, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import type { SendProof as DispatchProof } from '../../functions/dispatch/record-evidence.ts';
import type { SendEvidence } from '../../functions/domain/evidence.ts';
import { batchName, batchObjectKey, encodeBatch, readBatch, sha256Hex } from '../../functions/domain/evidence-batch.ts';
import { sliceBatchName } from '../../functions/domain/evidence-spool.ts';
import { DynamoEvidenceLocator, findSends } from '../../functions/stores/evidence-reader.ts';
import type { EvidenceSpool } from '../../functions/stores/evidence-spool.ts';
import {
  type RecoverDeps,
  recoverEvidenceBatches,
  respool,
  retryAfter,
  type SentHere,
} from '../../functions/sweeper/recover-evidence.ts';
import { MemoryGaps, MemoryIndex, MemoryIntents, MemoryStore } from '../support/evidence-memory.ts';

const NOW = Date.parse('2026-12-05T09:00:00.000Z');

const sendRecord = (eventId: string, i: number): { record: SendEvidence; bytes: Buffer } => {
  const record = {
    evidenceVersion: 1,
    kind: 'SEND',
    notificationId: `${eventId}#SMS`,
    eventId,
    channel: 'SMS',
    userId: `u-${eventId}`,
    noticeType: 'TransferCompleted',
    locale: 'en',
    attempt: 1,
    providerMessageId: `m-${i}`,
    acceptedAt: new Date(NOW + i).toISOString(),
    retainUntil: new Date(NOW + 86_400_000).toISOString(),
    request: {
      channel: 'SMS',
      api: 'sns:Publish',
      phoneNumber: '+81',
      text: `code ${i}`,
      encoding: 'GSM',
      segments: 1,
    },
  } as unknown as SendEvidence;
  return { record, bytes: Buffer.from(`${JSON.stringify(record, null, 2)}\n`) };
};

const NAME = batchName('dispatch', NOW, 'reader0000000001');
const records = [sendRecord('e-1', 1), sendRecord('e-2', 2), sendRecord('e-3', 3)];

async function storeWith(object: Buffer) {
  const store = new MemoryStore();
  await store.put(batchObjectKey(NAME), object, new Date(NOW));
  return store;
}

describe('reading a batch', () => {
  it("a record whose bytes were changed is reported on its own, its neighbours shown; a digest that is not the stored record's is said", async () => {
    const plain = gunzipSync(encodeBatch(NAME, 'dispatch', records));
    // One byte of the middle record (e-2) flipped.
    const header = readBatch(encodeBatch(NAME, 'dispatch', records)).header;
    const at = plain.indexOf(0x0a) + 1 + (header.records[1]?.offset ?? 0) + 5;
    plain.writeUInt8((plain[at] ?? 0) ^ 1, at);
    const store = await storeWith(gzipSync(plain));
    const refs = [
      { batch: NAME, notificationId: 'e-1#SMS', sha256: sha256Hex(records[0]!.bytes) },
      { batch: NAME, notificationId: 'e-2#SMS' },
      // The SENT write carried another digest than the one the batch holds.
      { batch: NAME, notificationId: 'e-3#SMS', sha256: 'f'.repeat(64) },
    ];
    const found = await findSends(store, refs, { raw: true });
    expect(found.proofs.map((p) => p.send.notificationId)).toEqual(['e-1#SMS', 'e-3#SMS']);
    expect(found.unfound).toEqual([
      {
        notificationId: 'e-2#SMS',
        batch: NAME,
        state: 'damaged',
        says: `record 1 of ${batchObjectKey(NAME)}: its bytes do not match its hash`,
      },
      // The record the SENT write named is not there: said, beside the record of e-3 the batch holds.
      {
        notificationId: 'e-3#SMS',
        batch: NAME,
        sha256: 'f'.repeat(64),
        state: 'notInBatch',
        says: `${batchObjectKey(NAME)} holds no record of it with this digest: lost`,
      },
    ]);
    const [first, third] = found.proofs;
    expect(first?.warnings).toBeUndefined();
    expect(third?.warnings).toEqual([
      expect.stringContaining(`is not the ${'f'.repeat(64)} its SENT write or the index carried`),
    ]);
    // A dispute's copy: the exact bytes, which hash to the digest, with the header entry that places them.
    expect(sha256Hex(Buffer.from(first?.bytes ?? '', 'base64'))).toBe(first?.sha256);
    expect(first?.entry).toMatchObject({ notificationId: 'e-1#SMS', offset: 0, sha256: first?.sha256 });
  });

  it('a named batch not in the store says what the table knows: a gap since when, an open intent, or neither (lost)', async () => {
    const store = new MemoryStore();
    const ref = { batch: NAME, notificationId: 'e-1#SMS', sha256: 'a'.repeat(64) };
    const asked = (state: object) => findSends(store, [ref], { locator: { stateOf: async () => state } });
    const gap = await asked({ gap: { since: '2026-12-05T09:00:01.000Z' } });
    expect(gap.unfound[0]).toMatchObject({ state: 'gap', sha256: ref.sha256 });
    expect(gap.unfound[0]?.says).toBe(
      `named in batch ${NAME} (sha256 ${'a'.repeat(64)}); not in the store yet: a gap, pending recovery, or lost — its bytes wait in the table as an evidence gap since 2026-12-05T09:00:01.000Z; the sweeper writes them once the store accepts`,
    );
    const pending = await asked({
      intent: { name: NAME, dueMs: NOW, notificationIds: [], attempts: 2, retryAt: NOW + 120_000, lastError: 'Boom' },
    });
    expect(pending.unfound[0]?.state).toBe('pending');
    expect(pending.unfound[0]?.says).toContain(
      '2 recovery attempt(s) failed (Boom), next after 2026-12-05T09:02:00.000Z',
    );
    expect((await asked({})).unfound[0]).toMatchObject({
      state: 'lost',
      says: expect.stringContaining('no gap and no open intent'),
    });
    expect((await findSends(store, [ref])).unfound[0]?.state).toBe('unknown');
  });
});

describe("an event's sends as its notifications name them", () => {
  it("names an item's reference only when it is its attempt's: one a resend left from an earlier attempt is not shown as the item's send", async () => {
    const resentAt = '2026-12-05T09:00:00.000Z';
    const item = (channel: string, attempt: number, evidence: Record<string, unknown>) => ({
      pk: 'EVENT#e-9',
      sk: `NOTIFICATION#${channel}`,
      notificationId: `e-9#${channel}`,
      userId: 'u-9',
      attempt,
      createdAt: resentAt,
      evidence: { sha256: 'ab'.repeat(32), acceptedAt: '2026-12-05T09:00:01.000Z', ...evidence },
    });
    const items = [
      item('SMS', 2, { batch: 'attempt-1', attempt: 1 }), // attempt 2 named no record: attempt 1's reference
      item('EMAIL', 2, { batch: 'attempt-2', attempt: 2 }),
      // Written before references named their attempt: accepted before the resend moved createdAt, an earlier one's.
      item('PUSH', 2, { batch: 'before-resend', acceptedAt: '2026-12-05T08:00:00.000Z' }),
    ];
    const client = { send: async () => ({ Items: items }) } as unknown as ConstructorParameters<
      typeof DynamoEvidenceLocator
    >[0];
    const locator = new DynamoEvidenceLocator(client, 'table', new MemoryIndex() as never);
    const found = await locator.ofEvent('e-9');
    expect(found.refs.map((r) => [r.notificationId, r.batch])).toEqual([['e-9#EMAIL', 'attempt-2']]);
  });
});

describe('recovering dead invocations’ batches', () => {
  const proofOf = (r: { record: SendEvidence; bytes: Buffer }): DispatchProof => ({ ...r, sha256: sha256Hex(r.bytes) });
  const sentItem = (name: string, r: { record: SendEvidence; bytes: Buffer }) =>
    ({
      notificationId: r.record.notificationId,
      eventId: r.record.eventId,
      channel: 'SMS',
      userId: r.record.userId,
      status: 'SENT',
      evidence: { batch: name, sha256: sha256Hex(r.bytes), acceptedAt: r.record.acceptedAt },
    }) as unknown as SentHere;
  /** The sweeper's recovery run a minute after NOW: these intents and items, a store (empty unless given), an index. */
  const recoverNow = (d: {
    intents: MemoryIntents;
    get: RecoverDeps['notifications']['get'];
    rebuild: Awaited<ReturnType<RecoverDeps['rebuilder']>>;
    index: MemoryIndex;
    store?: MemoryStore;
  }) =>
    recoverEvidenceBatches({
      intents: d.intents,
      notifications: { get: d.get },
      outlets: {
        store: d.store ?? new MemoryStore(),
        gaps: new MemoryGaps(),
        index: { index: d.index, retentionDays: 30 },
      },
      rebuilder: async () => d.rebuild,
      now: () => NOW + 60_000,
      deadline: NOW + 10 * 60_000,
      limit: 500,
      timeoutMs: 1_000,
      index: d.index,
    });

  it('an intent whose recovery keeps failing is held back, backing off; the others are recovered; the run stops at its deadline', async () => {
    const intents = new MemoryIntents();
    const names = ['a', 'b', 'c'].map((id) => batchName('dispatch', NOW, `recover0000000${id}`));
    const byId = new Map<string, SentHere>();
    names.forEach((name, i) => {
      const r = records[i]!;
      byId.set(r.record.notificationId, sentItem(name, r));
      void intents.open({ name, dueMs: NOW, notificationIds: [r.record.notificationId] });
    });
    const index = new MemoryIndex();
    let clock = NOW + 60_000;
    const deps = {
      intents,
      notifications: { get: async (key: { pk: string }) => byId.get(`${key.pk.slice('EVENT#'.length)}#SMS`) },
      outlets: { store: new MemoryStore(), gaps: new MemoryGaps(), index: { index, retentionDays: 30 } },
      // The first batch's notification cannot be rebuilt, and its index refuses: a poisoned intent.
      rebuilder: async () => async (item: SentHere) => {
        if (item.notificationId === 'e-1#SMS') throw new Error('gone');
        return proofOf(records.find((r) => r.record.notificationId === item.notificationId)!);
      },
      now: () => clock,
      deadline: NOW + 10 * 60_000,
      limit: 500,
      timeoutMs: 1_000,
    };
    const first = await recoverEvidenceBatches(deps);
    // The unrebuildable one is lost (counted), and its intent closed; no poisoned intent yet.
    expect(first).toMatchObject({
      recovered: 3,
      rebuilt: 2,
      lost: [expect.objectContaining({ notificationId: 'e-1#SMS' })],
    });

    // Now an intent whose index keeps refusing: held back after each failure, 1 then 2 minutes.
    const name = batchName('dispatch', NOW, 'poisoned00000001');
    await intents.open({ name, dueMs: NOW, notificationIds: ['e-2#SMS'] });
    byId.set('e-2#SMS', sentItem(name, records[1]!));
    index.failing = true;
    const failed = await recoverEvidenceBatches(deps);
    expect(failed).toMatchObject({ recovered: 0, open: 1 });
    expect(await intents.find(name)).toMatchObject({ attempts: 1, retryAt: retryAfter(clock, 0) });
    expect(retryAfter(clock, 0) - clock).toBe(60_000);
    expect(retryAfter(clock, 1) - clock).toBe(120_000);
    expect(retryAfter(clock, 20) - clock).toBe(3_600_000);
    // Before its retry time the run does not take it again.
    clock += 30_000;
    expect(await recoverEvidenceBatches(deps)).toMatchObject({ recovered: 0, open: 0, errors: [] });
    // A run past its deadline starts nothing, whatever the count.
    clock += 60_000;
    index.failing = false;
    expect(await recoverEvidenceBatches({ ...deps, deadline: clock })).toMatchObject({ recovered: 0, open: 1 });
    expect(await recoverEvidenceBatches(deps)).toMatchObject({ recovered: 1 });
    expect(await intents.oldestDueMs()).toBeUndefined();
  });
  it("a named notification SENT naming no record (its lease extended by an earlier version) is lost unless an index names a send of it — never skipped unsaid; an earlier attempt's send, in the batch a resend took off the item, names none of this one", async () => {
    const intents = new MemoryIntents();
    const name = batchName('dispatch', NOW, 'unnamed000000001');
    const [e1, e2, e3] = records as [(typeof records)[0], (typeof records)[0], (typeof records)[0]];
    const unnamed = (r: typeof e1) => {
      const { evidence: _none, ...item } = sentItem(name, r);
      return { ...item, providerMessageId: `m-${r.record.notificationId}` } as unknown as SentHere;
    };
    // e-2 was resent: its attempt 1's record, in `first`, is indexed.
    const first = batchName('dispatch', NOW - 3_600_000, 'attempt100000001');
    const resent = { ...unnamed(e2), attempt: 2, manualResends: [{ attempt: 1, evidenceBatch: first }] } as SentHere;
    const byId = new Map<string, SentHere>([
      [e1.record.notificationId, sentItem(name, e1)],
      [e2.record.notificationId, resent],
      [e3.record.notificationId, unnamed(e3)],
    ]);
    await intents.open({ name, dueMs: NOW, notificationIds: [...byId.keys()] });
    const index = new MemoryIndex();
    // e-3's record is indexed (its invocation lived to write it): kept, not lost.
    await index.add({
      userId: e3.record.userId,
      day: '2026-12-05',
      batch: batchName('dispatch', NOW, 'lived00000000001'),
      sends: [
        { notificationId: e3.record.notificationId, sha256: sha256Hex(e3.bytes), acceptedAt: e3.record.acceptedAt },
      ],
    } as never);
    await index.add({
      userId: e2.record.userId,
      day: '2026-12-05',
      batch: first,
      sends: [{ notificationId: e2.record.notificationId, sha256: 'cd'.repeat(32), acceptedAt: e2.record.acceptedAt }],
    } as never);
    const r = await recoverNow({
      intents,
      get: async (key) => byId.get(`${key.pk.slice('EVENT#'.length)}#SMS`),
      rebuild: async () => proofOf(e1),
      index,
    });
    expect(r).toMatchObject({
      recovered: 1,
      rebuilt: 1,
      lost: [
        {
          notificationId: e2.record.notificationId,
          providerMessageId: `m-${e2.record.notificationId}`,
          batch: name,
          reason: 'UNNAMED',
        },
      ],
    });
  });
  it('a batch already in the store holding a send no rebuild matches: its SENT reference is indexed with the attempt that reference names', async () => {
    const intents = new MemoryIntents();
    const name = batchName('dispatch', NOW, 'alreadythere0001');
    const [e1, e2] = records as [(typeof records)[0], (typeof records)[0]];
    const store = new MemoryStore();
    await store.put(batchObjectKey(name), encodeBatch(name, 'dispatch', [e1, e2]), new Date(NOW + 86_400_000));
    // e-1's template is gone since (no rebuild); e-2 rebuilds to its digest.
    const byId = new Map<string, SentHere>([
      [
        e1.record.notificationId,
        { ...sentItem(name, e1), attempt: 2, evidence: { ...sentItem(name, e1).evidence, attempt: 2 } },
      ],
      [e2.record.notificationId, sentItem(name, e2)],
    ]);
    await intents.open({ name, dueMs: NOW, notificationIds: [...byId.keys()] });
    const index = new MemoryIndex();
    const r = await recoverNow({
      intents,
      get: async (key) => byId.get(`${key.pk.slice('EVENT#'.length)}#SMS`),
      rebuild: async (item) => {
        if (item.notificationId === e1.record.notificationId) throw new Error('template gone');
        return proofOf(e2);
      },
      index,
      store,
    });
    expect(r).toMatchObject({ recovered: 1, lost: [] });
    expect(await index.sendsOfEvent(e1.record.eventId)).toEqual([
      { batch: name, notificationId: e1.record.notificationId, sha256: sha256Hex(e1.bytes), attempt: 2 },
    ]);
  });
  it("a batch already in the store holding a send no rebuild matches, its SENT reference written before references named their attempt: indexed with the attempt its stored record carries, not the item's (moved on since)", async () => {
    const intents = new MemoryIntents();
    const name = batchName('dispatch', NOW, 'alreadythere0002');
    const e1 = sendRecord('e-7', 7);
    const third = { ...e1.record, attempt: 3 } as SendEvidence;
    const stored = { record: third, bytes: Buffer.from(`${JSON.stringify(third, null, 2)}\n`) };
    // Beside it, a send whose rebuild matches (the batch is found in the store by writing it again).
    const e8 = sendRecord('e-8', 8);
    const store = new MemoryStore();
    await store.put(batchObjectKey(name), encodeBatch(name, 'dispatch', [stored, e8]), new Date(NOW + 86_400_000));
    const item = { ...sentItem(name, stored), attempt: 4 } as SentHere;
    const byId = new Map([
      [item.notificationId, item],
      [e8.record.notificationId, sentItem(name, e8)],
    ]);
    await intents.open({ name, dueMs: NOW, notificationIds: [...byId.keys()] });
    const index = new MemoryIndex();
    const r = await recoverNow({
      intents,
      get: async (key) => byId.get(`${key.pk.slice('EVENT#'.length)}#SMS`),
      rebuild: async (sent) => {
        if (sent.notificationId === item.notificationId) throw new Error('template gone');
        return proofOf(e8);
      },
      index,
      store,
    });
    expect(r).toMatchObject({ recovered: 1, lost: [] });
    expect(await index.sendsOfEvent('e-7')).toEqual([
      { batch: name, notificationId: item.notificationId, sha256: sha256Hex(stored.bytes), attempt: 3 },
    ]);
  });
  it("a spooled send whose SENT reference names no attempt (written before references did), kept or rebuilt: indexed under its slice with the attempt its record carries, not the item's (moved on since)", async () => {
    const slice = sliceBatchName(NOW, 30);
    const e9 = sendRecord('e-9', 9);
    const third = { ...e9.record, attempt: 3 } as SendEvidence;
    const proof = proofOf({ record: third, bytes: Buffer.from(`${JSON.stringify(third, null, 2)}\n`) });
    const item = { ...sentItem(slice, proof), attempt: 4 } as SentHere;
    const spooled = { slice, sha256: proof.sha256, notificationId: item.notificationId, recordKind: 'SEND' as const };
    // Held in the spool and no rebuild (a template gone); not held, and rebuilt to its digest.
    for (const [held, rebuild] of [
      [[{ ...spooled, bytes: proof.bytes }], async () => Promise.reject(new Error('template gone'))],
      [[], async () => proof],
    ] as const) {
      const index = new MemoryIndex();
      const spool = {
        cursor: async () => ({ rolledBefore: 0, version: 0 }),
        ofSlice: async () => held,
        put: async () => undefined,
        claimUnrolled: async () => true,
      } as unknown as EvidenceSpool;
      const outlets = { store: new MemoryStore(), gaps: new MemoryGaps(), index: { index, retentionDays: 30 } };
      const kept = await respool([item], { spool, outlets, now: () => NOW + 60_000, timeoutMs: 1_000 }, rebuild);
      expect(kept.unverified).toEqual([]);
      expect(await index.sendsOfEvent('e-9')).toEqual([
        { batch: slice, notificationId: item.notificationId, sha256: proof.sha256, attempt: 3 },
      ]);
    }
    // Its minute rolled, the spool's copy gone (its TTL), no rebuild: the attempt is read from the slice's locked object.
    const index = new MemoryIndex();
    const store = new MemoryStore();
    await store.put(batchObjectKey(slice), encodeBatch(slice, 'sweeper', [proof]), new Date(NOW + 86_400_000));
    const rolledSpool = {
      cursor: async () => ({ rolledBefore: NOW + 3_600_000, version: 1 }),
      ofSlice: async () => [],
      put: async () => undefined,
      claimUnrolled: async () => false,
    } as unknown as EvidenceSpool;
    const outlets = { store, gaps: new MemoryGaps(), index: { index, retentionDays: 30 } };
    const none = async () => Promise.reject(new Error('template gone'));
    const kept = await respool(
      [item],
      { spool: rolledSpool, outlets, now: () => NOW + 60_000, timeoutMs: 1_000 },
      none,
    );
    expect(kept.unverified).toEqual([]);
    expect(await index.sendsOfEvent('e-9')).toEqual([
      { batch: slice, notificationId: item.notificationId, sha256: proof.sha256, attempt: 3 },
    ]);
  });
  it("a named notification SENT naming no record after an automatic retry or a resend from UNKNOWN (no batch named): its attempt 1's index entry, a frozen holder's late record, names none of attempt 2 — lost, never skipped unsaid; attempt 2's entry keeps it", async () => {
    const name = batchName('dispatch', NOW, 'unnamedretry0001');
    const late = batchName('dispatch', NOW - 3_600_000, 'frozenholder0001');
    const [e1] = records as [(typeof records)[0]];
    const { evidence: _none, ...sent } = sentItem(name, e1);
    const retried = { ...sent, attempt: 2, providerMessageId: 'm-attempt-2' } as unknown as SentHere;
    const resent = { ...retried, manualResends: [{ fromStatus: 'UNKNOWN', attempt: 1 }] } as unknown as SentHere;
    const recover = async (item: SentHere, indexedAttempt: number) => {
      const intents = new MemoryIntents();
      await intents.open({ name, dueMs: NOW, notificationIds: [e1.record.notificationId] });
      const index = new MemoryIndex();
      await index.add({
        userId: e1.record.userId,
        day: '2026-12-05',
        batch: late,
        sends: [{ notificationId: e1.record.notificationId, sha256: 'cd'.repeat(32), attempt: indexedAttempt }],
      });
      return recoverNow({ intents, get: async () => item, rebuild: async () => proofOf(e1), index });
    };
    for (const item of [retried, resent]) {
      expect(await recover(item, 1)).toMatchObject({
        recovered: 1,
        lost: [
          {
            notificationId: e1.record.notificationId,
            providerMessageId: 'm-attempt-2',
            batch: name,
            reason: 'UNNAMED',
          },
        ],
      });
      expect(await recover(item, 2)).toMatchObject({ recovered: 1, lost: [] });
    }
  });
  it("a named notification SENT carrying only an earlier attempt's reference (an earlier version's SENT from the id) names no record of this attempt: lost unless an index names it, never skipped unsaid", async () => {
    const intents = new MemoryIntents();
    const name = batchName('dispatch', NOW, 'staleref00000001');
    const first = batchName('dispatch', NOW - 3_600_000, 'attempt100000002');
    const [e1] = records as [(typeof records)[0]];
    // Attempt 2 SENT from its lease's id; the reference is attempt 1's, in `first`, which a resend took off the item.
    const stale = {
      ...sentItem(first, e1),
      evidence: { ...sentItem(first, e1).evidence, attempt: 1 },
      attempt: 2,
      providerMessageId: 'm-attempt-2',
      manualResends: [{ attempt: 1, evidenceBatch: first }],
    } as SentHere;
    await intents.open({ name, dueMs: NOW, notificationIds: [e1.record.notificationId] });
    const index = new MemoryIndex();
    const r = await recoverNow({ intents, get: async () => stale, rebuild: async () => proofOf(e1), index });
    expect(r).toMatchObject({
      recovered: 1,
      rebuilt: 0,
      lost: [
        { notificationId: e1.record.notificationId, providerMessageId: 'm-attempt-2', batch: name, reason: 'UNNAMED' },
      ],
    });
  });
});

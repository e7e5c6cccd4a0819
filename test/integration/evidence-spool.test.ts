/**
 * The evidence spool on DynamoDB Local (domain/evidence-spool.ts, stores/evidence-spool.ts, sweeper/roll-up-evidence.ts):
 * an invocation of few records puts each record's exact bytes in the table instead of an object of its own; the SENT
 * write and the index name the slice's object before it exists; a reader shows a spooled record from the first
 * second; the sweeper rolls each closed slice into ONE object and only then moves its cursor past it (no item is
 * deleted: each expires by TTL) — a sweeper dying between the PUT and the cursor loses and duplicates nothing, one
 * down for half an hour leaves nothing missing, and a rebuild racing a roll-up lands its record beside the object.
 */
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { beforeEach, describe, expect, inject, it } from 'vitest';
import { InvocationEvidence, type SendProof } from '../../functions/dispatch/record-evidence.ts';
import { batchObjectKey, readBatch, sha256Hex } from '../../functions/domain/evidence-batch.ts';
import {
  lateBatchName,
  parseSliceBatch,
  SPOOL_CLOSED_AFTER_MS,
  SPOOL_KEEP_DAYS,
  sliceBatchName,
  spoolShardOf,
} from '../../functions/domain/evidence-spool.ts';
import { readFeedback } from '../../functions/domain/feedback.ts';
import { recordFeedback } from '../../functions/feedback/record-feedback.ts';
import { findSends } from '../../functions/stores/evidence-reader.ts';
import {
  DynamoEvidenceSpool,
  type EvidenceSpool,
  EvidenceSpoolConflict,
  type SpoolCursor,
  spoolItem,
} from '../../functions/stores/evidence-spool.ts';
import { decodeSpoolBody } from '../../functions/stores/spool-codec.ts';
import { rollUpEvidence } from '../../functions/sweeper/roll-up-evidence.ts';
import { MemoryGaps, MemoryIndex, MemoryIntents, MemoryReports, MemoryStore } from '../support/evidence-memory.ts';
import { type LocalTable, newLocalTable } from '../support/local-table.ts';
import { sesEvent } from '../support/ses-events.ts';
import { proofOf, RETENTION } from '../support/spool-proofs.ts';

let table: LocalTable;
// A table each: the roll-up's cursor is the table's, and each test runs its own clock.
beforeEach(async () => {
  table = await newLocalTable(inject('dynamoEndpoint'));
});

const T0 = Date.parse('2026-12-06T05:12:30Z');

/** One dispatch invocation of `ids.length` sends at `startMs`: each record where the SENT write would name it. */
async function invocation(
  spool: EvidenceSpool,
  store: MemoryStore,
  id: string,
  startMs: number,
  ids: string[],
  channel: 'SMS' | 'EMAIL' = 'SMS',
) {
  const intents = new MemoryIntents();
  const index = new MemoryIndex();
  const evidence = new InvocationEvidence(
    { store, gaps: new MemoryGaps(), intents, index: { index, retentionDays: RETENTION }, spool },
    { now: startMs, id, dueMs: startMs + 90_000, spoolBelow: 25 },
  );
  await evidence.open(ids.map((e) => `${e}#${channel}`));
  const named: { batch: string; notificationId: string; sha256: string }[] = [];
  for (const e of ids) {
    const batch = await evidence.ready();
    const proof = proofOf(e, startMs + 1_000, undefined, channel);
    const at = evidence.addressOf(proof, batch);
    evidence.add(proof, at);
    named.push({ batch: at, notificationId: proof.record.notificationId, sha256: proof.sha256 });
  }
  // The puts are DynamoDB Local's, awaited in real time: given as long as a loaded machine takes, not 2 s.
  const closed = await evidence.close(60_000, 60_000, startMs + 5_000);
  return { named, closed, intents, index };
}

/** The oldest slice the roll-up has not rolled yet (the items before its cursor are in the store, expiring). */
const oldestUnrolled = async (spool: EvidenceSpool) => spool.oldestSliceMs((await spool.cursor()).rolledBefore);

const roll = (spool: EvidenceSpool, store: MemoryStore, now: number) =>
  rollUpEvidence({ spool, store, now: () => now, deadline: now + 30_000, limit: 1_000, timeoutMs: 2_000 });

describe('the evidence spool', () => {
  it('an invocation of few records spools them under a slice the SENT write names; a reader shows them before the roll-up; one object after, the cursor past it and no item deleted (they expire by TTL)', async () => {
    const spool = new DynamoEvidenceSpool(table.doc, table.tableName);
    const store = new MemoryStore();
    const { named, closed, intents, index } = await invocation(spool, store, 'inv0000001', T0, ['sp-a1', 'sp-a2']);

    expect(closed).toMatchObject({ outcome: 'written', records: 2, intentOpen: false, spool: { spooled: 2 } });
    expect(intents.open_.size).toBe(0);
    const [first] = named;
    expect(parseSliceBatch(first?.batch ?? '')).toMatchObject({
      startMs: Date.parse('2026-12-06T05:12:00Z'),
      days: RETENTION,
    });
    // Indexed by its writer under the slice's name, before the object exists.
    expect(await index.sendsOf('u-sp-a1')).toEqual([expect.objectContaining({ batch: first?.batch })]);
    expect(store.objects.size).toBe(0);

    const before = await findSends(store, named, { locator: { unrolled: (s) => spool.unrolled(s) } });
    expect(before.unfound).toEqual([]);
    expect(before.proofs.map((p) => p.sha256).sort()).toEqual(named.map((n) => n.sha256).sort());
    expect(before.proofs[0]?.warnings?.[0]).toMatch(/^not in the locked store yet: read from the spool/);

    // Not closed yet: nothing rolled.
    expect(await roll(spool, store, T0 + 60_000)).toMatchObject({ slices: 0, objects: 0 });
    const rolled = await roll(spool, store, Date.parse('2026-12-06T05:12:00Z') + SPOOL_CLOSED_AFTER_MS);
    expect(rolled).toMatchObject({ slices: 1, records: 2, objects: 1, late: 0, open: 0, errors: [] });
    expect([...store.objects.keys()]).toEqual([batchObjectKey(first?.batch ?? '')]);
    const object = readBatch(store.objects.get(batchObjectKey(first?.batch ?? ''))?.body ?? Buffer.alloc(0));
    expect(object.bad).toEqual([]);
    expect(object.records.map((r) => r.entry.sha256).sort()).toEqual(named.map((n) => n.sha256).sort());
    // Nothing deleted (a delete is billed; the TTL's is not): each item expires SPOOL_KEEP_DAYS after its slice.
    const items = (await table.allItems()).filter((i) => String(i.pk).startsWith('EVIDENCE_SPOOL#'));
    const cursor = items.find((i) => i.pk === 'EVIDENCE_SPOOL#ROLLED');
    expect(cursor?.rolledBefore).toBeGreaterThan(Date.parse('2026-12-06T05:12:00Z'));
    const spooledItems = items.filter((i) => i !== cursor);
    expect(spooledItems).toHaveLength(2);
    for (const i of spooledItems) {
      expect(Object.keys(i).sort()).toEqual(['dict', 'dz', 'expiresAt', 'pk', 'sk']);
      expect(i.expiresAt).toBe(Date.parse('2026-12-06T05:12:00Z') / 1000 + SPOOL_KEEP_DAYS * 86_400);
    }
    expect(await oldestUnrolled(spool)).toBeUndefined();
    // The next run reads from the cursor: nothing rolled twice.
    expect(await roll(spool, store, Date.parse('2026-12-06T05:12:00Z') + SPOOL_CLOSED_AFTER_MS + 60_000)).toMatchObject(
      { slices: 0, objects: 0 },
    );

    const after = await findSends(store, named, { locator: { unrolled: (s) => spool.unrolled(s) } });
    expect(after.unfound).toEqual([]);
    expect(after.proofs.map((p) => p.sha256).sort()).toEqual(named.map((n) => n.sha256).sort());
    expect(after.proofs.every((p) => p.warnings === undefined)).toBe(true);
  });

  it('a sweeper dying after the PUT and before moving the cursor: the next run reads the slice again, finds the object holding them — one object, nothing lost or written twice', async () => {
    const real = new DynamoEvidenceSpool(table.doc, table.tableName);
    const store = new MemoryStore();
    const start = Date.parse('2026-12-06T06:00:10Z');
    const { named } = await invocation(real, store, 'inv0000002', start, ['sp-b1', 'sp-b2', 'sp-b3']);
    let dies = true;
    const dying: EvidenceSpool = Object.assign(Object.create(real) as EvidenceSpool, {
      advance: async (from: SpoolCursor, to: number) => {
        if (dies) throw Object.assign(new Error('the sweeper timed out'), { name: 'TimedOut' });
        return real.advance(from, to);
      },
    });
    const now = Date.parse('2026-12-06T06:00:00Z') + SPOOL_CLOSED_AFTER_MS + 5_000;
    const crashed = await roll(dying, store, now);
    expect(crashed).toMatchObject({ slices: 1, objects: 1, errors: ['spool cursor: TimedOut: the sweeper timed out'] });
    expect(store.objects.size).toBe(1);
    expect(await oldestUnrolled(real)).toBe(Date.parse('2026-12-06T06:00:00Z'));

    dies = false;
    const again = await roll(dying, store, now + 60_000);
    expect(again).toMatchObject({ slices: 1, records: 3, objects: 0, late: 0, open: 0, errors: [] });
    expect(store.objects.size).toBe(1);
    expect(await oldestUnrolled(real)).toBeUndefined();
    const found = await findSends(store, named, { locator: { unrolled: (s) => real.unrolled(s) } });
    expect(found.proofs).toHaveLength(3);
  });

  it("with the sweeper down for half an hour no spooled record reads as missing; the first run back rolls every closed slice, and a record whose put lands after its slice was rolled is not read from the spool's copy (its rebuild writes it beside the object)", async () => {
    const spool = new DynamoEvidenceSpool(table.doc, table.tableName);
    const store = new MemoryStore();
    const start = Date.parse('2026-12-06T07:00:05Z');
    const minutes = [0, 1, 2, 10, 20];
    const named = (
      await Promise.all(minutes.map((m) => invocation(spool, store, `inv00003${m}x`, start + m * 60_000, [`sp-c${m}`])))
    ).flatMap((i) => i.named);
    const down = await findSends(store, named, { locator: { unrolled: (s) => spool.unrolled(s) } });
    expect(down.unfound).toEqual([]);
    expect(down.proofs).toHaveLength(minutes.length);
    expect(await oldestUnrolled(spool)).toBe(Date.parse('2026-12-06T07:00:00Z'));

    const back = start + 30 * 60_000;
    const rolled = await roll(spool, store, back);
    expect(rolled).toMatchObject({ slices: minutes.length, records: minutes.length, open: 0 });
    expect(await oldestUnrolled(spool)).toBeUndefined();

    // A dead invocation's record rebuilt after its slice was rolled: spooled late, written beside the slice's object.
    const first = named[0]?.batch ?? '';
    const late = proofOf('sp-c-late', start + 2_000, 'Example Bank: your card was used.');
    await spool.put(
      [
        {
          slice: first,
          sha256: late.sha256,
          notificationId: late.record.notificationId,
          recordKind: 'SEND',
          bytes: late.bytes,
        },
      ],
      back,
    );
    // Below the cursor: no roll-up reads it again. Its writer's put went unanswered, so its intent stayed open and the
    // rebuild writes it beside the slice's object (evidence-spool-cursor.test.ts); until then it reads as on its way,
    // not from the spool: a rolled slice's spool copy is never shown (a court-ordered erasure removes the objects).
    expect(await roll(spool, store, back + 60_000)).toMatchObject({ slices: 0, objects: 0 });
    const withLate = [...named, { batch: first, notificationId: late.record.notificationId, sha256: late.sha256 }];
    const found = await findSends(store, withLate, { locator: { unrolled: (s) => spool.unrolled(s) } });
    expect(found.unfound).toEqual([expect.objectContaining({ notificationId: late.record.notificationId })]);
    expect(found.proofs.map((p) => p.sha256).sort()).toEqual(named.map((n) => n.sha256).sort());
  });

  it("a feedback invocation's few reports go to the spool under a slice its send batch's item names: read with the send before and after the roll-up, one object for the minute", async () => {
    const spool = new DynamoEvidenceSpool(table.doc, table.tableName);
    const store = new MemoryStore();
    const reports = new MemoryReports();
    const sent = await invocation(spool, store, 'inv0000004', T0 + 3_600_000, ['sp-d1'], 'EMAIL');
    const [named] = sent.named as [{ batch: string; notificationId: string; sha256: string }];
    const read = readFeedback(
      sesEvent('Bounce', { notificationId: named.notificationId, messageId: 'msg-sp-d1', to: 'gone1@example.com' }),
    );
    const messageId = read.ok ? read.feedback.messageId : '';
    const at = T0 + 3_600_000 + 20_000;
    let ids = 0;
    await recordFeedback([read], {
      store: {
        findByMessageId: async () => undefined,
        recordDelivery: async () => ({ kind: 'recorded' as const, sendBatch: named.batch }),
        suppressAddress: async () => 'suppressed' as const,
        recipientOf: async () => 'gone1@example.com',
      },
      now: () => at,
      sleep: async () => undefined,
      evidence: {
        store,
        gaps: new MemoryGaps(),
        reports,
        retentionDays: RETENTION,
        newId: () => `feedback${String(ids++).padStart(4, '0')}`,
        timeoutMs: 1_000,
        spool,
        spoolBelow: 25,
      },
    });
    const [reportsSlice] = await reports.of(named.batch);
    expect(parseSliceBatch(reportsSlice ?? '')).toMatchObject({ days: RETENTION });
    expect(store.objects.size).toBe(0);
    const locator = { reportsOf: (b: string) => reports.of(b), unrolled: (s: string) => spool.unrolled(s) };
    // The send's own record carries the provider's message id the report names.
    const sendFound = async () => (await findSends(store, [named], { locator })).proofs[0];
    const before = await sendFound();
    expect(before?.feedback.map((f) => [f.status, f.providerMessageId])).toEqual([['BOUNCED', messageId]]);

    // The send and the report of the same minute and retention: one object.
    expect(reportsSlice).toBe(named.batch);
    const rolled = await roll(spool, store, at + SPOOL_CLOSED_AFTER_MS);
    expect(rolled).toMatchObject({ slices: 1, records: 2, objects: 1, open: 0 });
    expect([...store.objects.keys()]).toEqual([batchObjectKey(named.batch)]);
    const after = await sendFound();
    expect(after?.feedback).toEqual(before?.feedback);
    expect(after?.warnings).toBeUndefined();
  });

  it('twelve invocations of one record in one minute make ONE object, its records over every partition read whole even past the per-run limit', async () => {
    const spool = new DynamoEvidenceSpool(table.doc, table.tableName);
    const store = new MemoryStore();
    const start = Date.parse('2026-12-06T09:30:00Z');
    const named = (
      await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          invocation(spool, store, `inv00005${String(i).padStart(2, '0')}`, start + i * 4_000, [`sp-e${i}`]),
        ),
      )
    ).flatMap((i) => i.named);
    expect(new Set(named.map((n) => n.batch)).size).toBe(1);
    const rolled = await rollUpEvidence({
      spool,
      store,
      now: () => start + SPOOL_CLOSED_AFTER_MS,
      deadline: start + SPOOL_CLOSED_AFTER_MS + 30_000,
      limit: 1,
      timeoutMs: 2_000,
    });
    expect(rolled).toMatchObject({ slices: 1, records: 12, objects: 1, open: 0 });
    const object = readBatch(store.objects.get(batchObjectKey(named[0]?.batch ?? ''))?.body ?? Buffer.alloc(0));
    expect(object.records).toHaveLength(12);
  });
});

/** A spool item's key, as the spool writes it (a writer of the table that bypasses the spool's put). */
const spoolKeyOf = (slice: string, sha256: string, startMs: number) => ({
  pk: `EVIDENCE_SPOOL#${spoolShardOf(sha256)}`,
  sk: `${String(startMs).padStart(13, '0')}#${slice}#${sha256}`,
});

describe('a bad spool item', () => {
  const spooled = (slice: string, p: SendProof, bytes = p.bytes) => ({
    slice,
    sha256: p.sha256,
    notificationId: p.record.notificationId,
    recordKind: 'SEND' as const,
    bytes,
  });
  const rollAt = (spool: EvidenceSpool, store: MemoryStore, now: number) =>
    rollUpEvidence({ spool, store, now: () => now, deadline: now + 30_000, limit: 1_000, timeoutMs: 2_000 });
  const sliceAt = (startMs: number) => sliceBatchName(startMs, RETENTION);

  it("an overwritten spool item is refused, and a body that is not its key's digest is never rolled nor deleted: set apart and counted", async () => {
    const spool = new DynamoEvidenceSpool(table.doc, table.tableName);
    const store = new MemoryStore();
    const start = Date.parse('2026-11-01T10:00:00Z');
    const real = proofOf('bad-a', start + 1_000);
    const forged = proofOf('bad-a', start + 1_000, 'Example Bank: other text.');
    const slice = sliceAt(start);
    await spool.put([spooled(slice, real)], start);
    // The same key again (a retried put, a rebuild): landed, and never replaced, whatever bytes the put carries.
    await spool.put([spooled(slice, real)], start + 1);
    await spool.put([spooled(slice, real, forged.bytes)], start + 2);
    expect((await spool.ofSlice(slice)).map((r) => sha256Hex(r.bytes))).toEqual([real.sha256]);
    // A writer of the table that bypasses the condition: the record's own put is then refused, not taken as landed.
    const other = proofOf('bad-b', start + 2_000);
    const otherForged = proofOf('bad-b', start + 2_000, 'Example Bank: forged.');
    const forgedItem = await spoolItem({ ...spooled(slice, other), bytes: otherForged.bytes });
    const key = { pk: String(forgedItem.pk), sk: String(forgedItem.sk) };
    await table.doc.send(new PutCommand({ TableName: table.tableName, Item: forgedItem }));
    await expect(spool.put([spooled(slice, other)], start + 3)).rejects.toThrow(EvidenceSpoolConflict);
    // The roll-up checks the bytes against the key's digest.
    const rolled = await rollAt(spool, store, start + SPOOL_CLOSED_AFTER_MS);
    expect(rolled).toMatchObject({ slices: 1, records: 1, objects: 1, open: 0, errors: [] });
    expect(rolled.setAside).toEqual([`${key.pk} ${key.sk}: its bytes are not the digest its key names`]);
    const object = readBatch(store.objects.get(batchObjectKey(slice))?.body ?? Buffer.alloc(0));
    expect(object.header.records.map((r) => r.sha256)).toEqual([real.sha256]);
    // Kept for the on-call under a key no roll-up reads, and its place is free for the real record.
    const aside = await table.doc.send(
      new GetCommand({ TableName: table.tableName, Key: { pk: key.pk, sk: `BAD#${key.sk}` } }),
    );
    expect(await decodeSpoolBody(aside.Item ?? {})).toEqual(otherForged.bytes);
    // The forged item itself is never rolled (the cursor is past its minute) and expires; the real record, its put
    // refused, is covered as any refused put is: its intent's rebuild, or its writer's own late object.
    expect(await rollAt(spool, store, start + SPOOL_CLOSED_AFTER_MS + 60_000)).toMatchObject({
      slices: 0,
      setAside: [],
    });
  });

  it('an item whose body does not unzip does not stop any other minute rolling, nor the rest of its own', async () => {
    const spool = new DynamoEvidenceSpool(table.doc, table.tableName);
    const store = new MemoryStore();
    const start = Date.parse('2026-11-02T10:00:00Z');
    const same = proofOf('bad-c', start + 1_000);
    const next = proofOf('bad-d', start + 61_000);
    await spool.put([spooled(sliceAt(start), same), spooled(sliceAt(start + 60_000), next)], start);
    const key = spoolKeyOf(sliceAt(start), 'f'.repeat(64), start);
    await table.doc.send(
      new PutCommand({
        TableName: table.tableName,
        Item: {
          ...key,
          kind: 'EVIDENCE_SPOOL',
          body: Buffer.from('not gzip'),
          notificationId: 'x#SMS',
          recordKind: 'SEND',
          since: 'x',
        },
      }),
    );
    const rolled = await rollAt(spool, store, start + 60_000 + SPOOL_CLOSED_AFTER_MS);
    expect(rolled).toMatchObject({ slices: 2, records: 2, objects: 2, open: 0, errors: [] });
    expect(rolled.setAside).toEqual([`${key.pk} ${key.sk}: its body does not unzip`]);
    expect(store.objects.has(batchObjectKey(sliceAt(start)))).toBe(true);
    expect(store.objects.has(batchObjectKey(sliceAt(start + 60_000)))).toBe(true);
    expect(await oldestUnrolled(spool)).toBeUndefined();
  });

  it("a record the strict parser refuses (another evidence version) is still locked byte-exact, beside its minute's object", async () => {
    const spool = new DynamoEvidenceSpool(table.doc, table.tableName);
    const store = new MemoryStore();
    const start = Date.parse('2026-11-03T10:00:00Z');
    const good = proofOf('bad-e', start + 1_000);
    const slice = sliceAt(start);
    const old = Buffer.from(JSON.stringify({ ...good.record, notificationId: 'bad-o#SMS', evidenceVersion: 0 }));
    const oldProof = { ...good, bytes: old, sha256: sha256Hex(old) };
    await spool.put([spooled(slice, good), { ...spooled(slice, oldProof), notificationId: 'bad-o#SMS' }], start);
    const rolled = await rollAt(spool, store, start + SPOOL_CLOSED_AFTER_MS);
    expect(rolled).toMatchObject({ slices: 1, records: 2, objects: 2, open: 0, errors: [], setAside: [] });
    const own = readBatch(store.objects.get(batchObjectKey(slice))?.body ?? Buffer.alloc(0));
    expect(own.records.map((r) => r.bytes)).toEqual([good.bytes]);
    const beside = store.objects.get(batchObjectKey(lateBatchName(slice, [oldProof.sha256])));
    const kept = readBatch(beside?.body ?? Buffer.alloc(0));
    expect(kept.records.map((r) => r.bytes)).toEqual([old]);
    expect(beside?.retainUntil.toISOString()).toBe(good.record.retainUntil);
    expect(await oldestUnrolled(spool)).toBeUndefined();
  });
});

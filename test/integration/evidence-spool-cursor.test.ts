/**
 * The spool's cursor on DynamoDB Local (stores/evidence-spool.ts, sweeper/roll-up-evidence.ts, recover-evidence.ts):
 * a rebuild racing a roll-up, a record rebuilt after its minute was rolled, and the items an earlier version spooled
 * in the main table — read, rolled and deleted by the sweeper's drain.
 */
import { gzipSync } from 'node:zlib';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { beforeEach, describe, expect, inject, it } from 'vitest';
import type { SendProof } from '../../functions/dispatch/record-evidence.ts';
import { batchName, batchObjectKey, readBatch } from '../../functions/domain/evidence-batch.ts';
import {
  lateBatchName,
  SPOOL_CLOSED_AFTER_MS,
  sliceBatchName,
  spoolShardOf,
} from '../../functions/domain/evidence-spool.ts';
import { findSends } from '../../functions/stores/evidence-reader.ts';
import { DynamoEvidenceSpool, type EvidenceSpool, type SpoolCursor } from '../../functions/stores/evidence-spool.ts';
import { recoverEvidenceBatches, type SentHere } from '../../functions/sweeper/recover-evidence.ts';
import { rollUpEvidence, rollUpSpools } from '../../functions/sweeper/roll-up-evidence.ts';
import { MemoryGaps, MemoryIndex, MemoryIntents, MemoryStore } from '../support/evidence-memory.ts';
import { type LocalTable, newLocalTable } from '../support/local-table.ts';
import { proofOf, RETENTION } from '../support/spool-proofs.ts';

let table: LocalTable;
// A table each: the roll-up's cursor is the table's, and each test runs its own clock.
beforeEach(async () => {
  table = await newLocalTable(inject('dynamoEndpoint'));
});

const roll = (spool: EvidenceSpool, store: MemoryStore, now: number) =>
  rollUpEvidence({ spool, store, now: () => now, deadline: now + 30_000, limit: 1_000, timeoutMs: 2_000 });

describe('the roll-up and a rebuild at once', () => {
  const spooled = (slice: string, p: SendProof) => ({
    slice,
    sha256: p.sha256,
    notificationId: p.record.notificationId,
    recordKind: 'SEND' as const,
    bytes: p.bytes,
  });

  /** A dead dispatch invocation's SENT send of `p` in `slice`: its intent opened at each recovery, run at `now`. */
  const deadInvocation = (spool: EvidenceSpool, store: MemoryStore, slice: string, p: SendProof, id: string) => {
    const acceptedAt = Date.parse(p.record.acceptedAt);
    const intents = new MemoryIntents();
    const index = new MemoryIndex();
    const item = {
      notificationId: p.record.notificationId,
      status: 'SENT',
      userId: p.record.userId,
      evidence: { batch: slice, sha256: p.sha256, acceptedAt: p.record.acceptedAt },
    } as unknown as SentHere;
    const recover = async (now: number, rebuilt: SendProof) => {
      const name = batchName('dispatch', acceptedAt - 1_000, id);
      await intents.open({ name, dueMs: acceptedAt + 88_000, notificationIds: [item.notificationId] });
      return recoverEvidenceBatches({
        intents,
        notifications: { get: async () => item },
        outlets: { store, gaps: new MemoryGaps(), index: { index, retentionDays: RETENTION } },
        spool,
        rebuilder: async () => async () => rebuilt,
        now: () => now,
        deadline: now + 30_000,
        limit: 10,
        timeoutMs: 2_000,
      });
    };
    return { index, recover };
  };

  it('a rebuild that spools a record while a roll-up of its minute is under way: that roll-up may not move the cursor past it, and the next run writes it beside the object', async () => {
    const spool = new DynamoEvidenceSpool(table.doc, table.tableName);
    const store = new MemoryStore();
    const start = Date.parse('2026-12-06T08:00:00Z');
    const slice = sliceBatchName(start, RETENTION);
    const first = proofOf('race-1', start + 1_000);
    const rebuilt = proofOf('race-2', start + 2_000);
    await spool.put([spooled(slice, first)], start);
    // The roll-up read the slice and wrote its object; before it moves the cursor, the rebuild puts and claims.
    const racing: EvidenceSpool = Object.assign(Object.create(spool) as EvidenceSpool, {
      advance: async (from: SpoolCursor, to: number) => {
        await spool.put([spooled(slice, rebuilt)], start);
        expect(await spool.claimUnrolled(start)).toBe(true);
        return spool.advance(from, to);
      },
    });
    const now = start + SPOOL_CLOSED_AFTER_MS;
    expect(await roll(racing, store, now)).toMatchObject({
      slices: 1,
      objects: 1,
      errors: ['spool cursor: moved meanwhile, read again next run'],
    });
    expect(await roll(spool, store, now + 60_000)).toMatchObject({ slices: 1, objects: 1, late: 1, errors: [] });
    expect(store.objects.has(batchObjectKey(lateBatchName(slice, [rebuilt.sha256])))).toBe(true);
    // Rolled now: a later rebuild is told so, and writes beside the object itself (recover-evidence.ts).
    expect(await spool.claimUnrolled(start)).toBe(false);
  });

  it("a dead invocation's record rebuilt after its slice was rolled is written beside the slice's object, not spooled below the cursor; a second rebuild writes nothing more", async () => {
    const spool = new DynamoEvidenceSpool(table.doc, table.tableName);
    const store = new MemoryStore();
    const start = Date.parse('2026-12-06T09:00:00Z');
    const slice = sliceBatchName(start, RETENTION);
    const other = proofOf('gone-1', start + 1_000);
    await spool.put([spooled(slice, other)], start);
    expect(await roll(spool, store, start + SPOOL_CLOSED_AFTER_MS)).toMatchObject({ slices: 1, objects: 1 });

    const dead = proofOf('gone-2', start + 2_000);
    const { recover: recoverAt } = deadInvocation(spool, store, slice, dead, 'inv0000099');
    const recover = (now: number) => recoverAt(now, dead);
    const now = start + SPOOL_CLOSED_AFTER_MS + 60_000;
    expect(await recover(now)).toMatchObject({ recovered: 1, rebuilt: 1, lost: [] });
    const beside = batchObjectKey(lateBatchName(slice, [dead.sha256]));
    expect(readBatch(store.objects.get(beside)?.body ?? Buffer.alloc(0)).records.map((r) => r.bytes)).toEqual([
      dead.bytes,
    ]);
    expect(await spool.ofSlice(slice)).toHaveLength(1);
    const objects = store.objects.size;
    expect(await recover(now + 60_000)).toMatchObject({ recovered: 1, lost: [] });
    expect(store.objects.size).toBe(objects);
    const found = await findSends(
      store,
      [{ batch: slice, notificationId: dead.record.notificationId, sha256: dead.sha256 }],
      {
        locator: { unrolled: (s) => spool.unrolled(s) },
      },
    );
    expect(found.proofs.map((p) => [p.sha256, p.warnings])).toEqual([[dead.sha256, undefined]]);
  });

  it("an unanswered put that landed after its minute was rolled, whose rebuild differs (a template deployed since): its spooled bytes are locked beside the slice's object, not counted lost", async () => {
    const spool = new DynamoEvidenceSpool(table.doc, table.tableName);
    const store = new MemoryStore();
    const start = Date.parse('2026-12-06T09:10:00Z');
    const slice = sliceBatchName(start, RETENTION);
    await spool.put([spooled(slice, proofOf('late-0', start + 1_000))], start);
    // The roll-up reads the minute without it and moves the cursor past it; then the put lands.
    expect(await roll(spool, store, start + SPOOL_CLOSED_AFTER_MS)).toMatchObject({ slices: 1, objects: 1 });
    const landed = proofOf('late-1', start + 2_000);
    await spool.put([spooled(slice, landed)], start + SPOOL_CLOSED_AFTER_MS + 1_000);
    const now = start + SPOOL_CLOSED_AFTER_MS + 120_000;
    const { index, recover: recoverAt } = deadInvocation(spool, store, slice, landed, 'inv0000098');
    const recover = () => recoverAt(now, proofOf('late-1', start + 2_000, 'Example Bank: a template deployed since.'));
    // No roll-up reads below its cursor: the recovery locks the spooled bytes beside the slice's object, indexed.
    expect(await recover()).toMatchObject({ recovered: 1, lost: [] });
    expect((await index.sendsOf(landed.record.userId)).map((x) => x.notificationId)).toEqual([
      landed.record.notificationId,
    ]);
    const beside = batchObjectKey(lateBatchName(slice, [landed.sha256]));
    expect(readBatch(store.objects.get(beside)?.body ?? Buffer.alloc(0)).records.map((x) => x.bytes)).toEqual([
      landed.bytes,
    ]);
    const found = await findSends(
      store,
      [{ batch: slice, notificationId: landed.record.notificationId, sha256: landed.sha256 }],
      { locator: { unrolled: (s) => spool.unrolled(s) } },
    );
    expect(found.proofs.map((p) => [p.sha256, p.warnings])).toEqual([[landed.sha256, undefined]]);
  });

  it("a send whose rebuild differs but whose record the spool holds in a minute not rolled yet: kept for the roll-up, and indexed under its slice (its writer's index write may not have landed)", async () => {
    const spool = new DynamoEvidenceSpool(table.doc, table.tableName);
    const start = Date.parse('2026-12-06T09:20:00Z');
    const slice = sliceBatchName(start, RETENTION);
    const held = proofOf('held-1', start + 2_000);
    await spool.put([spooled(slice, held)], start);
    const store = new MemoryStore();
    const { index, recover } = deadInvocation(spool, store, slice, held, 'inv0000097');
    const r = await recover(
      start + 120_000,
      proofOf('held-1', start + 2_000, 'Example Bank: a template deployed since.'),
    );
    expect(r).toMatchObject({ recovered: 1, lost: [] });
    expect(store.objects.size).toBe(0);
    expect(await index.sendsOf(held.record.userId)).toEqual([expect.objectContaining({ batch: slice })]);
  });
});

/**
 * An item of the earlier layout in the main table, as an earlier version put it (unconditionally): gzipped body, the
 * ids beside it, no TTL.
 */
async function putLegacyItem(start: number, slice: string, p: SendProof) {
  const key = {
    pk: `EVIDENCE_SPOOL#${spoolShardOf(p.sha256)}`,
    sk: `${String(start).padStart(13, '0')}#${slice}#${p.sha256}`,
  };
  await table.doc.send(
    new PutCommand({
      TableName: table.tableName,
      Item: {
        ...key,
        kind: 'EVIDENCE_SPOOL',
        body: gzipSync(p.bytes),
        notificationId: p.record.notificationId,
        recordKind: 'SEND',
        since: new Date(start).toISOString(),
      },
    }),
  );
  return key;
}

describe('items an earlier version spooled in the main table', () => {
  it("are read beside the spool table's own, rolled into their minute's object by the sweeper's drain of the main table, and deleted once rolled (they have no TTL)", async () => {
    const spool = new DynamoEvidenceSpool(table.doc, table.evidenceSpoolTableName, { formerTable: table.tableName });
    const former = spool.former() as DynamoEvidenceSpool;
    const store = new MemoryStore();
    const start = Date.parse('2026-12-06T10:00:00Z');
    const slice = sliceBatchName(start, RETENTION);
    const old = proofOf('legacy-1', start + 1_000);
    const legacyKey = await putLegacyItem(start, slice, old);
    const now = proofOf('legacy-2', start + 2_000);
    await spool.put(
      [{ slice, sha256: now.sha256, notificationId: now.record.notificationId, recordKind: 'SEND', bytes: now.bytes }],
      start,
    );
    expect((await spool.ofSlice(slice)).map((r) => r.sha256).sort()).toEqual([old.sha256, now.sha256].sort());

    const at = start + SPOOL_CLOSED_AFTER_MS;
    const rolled = await rollUpSpools([spool, former], (s) => ({
      spool: s,
      store,
      now: () => at,
      deadline: at + 30_000,
      limit: 1_000,
      timeoutMs: 2_000,
    }));
    expect(rolled).toMatchObject({ slices: 2, records: 2, errors: [] });
    const held = new Set<string>();
    for (const [, o] of store.objects) for (const r of readBatch(o.body).records) held.add(r.entry.sha256);
    expect([...held].sort()).toEqual([old.sha256, now.sha256].sort());
    const left = await table.doc.send(new GetCommand({ TableName: table.tableName, Key: legacyKey }));
    expect(left.Item).toBeUndefined();
  });

  it("are drained from the start every run: an earlier version's sweeper still running at a deploy, spooling into a minute long rolled, has its item rolled beside that minute's object and deleted", async () => {
    const former = new DynamoEvidenceSpool(table.doc, table.evidenceSpoolTableName, {
      formerTable: table.tableName,
    }).former() as DynamoEvidenceSpool;
    const store = new MemoryStore();
    const start = Date.parse('2026-12-06T11:00:00Z');
    const slice = sliceBatchName(start, RETENTION);
    const putLegacy = (p: SendProof) => putLegacyItem(start, slice, p);
    await putLegacy(proofOf('drain-1', start + 1_000));
    const drain = (at: number) =>
      rollUpEvidence({ spool: former, store, now: () => at, deadline: at + 30_000, limit: 1_000, timeoutMs: 2_000 });
    expect(await drain(start + SPOOL_CLOSED_AFTER_MS)).toMatchObject({ slices: 1, objects: 1, errors: [] });
    // An hour on, the old sweeper rebuilds a record into that minute.
    const late = proofOf('drain-2', start + 2_000);
    const lateKey = await putLegacy(late);
    expect(await drain(start + 3_600_000)).toMatchObject({ slices: 1, late: 1, errors: [] });
    expect(store.objects.has(batchObjectKey(lateBatchName(slice, [late.sha256])))).toBe(true);
    expect((await table.doc.send(new GetCommand({ TableName: table.tableName, Key: lateKey }))).Item).toBeUndefined();
    // Nothing left, and no cursor item written in the main table.
    expect(await former.oldestSliceMs(0)).toBeUndefined();
    const cursor = await table.doc.send(
      new GetCommand({ TableName: table.tableName, Key: { pk: 'EVIDENCE_SPOOL#ROLLED', sk: 'CURSOR' } }),
    );
    expect(cursor.Item).toBeUndefined();
  });
});

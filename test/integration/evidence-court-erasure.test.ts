/**
 * A court-ordered erasure of locked records (docs/operations.md "Break glass"): the roll-up deletes no spool item
 * (each expires by TTL, 8 days after its minute), so once the customer's objects are removed a reader must not show
 * the record again from the spool's copy — a rolled slice is read from its objects only — and the break-glass role
 * finds the customer's spooled items by the keys the index's digests give, and deletes them.
 */
import { DeleteCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { beforeEach, expect, inject, it } from 'vitest';
import { batchObjectKey, INDEX_DIGEST_HEX } from '../../functions/domain/evidence-batch.ts';
import { SPOOL_CLOSED_AFTER_MS, sliceBatchName } from '../../functions/domain/evidence-spool.ts';
import { findSends } from '../../functions/stores/evidence-reader.ts';
import { DynamoEvidenceSpool, spoolKeyOf } from '../../functions/stores/evidence-spool.ts';
import { rollUpEvidence } from '../../functions/sweeper/roll-up-evidence.ts';
import { MemoryStore } from '../support/evidence-memory.ts';
import { type LocalTable, newLocalTable } from '../support/local-table.ts';
import { proofOf, RETENTION } from '../support/spool-proofs.ts';

let table: LocalTable;
beforeEach(async () => {
  table = await newLocalTable(inject('dynamoEndpoint'));
});

it('a record removed from the store by a court-ordered erasure is not shown again from the spool, and its spool item is found by the index digest and deleted', async () => {
  const t0 = Date.parse('2026-11-01T10:00:05Z');
  const slice = sliceBatchName(t0, RETENTION);
  const p = proofOf('court1', t0);
  const neighbour = proofOf('court2', t0 + 1_000);
  const spool = new DynamoEvidenceSpool(table.doc, table.tableName);
  const spooled = (q: typeof p) => ({
    slice,
    sha256: q.sha256,
    notificationId: q.record.notificationId,
    recordKind: 'SEND' as const,
    bytes: q.bytes,
  });
  await spool.put([spooled(p), spooled(neighbour)], t0);
  const named = [
    { batch: slice, notificationId: p.record.notificationId, sha256: p.sha256.slice(0, INDEX_DIGEST_HEX) },
  ];
  const read = async (store: MemoryStore) =>
    findSends(store, named, { locator: { unrolled: (s) => spool.unrolled(s) } });
  const store = new MemoryStore();
  // Before the roll-up the spool shows it, said to be not locked yet.
  const before = await read(store);
  expect(before.proofs.map((x) => x.sha256)).toEqual([p.sha256]);
  expect(before.proofs[0]?.warnings?.[0]).toMatch(/^not in the locked store yet/);

  const now = t0 + SPOOL_CLOSED_AFTER_MS + 60_000;
  const r = await rollUpEvidence({ spool, store, now: () => now, deadline: now + 60_000, limit: 100, timeoutMs: 1000 });
  expect(r).toMatchObject({ slices: 1, objects: 1, open: 0 });
  expect((await read(store)).proofs.map((x) => x.sha256)).toEqual([p.sha256]);

  // The break-glass removal of the customer's object: the reader does not fall back to the spool's copy.
  store.objects.delete(batchObjectKey(slice));
  const after = await read(store);
  expect(after.proofs).toEqual([]);
  expect(JSON.stringify(after)).not.toContain('+14255550100');

  // The runbook's spool step: the item's partition and sort key's prefix from the index's 128-bit digest, one Query,
  // one DeleteItem — the neighbour's item stays.
  const key = spoolKeyOf(slice, p.sha256.slice(0, INDEX_DIGEST_HEX));
  if (key === undefined) throw new Error('no key');
  const found = await table.doc.send(
    new QueryCommand({
      TableName: table.tableName,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)',
      ExpressionAttributeValues: { ':pk': key.pk, ':p': key.skPrefix },
      ProjectionExpression: 'pk, sk',
    }),
  );
  expect(found.Items).toHaveLength(1);
  for (const item of found.Items ?? []) {
    await table.doc.send(new DeleteCommand({ TableName: table.tableName, Key: { pk: item.pk, sk: item.sk } }));
  }
  expect((await spool.ofSlice(slice)).map((x) => x.notificationId)).toEqual([neighbour.record.notificationId]);
  // The whole digest names the item exactly (the SENT write's, or a proof's).
  expect(spoolKeyOf(slice, neighbour.sha256)?.skPrefix).toMatch(/#[A-Za-z0-9_-]{43}$/);
});

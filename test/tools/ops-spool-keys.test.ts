/**
 * `npm run ops -- spool-keys <userId>` (tools/ops/spool-keys.ts): a court-ordered erasure's spool step. From the
 * customer's index it names each spooled send's item — partition and sort key's prefix — and prints the break-glass
 * session's Query and DeleteItem commands; the key it names is the item's, and no other customer's.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, expect, inject, it } from 'vitest';
import { indexEntriesOf } from '../../functions/domain/evidence-batch.ts';
import { lateBatchName, sliceBatchName } from '../../functions/domain/evidence-spool.ts';
import { eventPk, INBOX_SK, userKeyOf } from '../../functions/domain/keys.ts';
import { DynamoEvidenceIndex } from '../../functions/stores/evidence-index.ts';
import { DynamoEvidenceSpool, spoolItem } from '../../functions/stores/evidence-spool.ts';
import { main } from '../../tools/ops/cli.ts';
import { type LocalTable, newLocalTable } from '../support/local-table.ts';
import { proofOf, RETENTION } from '../support/spool-proofs.ts';

let table: LocalTable;
let where: string[];
const t0 = Date.parse('2026-11-01T10:00:05Z');
const slice = sliceBatchName(t0, RETENTION);
const mine = proofOf('keys1', t0);
const other = proofOf('keys2', t0 + 1_000);
/** Locked by the recovery from its spooled bytes after its minute was rolled: indexed under the late object's name. */
const late = proofOf('keys3', t0 + 2_000);

beforeAll(async () => {
  table = await newLocalTable(inject('dynamoEndpoint'));
  where = [
    '--endpoint',
    table.endpoint,
    '--table',
    table.tableName,
    '--evidence-dir',
    mkdtempSync(join(tmpdir(), 'k-')),
  ];
  const spool = new DynamoEvidenceSpool(table.doc, table.evidenceSpoolTableName);
  const index = new DynamoEvidenceIndex(table.doc, table.evidenceIndexTableName);
  for (const p of [mine, other, late]) {
    const record = { slice, sha256: p.sha256, notificationId: p.record.notificationId, recordKind: 'SEND' as const };
    await spool.put([{ ...record, bytes: p.bytes }], t0);
    const send = { userId: p.record.userId, acceptedAt: p.record.acceptedAt, notificationId: record.notificationId };
    const batch = p === late ? lateBatchName(slice, [p.sha256]) : slice;
    const entries = indexEntriesOf(batch, [{ ...send, sha256: p.sha256 }]);
    await index.putBatch(entries.map((entry) => ({ entry, expiresAt: 2_000_000_000 })));
  }
});

it("names the customer's spooled item by its partition and sort key's prefix, and no other customer's", async () => {
  let json = '';
  expect(await main(['spool-keys', mine.record.userId, '--json', ...where], (t) => (json += t))).toBe(0);
  const found = JSON.parse(json) as { table: string; keys: { notificationId: string; pk: string; skPrefix: string }[] };
  expect(found.table).toBe(table.evidenceSpoolTableName);
  const item = await spoolItem({
    slice,
    sha256: mine.sha256,
    notificationId: '',
    recordKind: 'SEND',
    bytes: mine.bytes,
  });
  expect(found.keys).toEqual([
    expect.objectContaining({ notificationId: mine.record.notificationId, pk: item.pk, skPrefix: expect.any(String) }),
  ]);
  const prefix = found.keys[0]?.skPrefix ?? '';
  expect(String(item.sk).startsWith(prefix)).toBe(true);
  expect(prefix.length).toBeGreaterThan(String(item.sk).length - 43 + 20);
  const theirs = await spoolItem({
    slice,
    sha256: other.sha256,
    notificationId: '',
    recordKind: 'SEND',
    bytes: other.bytes,
  });
  expect(String(theirs.sk).startsWith(prefix)).toBe(false);
});

it('names the spooled item of a send the recovery locked beside its rolled minute (indexed under the late object)', async () => {
  let json = '';
  expect(await main(['spool-keys', late.record.userId, '--json', ...where], (t) => (json += t))).toBe(0);
  const found = JSON.parse(json) as { keys: { batch: string; pk: string; skPrefix: string }[] };
  const item = await spoolItem({
    slice,
    sha256: late.sha256,
    notificationId: '',
    recordKind: 'SEND',
    bytes: late.bytes,
  });
  expect(found.keys).toEqual([expect.objectContaining({ batch: lateBatchName(slice, [late.sha256]), pk: item.pk })]);
  expect(String(item.sk).startsWith(found.keys[0]?.skPrefix ?? '-')).toBe(true);
});

it("names a spooled send whose index is not written yet (its writer died after its SENT write) from the customer's notification: its slice and whole digest", async () => {
  const unindexed = proofOf('keys4', t0 + 3_000);
  const { userId, notificationId, acceptedAt } = unindexed.record;
  const spooled = { slice, sha256: unindexed.sha256, notificationId, recordKind: 'SEND' as const };
  await new DynamoEvidenceSpool(table.doc, table.evidenceSpoolTableName).put(
    [{ ...spooled, bytes: unindexed.bytes }],
    t0,
  );
  // Its event as ingest wrote it (on the customer's byUser key), its notification SENT naming the slice: no index item.
  await putSent(userId, notificationId, { batch: slice, sha256: unindexed.sha256, acceptedAt });
  expect(await new DynamoEvidenceIndex(table.doc, table.evidenceIndexTableName).sendsOf(userId)).toEqual([]);
  let json = '';
  expect(await main(['spool-keys', userId, '--json', ...where], (t) => (json += t))).toBe(0);
  const found = JSON.parse(json) as { keys: { notificationId: string; pk: string; skPrefix: string }[] };
  const item = await spoolItem({ ...spooled, bytes: unindexed.bytes });
  // The whole digest: the item's whole key, exactly.
  expect(found.keys).toEqual([expect.objectContaining({ notificationId, pk: item.pk, skPrefix: item.sk })]);
});

it('names each of two attempts of one notification spooled in one minute, and a record its notification and its index both name once', async () => {
  // Attempt 1 accepted, its record spooled and indexed; attempt 2 (a resend) accepted in the same minute, its record
  // spooled, indexed and named by the notification's SENT: two items of one notification in one slice.
  const first = proofOf('keys5', t0 + 4_000, 'Example Bank: attempt one.');
  const second = proofOf('keys5', t0 + 5_000, 'Example Bank: attempt two.');
  const { userId, notificationId } = second.record;
  const spool = new DynamoEvidenceSpool(table.doc, table.evidenceSpoolTableName);
  const index = new DynamoEvidenceIndex(table.doc, table.evidenceIndexTableName);
  for (const p of [first, second]) {
    const spooled = { slice, sha256: p.sha256, notificationId, recordKind: 'SEND' as const };
    await spool.put([{ ...spooled, bytes: p.bytes }], t0);
    const send = { userId, acceptedAt: p.record.acceptedAt, notificationId, sha256: p.sha256 };
    await index.putBatch(indexEntriesOf(slice, [send]).map((entry) => ({ entry, expiresAt: 2_000_000_000 })));
  }
  await putSent(userId, notificationId, {
    batch: slice,
    sha256: second.sha256,
    acceptedAt: second.record.acceptedAt,
  });
  let json = '';
  expect(await main(['spool-keys', userId, '--json', ...where], (t) => (json += t))).toBe(0);
  const found = JSON.parse(json) as { keys: { pk: string; skPrefix: string }[] };
  const items = await Promise.all(
    [first, second].map((p) =>
      spoolItem({ slice, sha256: p.sha256, notificationId: '', recordKind: 'SEND', bytes: p.bytes }),
    ),
  );
  // Each item reached by exactly one printed key's Query: none left behind, none deleted twice.
  for (const item of items) {
    const reaching = found.keys.filter((k) => k.pk === item.pk && String(item.sk).startsWith(k.skPrefix));
    expect(reaching).toHaveLength(1);
  }
  expect(found.keys).toHaveLength(2);
});

it("names each of two attempts of one notification spooled in one minute that only the index names (the customer erased from their notifications first), whether or not the index's marks carry their attempts", async () => {
  for (const [eventId, withAttempts] of [
    ['keys6', true],
    ['keys7', false],
  ] as const) {
    // Attempt 1's record and a resend's (attempt 2), each spooled and indexed by its own writer; the customer's
    // notification names nothing now. Marks written before they carried the attempt name none.
    const first = proofOf(eventId, t0 + 6_000, 'Example Bank: attempt one.');
    const second = proofOf(eventId, t0 + 7_000, 'Example Bank: attempt two.');
    const { userId, notificationId } = second.record;
    const spool = new DynamoEvidenceSpool(table.doc, table.evidenceSpoolTableName);
    const index = new DynamoEvidenceIndex(table.doc, table.evidenceIndexTableName);
    for (const [n, p] of [first, second].entries()) {
      await spool.put([{ slice, sha256: p.sha256, notificationId, recordKind: 'SEND', bytes: p.bytes }], t0);
      const send = { userId, acceptedAt: p.record.acceptedAt, notificationId, sha256: p.sha256 };
      const entries = indexEntriesOf(slice, [{ ...send, ...(withAttempts ? { attempt: n + 1 } : {}) }]);
      await index.putBatch(entries.map((entry) => ({ entry, expiresAt: 2_000_000_000 })));
    }
    let json = '';
    expect(await main(['spool-keys', userId, '--json', ...where], (t) => (json += t))).toBe(0);
    const found = JSON.parse(json) as { keys: { pk: string; skPrefix: string }[] };
    for (const p of [first, second]) {
      const item = await spoolItem({ slice, sha256: p.sha256, notificationId: '', recordKind: 'SEND', bytes: p.bytes });
      const reaching = found.keys.filter((k) => k.pk === item.pk && String(item.sk).startsWith(k.skPrefix));
      expect(reaching, `${eventId}: each item reached by exactly one printed key`).toHaveLength(1);
    }
    expect(found.keys, eventId).toHaveLength(2);
  }
});

it('prints the Query and DeleteItem commands the break-glass session runs', async () => {
  let text = '';
  expect(await main(['spool-keys', mine.record.userId, ...where], (t) => (text += t))).toBe(0);
  expect(text).toContain(`1 spooled send(s) of ${mine.record.userId} in ${table.evidenceSpoolTableName}`);
  expect(text).toContain(`aws dynamodb query --table-name '${table.evidenceSpoolTableName}'`);
  expect(text).toContain('aws dynamodb delete-item');
  // Pasted into a shell as printed: the Query of the prefix, then a DeleteItem of each key it answers.
  const bin = mkdtempSync(join(tmpdir(), 'aws-'));
  const log = join(bin, 'calls');
  writeFileSync(
    join(bin, 'aws'),
    `#!/bin/sh\necho "$*" >> '${log}'\n[ "$2" = query ] && printf 'SK1\\tSK2\\n'\nexit 0\n`,
  );
  chmodSync(join(bin, 'aws'), 0o755);
  const run = spawnSync('bash', ['-e', '-c', text], { env: { ...process.env, PATH: `${bin}:${process.env.PATH}` } });
  expect(run.status, String(run.stderr)).toBe(0);
  const calls = readFileSync(log, 'utf8').trim().split('\n');
  const deletes = ['SK1', 'SK2'].map(
    (sk) =>
      `dynamodb delete-item --table-name ${table.evidenceSpoolTableName} --key {"pk":{"S":"${found(text)}"},"sk":{"S":"${sk}"}}`,
  );
  // The item's prefix, then its set-aside copy's (`BAD#<its key>`): each Query, then a DeleteItem of each key found.
  expect(calls[0]).toContain(`dynamodb query --table-name ${table.evidenceSpoolTableName}`);
  expect(calls[3]).toContain(`"S":"BAD#`);
  expect([calls.slice(1, 3), calls.slice(4)]).toEqual([deletes, deletes]);
  // A Query that fails (access denied, another region) stops the script: it never reads as "nothing left".
  writeFileSync(join(bin, 'aws'), `#!/bin/sh\necho "$*" >> '${log}'\n[ "$2" = query ] && exit 254\nexit 0\n`);
  writeFileSync(log, '');
  const failed = spawnSync('bash', ['-c', text], { env: { ...process.env, PATH: `${bin}:${process.env.PATH}` } });
  expect(failed.status).not.toBe(0);
  expect(readFileSync(log, 'utf8')).not.toContain('delete-item');
  const noRegion = { ...process.env, PATH: `${bin}:${process.env.PATH}`, AWS_REGION: '' };
  expect(String(spawnSync('bash', ['-c', text], { env: noRegion }).stderr)).toContain('set AWS_REGION');
  let none = '';
  expect(await main(['spool-keys', 'nobody', ...where], (t) => (none += t))).toBe(0);
  expect(none).toContain('nothing to delete there');
});

/** The partition the printed commands name. */
const found = (text: string) => /EVIDENCE_SPOOL#\d/.exec(text)?.[0];

/** An event as ingest wrote it (on its customer's byUser key) and its notification SENT naming its record. */
async function putSent(
  userId: string,
  notificationId: string,
  evidence: { batch: string; sha256: string; acceptedAt: string },
) {
  const eventId = notificationId.slice(0, notificationId.lastIndexOf('#'));
  await table.doc.send(
    new PutCommand({
      TableName: table.tableName,
      Item: { pk: eventPk(eventId), sk: INBOX_SK, userKey: userKeyOf(userId), occurredAt: evidence.acceptedAt },
    }),
  );
  await table.doc.send(
    new PutCommand({
      TableName: table.tableName,
      Item: {
        pk: eventPk(eventId),
        sk: `NOTIFICATION#${notificationId.slice(eventId.length + 1)}`,
        kind: 'NOTIFICATION',
        notificationId,
        userId,
        status: 'SENT',
        evidence,
      },
    }),
  );
}

/**
 * An operator's resend of a SENT notification, on DynamoDB Local: the resend removes the message ids but keeps the
 * earlier send's `evidence` on the item (its readers need its digest), so attempt 2's SENDING item still names attempt
 * 1's record. Attempt 2's holder spools its record and dies before its SENT write: the sweeper must find attempt 2's
 * record in its minutes (the earlier reference is not this attempt's: no message id came with it) and write SENT —
 * never send it again on an at-least-once channel (review 52, BLOCKER 1; sweeper/spooled-send.ts `named`).
 */
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { beforeEach, expect, inject, it } from 'vitest';
import { evidenceBody } from '../../functions/domain/evidence.ts';
import { sha256Hex } from '../../functions/domain/evidence-batch.ts';
import { sliceBatchName } from '../../functions/domain/evidence-spool.ts';
import { notificationKey } from '../../functions/domain/keys.ts';
import { buildNotification } from '../../functions/domain/notification.ts';
import { DynamoEventStore } from '../../functions/stores/event-store.ts';
import { DynamoEvidenceSpool } from '../../functions/stores/evidence-spool.ts';
import { DynamoSweepStore } from '../../functions/stores/sweep-store.ts';
import { spooledSends } from '../../functions/sweeper/spooled-send.ts';
import { decodeTransfer, transferEvent } from '../support/events.ts';
import { MemoryIndex } from '../support/evidence-memory.ts';
import { type LocalTable, newLocalTable } from '../support/local-table.ts';
import { proofOf, RETENTION } from '../support/spool-proofs.ts';
import { sweepWith } from '../support/sweep-deps.ts';

const LEASE_MS = 120_000;
let table: LocalTable;
let store: DynamoSweepStore;
beforeEach(async () => {
  table = await newLocalTable(inject('dynamoEndpoint'));
  store = new DynamoSweepStore(table.doc, table.tableName);
});

/**
 * Notification `id` (SMS, at-least-once) SENT as attempt 1 with its record spooled and named, then resent by an
 * operator at `now + 2 s`, and attempt 2 claimed at `t2`: its item names attempt 1's record, without a message id.
 */
async function resentAndClaimed(id: string, now: number) {
  const d = decodeTransfer(transferEvent({ eventId: id, occurredAt: new Date(now).toISOString() }));
  const n = buildNotification(d.event, 'SMS', '+14255550100', now, { retentionDays: 1 });
  await table.doc.send(new PutCommand({ TableName: table.tableName, Item: n }));
  const key = notificationKey(id, 'SMS');
  const spool = new DynamoEvidenceSpool(table.doc, table.tableName);
  const c1 = await store.claim(key, 'c1', now, LEASE_MS);
  if (c1.kind !== 'claimed') throw new Error(c1.kind);
  const p1 = proofOf(id, now + 500);
  const slice1 = sliceBatchName(now, RETENTION);
  await spool.put(
    [{ slice: slice1, sha256: p1.sha256, notificationId: `${id}#SMS`, recordKind: 'SEND', bytes: p1.bytes }],
    now,
  );
  const ev1 = { batch: slice1, sha256: p1.sha256, acceptedAt: p1.record.acceptedAt };
  expect(await store.markSent(c1.item, `msg-${id}-1`, now + 1_000, ev1)).toBe('applied');

  // The operator resends it (the customer says it never came), naming the accepted send; attempt 2 is claimed.
  const events = new DynamoEventStore(table.doc, table.tableName);
  const by = { principal: 'arn:aws:sts::111122223333:assumed-role/ops/ana', verifiedBy: 'IAM' } as never;
  const resent = await events.resend(
    (await store.get(key)) as never,
    { by, reason: 'not received', accepted: `msg-${id}-1` },
    now + 2_000,
  );
  expect(resent.result).toBe('applied');
  const t2 = now + 3_000;
  const c2 = await store.claim(key, 'c2', t2, LEASE_MS);
  if (c2.kind !== 'claimed') throw new Error(c2.kind);
  expect(await store.get(key)).toMatchObject({ attempt: 2, evidence: { sha256: p1.sha256 } });
  expect((await store.get(key))?.providerMessageId).toBeUndefined();
  /** Attempt 2's record spooled by its holder: its slice and digest. */
  const spoolSecond = async () => {
    const record2 = {
      ...p1.record,
      attempt: 2,
      providerMessageId: `msg-${id}-2`,
      acceptedAt: new Date(t2 + 500).toISOString(),
    };
    const bytes2 = evidenceBody(record2 as never);
    const slice2 = sliceBatchName(t2, RETENTION);
    await spool.put(
      [{ slice: slice2, sha256: sha256Hex(bytes2), notificationId: `${id}#SMS`, recordKind: 'SEND', bytes: bytes2 }],
      t2,
    );
    return { slice: slice2, sha256: sha256Hex(bytes2) };
  };
  return { key, spool, t2, c2: c2.item, spoolSecond };
}

/** The sweeper's run once attempt 2's lease has ended, looking in the spool. */
async function sweepAfter(spool: DynamoEvidenceSpool, at: number) {
  const looked = spooledSends({
    notifications: store,
    spool,
    outlets: { index: { index: new MemoryIndex(), retentionDays: RETENTION } },
    now: () => at,
    deadline: at + 50_000,
    maxRecords: 20_000,
  });
  const swept = await sweepWith(store, at, {
    policies: { EMAIL: 'AT_MOST_ONCE', PUSH: 'AT_MOST_ONCE', SMS: 'AT_LEAST_ONCE' },
    spooled: looked,
  });
  return { swept, lookups: looked.lookups };
}

it("attempt 2 after a resend, spooled then dead before its SENT write: SENT from its own record, not sent again by policy, though the item still names attempt 1's", async () => {
  const now = Date.now();
  const { key, spool, t2, spoolSecond } = await resentAndClaimed('rs', now);
  // Attempt 2's holder spools its record (its lease far from its end: no extension), then dies before SENT.
  const second = await spoolSecond();

  const { swept, lookups } = await sweepAfter(spool, t2 + LEASE_MS + 1);
  expect(swept.resolvedRetry).toEqual([]);
  expect(swept.resolvedSent.map((e) => e.notificationId)).toEqual(['rs#SMS']);
  expect(lookups).toMatchObject({ found: 1, byKey: 0 });
  expect(await store.get(key)).toMatchObject({
    status: 'SENT',
    attempt: 2,
    providerMessageId: 'msg-rs-2',
    evidence: { batch: second.slice, sha256: second.sha256 },
  });
});

it("attempt 2's holder extends with its message id but no reference (evidence off, or the earlier version), then dies: attempt 1's reference, accepted before the resend, is not read by its key, nor kept by the SENT from the id", async () => {
  const now = Date.now();
  // Spooled (the earlier version in the deploy window): found in its minutes, SENT with its own record.
  const spooled = await resentAndClaimed('rx', now);
  expect(await store.extendLease(spooled.c2, spooled.t2 + LEASE_MS, spooled.t2 + 1_000, 'msg-rx-2')).toBe('applied');
  const second = await spooled.spoolSecond();
  // Not spooled (evidence off): SENT from the id, naming no record.
  const bare = await resentAndClaimed('ry', now);
  expect(await store.extendLease(bare.c2, bare.t2 + LEASE_MS, bare.t2 + 1_000, 'msg-ry-2')).toBe('applied');

  const { swept, lookups } = await sweepAfter(spooled.spool, spooled.t2 + LEASE_MS + 1);
  expect(swept.resolvedRetry).toEqual([]);
  expect(swept.resolvedSent.map((e) => e.notificationId).sort()).toEqual(['rx#SMS', 'ry#SMS']);
  expect(lookups).toMatchObject({ found: 1, byKey: 0 });
  expect(await store.get(spooled.key)).toMatchObject({
    status: 'SENT',
    attempt: 2,
    providerMessageId: 'msg-rx-2',
    evidence: { batch: second.slice, sha256: second.sha256 },
  });
  const sent = await store.get(bare.key);
  expect(sent).toMatchObject({ status: 'SENT', attempt: 2, providerMessageId: 'msg-ry-2' });
  expect(sent?.evidence).toBeUndefined();
});

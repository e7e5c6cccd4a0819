/**
 * The sweeper's handler keeps the lease pass's walk-first list through its cursors item (functions/sweeper/index.ts):
 * it loads the list into the run, saves the run's list back, and writes the item when the list is all a run leaves. On
 * DynamoDB Local, the evidence store a folder: a dead holder's spooled send whose SENT write fails is left for the next
 * run, its partition kept to walk first, until a run records it SENT (docs/guarantees.md, window 1).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { sliceBatchName } from '../../functions/domain/evidence-spool.ts';
import { notificationKey } from '../../functions/domain/keys.ts';
import { buildNotification } from '../../functions/domain/notification.ts';
import { DynamoEvidenceSpool } from '../../functions/stores/evidence-spool.ts';
import { DynamoLeaseCursors } from '../../functions/stores/lease-cursors.ts';
import { DynamoSweepStore } from '../../functions/stores/sweep-store.ts';
import { decodeTransfer, transferEvent } from '../support/events.ts';
import { type LocalTable, newLocalTable } from '../support/local-table.ts';
import { proofOf, RETENTION } from '../support/spool-proofs.ts';

const LEASE_MS = 120_000;
let table: LocalTable;
let evidenceDir: string;
let handler: (event: unknown, context: unknown) => Promise<Record<string, unknown>>;
/** A run with a minute left, and one whose time is already up (it walks nothing). */
const minute = { getRemainingTimeInMillis: () => 60_000 };
const timeUp = { getRemainingTimeInMillis: () => 0 };

beforeAll(async () => {
  table = await newLocalTable(inject('dynamoEndpoint'));
  evidenceDir = await mkdtemp(join(tmpdir(), 'walk-first-'));
  Object.assign(process.env, {
    AWS_ENDPOINT_URL_DYNAMODB: table.endpoint,
    TABLE_NAME: table.tableName,
    EVIDENCE_INDEX_TABLE_NAME: table.evidenceIndexTableName,
    EVIDENCE_SPOOL_TABLE_NAME: table.evidenceSpoolTableName,
    EVIDENCE_DIR: evidenceDir,
  });
  ({ handler } = (await import('../../functions/sweeper/index.ts')) as unknown as { handler: typeof handler });
});

afterAll(async () => {
  await rm(evidenceDir, { recursive: true, force: true });
});

afterEach(() => {
  vi.restoreAllMocks();
});

describe("a dead holder's spooled send whose SENT write fails", () => {
  it('keeps its partition to walk first in the cursors item, run after run, until a run records it SENT', async () => {
    const store = new DynamoSweepStore(table.doc, table.tableName);
    const cursors = new DynamoLeaseCursors(table.doc, table.tableName);
    // Claimed 3 minutes ago by a holder that spooled its send's record and died before its SENT write.
    const at = Date.now() - LEASE_MS - 60_000;
    const d = decodeTransfer(transferEvent({ eventId: 'wf-dead', occurredAt: new Date(at).toISOString() }));
    const n = buildNotification(d.event, 'EMAIL', 'x@example.com', at - 1_000, { retentionDays: 1 });
    await table.doc.send(new PutCommand({ TableName: table.tableName, Item: n }));
    const claim = await store.claim(notificationKey('wf-dead', 'EMAIL'), 'c-wf-dead', at, LEASE_MS);
    expect(claim.kind).toBe('claimed');
    const proof = proofOf('wf-dead', at + 500, undefined, 'EMAIL');
    const slice = sliceBatchName(at, RETENTION);
    await new DynamoEvidenceSpool(table.doc, table.evidenceSpoolTableName).put(
      [{ slice, sha256: proof.sha256, notificationId: n.notificationId, recordKind: 'SEND', bytes: proof.bytes }],
      at,
    );
    const key = String(n.sweepKey);

    // Run 1: the record is found, its SENT write fails. No backlog: the partition to walk first is all the run leaves.
    const accept = vi
      .spyOn(DynamoSweepStore.prototype, 'acceptSpooled')
      .mockRejectedValueOnce(Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException' }));
    await handler({}, minute);
    expect(accept).toHaveBeenCalledTimes(1);
    expect(await store.get(notificationKey('wf-dead', 'EMAIL'))).toMatchObject({ status: 'SENDING', attempt: 1 });
    // With where its lease sits: it stays first until a walk reads past that.
    const leaseAt = { [key]: n.sweepAt };
    expect(await cursors.load()).toEqual({ cursors: {}, resumeAt: undefined, walkFirst: [key], leaseAt });

    // Run 2, its time up before the pass: the list it loaded is saved again, not walked, not lost.
    await handler({}, timeUp);
    expect(await cursors.load()).toMatchObject({ walkFirst: [key], leaseAt });

    // Run 3: the write succeeds; the send is SENT from its record and the item cleared.
    await handler({}, minute);
    expect(await store.get(notificationKey('wf-dead', 'EMAIL'))).toMatchObject({
      status: 'SENT',
      evidence: { batch: slice, sha256: proof.sha256 },
    });
    expect(await cursors.load()).toEqual({ cursors: {}, resumeAt: undefined, walkFirst: [], leaseAt: {} });
  });
});

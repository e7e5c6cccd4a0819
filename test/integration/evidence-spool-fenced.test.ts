/**
 * The spool in a region that is fenced, and a spool the sweeper cannot read (functions/sweeper/index.ts,
 * roll-up-evidence.ts). The spool table is regional: a region's last minutes before a switchover or a failover are in
 * its own table only, so the deployed sweeper of a fenced region still rolls them into its own evidence store — and
 * does nothing else that acts on notifications. A spool table the sweeper cannot read is counted every run
 * (EvidenceSpoolUnreadable), since it gives no age for EvidenceSpoolOldestAge to page on. On DynamoDB Local, the
 * evidence store a folder.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { metrics } from '../../functions/commons/powertools.ts';
import { brandEnvValue } from '../../functions/domain/brand.ts';
import { batchObjectKey, readBatch } from '../../functions/domain/evidence-batch.ts';
import { SPOOL_CLOSED_AFTER_MS, sliceBatchName, sliceStartOf } from '../../functions/domain/evidence-spool.ts';
import type { FenceControl } from '../../functions/domain/fence.ts';
import { DynamoEvidenceSpool } from '../../functions/stores/evidence-spool.ts';
import { reportRolledUp, rollUpSpools } from '../../functions/sweeper/roll-up-evidence.ts';
import { EXAMPLE_BRAND } from '../../tools/local/example-brand.ts';
import { MemoryStore } from '../support/evidence-memory.ts';
import { type LocalTable, localFence, newLocalTable } from '../support/local-table.ts';
import { proofOf, RETENTION } from '../support/spool-proofs.ts';

const REGION = 'eu-west-1';
let table: LocalTable;
let evidenceDir: string;
let handler: (event: unknown, context: unknown) => Promise<Record<string, unknown>>;
const context = { getRemainingTimeInMillis: () => 60_000 };

/** A region fenced at a switchover: the other one took epoch 2. */
const FENCED: FenceControl = {
  region: REGION,
  state: 'FENCED',
  epoch: 1,
  since: 0,
  by: 'operator',
  reason: 'switchover',
  mode: 'INITIAL',
  fencedAt: 0,
};

beforeAll(async () => {
  table = await newLocalTable(inject('dynamoEndpoint'));
  evidenceDir = await mkdtemp(join(tmpdir(), 'fenced-spool-'));
  const fence = await localFence(table, FENCED, Date.now);
  Object.assign(process.env, {
    AWS_REGION: REGION,
    AWS_ENDPOINT_URL_DYNAMODB: table.endpoint,
    TABLE_NAME: table.tableName,
    EVIDENCE_INDEX_TABLE_NAME: table.evidenceIndexTableName,
    EVIDENCE_SPOOL_TABLE_NAME: table.evidenceSpoolTableName,
    EVIDENCE_DIR: evidenceDir,
    FENCE_TABLE_NAME: fence.tableName,
    FENCE_SHARDS: '4',
    SENDER_EMAIL: 'notifications@bank.example',
    BRAND: brandEnvValue(EXAMPLE_BRAND),
  });
  ({ handler } = (await import('../../functions/sweeper/index.ts')) as unknown as { handler: typeof handler });
});

afterAll(async () => {
  await rm(evidenceDir, { recursive: true, force: true });
});

afterEach(() => {
  vi.restoreAllMocks();
});

const published = (spy: { mock: { calls: unknown[][] } }, name: string) =>
  spy.mock.calls.filter((c) => c[0] === name).map((c) => c[2]);

describe('a fenced region and its own spool', () => {
  it("a fenced region's sweeper rolls its spool's closed minute into an object of its own store, publishes the spool's age, and sweeps nothing", async () => {
    const spool = new DynamoEvidenceSpool(table.doc, table.evidenceSpoolTableName);
    // The region's last minute before it was fenced, closed now: spooled by its dispatch, rolled by nobody else.
    const start = sliceStartOf(Date.now() - SPOOL_CLOSED_AFTER_MS - 60_000);
    const slice = sliceBatchName(start, RETENTION);
    const proof = proofOf('fenced-last-minute', start + 1_000);
    await spool.put(
      [
        {
          slice,
          sha256: proof.sha256,
          notificationId: proof.record.notificationId,
          recordKind: 'SEND',
          bytes: proof.bytes,
        },
      ],
      start,
    );
    const added = vi.spyOn(metrics, 'addMetric');

    const run = await handler({}, context);

    expect(run).toMatchObject({
      fenced: true,
      redriven: 0,
      rolledUp: { slices: 1, records: 1, objects: 1, errors: [] },
    });
    // Nothing of the active region's work: no sweep, no rebuild, no gap filled.
    expect(run).not.toHaveProperty('examined');
    expect(run).not.toHaveProperty('evidence');
    expect(run).not.toHaveProperty('recovered');
    // The main table holds the keeper's heartbeat and nothing else: no sweep shard mark, no gap, no intent touched.
    expect((await table.allItems()).map((i) => String(i.pk)).filter((pk) => !pk.startsWith('HEARTBEAT#'))).toEqual([]);
    const object = await readFile(join(evidenceDir, batchObjectKey(slice)));
    expect(readBatch(object).records.map((r) => r.bytes)).toEqual([proof.bytes]);
    expect(await spool.cursor()).toMatchObject({ rolledBefore: expect.any(Number) });
    expect((await spool.cursor()).rolledBefore).toBeGreaterThan(start);
    expect(published(added, 'EvidenceSpoolOldestAge')).toHaveLength(1);
    expect(published(added, 'EvidenceSpoolUnreadable')).toEqual([0]);
  });
});

describe('a spool the sweeper cannot read', () => {
  it('counts every failed read of the spool table in EvidenceSpoolUnreadable, and publishes no age', async () => {
    const gone = new DynamoEvidenceSpool(table.doc, `${table.tableName}-no-such-table`);
    const store = new MemoryStore();
    const now = Date.now();
    const r = await rollUpSpools([gone], (spool) => ({
      spool,
      store,
      now: () => now,
      deadline: now + 30_000,
      limit: 1_000,
      timeoutMs: 2_000,
    }));
    expect(r).toMatchObject({ slices: 0, open: 1, unreadable: 1 });
    const added = vi.spyOn(metrics, 'addMetric');
    await reportRolledUp(r, [gone], now);
    // The roll-up's cursor read, and the age's own.
    expect(published(added, 'EvidenceSpoolUnreadable')).toEqual([2]);
    expect(published(added, 'EvidenceSpoolOldestAge')).toEqual([]);
    expect(store.objects.size).toBe(0);
  });
});

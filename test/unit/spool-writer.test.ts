/**
 * A writer's spool puts are awaited at the end of its invocation within the time it kept for its evidence
 * (stores/evidence-spool-writer.ts): a put that hangs is counted refused — the open intent's rebuild covers it — and
 * never holds the invocation, and with it the shard's next sends, to its timeout.
 */
import { describe, expect, it } from 'vitest';
import type { EvidenceRecord } from '../../functions/domain/evidence.ts';
import type { BatchOutlets } from '../../functions/stores/evidence-batch-writer.ts';
import type { EvidenceSpool } from '../../functions/stores/evidence-spool.ts';
import { type SpoolProof, SpoolWriter } from '../../functions/stores/evidence-spool-writer.ts';

const proof = (n: number): SpoolProof => ({
  record: { kind: 'SENT', notificationId: `evt-${n}#SMS` } as unknown as EvidenceRecord,
  bytes: Buffer.from(`record ${n}`),
  sha256: String(n).repeat(64).slice(0, 64),
});

describe("a writer's spool puts at the end of its invocation", () => {
  it('puts that never answer are refused within the time kept for evidence, not waited on to the timeout', async () => {
    const spool = { put: () => new Promise<void>(() => {}) } as unknown as EvidenceSpool;
    const writer = new SpoolWriter(spool, {} as BatchOutlets);
    writer.add(proof(1), 'batches/2026-12-06/063000-sweeper-spooldays30', Date.now());
    writer.add(proof(2), 'batches/2026-12-06/063000-sweeper-spooldays30', Date.now());
    const started = Date.now();
    const settled = await writer.settle(true, { timeoutMs: 200, now: Date.now() });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(settled.refused.map((p) => p.sha256)).toEqual([proof(1).sha256, proof(2).sha256]);
    expect(settled.spooled).toBe(0);
  });
});

/**
 * A writer's spool puts are awaited at the end of its invocation within the time it kept for its evidence
 * (stores/evidence-spool-writer.ts): a put that hangs is counted refused — the open intent's rebuild covers it — and
 * never holds the invocation, and with it the shard's next sends, to its timeout.
 */
import { describe, expect, it } from 'vitest';
import type { EvidenceRecord } from '../../functions/domain/evidence.ts';
import { eventIndexSk } from '../../functions/domain/keys.ts';
import type { BatchOutlets } from '../../functions/stores/evidence-batch-writer.ts';
import { type DatedEntry, indexItemsOf } from '../../functions/stores/evidence-index.ts';
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

  it("an invocation's sends of one event in two slices (two retention classes) are indexed in one write: one customer item, one event item", async () => {
    const spool = { put: async () => {} } as unknown as EvidenceSpool;
    const calls: (readonly DatedEntry[])[] = [];
    const index = {
      add: async () => {},
      putBatch: async (entries: readonly DatedEntry[]) => {
        calls.push(entries);
        return 0;
      },
    };
    const writer = new SpoolWriter(spool, { index: { index, retentionDays: 2_557 } } as unknown as BatchOutlets);
    const send = (channel: string, n: number): SpoolProof => ({
      record: {
        kind: 'SEND',
        userId: 'u-1',
        acceptedAt: '2026-12-06T06:30:01.000Z',
        notificationId: `evt-1#${channel}`,
      } as unknown as EvidenceRecord,
      bytes: Buffer.from(`record ${channel}`),
      sha256: String(n).repeat(64),
    });
    writer.add(send('EMAIL', 1), 'batches/2026-12-06/063000-sweeper-spooldays30', Date.now());
    writer.add(send('SMS', 2), 'batches/2026-12-06/063000-sweeper-spooldays2557', Date.now());
    const settled = await writer.settle(true, { timeoutMs: 1_000, now: Date.now() });
    expect(settled).toMatchObject({ spooled: 2, indexed: true });
    expect(calls).toHaveLength(1);
    const items = indexItemsOf(calls[0] ?? []);
    expect(items.map((i) => [i.pk, i.sk, i.s?.size])).toEqual([
      ['u#u-1', '2026-12-06#evt-1', 2],
      ['e#evt-1', eventIndexSk('2026-12-06', 'u-1'), undefined],
    ]);
  });
});

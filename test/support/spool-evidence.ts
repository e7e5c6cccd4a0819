/**
 * What the spool's kill-point tests assert of a send's evidence once its slice is rolled
 * (test/integration/spool-kill-points.test.ts, spool-handler-kill.test.ts): the record in its slice's object byte for
 * byte, its digest the one the notification names, found by its customer (`cust-<eventId>`) and by its event.
 */
import { expect } from 'vitest';
import { batchObjectKey, decodeBatch } from '../../functions/domain/evidence-batch.ts';
import { evidenceFound } from '../../functions/operator/index.ts';
import { DynamoEvidenceIndex } from '../../functions/stores/evidence-index.ts';
import { DynamoEvidenceLocator } from '../../functions/stores/evidence-reader.ts';
import type { SpooledRecord } from '../../functions/stores/evidence-spool.ts';
import type { FileEvidenceStore } from '../../functions/stores/evidence-store.ts';
import type { LocalTable } from './local-table.ts';

/** Where the operator's readers find a send's record: its slice's object, or the spool while the slice is open. */
export const spoolLocator = (table: LocalTable) =>
  new DynamoEvidenceLocator(
    table.doc,
    table.tableName,
    new DynamoEvidenceIndex(table.doc, table.evidenceIndexTableName),
    table.evidenceSpoolTableName,
  );

/**
 * The evidence of `held` (the records of `eventId`) complete: each record in its slice's object byte for byte as the
 * holder built it, and no other record of the event there; its digest the one the notification names (when it names
 * one), and found by its customer and by its event. A slice may hold other events' records too.
 */
export async function expectEvidenceComplete(
  on: { readonly table: LocalTable; readonly store: FileEvidenceStore },
  eventId: string,
  held: readonly SpooledRecord[],
): Promise<void> {
  const { table, store } = on;
  const slices = [...new Set(held.map((r) => r.slice))];
  const stored = [];
  for (const slice of slices) {
    const { records } = decodeBatch((await store.get(batchObjectKey(slice))) as Uint8Array);
    stored.push(...records.filter((w) => w.entry.eventId === eventId));
  }
  expect(stored.map((w) => w.bytes.toString('base64')).sort()).toEqual(
    held.map((r) => r.bytes.toString('base64')).sort(),
  );
  const ids = held.map((r) => r.notificationId).sort();
  const index = new DynamoEvidenceIndex(table.doc, table.evidenceIndexTableName);
  expect((await index.sendsOf(`cust-${eventId}`)).map((s) => s.notificationId).sort()).toEqual(ids);
  expect((await index.sendsOfEvent(eventId)).map((s) => s.notificationId).sort()).toEqual(ids);
  const found = await evidenceFound(store, eventId, spoolLocator(table));
  expect(found.unfound).toEqual([]);
  expect(found.proofs.map((p) => [p.send.notificationId, p.sha256]).sort()).toEqual(
    held.map((r) => [r.notificationId, r.sha256]).sort(),
  );
}

/** What the sweeper's handler answers, as the spool-path kill tests read it. */
export type SweepSummary = {
  resolvedSent?: number;
  resolvedUnknown: number;
  resolvedRetry: number;
  rolledUp?: { slices: number; records: number; objects: number; indexFilled: number; errors: unknown[] };
  /** Sends SENT from their items' message ids naming no record, whose record no index names (EvidenceUnconfirmed). */
  evidenceUnconfirmed?: number;
  /** Sends SENT from their items' message ids whose named record is kept (held, or rebuilt to its digest). */
  evidenceKept?: number;
  /** Sends SENT from their items' message ids whose named record is nowhere and no rebuild matches (EvidenceLost). */
  evidenceLost?: number;
  /** Sends SENT from their items' message ids whose record the run could not check (EvidenceUnchecked). */
  evidenceUnchecked?: number;
  spoolLookups?: { found: number; byKey: number; recordsRead: number };
};

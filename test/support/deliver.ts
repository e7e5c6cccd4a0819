/** Ingest on a DynamoDB Local table through the real transaction: values delivered as one MSK batch. */
import pLimit from 'p-limit';
import type { InboxStore } from '../../functions/ingest/inbox-port.ts';
import { DynamoInboxStore } from '../../functions/ingest/inbox-store.ts';
import { ingestBatch } from '../../functions/ingest/ingest-batch.ts';
import { mskEvent } from '../../tools/local/msk.ts';
import type { LocalTable } from './local-table.ts';
import { TEST_SECRET_MAC } from './secret-mac.ts';

export interface Deliverer {
  /** One batch on `banking.transfers`; each value at the next offset. */
  deliver(values: (object | string | null)[], partition?: number): Promise<Awaited<ReturnType<typeof ingestBatch>>>;
  /** The offset the next value delivered gets. */
  nextOffset(): number;
}

/** Ingest's dependencies as the integration tests build them: the store is the test's. */
export const ingestDeps = (store: InboxStore) => ({
  store,
  limit: pLimit(8),
  now: Date.now,
  retentionDays: 35,
  maxEventBytes: 65_536,
  maxEventAgeSeconds: 0,
  transactionAttempts: 4,
  secretMac: TEST_SECRET_MAC,
});

/** A deliverer for this table, counting its own offsets. */
export function delivererOn(table: LocalTable): Deliverer {
  let offset = 0;
  const deliver: Deliverer['deliver'] = async (values, partition = 0) => {
    const event = mskEvent(values.map((value) => ({ topic: 'banking.transfers', partition, offset: offset++, value })));
    const summary = await ingestBatch(event, ingestDeps(new DynamoInboxStore(table.doc, table.tableName)));
    if (summary.failure !== undefined) throw summary.failure;
    return summary;
  };
  return { deliver, nextOffset: () => offset };
}

/**
 * A SENT send whose evidence is on its way through the spool (domain/evidence-spool.ts) and not yet held by it or by
 * the store: an erasure or a resend waits for it, as for an open intent — a rebuild renders the record from the
 * notification's data, which neither may take away first.
 */
import { evidenceBatchOfItem } from '../domain/resend.ts';
import type { StoredItem } from '../stores/event-store.ts';
import { sliceRecordPending } from '../stores/evidence-slice-reader.ts';
import type { OperatorPorts } from './ports.ts';

export async function evidencePendingOfSend(
  ports: Pick<OperatorPorts, 'evidenceLocator' | 'evidence' | 'now'>,
  item: StoredItem,
): Promise<{ batch: string; dueMs: number } | undefined> {
  const batch = evidenceBatchOfItem(item);
  if (batch === undefined) return undefined;
  const sha256 = (item.evidence as { sha256?: unknown } | undefined)?.sha256;
  return sliceRecordPending(
    batch,
    typeof sha256 === 'string' ? sha256 : undefined,
    (slice) => ports.evidenceLocator.spooled(slice),
    ports.evidence,
    ports.now(),
  );
}

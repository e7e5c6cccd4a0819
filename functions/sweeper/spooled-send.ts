/**
 * An expired lease whose holder spooled its send's record before it died (dispatch/record-evidence.ts `putFirst`: an
 * invocation of few records puts each record in the evidence spool BEFORE its SENT write): the provider accepted, and
 * the record says so with its message id. The sweeper finds that record and writes SENT with it — the send is known,
 * never resolved UNKNOWN nor sent again — then indexes it under its slice (a refused index write is left to the
 * roll-up's check of its slice: roll-up-evidence.ts).
 *
 * Where to look: the item's updatedAt is a write of the holder (its claim or a lease extension), made inside its
 * invocation, and an invocation spools only when it ends within SPOOL_WRITE_BY_MS of its slice's start
 * (domain/evidence-spool.ts maySpool) — so its slice starts no earlier than updatedAt − SPOOL_WRITE_BY_MS: the minutes
 * from there to updatedAt's, three or four, every partition of each. Read only for expired leases (rare).
 */
import { type EvidenceRecord, parseEvidence, type SendEvidence } from '../domain/evidence.ts';
import { SPOOL_SLICE_MS, SPOOL_WRITE_BY_MS, sliceStartOf } from '../domain/evidence-spool.ts';
import { type BatchOutlets, indexBatch } from '../stores/evidence-batch-writer.ts';
import type { EvidenceSpool } from '../stores/evidence-spool.ts';
import type { DynamoNotificationStore, Resolution, SweepEntry } from '../stores/notification-store.ts';

/** A dead holder's spooled send, as its SENT write would have named it. */
export interface SpooledSend {
  readonly slice: string;
  readonly sha256: string;
  readonly record: SendEvidence;
}

export interface SpooledSendDeps {
  readonly notifications: Pick<DynamoNotificationStore, 'get' | 'acceptSpooled'>;
  readonly spool: Pick<EvidenceSpool, 'ofMinutes'>;
  readonly outlets: Pick<BatchOutlets, 'index'>;
}

/** The sweeper's look-up for an expired lease: `resolve` answers undefined when no spooled record names this attempt. */
export interface SpooledSends {
  resolve(entry: SweepEntry, now: number): Promise<Resolution | undefined>;
}

/** The minutes a holder whose write at `writtenAtMs` spooled to: its invocation's slice is one of them. */
export function holderMinutes(writtenAtMs: number): number[] {
  const minutes: number[] = [];
  for (let m = sliceStartOf(writtenAtMs - SPOOL_WRITE_BY_MS); m <= writtenAtMs; m += SPOOL_SLICE_MS) minutes.push(m);
  return minutes;
}

/** The send record among `records` of this notification and attempt, if any (a record the parser refuses is none). */
export function spooledSendOf(
  records: readonly { readonly slice: string; readonly sha256: string; readonly bytes: Buffer }[],
  notificationId: string,
  attempt: number,
): SpooledSend | undefined {
  for (const r of records) {
    let record: EvidenceRecord;
    try {
      record = parseEvidence(r.bytes);
    } catch {
      continue;
    }
    if (record.kind === 'SEND' && record.notificationId === notificationId && record.attempt === attempt) {
      return { slice: r.slice, sha256: r.sha256, record };
    }
  }
  return undefined;
}

export function spooledSends(deps: SpooledSendDeps): SpooledSends {
  return {
    async resolve(entry, now) {
      const item = await deps.notifications.get({ pk: entry.pk, sk: entry.sk });
      const writtenAt = Date.parse(item?.updatedAt ?? '');
      if (item?.status !== 'SENDING' || item.attempt !== entry.attempt || Number.isNaN(writtenAt)) return undefined;
      const found = spooledSendOf(
        await deps.spool.ofMinutes(holderMinutes(writtenAt)),
        entry.notificationId,
        entry.attempt,
      );
      if (found === undefined) return undefined;
      const { record, slice, sha256 } = found;
      const t = await deps.notifications.acceptSpooled(
        entry,
        {
          providerMessageId: record.providerMessageId,
          evidence: { batch: slice, sha256, acceptedAt: record.acceptedAt },
        },
        now,
      );
      if (t !== 'accepted') return 'lost';
      // Found by its notification now; by its customer once indexed (else the roll-up's check of the slice does it).
      const send = {
        userId: record.userId,
        acceptedAt: record.acceptedAt,
        notificationId: record.notificationId,
        sha256,
      };
      await indexBatch(deps.outlets, slice, [send]).catch(() => undefined);
      return 'accepted';
    },
  };
}

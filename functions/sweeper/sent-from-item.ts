/**
 * A dead holder's send the sweeper SENT from the message id its lease extension had put on the item (sweep.ts
 * `sentFromItem`): the SENT write that would have named its evidence record never landed. The extension named the
 * record as that write would have (dispatch/holder.ts: its batch or slice, its digest, its acceptedAt), and the SENT
 * from the id keeps that reference, so the item names its record as any SENT does. Then:
 *
 * - named in an invocation's own batch: the record is in that batch, or — the invocation died before writing it — its
 *   intent is still open and the sweeper's recovery rebuilds it against the digest, or counts it lost
 *   (recover-evidence.ts). Nothing more here. Not so a batch of its own, which the record goes to when the intent was
 *   refused (dispatch/record-evidence.ts `ready`: `<id>r<n>`), written after the SENT write: no intent names it, so it
 *   is checked against the index as a send naming nothing (below), by its batch or digest (not an earlier attempt's).
 * - named in a slice of the spool (an invocation of few records writes no intent): kept when the spool or the store
 *   holds it; else rebuilt from the item and kept when it hashes to the digest (recover-evidence.ts `respool`, the
 *   machinery an intent's spooled sends use); else it is nowhere and nothing can rebuild it (a message that carried a
 *   secret, which the SENT write forgets; a template deployed since): lost — counted and alarmed (EvidenceLost); in a
 *   stage of two regions, only when claimed at this region's epoch, else unconfirmed (`elsewhere`). What
 *   is read is the spool and the store, never the index: a record not indexed yet is kept, not lost.
 * - naming nothing: extended by an earlier version, before the reference, or naming an earlier attempt's record
 *   (domain/attempt-evidence.ts). Checked against the index's entries of this attempt (an entry carries its record's
 *   attempt; one written before that, in a batch a resend took off the item, is an earlier attempt's): one no index
 *   names is counted unconfirmed (EvidenceUnconfirmed): lost with the holder, or not indexed yet (a holder that froze
 *   past its lease writes its record late).
 */
import { attemptEvidence } from '../domain/attempt-evidence.ts';
import { digestMatches } from '../domain/evidence-batch.ts';
import { parseSliceBatch } from '../domain/evidence-spool.ts';
import { parseNotificationId } from '../domain/keys.ts';
import { messageIdOf } from '../domain/message-id.ts';
import type { NotificationItem } from '../domain/notification.ts';
import type { EvidenceIndex } from '../stores/evidence-index.ts';
import type { NotificationKey, SweepEntry } from '../stores/notification-store.ts';
import { namesThisAttempt, type RecoverResult, resentBatches, type SentHere } from './recover-evidence.ts';

/** A batch a record went to alone, its intent refused: `<invocation id>r<n>` (dispatch/record-evidence.ts `ready`). */
const ALONE = /^batches\/.*-[0-9a-f]+r\d+$/;

export interface SentFromItemDeps {
  /**
   * Notifications this run's recovery of an intent counted lost (the intent named the send too): not checked again,
   * so a record is counted lost once a run, by one owner.
   */
  readonly lostByRecovery?: ReadonlySet<string>;
  /**
   * This region's epoch, in a stage of two regions (docs/regions.md item 10): a send claimed at another epoch may
   * have spooled its record in the other region's spool, which this one cannot read — not counted lost from here.
   */
  readonly epoch?: number;
  readonly notifications: { get(key: NotificationKey): Promise<NotificationItem | undefined> };
  readonly index: Pick<EvidenceIndex, 'sendsOfEvent'>;
  /** Keeps spooled sends' records, rebuilt when the spool and the store lack them (recover-evidence.ts `respool`). */
  readonly keep: (items: readonly SentHere[]) => Promise<{ unverified: SentHere[] }>;
}

export interface SentFromItemChecked {
  /** Sends whose record the spool or the store holds, or a rebuild matching their digest now keeps. */
  readonly kept: number;
  /** Records named nowhere kept and no rebuild matches: lost (EvidenceLost). */
  readonly lost: RecoverResult['lost'];
  /** Sends naming no record (extended by an earlier version), or a batch alone, that no index names (EvidenceUnconfirmed). */
  readonly notKept: readonly SweepEntry[];
  /** Sends found nowhere here, claimed at another epoch: their record may be in the other region's spool. */
  readonly elsewhere: readonly SweepEntry[];
  /** Sends this run could not check (a read refused, a write of the rebuild failed): neither kept nor lost. */
  readonly unchecked: readonly { readonly notificationId: string; readonly error: string }[];
}

export async function checkSentFromItem(
  sent: readonly SweepEntry[],
  deps: SentFromItemDeps,
): Promise<SentFromItemChecked> {
  const result = {
    kept: 0,
    lost: [] as RecoverResult['lost'],
    notKept: [] as SweepEntry[],
    elsewhere: [] as SweepEntry[],
    unchecked: [] as { notificationId: string; error: string }[],
  };
  for (const e of sent) {
    if (deps.lostByRecovery?.has(e.notificationId)) continue;
    try {
      const item = await deps.notifications.get({ pk: e.pk, sk: e.sk });
      // A reference an earlier attempt left (domain/attempt-evidence.ts) names nothing of this send. Judged by the
      // attempt SENT (the entry's), not the item's: an operator's resend since may have let a claim move it on.
      const evidence = item === undefined ? undefined : attemptEvidence({ ...item, attempt: e.attempt });
      if (evidence === undefined || ALONE.test(evidence.batch)) {
        const earlier = item === undefined ? new Set<string>() : resentBatches(item);
        const send = { notificationId: e.notificationId, attempt: e.attempt };
        if (!(await namedByIndex(send, deps.index, evidence, earlier))) result.notKept.push(e);
        continue;
      }
      // An invocation's own batch: its intent's recovery has it (see the header).
      if (parseSliceBatch(evidence.batch) === undefined) continue;
      const here = item as SentHere;
      const { unverified } = await deps.keep([here]);
      if (unverified.length === 0) result.kept++;
      else if (deps.epoch !== undefined && (item as { claimEpoch?: unknown }).claimEpoch !== deps.epoch) {
        result.elsewhere.push(e);
      } else result.lost.push(lostRecord(here));
    } catch (error) {
      result.unchecked.push({ notificationId: e.notificationId, error: (error as Error)?.name ?? 'Error' });
    }
  }
  return result;
}

/**
 * Whether the index names this send: the record its reference names (that batch, or that digest), else — naming no
 * record — an entry of this attempt's send (recover-evidence.ts `namesThisAttempt`: by the attempt the entry carries;
 * one written before entries carried it, by any batch but one a resend took off the item, `earlier`).
 */
async function namedByIndex(
  send: { readonly notificationId: string; readonly attempt: number },
  index: Pick<EvidenceIndex, 'sendsOfEvent'>,
  named: { readonly batch: string; readonly sha256: string } | undefined,
  earlier: ReadonlySet<string>,
): Promise<boolean> {
  const eventId = parseNotificationId(send.notificationId)?.eventId;
  const refs = eventId === undefined ? [] : await index.sendsOfEvent(eventId);
  return refs.some((r) =>
    named === undefined
      ? namesThisAttempt(r, send, earlier)
      : r.notificationId === send.notificationId &&
        (r.batch === named.batch || (r.sha256 !== undefined && digestMatches(r.sha256, named.sha256))),
  );
}

const lostRecord = (item: SentHere): RecoverResult['lost'][number] => ({
  notificationId: item.notificationId,
  ...(messageIdOf(item) === undefined ? {} : { providerMessageId: messageIdOf(item) }),
  sha256: item.evidence.sha256,
  batch: item.evidence.batch,
  reason: 'MISMATCH',
});

/**
 * The later pass that finishes a dispatch invocation's evidence batch when the invocation could not (it died between
 * a send and its batch, or the index refused its refs): an intent still open after its due time
 * (stores/evidence-intents.ts). The batch is rebuilt from the notifications the intent names: each one SENT with this
 * batch on it is rendered again and its record rebuilt, and kept only when its bytes hash to the SHA-256 its SENT write
 * carried — so what is written is byte for byte what would have been, or nothing. A record whose rebuild differs (a
 * template deployed in between, an erasure before the rebuild) is not written: counted and alarmed as lost
 * (EvidenceLost), logged with its ids and the digest it should have had, unless the batch was in the store already
 * (its first write had landed), which then holds it.
 *
 * The batch is written once (already there: the first copy stands), its sends indexed, the intent closed. A store
 * still failing leaves the batch in the table as a gap the filler writes (fill-evidence.ts), and the intent closed.
 *
 * Bounded by time, not by count: the run takes overdue intents until its deadline, starting at a partition the
 * caller varies, and an intent whose recovery fails is held back (1, 2, 4 … minutes, at most an hour) with its
 * attempts counted — so intents that keep failing never crowd out the rest. How late the oldest intent is, failing
 * or not, is the EvidenceIntentOldestAge metric and its alarm.
 */
import pLimit from 'p-limit';
import type { SendProof } from '../dispatch/record-evidence.ts';
import { attemptEvidence } from '../domain/attempt-evidence.ts';
import { isErased } from '../domain/erasure.ts';
import { parseEvidence, sendAttemptOf } from '../domain/evidence.ts';
import { batchObjectKey, type IndexedSend, readBatch } from '../domain/evidence-batch.ts';
import { isSliceOfBatch, lateBatchName, parseSliceBatch } from '../domain/evidence-spool.ts';
import { notificationKey, parseNotificationId } from '../domain/keys.ts';
import { messageIdOf } from '../domain/message-id.ts';
import type { NotificationItem } from '../domain/notification.ts';
import { type BatchOutlets, indexBatch, writeBatch } from '../stores/evidence-batch-writer.ts';
import type { EvidenceIndex, IndexedRef } from '../stores/evidence-index.ts';
import type { EvidenceIntent, EvidenceIntents } from '../stores/evidence-intents.ts';
import { digestsStored, sliceHolds, sliceObjects } from '../stores/evidence-slice-reader.ts';
import type { EvidenceSpool, SpooledRecord } from '../stores/evidence-spool.ts';
import type { NotificationKey } from '../stores/notification-store.ts';

/** A notification SENT with its evidence's batch and digest on it. */
export type SentHere = NotificationItem & { evidence: NonNullable<NotificationItem['evidence']> };

export interface RecoverDeps {
  readonly intents: EvidenceIntents;
  readonly notifications: { get(key: NotificationKey): Promise<NotificationItem | undefined> };
  readonly outlets: BatchOutlets;
  /** The spool, for an invocation that spooled its records (their SENT writes name its slices). */
  readonly spool?: EvidenceSpool;
  /**
   * How a SENT notification's record is rebuilt the way dispatch built it (record-evidence.ts sendProofOf): loaded
   * only when an intent is overdue.
   */
  readonly rebuilder: () => Promise<(item: SentHere) => Promise<SendProof>>;
  readonly now: () => number;
  /** Stop starting batches after this (epoch ms). */
  readonly deadline: number;
  /** Intents read at most per run (a bound on the read, not on the work: the deadline is). */
  readonly limit: number;
  readonly timeoutMs: number;
  /** The intent partition this run starts at (0–15): the caller varies it from run to run. */
  readonly start?: number;
  /** The customers' index of sends, read for a named notification SENT naming no record (`sentIn`). */
  readonly index?: Pick<EvidenceIndex, 'sendsOfEvent'>;
}

/** What keeping spooled sends' records needs (`respool`; the sweeper's sent-from-item.ts too). */
export type KeepDeps = Pick<RecoverDeps, 'spool' | 'outlets' | 'now' | 'timeoutMs'>;

const RETRY_FIRST_MS = 60_000;
const RETRY_MAX_MS = 3_600_000;
/** When an intent whose recovery failed `attempts` times before is tried again. */
export const retryAfter = (now: number, attempts: number) =>
  now + Math.min(RETRY_MAX_MS, RETRY_FIRST_MS * 2 ** Math.min(attempts, 16));

export interface RecoverResult {
  /** Batches finished (written now, found written, or with nothing sent) and their intents closed. */
  readonly recovered: number;
  /** Records written by a rebuild. */
  readonly rebuilt: number;
  /** Records whose rebuild did not hash to their digest, with the batch not in the store: lost. */
  readonly lost: {
    notificationId: string;
    providerMessageId?: string;
    sha256?: string;
    batch: string;
    /**
     * Why: its rebuild did not match (MISMATCH), its item was gone before the rebuild (ITEM_GONE), or an operator's
     * resend took the send off its item before the rebuild (RESENT: a resend waits for an open intent, so only a
     * resend that raced it), or it is SENT naming no record and no index names one (UNNAMED: see `sentIn`).
     */
    reason: 'MISMATCH' | 'ITEM_GONE' | 'RESENT' | 'UNNAMED';
  }[];
  /** Intents seen and still open after this pass. */
  readonly open: number;
  readonly errors: string[];
}

export async function recoverEvidenceBatches(deps: RecoverDeps): Promise<RecoverResult> {
  const intents = await deps.intents.overdue(deps.now(), deps.limit, deps.start);
  const result = { recovered: 0, rebuilt: 0, lost: [] as RecoverResult['lost'], open: 0, errors: [] as string[] };
  if (intents.length === 0) return result;
  const rebuild = await deps.rebuilder();
  for (const intent of intents) {
    if (deps.now() >= deps.deadline) {
      result.open++;
      continue;
    }
    try {
      await recoverOne(intent, deps, rebuild, result);
    } catch (error) {
      result.open++;
      const name = (error as Error)?.name ?? 'Error';
      result.errors.push(`${intent.name}: ${name}`);
      // Held back, so the next runs take the others first; a table refusing this too leaves it as it was.
      await deps.intents.failed(intent, retryAfter(deps.now(), intent.attempts ?? 0), name).catch(() => undefined);
    }
  }
  return result;
}

async function recoverOne(
  intent: EvidenceIntent,
  deps: RecoverDeps,
  rebuild: (item: SentHere) => Promise<SendProof>,
  result: { recovered: number; rebuilt: number; lost: RecoverResult['lost']; open: number },
): Promise<void> {
  const { sent: all, gone, resent, unnamed } = await sentIn(intent, deps);
  const sent = all.filter((i) => i.evidence.batch === intent.name);
  const spooled = await respool(
    all.filter((i) => i.evidence.batch !== intent.name),
    deps,
    rebuild,
  );
  const rebuilt: SendProof[] = [];
  const unverified: SentHere[] = [];
  for (const item of sent) {
    let proof: SendProof | undefined;
    try {
      proof = await rebuild(item);
    } catch {
      proof = undefined; // a template gone or a field erased: no rebuild, judged below like a mismatch
    }
    if (proof !== undefined && proof.sha256 === item.evidence.sha256) rebuilt.push(proof);
    else unverified.push(item);
  }
  const written = await writeBatch(
    deps.outlets,
    { name: intent.name, writer: 'sweeper', records: rebuilt },
    { timeoutMs: deps.timeoutMs, now: deps.now() },
  );
  if (written.outcome === 'lost')
    throw Object.assign(new Error(written.error ?? 'lost'), { name: 'StoreAndGapFailed' });
  // The batch was in the store already: it holds the records a rebuild could not match; index them too.
  const alreadyThere = written.stored === 'alreadyThere';
  if (alreadyThere && unverified.length > 0) {
    // An erased notification names no customer any more: its record is in the batch, found by its event.
    const indexable = unverified.filter((i) => !isErased(i));
    const attempts = await attemptsIn([batchObjectKey(intent.name)], indexable, deps.outlets.store);
    const sends = indexable.map((i) => indexedSend(i, attempts.get(i.evidence.sha256)));
    const error = await indexBatch(deps.outlets, intent.name, sends);
    if (error !== undefined) throw Object.assign(new Error(`index: ${error}`), { name: error });
  }
  if (!written.indexed) throw Object.assign(new Error(written.error ?? 'index'), { name: 'IndexFailed' });
  // A spooled send no rebuild matches and neither the spool nor the store holds: lost, whatever its batch's object.
  for (const item of spooled.unverified) result.lost.push(mismatch(item, intent.name));
  if (!alreadyThere) {
    for (const item of unverified) result.lost.push(mismatch(item, intent.name));
    // A named notification whose item is gone (expired, deleted) cannot be shown unsent: counted, never dropped.
    for (const notificationId of gone) result.lost.push({ notificationId, batch: intent.name, reason: 'ITEM_GONE' });
    // A send of this batch an operator's resend took off its item: nothing left to rebuild it from.
    for (const r of resent) result.lost.push({ ...r, batch: intent.name, reason: 'RESENT' });
    // SENT naming no record, and no index names one: nothing can rebuild it (see sentIn).
    for (const item of unnamed) {
      if (!(await indexNames(item, deps))) result.lost.push({ ...unnamedOf(item), batch: intent.name });
    }
  }
  if (written.stored === 'written') result.rebuilt += rebuilt.length;
  result.rebuilt += spooled.rebuilt;
  await deps.intents.close(intent);
  result.recovered++;
}

/**
 * The notifications the intent names that are SENT with this batch on them, read consistently — and those whose item
 * is gone, whose record nothing can rebuild. And those SENT naming no record of their attempt (`unnamed`): every SENT
 * write of a holder with evidence names its record, and so does the sweeper's SENT from a lease extension's message id
 * since the extension carries the reference — so only a lease extended by an earlier version, its holder dead before
 * its batch (the item may still carry an earlier attempt's reference). No digest: nothing can rebuild it. Lost unless
 * an index names a send of that notification (its record then kept: `recoverOne`), never skipped unsaid.
 */
async function sentIn(
  intent: EvidenceIntent,
  deps: RecoverDeps,
): Promise<{
  sent: SentHere[];
  gone: string[];
  resent: { notificationId: string; providerMessageId?: string }[];
  unnamed: NotificationItem[];
}> {
  const limit = pLimit(8);
  const items = await Promise.all(
    intent.notificationIds.map(async (id) => {
      const ref = parseNotificationId(id);
      const item =
        ref === undefined
          ? undefined
          : await limit(() => deps.notifications.get(notificationKey(ref.eventId, ref.channel)));
      return { id, item };
    }),
  );
  // Its own batch, or a slice of the spool it put its few records in (domain/evidence-spool.ts).
  const here = (i: NotificationItem | undefined): i is SentHere =>
    i !== undefined &&
    i.status === 'SENT' &&
    (i.evidence?.batch === intent.name || isSliceOfBatch(i.evidence?.batch ?? '', intent.name));
  return {
    sent: items.map(({ item }) => item).filter(here),
    gone: items.filter(({ item }) => item === undefined).map(({ id }) => id),
    // Naming no record of this attempt: none, or an earlier attempt's a resend left (domain/attempt-evidence.ts).
    // One naming this batch is checked as its send above, whichever attempt's; a rebuild renders the item's current
    // attempt, so an earlier attempt's record without kept bytes is counted lost (MISMATCH), never silent. An operator's
    // resend waits while the batch's intent is open (operator/resend.ts), so that needs an intent reopened.
    unnamed: items.flatMap(({ item }) =>
      item?.status === 'SENT' && !here(item) && attemptEvidence(item) === undefined ? [item] : [],
    ),
    resent: items.flatMap(({ id, item }) => {
      if (item === undefined || here(item)) return [];
      const entry = resendOfBatch(item, intent.name);
      return entry === undefined ? [] : [{ notificationId: id, ...entry }];
    }),
  };
}

/** The operator's resend that took a send of `batch` off the item (manualResends names the batch), if any. */
function resendOfBatch(item: NotificationItem, batch: string): { providerMessageId?: string } | undefined {
  const resends = (item as { manualResends?: unknown }).manualResends;
  if (!Array.isArray(resends)) return undefined;
  const entry = resends.find((r) => (r as { evidenceBatch?: unknown } | null)?.evidenceBatch === batch) as
    | { providerMessageId?: unknown }
    | undefined;
  if (entry === undefined) return undefined;
  return typeof entry.providerMessageId === 'string' ? { providerMessageId: entry.providerMessageId } : {};
}

/**
 * The batches of the sends an operator's resends took off the item (`manualResends[].evidenceBatch`): an earlier
 * attempt's record, which an index entry in one of them names — not this attempt's. Asked only of entries written
 * before they carried their attempt (`namesThisAttempt`).
 */
export function resentBatches(item: NotificationItem): ReadonlySet<string> {
  const resends = (item as { manualResends?: unknown }).manualResends;
  if (!Array.isArray(resends)) return new Set();
  const batches = resends.map((r) => (r as { evidenceBatch?: unknown } | null)?.evidenceBatch);
  return new Set(batches.filter((b): b is string => typeof b === 'string'));
}

/**
 * Whether an index entry names the send of this attempt of a notification. An entry carrying its record's attempt
 * names that attempt's only: an earlier attempt's record — a frozen holder's written late, after an automatic retry
 * or a resend that names no batch — is not this one's, in whatever batch. One written before entries carried it is
 * told by its batch as then: any but a batch a resend took off the item (`earlier`, resentBatches).
 */
export function namesThisAttempt(
  ref: IndexedRef,
  send: { readonly notificationId: string; readonly attempt: number },
  earlier: ReadonlySet<string>,
): boolean {
  if (ref.notificationId !== send.notificationId) return false;
  return ref.attempt === undefined ? !earlier.has(ref.batch) : ref.attempt === send.attempt;
}

/** Whether the index names this attempt's send of the notification (none to read: no). */
async function indexNames(item: NotificationItem, deps: RecoverDeps): Promise<boolean> {
  const eventId = parseNotificationId(item.notificationId)?.eventId;
  if (deps.index === undefined || eventId === undefined) return false;
  const earlier = resentBatches(item);
  return (await deps.index.sendsOfEvent(eventId)).some((r) => namesThisAttempt(r, item, earlier));
}

const unnamedOf = (item: NotificationItem) => ({
  notificationId: item.notificationId,
  ...(messageIdOf(item) === undefined ? {} : { providerMessageId: messageIdOf(item) }),
  reason: 'UNNAMED' as const,
});

const mismatch = (item: SentHere, batch: string): RecoverResult['lost'][number] => ({
  notificationId: item.notificationId,
  ...(messageIdOf(item) === undefined ? {} : { providerMessageId: messageIdOf(item) }),
  sha256: item.evidence.sha256,
  batch,
  reason: 'MISMATCH',
});

/**
 * The send the item's reference names: its record's attempt is the reference's, or — a reference written before it
 * named one — `stored`, read from the record itself where it is at hand (`attemptsIn`); else none, and its mark is
 * read by the batch rule. Never the item's attempt: a resend may have moved it on since the record was written.
 */
const indexedSend = (item: SentHere, stored?: number): IndexedSend => {
  const attempt = item.evidence.attempt ?? stored;
  return {
    userId: item.userId,
    acceptedAt: item.evidence.acceptedAt,
    notificationId: item.notificationId,
    sha256: item.evidence.sha256,
    ...(attempt === undefined ? {} : { attempt }),
  };
};

/**
 * The attempts the records of these objects carry, by digest, for the items whose reference names none (written
 * before references did): the objects are read only then. A record the parser refuses gives none.
 */
async function attemptsIn(
  keys: readonly string[],
  items: readonly SentHere[],
  store: BatchOutlets['store'],
): Promise<Map<string, number>> {
  const attempts = new Map<string, number>();
  if (items.every((i) => i.evidence.attempt !== undefined)) return attempts;
  for (const key of keys) {
    const object = await store.get(key);
    for (const { entry, bytes } of object === undefined ? [] : readBatch(object).records) {
      const attempt = sendAttemptOf(bytes);
      if (attempt !== undefined) attempts.set(entry.sha256, attempt);
    }
  }
  return attempts;
}

/**
 * The sends of an invocation that spooled them: each rebuilt record whose bytes hash to its SENT digest is put in the
 * spool again when its slice is not rolled yet (the same item if its first put landed; the cursor bumped after the put,
 * so a roll-up that read the slice before it cannot mark the slice rolled), else written beside the slice's object as
 * a late one of its own unless an object of the slice holds it — and indexed under its slice. One that cannot be
 * rebuilt is lost only if the store (or, its slice not rolled yet, the spool) does not hold it. Also the sweeper's for a
 * dead holder's send it SENT from the message id its lease extension left, with the record's slice and digest
 * (sent-from-item.ts): no intent names such a send.
 */
export async function respool(
  items: readonly SentHere[],
  deps: KeepDeps,
  rebuild: (item: SentHere) => Promise<SendProof>,
): Promise<{ rebuilt: number; unverified: SentHere[] }> {
  if (items.length === 0) return { rebuilt: 0, unverified: [] };
  const spool = deps.spool;
  if (spool === undefined) throw Object.assign(new Error('no spool to recover into'), { name: 'NoSpool' });
  const unverified: SentHere[] = [];
  let rebuilt = 0;
  const stored = new Map<string, Promise<Set<string>>>();
  const inStore = async (slice: string, sha256: string) => {
    if (!stored.has(slice)) stored.set(slice, digestsStored(slice, deps.outlets.store));
    return (await stored.get(slice))?.has(sha256) === true;
  };
  for (const item of items) {
    const slice = item.evidence.batch;
    const startMs = parseSliceBatch(slice)?.startMs ?? 0;
    const proof = await rebuild(item).catch(() => undefined);
    if (proof === undefined || proof.sha256 !== item.evidence.sha256) {
      const rolled = (await spool.cursor()).rolledBefore > startMs;
      if (rolled && !(await inStore(slice, item.evidence.sha256))) {
        // Locked from its spooled bytes (and indexed with them), or lost.
        if (!(await lockSpooledLate(slice, item, spool, deps))) unverified.push(item);
        continue;
      }
      // The slice's spooled records, read once for this item whether its hold or its attempt asks first.
      let records: Promise<readonly SpooledRecord[]> | undefined;
      const spooled = () => {
        records ??= spool.ofSlice(slice);
        return records;
      };
      const held = rolled || (await sliceHolds(slice, item.evidence.sha256, spooled, deps.outlets.store));
      if (!held) unverified.push(item);
      // Kept, but its writer's index write may not have landed (its put went unanswered): indexed under its slice,
      // as its writer would have — unless erased (it names no customer any more: found by its event).
      else if (!isErased(item)) await indexHeld(slice, item, deps, await heldAttempt(slice, item, spooled, deps));
      continue;
    }
    let rolled = (await spool.cursor()).rolledBefore > startMs;
    if (!rolled) {
      await spool.put(
        [{ slice, sha256: proof.sha256, notificationId: item.notificationId, recordKind: 'SEND', bytes: proof.bytes }],
        deps.now(),
      );
      rolled = !(await spool.claimUnrolled(startMs));
    }
    // Rolled (before the put, or between it and the claim): the slice's objects may lack it — then a late object,
    // indexed under its own name (a reader finds it by the slice's prefix either way).
    if (rolled && !(await inStore(slice, proof.sha256))) {
      await writeLate(slice, proof, deps);
    } else {
      await indexHeld(slice, item, deps, proof.record.attempt);
    }
    rebuilt++;
  }
  return { rebuilt, unverified };
}

async function indexHeld(slice: string, item: SentHere, deps: KeepDeps, stored?: number): Promise<void> {
  const failed = await indexBatch(deps.outlets, slice, [indexedSend(item, stored)]);
  if (failed !== undefined) throw Object.assign(new Error(`index: ${failed}`), { name: failed });
}

/** The attempt of a held record of a slice whose reference names none: from its spooled bytes, else its objects'. */
async function heldAttempt(
  slice: string,
  item: SentHere,
  spooledIn: () => Promise<readonly SpooledRecord[]>,
  deps: KeepDeps,
) {
  if (item.evidence.attempt !== undefined) return undefined;
  const spooled = (await spooledIn()).find((r) => r.sha256 === item.evidence.sha256);
  if (spooled !== undefined) return sendAttemptOf(spooled.bytes);
  const objects = await sliceObjects(deps.outlets.store, slice);
  return (await attemptsIn(objects, [item], deps.outlets.store)).get(item.evidence.sha256);
}

/** A record of a rolled slice its objects lack, written beside the slice's object (named by its digest), indexed. */
async function writeLate(slice: string, proof: SendProof, deps: KeepDeps): Promise<void> {
  const written = await writeBatch(
    deps.outlets,
    { name: lateBatchName(slice, [proof.sha256]), writer: 'sweeper', records: [proof] },
    { timeoutMs: deps.timeoutMs, now: deps.now() },
  );
  if (written.outcome === 'lost')
    throw Object.assign(new Error(written.error ?? 'lost'), { name: 'StoreAndGapFailed' });
  if (!written.indexed) throw Object.assign(new Error(written.error ?? 'index'), { name: 'IndexFailed' });
}

/**
 * A send no rebuild matches, of a slice rolled without it: its writer's unanswered put may have landed after the
 * roll-up read the minute — below the cursor, which no roll-up reads again. Its exact bytes there (the digest the SENT
 * write carried, checked on read) are locked as a late object; true when they were, false when the spool lacks them.
 */
async function lockSpooledLate(slice: string, item: SentHere, spool: EvidenceSpool, deps: KeepDeps): Promise<boolean> {
  const spooled = (await spool.ofSlice(slice)).find((r) => r.sha256 === item.evidence.sha256);
  if (spooled === undefined) return false;
  let record: SendProof['record'];
  try {
    record = parseEvidence(spooled.bytes) as SendProof['record'];
  } catch {
    return false; // bytes the strict parser refuses: judged as before (a mismatch), never locked half-read
  }
  await writeLate(slice, { record, bytes: spooled.bytes, sha256: spooled.sha256 }, deps);
  return true;
}

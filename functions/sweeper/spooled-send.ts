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
 * from there to updatedAt's, three or four, every partition of each, newest first (the likeliest), stopping at the
 * minute that holds it.
 *
 * Bounded, and shared by the run: one look-up is made per sweeper run (`spooledSends` is built per run), so each
 * (minute, partition) is read once, as it is needed, and only its send records' keys are kept (notification id and
 * attempt: a few fields each, never the record's bytes). The records a run reads for look-ups are capped (`maxRecords`)
 * and none is read past the run's deadline: a look-up those cut short, that did not find the record in what it read, is
 * `deferred` — 'later': the lease is left as it is, and the lease pass keeps its partition's cursor before it, so no
 * cursor saved past it hides it: a later run looks again with a fresh cap and deadline — the next run, or under a
 * lease backlog when the rotation reaches its partition (lease-pass.ts). Until SPOOL_LOOKUP_WAIT_MS after
 * the lease's end; past it the look-up is `skipped` and the lease decided by the channel's policy, as before the spool
 * was looked in (an at-most-once channel's UNKNOWN, an at-least-once one's resend). A read the table refused is
 * skipped at once. A record found whose SENT write failed is `later` too: the lease is left as it is for the next run,
 * never decided by policy (that could resend a send the record proves).
 *
 * A holder that extended its lease with the message id before its put named the record there too (its slice and
 * digest: dispatch/holder.ts keepLeasePast) and the id: its look-up is one read by the record's key, no minute scanned,
 * never cut by the cap or the deadline, when the key holds this attempt's send; a miss is looked for in the minutes as
 * above (`named`: a reference on an item without an id, or naming another attempt, is an earlier attempt's). A record named in a batch of its own
 * (not a slice) was never spooled, and is not looked for. Not found, the lease is SENT from the id with that reference
 * kept (an earlier attempt's removed), and the sweeper checks the record is kept (sweeper/sent-from-item.ts).
 */
import { attemptEvidence } from '../domain/attempt-evidence.ts';
import { parseEvidence } from '../domain/evidence.ts';
import {
  parseSliceBatch,
  SPOOL_SHARDS,
  SPOOL_SLICE_MS,
  SPOOL_WRITE_BY_MS,
  sliceStartOf,
} from '../domain/evidence-spool.ts';
import { messageIdOf } from '../domain/message-id.ts';
import type { NotificationItem } from '../domain/notification.ts';
import { type BatchOutlets, indexBatch } from '../stores/evidence-batch-writer.ts';
import type { EvidenceSpool, SpooledRecord } from '../stores/evidence-spool.ts';
import type { Resolution, SweepEntry } from '../stores/notification-store.ts';
import type { DynamoSweepStore } from '../stores/sweep-store.ts';

/**
 * How long after a lease's end a look-up cut short by the run's cap or deadline is left for a later run rather than
 * decided by policy: five runs of the one-minute schedule. The spool does not bound it — the look-up reads the table,
 * whose items (of the current layout) the roll-up never deletes (each expires SPOOL_KEEP_DAYS after its slice,
 * domain/evidence-spool.ts), so a rolled slice is read as before — the customer does: each run of waiting delays an at-least-once resend or an
 * UNKNOWN. The cap is shared by all of a run's look-ups, in the order the run meets the leases (the due round's, then
 * the lease pass's), not with the leases deferred first: when the dead holders' spooled minutes add up to more than a
 * run reads, some of their look-ups are cut run after run and decided by policy after this wait, whatever the rate.
 */
export const SPOOL_LOOKUP_WAIT_MS = 300_000;

/** A dead holder's spooled send, as its SENT write would have named it: what the look-up keeps of a record. */
export interface SpooledSend {
  readonly slice: string;
  readonly sha256: string;
  readonly notificationId: string;
  readonly userId: string;
  readonly providerMessageId: string;
  readonly acceptedAt: string;
}

export interface SpooledSendDeps {
  readonly notifications: Pick<DynamoSweepStore, 'get' | 'acceptSpooled'>;
  readonly spool: Pick<EvidenceSpool, 'minuteOf' | 'recordAt'>;
  readonly outlets: Pick<BatchOutlets, 'index'>;
  readonly now: () => number;
  /** Epoch ms after which no spool item is read (the run's). */
  readonly deadline: number;
  /** Spool records the run's look-ups read at most, all together. */
  readonly maxRecords: number;
}

/** What the run's look-ups did (reported with the run). */
export interface SpoolLookups {
  /** Leases SENT from their holder's spooled record. */
  found: number;
  /**
   * Look-ups that could not read all they needed — a refused read, or the cap or the deadline past
   * SPOOL_LOOKUP_WAIT_MS after the lease's end: decided by policy.
   */
  skipped: number;
  /** Look-ups the run's cap or deadline cut short: the lease left for the next run (a lease waiting 5 runs counts 5). */
  deferred: number;
  /** Records found whose SENT write failed: the lease left for the next run. */
  later: number;
  /** Spool records read. */
  recordsRead: number;
  /** Look-ups made by the key a lease extension named: one read each, no minute scanned. */
  byKey: number;
}

/**
 * The sweeper's look-up for an expired lease: `resolve` answers undefined when no spooled record names this attempt
 * (or the look-up was skipped), 'later' when one does but its SENT write failed, or when the run's cap or deadline cut
 * the look-up short (the lease left for the next run).
 */
export interface SpooledSends {
  resolve(entry: SweepEntry, now: number): Promise<Resolution | 'later' | undefined>;
  readonly lookups: SpoolLookups;
}

/** The minutes a holder whose write at `writtenAtMs` spooled to: its invocation's slice is one of them. */
export function holderMinutes(writtenAtMs: number): number[] {
  const minutes: number[] = [];
  for (let m = sliceStartOf(writtenAtMs - SPOOL_WRITE_BY_MS); m <= writtenAtMs; m += SPOOL_SLICE_MS) minutes.push(m);
  return minutes;
}

/** A record's look-up key: a send is one notification's one attempt. */
const keyOf = (notificationId: string, attempt: number) => `${attempt}#${notificationId}`;

/** A send record as the look-up keeps it, with its key (none: a feedback record, or one the parser refuses). */
function sendIn(r: SpooledRecord): [string, SpooledSend] | undefined {
  if (r.recordKind !== 'SEND') return undefined;
  try {
    const record = parseEvidence(r.bytes);
    if (record.kind !== 'SEND') return undefined;
    const { notificationId, userId, providerMessageId, acceptedAt } = record;
    return [
      keyOf(notificationId, record.attempt),
      { slice: r.slice, sha256: r.sha256, notificationId, userId, providerMessageId, acceptedAt },
    ];
  } catch {
    return undefined;
  }
}

/**
 * One (minute, partition) as read: its sends by key, and how far: to its end, cut by the run's cap or deadline (a
 * later run reads it whole), or refused by the table.
 */
interface Part {
  readonly sends: ReadonlyMap<string, SpooledSend>;
  readonly read: 'whole' | 'cut' | 'refused';
}

/** One run's look-ups: build it per run (the parts read are kept for the run, not longer). */
export function spooledSends(deps: SpooledSendDeps): SpooledSends {
  const lookups: SpoolLookups = { found: 0, skipped: 0, deferred: 0, later: 0, recordsRead: 0, byKey: 0 };
  const parts = new Map<string, Promise<Part>>();
  let left = deps.maxRecords;
  const open = () => left > 0 && deps.now() < deps.deadline;

  const read = async (minute: number, shard: number): Promise<Part> => {
    const sends = new Map<string, SpooledSend>();
    if (!open()) return { sends, read: 'cut' };
    try {
      // One more than may be taken: a partition holding exactly what is left reads as whole.
      for await (const r of deps.spool.minuteOf(minute, shard, left + 1)) {
        if (!open()) return { sends, read: 'cut' };
        left--;
        lookups.recordsRead++;
        const send = sendIn(r);
        if (send !== undefined && !sends.has(send[0])) sends.set(...send);
      }
      return { sends, read: 'whole' };
    } catch {
      // Refused (a throttled spool table): what was read is kept; the rest is not read again this run.
      return { sends, read: 'refused' };
    }
  };
  const partOf = (minute: number, shard: number): Promise<Part> => {
    const key = `${minute}#${shard}`;
    let part = parts.get(key);
    if (part === undefined) {
      part = read(minute, shard);
      parts.set(key, part);
    }
    return part;
  };

  /**
   * The send in the holder's minutes, newest first; when not found and not all could be read, 'skipped' if the table
   * refused a read, else 'cut' (the run's cap or deadline).
   */
  const find = async (writtenAt: number, key: string): Promise<SpooledSend | 'skipped' | 'cut' | undefined> => {
    const unread = new Set<Part['read']>();
    for (const minute of holderMinutes(writtenAt).reverse()) {
      const read = await Promise.all(Array.from({ length: SPOOL_SHARDS }, (_, shard) => partOf(minute, shard)));
      const found = read.map((p) => p.sends.get(key)).find((s) => s !== undefined);
      if (found !== undefined) return found;
      for (const p of read) if (p.read !== 'whole') unread.add(p.read);
    }
    return unread.has('refused') ? 'skipped' : unread.has('cut') ? 'cut' : undefined;
  };
  /**
   * The record this attempt's lease extension named, by its key; else the holder's minutes. The reference is this
   * attempt's only when the item carries a message id (the extension writes it with the id, and a resend removes the
   * ids but keeps the earlier send's `evidence`: event-store.ts resend) and it names the item's attempt
   * (domain/attempt-evidence.ts: an extension without a reference leaves the earlier one beside a fresh id). A record
   * named in a batch of its own (not a slice) was never spooled. A key that misses, or holds another attempt's send,
   * is looked for in the minutes as without a reference.
   */
  const named = async (item: NotificationItem, writtenAt: number, key: string) => {
    const evidence = messageIdOf(item) === undefined ? undefined : attemptEvidence(item);
    if (evidence === undefined) return find(writtenAt, key);
    if (parseSliceBatch(evidence.batch) === undefined) return undefined;
    lookups.byKey++;
    const r = await deps.spool.recordAt(evidence.batch, evidence.sha256);
    const send = r === undefined ? undefined : sendIn(r);
    return send?.[0] === key ? send[1] : find(writtenAt, key);
  };
  /** A cut look-up waits for a later run while its lease ended less than SPOOL_LOOKUP_WAIT_MS ago. */
  const mayWait = (entry: SweepEntry, now: number) =>
    entry.leaseUntil !== undefined && now - entry.leaseUntil < SPOOL_LOOKUP_WAIT_MS;

  return {
    lookups,
    async resolve(entry, now) {
      let found: SpooledSend | 'skipped' | 'cut' | undefined;
      try {
        const item = await deps.notifications.get({ pk: entry.pk, sk: entry.sk });
        const writtenAt = Date.parse(item?.updatedAt ?? '');
        if (item?.status !== 'SENDING' || item.attempt !== entry.attempt || Number.isNaN(writtenAt)) return undefined;
        const key = keyOf(entry.notificationId, entry.attempt);
        found = await named(item, writtenAt, key);
      } catch {
        found = 'skipped';
      }
      if (found === 'cut' && mayWait(entry, now)) {
        // The record may be in what the run could not read: a later run looks again (lease-pass.ts).
        lookups.deferred++;
        return 'later';
      }
      if (found === 'skipped' || found === 'cut') lookups.skipped++;
      if (found === undefined || found === 'skipped' || found === 'cut') return undefined;
      const { slice, sha256, providerMessageId, acceptedAt } = found;
      let t: Resolution;
      try {
        t = await deps.notifications.acceptSpooled(
          entry,
          { providerMessageId, evidence: { batch: slice, sha256, acceptedAt, attempt: entry.attempt } },
          now,
        );
      } catch {
        // The record proves the send: never decided by policy for want of this write, however long it keeps failing
        // (no SPOOL_LOOKUP_WAIT_MS here: a resend would be a second copy of a proven send). The next run tries again;
        // the lease pass walks on past it (lease-pass.ts), and each run counts it (SpoolSendsLeftForNextRun).
        lookups.later++;
        return 'later';
      }
      if (t !== 'accepted') return 'lost';
      lookups.found++;
      // Found by its notification now; by its customer once indexed (else the roll-up's check of the slice does it).
      // Its key names this attempt (keyOf): the record is this claim's.
      const send = {
        userId: found.userId,
        acceptedAt,
        notificationId: found.notificationId,
        sha256,
        attempt: entry.attempt,
      };
      await indexBatch(deps.outlets, slice, [send]).catch(() => undefined);
      return 'accepted';
    },
  };
}

/**
 * A dead holder's send the sweeper SENT from the message id on its item (functions/sweeper/sent-from-item.ts): the
 * lease extension named its record, so the item does too — kept (held, or rebuilt to its digest) or lost, counted as
 * such; a record named in an invocation's own batch is that intent's recovery's (a batch of its own, written after a
 * refused intent, is checked against the index). One extended by an earlier version
 * names none: kept when an index names it, unconfirmed when none does, unchecked when the index cannot be read.
 */
import { describe, expect, it } from 'vitest';
import { batchName } from '../../functions/domain/evidence-batch.ts';
import { sliceBatchName } from '../../functions/domain/evidence-spool.ts';
import type { NotificationItem } from '../../functions/domain/notification.ts';
import type { SweepEntry } from '../../functions/stores/notification-store.ts';
import type { SentHere } from '../../functions/sweeper/recover-evidence.ts';
import { checkSentFromItem, type SentFromItemDeps } from '../../functions/sweeper/sent-from-item.ts';

const SLICE = sliceBatchName(Date.parse('2026-12-06T10:00:00.000Z'), 35);
const SHA = 'ab'.repeat(32);

const entry = (notificationId: string) =>
  ({ pk: `EVENT#${notificationId}`, sk: 'NOTIFICATION#SMS', notificationId, channel: 'SMS', attempt: 1 }) as SweepEntry;
/** The SENT item of an entry, naming `batch` as its record's (none: no evidence). */
const sentItem = (e: SweepEntry, batch?: string) =>
  ({
    notificationId: e.notificationId,
    status: 'SENT',
    attempt: 1,
    providerMessageId: `m-${e.notificationId}`,
    ...(batch === undefined ? {} : { evidence: { batch, sha256: SHA, acceptedAt: '2026-12-06T10:00:05.000Z' } }),
  }) as unknown as NotificationItem;
/** An index naming these notifications' records (digest SHA) by their events; refusing every read when `refusing`. */
const index = (named: readonly string[], refusing = false) => ({
  sendsOfEvent: async (eventId: string) => {
    if (refusing) throw Object.assign(new Error('throttled'), { name: 'ProvisionedThroughputExceededException' });
    return named
      .filter((id) => id.startsWith(`${eventId}#`))
      .map((notificationId) => ({ batch: 'b', notificationId, sha256: SHA.slice(0, 32) }));
  },
});

function deps(
  items: Record<string, NotificationItem>,
  over: { keep?: SentFromItemDeps['keep']; named?: string[]; refusing?: boolean } = {},
) {
  const kept: string[] = [];
  const d: SentFromItemDeps = {
    notifications: { get: async (k) => items[k.pk.slice('EVENT#'.length)] },
    index: index(over.named ?? [], over.refusing),
    keep:
      over.keep ??
      (async (sent) => {
        kept.push(...sent.map((i) => i.notificationId));
        return { unverified: [] };
      }),
  };
  return { d, kept };
}

/**
 * Attempt 2 of `notificationId`, SENT naming no record, after an operator's resend from SENT took attempt 1's send
 * (in batch `first`) off the item; `indexed(batch)`: an index naming one send of it in that batch, without an attempt.
 */
function resentFromSent(notificationId: string) {
  const e = { ...entry(notificationId), attempt: 2 };
  const first = 'batches/2026-12-05/100000-dispatch-0123456789abcdef0123';
  const item = {
    ...sentItem(e),
    attempt: 2,
    manualResends: [{ status: 'SENT', attempt: 1, evidenceBatch: first }],
  } as unknown as NotificationItem;
  const indexed = (batch: string) => ({
    sendsOfEvent: async () => [{ batch, notificationId: e.notificationId, sha256: 'cd'.repeat(16) }],
  });
  return { e, first, item, indexed };
}

describe('the records of sends SENT from their items’ message ids', () => {
  it('named in a spool slice: kept when held or rebuilt; lost, with its digest and slice, when neither — never read from the index', async () => {
    const held = entry('ev-1#SMS');
    const nowhere = entry('ev-2#SMS');
    const items = { [held.notificationId]: sentItem(held, SLICE), [nowhere.notificationId]: sentItem(nowhere, SLICE) };
    const { d } = deps(items, {
      refusing: true,
      keep: async (sent: readonly SentHere[]) => ({
        unverified: sent.filter((i) => i.notificationId === nowhere.notificationId),
      }),
    });
    expect(await checkSentFromItem([held, nowhere], d)).toEqual({
      kept: 1,
      lost: [
        { notificationId: 'ev-2#SMS', providerMessageId: 'm-ev-2#SMS', sha256: SHA, batch: SLICE, reason: 'MISMATCH' },
      ],
      notKept: [],
      elsewhere: [],
      unchecked: [],
    });
  });

  it("named in an invocation's own batch: left to its intent's recovery, neither kept nor lost here", async () => {
    const e = entry('ev-3#SMS');
    const { d, kept } = deps({ [e.notificationId]: sentItem(e, 'batches/2026-12-06/100000-dispatch-abcdef12') });
    expect(await checkSentFromItem([e], d)).toEqual({ kept: 0, lost: [], notKept: [], elsewhere: [], unchecked: [] });
    expect(kept).toEqual([]);
  });

  it("one this run's recovery of an intent counted lost already (the intent named it too) is not checked again: counted lost once", async () => {
    const e = entry('ev-7#SMS');
    const { d, kept } = deps(
      { [e.notificationId]: sentItem(e, SLICE) },
      { keep: async (sent) => ({ unverified: [...sent] }) },
    );
    expect((await checkSentFromItem([e], d)).lost).toHaveLength(1);
    const once = await checkSentFromItem([e], { ...d, lostByRecovery: new Set([e.notificationId]) });
    expect(once).toEqual({ kept: 0, lost: [], notKept: [], elsewhere: [], unchecked: [] });
    expect(kept).toEqual([]);
  });

  it('named in a batch of its own (its intent refused: no intent names it, the record written after the SENT write): unconfirmed when no index names it, as a send naming no record', async () => {
    // As dispatch/record-evidence.ts `ready` names it: the invocation's id (20 hex) and `r<n>`.
    const alone = batchName('dispatch', Date.parse('2026-12-06T10:00:00.000Z'), '0123456789abcdef0123r0');
    const lost = entry('ev-9#SMS');
    const indexed = entry('ev-8#SMS');
    const items = { [lost.notificationId]: sentItem(lost, alone), [indexed.notificationId]: sentItem(indexed, alone) };
    const { d, kept } = deps(items, { named: [indexed.notificationId] });
    expect(await checkSentFromItem([lost, indexed], d)).toEqual({
      kept: 0,
      lost: [],
      notKept: [lost],
      elsewhere: [],
      unchecked: [],
    });
    expect(kept).toEqual([]);
  });

  it('in a stage of two regions, one found nowhere here that was claimed at another epoch (its record may be in the other region’s spool) is not counted lost: apart, unconfirmed', async () => {
    const here = entry('ev-10#SMS');
    const there = entry('ev-11#SMS');
    const claimedAt = (e: SweepEntry, claimEpoch: number) =>
      ({ ...sentItem(e, SLICE), claimEpoch }) as NotificationItem;
    const items = { [here.notificationId]: claimedAt(here, 3), [there.notificationId]: claimedAt(there, 2) };
    const { d } = deps(items, { keep: async (sent) => ({ unverified: [...sent] }) });
    const checked = await checkSentFromItem([here, there], { ...d, epoch: 3 });
    expect(checked.lost.map((l) => l.notificationId)).toEqual(['ev-10#SMS']);
    expect(checked.elsewhere).toEqual([there]);
  });

  it('a keeping that fails (a read or a write refused) leaves the send unchecked, never lost', async () => {
    const e = entry('ev-4#SMS');
    const { d } = deps(
      { [e.notificationId]: sentItem(e, SLICE) },
      {
        keep: async () => {
          throw Object.assign(new Error('throttled'), { name: 'ThrottlingException' });
        },
      },
    );
    expect(await checkSentFromItem([e], d)).toEqual({
      kept: 0,
      lost: [],
      notKept: [],
      elsewhere: [],
      unchecked: [{ notificationId: 'ev-4#SMS', error: 'ThrottlingException' }],
    });
  });

  it('naming no record (an earlier version’s extension): kept when an index names it, unconfirmed when none does — another channel of the same event does not keep it', async () => {
    const kept = entry('ev-5#SMS');
    const unconfirmed = entry('ev-6#SMS');
    const items = { [kept.notificationId]: sentItem(kept), [unconfirmed.notificationId]: sentItem(unconfirmed) };
    const { d } = deps(items, { named: ['ev-5#SMS', 'ev-6#EMAIL'] });
    expect(await checkSentFromItem([kept, unconfirmed], d)).toMatchObject({
      kept: 0,
      lost: [],
      notKept: [unconfirmed],
    });
  });

  it('naming no record, with an index that cannot be read: unchecked, never lost', async () => {
    const e = entry('ev-7#SMS');
    const { d } = deps({ [e.notificationId]: sentItem(e) }, { refusing: true });
    expect(await checkSentFromItem([e], d)).toEqual({
      kept: 0,
      lost: [],
      notKept: [],
      elsewhere: [],
      unchecked: [{ notificationId: 'ev-7#SMS', error: 'ProvisionedThroughputExceededException' }],
    });
  });

  it("a reference accepted before the item's createdAt (an earlier attempt's, left by a resend) names nothing of this send: never kept nor rebuilt from it — checked against the index as naming no record", async () => {
    const e = { ...entry('ev-12#SMS'), attempt: 2 };
    const resentAt = '2026-12-06T10:00:30.000Z';
    const stale = (batch: string) => ({ ...sentItem(e, batch), attempt: 2, createdAt: resentAt }) as NotificationItem;
    const alone = batchName('dispatch', Date.parse('2026-12-06T10:00:00.000Z'), '0123456789abcdef0123r0');
    for (const batch of [SLICE, alone, 'batches/2026-12-06/100000-dispatch-abcdef12']) {
      const { d, kept } = deps({ [e.notificationId]: stale(batch) });
      expect(await checkSentFromItem([e], d), batch).toEqual({
        kept: 0,
        lost: [],
        notKept: [e],
        elsewhere: [],
        unchecked: [],
      });
      expect(kept).toEqual([]);
    }
    // Accepted after it, the slice is this attempt's: kept.
    const { d, kept } = deps({ [e.notificationId]: { ...stale(SLICE), createdAt: '2026-12-06T10:00:00.000Z' } });
    expect((await checkSentFromItem([e], d)).kept).toBe(1);
    expect(kept).toEqual([e.notificationId]);
  });

  it("attempt 2 named in a batch of its own (its intent refused after a resend): an index naming attempt 1's send does not name it — only its batch or its digest does", async () => {
    const e = { ...entry('ev-13#SMS'), attempt: 2 };
    const alone = batchName('dispatch', Date.parse('2026-12-06T10:00:00.000Z'), 'abcdef1234567890abcdr0');
    const items = { [e.notificationId]: { ...sentItem(e, alone), attempt: 2 } as NotificationItem };
    const refs = (r: { batch: string; sha256?: string }) => ({
      sendsOfEvent: async () => [{ notificationId: e.notificationId, ...r }],
    });
    const { d } = deps(items);
    const checked = (ref: { batch: string; sha256?: string }) => checkSentFromItem([e], { ...d, index: refs(ref) });
    const earlier = 'batches/2026-12-05/100000-dispatch-0123456789abcdef0123';
    expect((await checked({ batch: earlier, sha256: 'cd'.repeat(16) })).notKept).toEqual([e]);
    expect((await checked({ batch: earlier })).notKept).toEqual([e]);
    expect((await checked({ batch: alone })).notKept).toEqual([]);
    // The compact layout keeps the digest's first 128 bits.
    expect((await checked({ batch: 'elsewhere', sha256: SHA.slice(0, 32) })).notKept).toEqual([]);
  });

  it("attempt 2 naming nothing after a resend (its earlier reference removed): attempt 1's index entry, in the batch the resend took off the item, does not name it — unconfirmed; one in another batch does", async () => {
    const { e, first, item, indexed } = resentFromSent('ev-14#SMS');
    const { d, kept } = deps({ [e.notificationId]: item });
    expect(await checkSentFromItem([e], { ...d, index: indexed(first) })).toEqual({
      kept: 0,
      lost: [],
      notKept: [e],
      elsewhere: [],
      unchecked: [],
    });
    expect((await checkSentFromItem([e], { ...d, index: indexed(SLICE) })).notKept).toEqual([]);
    expect(kept).toEqual([]);
  });

  it("attempt 2 naming nothing after an automatic retry or a resend from UNKNOWN (no batch named): attempt 1's entry, its frozen holder's late record, names none of it in any batch — unconfirmed, counted once; attempt 2's does", async () => {
    const e = { ...entry('ev-15#SMS'), attempt: 2 };
    const late = 'batches/2026-12-05/100000-dispatch-0123456789abcdef0123';
    const retried = { ...sentItem(e), attempt: 2 } as NotificationItem;
    const resent = {
      ...retried,
      manualResends: [{ fromStatus: 'UNKNOWN', attempt: 1 }],
    } as unknown as NotificationItem;
    const indexed = (attempt?: number) => ({
      sendsOfEvent: async () => [
        {
          batch: late,
          notificationId: e.notificationId,
          sha256: 'cd'.repeat(16),
          ...(attempt === undefined ? {} : { attempt }),
        },
      ],
    });
    for (const item of [retried, resent]) {
      const { d } = deps({ [e.notificationId]: item });
      // The reviewer's probe (review 53 A): counted in no bucket before the entry carried its attempt.
      expect(await checkSentFromItem([e], { ...d, index: indexed(1) })).toEqual({
        kept: 0,
        lost: [],
        notKept: [e],
        elsewhere: [],
        unchecked: [],
      });
      expect((await checkSentFromItem([e], { ...d, index: indexed(2) })).notKept).toEqual([]);
    }
    // The item gone, the sweep entry's attempt is the send's.
    const { d } = deps({});
    expect((await checkSentFromItem([e], { ...d, index: indexed(1) })).notKept).toEqual([e]);
    expect((await checkSentFromItem([e], { ...d, index: indexed(2) })).notKept).toEqual([]);
  });

  it("checked by the attempt SENT, not the item's: an operator's resend since, its claim at attempt 3, neither hides attempt 2's loss nor counts its indexed record unconfirmed", async () => {
    const e = { ...entry('ev-17#SMS'), attempt: 2 };
    const late = 'batches/2026-12-05/100000-dispatch-0123456789abcdef0123';
    // SENT at attempt 2 naming no record; resent from SENT at the end of the run, dispatch has claimed attempt 3.
    const item = {
      ...sentItem(e),
      status: 'PROCESSING',
      attempt: 3,
      manualResends: [{ fromStatus: 'SENT', attempt: 2 }],
    } as unknown as NotificationItem;
    const indexed = (attempt: number) => ({
      sendsOfEvent: async () => [{ batch: late, notificationId: e.notificationId, sha256: 'cd'.repeat(16), attempt }],
    });
    const { d } = deps({ [e.notificationId]: item });
    expect((await checkSentFromItem([e], { ...d, index: indexed(2) })).notKept).toEqual([]);
    expect((await checkSentFromItem([e], { ...d, index: indexed(3) })).notKept).toEqual([e]);
    // Its reference, attempt 2's, is this send's: kept by the slice's check, not looked up as naming nothing.
    const named = {
      ...item,
      evidence: { batch: SLICE, sha256: SHA, acceptedAt: '2026-12-06T10:00:05.000Z', attempt: 2 },
    } as unknown as NotificationItem;
    const { d: withRef, kept } = deps({ [e.notificationId]: named });
    expect(await checkSentFromItem([e], { ...withRef, index: indexed(3) })).toMatchObject({ kept: 1, notKept: [] });
    expect(kept).toEqual([e.notificationId]);
  });

  it('an entry written before entries carried their attempt is read by the batch rule as before: one in a batch no resend names names this send', async () => {
    const { e, first, item, indexed } = resentFromSent('ev-16#SMS');
    const { d } = deps({ [e.notificationId]: item });
    expect((await checkSentFromItem([e], { ...d, index: indexed(SLICE) })).notKept).toEqual([]);
    expect((await checkSentFromItem([e], { ...d, index: indexed(first) })).notKept).toEqual([e]);
    // With its attempt, an entry in the batch the resend took off is this attempt's when it says so.
    const own = { sendsOfEvent: async () => [{ batch: first, notificationId: e.notificationId, attempt: 2 }] };
    expect((await checkSentFromItem([e], { ...d, index: own })).notKept).toEqual([]);
  });
});

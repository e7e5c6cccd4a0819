/**
 * Ingest in a stage with two regions (docs/regions.md "Ownership"): every item it writes carries `owner` (this region)
 * and `epoch` (its current one), so the dispatch trigger's filter, every later write's condition and the other
 * region's promotion know whose it is. A fenced region writes nothing: the batch fails and is delivered again — by
 * then its mapping is disabled, or the region promoted.
 *
 * Events read again (docs/regions.md "Events read again"): after a failover, until the old region is reconciled, an
 * event with no inbox item in this replica that occurred before the cut (plus the clock margin) may have been taken by
 * the old region, whose records have not all arrived. It is held: a held inbox item `INBOX#E<epoch>` (the old region's
 * `INBOX` stays free for its late write) and a successor per channel, FAILOVER_HELD, which `ops reconcile` decides.
 * Once the old region is reconciled — fenced and quiet, so "absent there" means "never taken" — until `lookupUntil`
 * such an event is looked up in the old region instead: found, a duplicate; absent, new; the look-up failing, held.
 * "Taken" is any inbox item of the event — `INBOX`, or a held `INBOX#E<n>` of any epoch — here or there: a failback
 * reads again what the recovery region held and then released, and an event held in any failover is never new again.
 * A record MSK Replicator copied from the other cluster (`__mskmr`) follows its own rule (domain/replicated-records.ts):
 * held or looked up whatever its occurredAt while this region is the other's active successor, else not taken.
 * A look-up that cannot be answered holds the event and is reported (`onLookupUnanswered`): never sent on silence.
 */
import type { PreferencesItem } from '../domain/audience.ts';
import type { Channel } from '../domain/channels.ts';
import { buildSuccessor, failoverSuccessor } from '../domain/failover.ts';
import type { FenceControl, Ownership } from '../domain/fence.ts';
import { INBOX_SK } from '../domain/keys.ts';
import type { InboxItem, NotificationItem, QuarantineItem, SeriesEntryItem } from '../domain/notification.ts';
import {
  notTakenDetail,
  type RecordOrigin,
  ReplicatedNotTaken,
  replicatedRecordRule,
} from '../domain/replicated-records.ts';
import { DEFAULT_SWEEP_PLACEMENT, type SweepPlacement } from '../domain/sweep-index.ts';
import type { FenceGate } from '../stores/fence-store.ts';
import type {
  ChannelRepair,
  InboxStore,
  KnownEvents,
  KnownInbox,
  PreferencesOutcome,
  RecordOutcome,
} from './inbox-port.ts';
import { OtherRegionActive, RegionFencedError } from './peer-errors.ts';

export { RegionFencedError } from './peer-errors.ts';

export class OwnedInboxStore implements InboxStore {
  readonly findInboxes?: InboxStore['findInboxes'];
  readonly readInbox?: InboxStore['readInbox'];
  readonly repairChannels?: (repair: ChannelRepair) => Promise<'repaired' | 'changed' | 'erased'>;

  constructor(
    private readonly inner: InboxStore,
    private readonly fence: Pick<FenceGate, 'current'>,
    private readonly region: string,
    private readonly failover: {
      /** `failoverSecondCopy`: the channels a held replay is sent again on at once, with the note (email at most). */
      readonly secondCopy: readonly Channel[];
      /** `failoverClockSkewSeconds`, in ms: how far ahead of the cut a producer's clock may run. */
      readonly clockMarginMs: number;
      readonly placement?: SweepPlacement;
      readonly now: () => number;
      /**
       * Whether the old region took these events (its `findTaken`: `INBOX` or a held `INBOX#E<n>`, consistent), for
       * the look-up after a reconciliation.
       */
      readonly predecessorInboxes?: (eventIds: readonly string[]) => Promise<KnownEvents>;
      /** A look-up that could not be made or answered: the event is held; the handler counts and logs it. */
      readonly onLookupUnanswered?: (eventId: string, error: unknown) => void;
    },
  ) {
    if (inner.findInboxes) this.findInboxes = inner.findInboxes.bind(inner);
    if (inner.readInbox) this.readInbox = inner.readInbox.bind(inner);
    if (inner.repairChannels) {
      const repair = inner.repairChannels.bind(inner);
      this.repairChannels = async (r) => {
        await this.ownership();
        return repair(r);
      };
    }
  }

  async refusesReplicated(replicatedFrom: string): Promise<string | undefined> {
    const control = await this.fence.current();
    ownershipOf(control, this.region);
    if (replicatedRecordRule(control, this.region) !== 'notTaken') return undefined;
    return notTakenDetail(control, this.region, replicatedFrom);
  }

  async recordEvent(
    inbox: InboxItem,
    notifications: NotificationItem[],
    series?: SeriesEntryItem,
    origin?: RecordOrigin,
  ): Promise<RecordOutcome> {
    const control = await this.fence.current();
    const owned = ownershipOf(control, this.region);
    const now = this.failover.now();
    const replicated = origin === undefined ? undefined : replicatedRecordRule(control, this.region);
    // The fence moved since the record was let in (refusesReplicated): still not taken.
    if (replicated === 'notTaken')
      throw new ReplicatedNotTaken(notTakenDetail(control, this.region, origin?.replicatedFrom ?? '?'));
    let rule = replicated ?? replayRule(control, Date.parse(inbox.occurredAt), this.failover.clockMarginMs, now);
    // Held here before, in any epoch (its successors perhaps released and sent since — a failback reads again what
    // the recovery region held): a duplicate, whatever the old region says.
    const heldBefore = control?.predecessor === undefined ? undefined : await this.takenHere(inbox.eventId);
    if (heldBefore !== undefined) return { kind: 'inboxExists', payloadHash: heldBefore.payloadHash };
    if (rule === 'lookup') {
      const found = await this.lookUp(inbox.eventId);
      if (found !== undefined && 'unanswered' in found) {
        // A copy of the other region's record while that region is active again: it takes it from its own cluster,
        // and a held inbox item here would make its own ingest think the event taken.
        if (found.unanswered instanceof OtherRegionActive && origin !== undefined) {
          throw new ReplicatedNotTaken(`${notTakenDetail(control, this.region, origin.replicatedFrom)}; it is ACTIVE`);
        }
        this.failover.onLookupUnanswered?.(inbox.eventId, found.unanswered);
        rule = 'hold';
      } else if (found !== undefined) return { kind: 'inboxExists', payloadHash: found.payloadHash, stored: found };
      else rule = 'new';
    }
    if (rule === 'new') {
      return this.inner.recordEvent(
        { ...inbox, ...owned },
        notifications.map((n) => ({ ...n, ...owned })),
        // A newer notice of the series replaces an older one here as in one region (docs/dispatch.md "The right
        // moment"). A held event writes none: its notices wait for a decision, not for the series.
        series === undefined ? undefined : { ...series, ...owned },
      );
    }
    const placement = this.failover.placement ?? DEFAULT_SWEEP_PLACEMENT;
    const held = notifications.map((n) => {
      const start = failoverSuccessor(n, this.failover.secondCopy);
      return start === undefined
        ? { ...n, ...owned, sk: `${n.sk}#E${owned.epoch}`, notificationId: `${n.notificationId}#E${owned.epoch}` }
        : buildSuccessor(n, { ...start, heldReason: 'REPLAYED_WITHOUT_INBOX' }, owned, now, placement);
    });
    const heldInbox = { ...inbox, ...owned, sk: heldInboxSk(owned.epoch) as typeof INBOX_SK, held: true };
    return this.inner.recordEvent(heldInbox, held);
  }

  async recordPreferences(
    inbox: InboxItem,
    staleInbox: InboxItem,
    prefs: PreferencesItem,
  ): Promise<PreferencesOutcome> {
    const owned = await this.ownership();
    return this.inner.recordPreferences({ ...inbox, ...owned }, { ...staleInbox, ...owned }, { ...prefs, ...owned });
  }

  async quarantine(item: QuarantineItem): Promise<boolean> {
    return this.inner.quarantine({ ...item, ...(await this.ownership()) });
  }

  /** The event's inbox item in this replica, `INBOX` or held in any epoch; its payloadHash only. */
  private async takenHere(eventId: string): Promise<{ payloadHash: string | undefined } | undefined> {
    const found = (await this.inner.findTaken?.([eventId]))?.get(eventId);
    return found === undefined ? undefined : { payloadHash: found.payloadHash };
  }

  /** The old region's inbox item of the event, none, or why it could not tell (then the event is held). */
  private async lookUp(eventId: string): Promise<KnownInbox | undefined | { unanswered: unknown }> {
    try {
      if (this.failover.predecessorInboxes === undefined) throw new Error('no look-up in the old region is configured');
      return (await this.failover.predecessorInboxes([eventId])).get(eventId);
    } catch (error) {
      // The old region cannot be asked, did not answer in time, or is not fenced: its answer proves nothing.
      return { unanswered: error };
    }
  }

  private async ownership(): Promise<Ownership> {
    return ownershipOf(await this.fence.current(), this.region);
  }
}

function ownershipOf(control: FenceControl | undefined, region: string): Ownership {
  if (control?.state !== 'ACTIVE') throw new RegionFencedError(`${region} is fenced: ingest writes nothing`);
  return { owner: region, epoch: control.epoch };
}

/**
 * What ingest does with an event that has no inbox item in this replica: new; held (a failover not yet reconciled,
 * and the event occurred before the cut plus the clock margin); looked up in the reconciled old region until
 * `lookupUntil`. An occurredAt that cannot be read counts as before the cut.
 */
export function replayRule(
  control: FenceControl | undefined,
  occurredAtMs: number,
  clockMarginMs: number,
  now: number,
): 'new' | 'hold' | 'lookup' {
  const predecessor = control?.predecessor;
  if (predecessor === undefined || control?.cutAt === undefined) return 'new';
  if (occurredAtMs >= control.cutAt + clockMarginMs) return 'new';
  if (predecessor.reconciledAt === undefined) return 'hold';
  return now < (control.lookupUntil ?? 0) ? 'lookup' : 'new';
}

/** The inbox item of an event held after a failover: beside the old region's `INBOX`, never over it. */
export const heldInboxSk = (epoch: number) => `${INBOX_SK}#E${epoch}`;

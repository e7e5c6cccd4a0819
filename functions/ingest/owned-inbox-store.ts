/**
 * Ingest in a stage with two regions (docs/regions.md "Ownership"): every item it writes carries `owner` (this region)
 * and `epoch` (its current one), so the dispatch trigger's filter, every later write's condition and the other
 * region's promotion know whose it is. A fenced region writes nothing: the batch fails and is delivered again — by
 * then its mapping is disabled, or the region promoted.
 */
import type { PreferencesItem } from '../domain/audience.ts';
import type { InboxItem, NotificationItem, QuarantineItem } from '../domain/notification.ts';
import type { FenceGate } from '../stores/fence-store.ts';
import type { ChannelRepair, InboxStore, PreferencesOutcome, RecordOutcome } from './inbox-store.ts';

/** This region is fenced: ingest must not write (and must not report success, which would commit the offsets). */
export class RegionFencedError extends Error {
  override name = 'RegionFencedError';
}

export class OwnedInboxStore implements InboxStore {
  readonly findInboxes?: InboxStore['findInboxes'];
  readonly readInbox?: InboxStore['readInbox'];
  readonly repairChannels?: (repair: ChannelRepair) => Promise<'repaired' | 'changed' | 'erased'>;

  constructor(
    private readonly inner: InboxStore,
    private readonly fence: Pick<FenceGate, 'claimEpoch'>,
    private readonly region: string,
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

  async recordEvent(inbox: InboxItem, notifications: NotificationItem[]): Promise<RecordOutcome> {
    const owned = await this.ownership();
    return this.inner.recordEvent(
      { ...inbox, ...owned },
      notifications.map((n) => ({ ...n, ...owned })),
    );
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

  private async ownership(): Promise<{ owner: string; epoch: number }> {
    const epoch = await this.fence.claimEpoch();
    if (epoch === undefined) throw new RegionFencedError(`${this.region} is fenced: ingest writes nothing`);
    return { owner: this.region, epoch };
  }
}

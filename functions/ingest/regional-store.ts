/**
 * Ingest's store in a stage in two regions (docs/regions.md): every item carries this region as its owner and its
 * epoch, a fenced region takes no event, and events read again after a failover are held or looked up
 * (owned-inbox-store.ts). Once the old region is reconciled, an event read again is asked of its replica
 * (peer-lookup.ts): one attempt, a short timeout; unanswered, the event is held, counted and logged — never sent on
 * silence. A chunk of its own: the handler loads it only when the stage names its fence (FENCE_TABLE_NAME).
 */
import { countNow, logger } from '../commons/powertools.ts';
import type { RegionFence } from '../commons/region-fence.ts';
import type { SweepPlacement } from '../domain/sweep-index.ts';
import type { InboxStore } from './inbox-port.ts';
import { OwnedInboxStore } from './owned-inbox-store.ts';
import { peerInboxes } from './peer-lookup.ts';

export function regionalStore(inbox: InboxStore, fence: RegionFence, placement: SweepPlacement): InboxStore {
  const peer =
    fence.other?.tableName === undefined
      ? undefined
      : peerInboxes({ ...fence.other, tableName: fence.other.tableName, timeoutMs: fence.lookupTimeoutMs });
  return new OwnedInboxStore(inbox, fence.store, fence.region, {
    secondCopy: [],
    clockMarginMs: fence.clockMarginMs,
    placement,
    now: Date.now,
    ...(peer === undefined ? {} : { predecessorInboxes: (ids: readonly string[]) => peer.taken(ids) }),
    onLookupUnanswered: (eventId, error) => {
      countNow('PeerLookupsUnanswered');
      logger.warn('look-up in the other region unanswered: event held', {
        eventId,
        otherRegion: fence.other?.region,
        error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
      });
    },
  });
}

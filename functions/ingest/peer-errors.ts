/**
 * Why a look-up in the other region proved nothing (docs/regions.md "Events read again"), and why a fenced region
 * takes nothing: apart from the look-up's client (peer-lookup.ts), so the two-region store that tells them apart
 * loads no SDK client or Powertools with them — a module that makes the shared logger and metrics at import would
 * make them before a local run has set its environment — and apart from that store, so the handler tells a fenced
 * batch without loading the two-region pieces in a stage in one region.
 */

/** This region is fenced: ingest must not write (and must not report success, which would commit the offsets). */
export class RegionFencedError extends Error {
  override name = 'RegionFencedError';
}

/** The old region could not be asked, or its answer proves nothing: the event is held. */
export class PeerLookupUnanswered extends Error {
  override name = 'PeerLookupUnanswered';
}

/** The other region is ACTIVE: promoted again since, it takes its own cluster's records, this region must not. */
export class OtherRegionActive extends PeerLookupUnanswered {
  override name = 'OtherRegionActive';
}

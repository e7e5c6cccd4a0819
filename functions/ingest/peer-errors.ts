/**
 * Why a look-up in the other region proved nothing (docs/regions.md "Events read again"): apart from the look-up's
 * client (peer-lookup.ts), so the two-region store that tells them apart loads no SDK client or Powertools with them —
 * a module that makes the shared logger and metrics at import would make them before a local run has set its
 * environment.
 */

/** The old region could not be asked, or its answer proves nothing: the event is held. */
export class PeerLookupUnanswered extends Error {
  override name = 'PeerLookupUnanswered';
}

/** The other region is ACTIVE: promoted again since, it takes its own cluster's records, this region must not. */
export class OtherRegionActive extends PeerLookupUnanswered {
  override name = 'OtherRegionActive';
}

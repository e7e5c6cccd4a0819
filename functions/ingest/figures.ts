/**
 * The ingest figures of one invocation and their EMF metric names. Plain data, no Powertools: the local run and the
 * chaos suite read the metrics back by these names without loading the handlers' modules early.
 */
import type { MetricName } from '../contracts/telemetry.ts';
import type { IngestResult } from './ingest-record.ts';

export interface IngestFigures {
  received: number;
  accepted: number;
  duplicates: number;
  conflicts: number;
  quarantined: number;
  requarantined: number;
  failed: number;
  /** Accepted events (part of `accepted`) that route to no channel: no contact point for any allowed channel. */
  withoutNotifications: number;
  /** Accepted events (part of `accepted`) recorded but not sent: older than MAX_EVENT_AGE_SECONDS. */
  tooOld: number;
  /** Accepted events (part of `accepted`) whose display text was cleaned. */
  displayTextSanitised: number;
  /** Accepted events (part of `accepted`) with a card number masked in a shown field (a producer sent a PAN). */
  cardNumbersMasked: number;
  /** Accepted events (part of `accepted`) with at least one channel REFUSED (its contact point had no reading). */
  withRefusedChannels: number;
  /** Accepted events (part of `accepted`) with at least one spelling normalised to its one reading. */
  spellingsNormalised: number;
  /** Accepted events (part of `accepted`) whose language tag named no language the brand writes: the default. */
  localeFallbacks: number;
  /** Accepted events (part of `accepted`) whose time zone the runtime does not know: the locale's default zone. */
  timeZoneFallbacks: number;
  /** Duplicates (part of `duplicates`) that were corrected resends repairing refused channels. */
  repairs: number;
}

/** The EMF metric of each figure: a contract the stack's dashboard and alarms reference. */
export const FIGURE_METRICS: Readonly<Record<keyof IngestFigures, MetricName>> = {
  received: 'EventsReceived',
  accepted: 'EventsAccepted',
  duplicates: 'DuplicateEvents',
  conflicts: 'EventIdConflicts',
  quarantined: 'RecordsQuarantined',
  requarantined: 'RecordsRequarantined',
  failed: 'RecordsFailed',
  withoutNotifications: 'EventsWithoutNotifications',
  tooOld: 'EventsTooOld',
  displayTextSanitised: 'DisplayTextSanitised',
  cardNumbersMasked: 'CardNumbersMasked',
  withRefusedChannels: 'EventsWithRefusedChannels',
  spellingsNormalised: 'SpellingsNormalised',
  localeFallbacks: 'LocaleFallbacks',
  timeZoneFallbacks: 'TimeZoneFallbacks',
  repairs: 'EventsRepaired',
};

/** delivered = accepted + duplicates + conflicts + quarantined + requarantined + failed. */
export const reconciles = (f: IngestFigures): boolean =>
  f.received === f.accepted + f.duplicates + f.conflicts + f.quarantined + f.requarantined + f.failed;

/** The figures of one batch's results: what each record became (`failed`: records not ingested this time). */
export function tally(received: number, results: readonly IngestResult[], failed: number): IngestFigures {
  const f: IngestFigures = {
    received,
    accepted: 0,
    duplicates: 0,
    conflicts: 0,
    quarantined: 0,
    requarantined: 0,
    failed,
    withoutNotifications: 0,
    tooOld: 0,
    displayTextSanitised: 0,
    cardNumbersMasked: 0,
    withRefusedChannels: 0,
    spellingsNormalised: 0,
    localeFallbacks: 0,
    timeZoneFallbacks: 0,
    repairs: 0,
  };
  for (const r of results) {
    switch (r.kind) {
      case 'accepted':
        f.accepted++;
        if (r.normalised.length > 0) f.spellingsNormalised++;
        // A preferences event has no channel by nature: not "without notifications".
        if (r.preferences === true) break;
        if (r.skipped === 'TOO_OLD') f.tooOld++;
        else if (r.channels.length === 0) f.withoutNotifications++;
        if (r.sanitised.length > 0) f.displayTextSanitised++;
        if (r.masked.length > 0) f.cardNumbersMasked++;
        if (r.refused.length > 0) f.withRefusedChannels++;
        if (r.fallbacks.includes('recipient.locale')) f.localeFallbacks++;
        if (r.fallbacks.includes('recipient.timeZone')) f.timeZoneFallbacks++;
        break;
      case 'duplicate':
        f.duplicates++;
        if (r.repaired !== undefined && r.repaired.length > 0) f.repairs++;
        break;
      case 'conflict':
        if (r.newlyQuarantined) f.conflicts++;
        else f.requarantined++;
        break;
      case 'quarantined':
        if (r.newlyQuarantined) f.quarantined++;
        else f.requarantined++;
        break;
    }
  }
  return f;
}

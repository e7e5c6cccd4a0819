/**
 * The figures of one batch (functions/contracts/ingest-figures.ts): what each record became, counted.
 */
import type { IngestFigures } from '../contracts/ingest-figures.ts';
import type { IngestResult } from './ingest-record.ts';

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

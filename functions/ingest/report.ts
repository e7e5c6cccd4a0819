/**
 * What the ingest handler tells CloudWatch about one batch: the figures as EMF metrics, the notifications created per
 * channel, and in the same document the batch listing (`batch ingested`: `reconciled` and the events accepted as they
 * should be, `<eventId> <channel>,<channel>` each); a log line of its own for every other record (ids and reason
 * codes only, never an address or a display text). The use case (ingest-batch.ts) decides; this only reports.
 */

import { count, countBy, infoListing, logger } from '../commons/powertools.ts';
import { FIGURE_METRICS, reconciles, reportedFigures } from '../contracts/ingest-figures.ts';
import type { Channel } from '../domain/channels.ts';
import type { BatchSummary } from './ingest-batch.ts';

export function reportBatch(summary: BatchSummary): void {
  const created = new Map<Channel, number>();
  const refused = new Map<Channel, number>();
  const repaired = new Map<Channel, number>();
  const add = (counts: Map<Channel, number>, c: Channel) => counts.set(c, (counts.get(c) ?? 0) + 1);
  const accepted: string[] = [];
  for (const r of summary.results) {
    switch (r.kind) {
      case 'accepted':
        for (const c of r.channels) add(created, c);
        for (const x of r.refused) {
          add(refused, x.channel);
          // The rule broken and the field, never the value: the detail names no address.
          logger.warn('channel refused', {
            eventId: r.eventId,
            channel: x.channel,
            reason: x.reason,
            detail: x.detail,
          });
        }
        if (r.normalised.length > 0) logger.info('spellings normalised', { eventId: r.eventId, fields: r.normalised });
        if (r.fallbacks.length > 0) {
          logger.info('presentation hint fell back to the default', { eventId: r.eventId, fields: r.fallbacks });
        }
        if (r.preferences === true) {
          countBy('PreferencesUpdates', { applied: r.skipped === 'STALE' ? 'stale' : 'applied' });
          logger.info(r.skipped === 'STALE' ? 'older preferences recorded, not applied' : 'preferences applied', {
            eventId: r.eventId,
            skipped: r.skipped,
          });
        } else if (r.skipped === 'TOO_OLD') {
          logger.warn('event too old: recorded, not sent', { eventId: r.eventId, skipped: r.skipped });
        } else if (r.channels.length === 0) {
          logger.warn('event accepted with no channel to send', { eventId: r.eventId });
        } else {
          // Listed by its eventId in the batch line, which the runbook's trace finds.
          accepted.push(`${r.eventId} ${r.channels.join(',')}`);
        }
        if (r.sanitised.length > 0) {
          logger.info('display text sanitised', { eventId: r.eventId, fields: r.sanitised });
        }
        if (r.masked.length > 0) {
          // The producer sent a card number: the topic (and its retention) holds it. Never the value here.
          logger.warn('card number masked', { eventId: r.eventId, fields: r.masked });
        }
        break;
      case 'duplicate':
        if (r.repaired !== undefined && r.repaired.length > 0) {
          for (const c of r.repaired) add(repaired, c);
          logger.info('refused channels repaired by a corrected resend', { eventId: r.eventId, channels: r.repaired });
        } else if (r.erased === true) {
          logger.info('corrected resend of an erased event: nothing repaired, nothing sent', { eventId: r.eventId });
        } else logger.info('duplicate event acknowledged', { eventId: r.eventId });
        break;
      case 'conflict':
        logger.error('eventId reused with a different payload; quarantined', {
          eventId: r.eventId,
          reason: 'EVENT_ID_CONFLICT',
          redelivered: !r.newlyQuarantined,
        });
        break;
      case 'quarantined': {
        const line = {
          eventId: r.rejection.eventId,
          reason: r.rejection.reason,
          detail: r.rejection.detail,
          redelivered: !r.newlyQuarantined,
        };
        // UNPROCESSABLE is a bug or a refused write, not a producer's mistake: it needs an engineer.
        if (r.rejection.reason === 'UNPROCESSABLE') logger.error('record quarantined', line);
        else if (r.rejection.reason === 'REPLICATED_NOT_TAKEN') {
          // A copy from the other region's cluster, read where it must not be taken (docs/regions.md): kept, not sent.
          count('ReplicatedRecordsNotTaken');
          logger.warn('replicated record not taken here; quarantined', line);
        } else logger.warn('record quarantined', line);
        break;
      }
    }
  }
  const f = summary.figures;
  const reported = reportedFigures(f);
  for (const [figure, n] of reported) count(FIGURE_METRICS[figure], n);
  for (const [channel, n] of created) countBy('NotificationsCreated', { channel }, n);
  for (const [channel, n] of refused) countBy('NotificationsRefused', { channel }, n);
  for (const [channel, n] of repaired) countBy('NotificationsRepaired', { channel }, n);
  // The figures are the metric values of the document the listing rides in (commons/powertools.ts publishMetrics).
  infoListing('batch ingested', accepted, { reconciled: reconciles(f) });
  if (summary.lookupFailure !== undefined) {
    // The look-up before the transactions failed: nothing lost, duplicates cost a cancelled transaction this time.
    count('InboxLookupFailures');
    logger.warn('inbox look-up failed; every event went to its transaction', { error: summary.lookupFailure as Error });
  }
  if (summary.failure !== undefined) {
    logger.error('batch failed; the event source mapping will redeliver it', {
      failedRecords: f.failed,
      error: summary.failure as Error,
    });
  }
}

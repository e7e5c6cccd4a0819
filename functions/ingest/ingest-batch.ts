/**
 * One MSK batch: every record of every topic-partition through ingestRecord, with bounded concurrency.
 * Records are independent (each carries its own inbox check), so their order does not matter.
 */
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import type { MSKEvent } from 'aws-lambda';
import type { LimitFunction } from 'p-limit';
import { countBy, logger, metrics } from '../commons/powertools.ts';
import type { Channel } from '../domain/channels.ts';
import { type IngestDeps, type IngestResult, ingestRecord } from './ingest-record.ts';

export interface BatchDeps extends IngestDeps {
  readonly limit: LimitFunction;
}

export interface BatchSummary {
  readonly records: number;
  readonly results: IngestResult[];
}

export async function ingestBatch(event: MSKEvent, deps: BatchDeps): Promise<BatchSummary> {
  const records = Object.values(event.records ?? {}).flat();
  const settled = await Promise.allSettled(
    records.map((record) =>
      deps.limit(() =>
        ingestRecord(
          { source: { topic: record.topic, partition: record.partition, offset: record.offset }, value: record.value },
          deps,
        ),
      ),
    ),
  );
  const results: IngestResult[] = [];
  const failures: unknown[] = [];
  for (const s of settled) {
    if (s.status === 'fulfilled') results.push(s.value);
    else failures.push(s.reason);
  }
  report(records.length, results);
  if (failures.length > 0) {
    const first = failures[0] as Error;
    logger.error('batch failed; the event source mapping will redeliver it', {
      failedRecords: failures.length,
      error: first,
    });
    throw first;
  }
  return { records: records.length, results };
}

/** Logs one line per record (ids and reason codes only: never an address) and adds the batch's metrics. */
function report(received: number, results: IngestResult[]): void {
  metrics.addMetric('EventsReceived', MetricUnit.Count, received);
  const created = new Map<Channel, number>();
  let accepted = 0;
  let duplicates = 0;
  let conflicts = 0;
  let quarantined = 0;
  for (const r of results) {
    switch (r.kind) {
      case 'accepted':
        accepted++;
        for (const c of r.channels) created.set(c, (created.get(c) ?? 0) + 1);
        logger.info('event accepted', { eventId: r.eventId, channels: r.channels });
        break;
      case 'duplicate':
        duplicates++;
        logger.info('duplicate event acknowledged', { eventId: r.eventId });
        break;
      case 'conflict':
        if (r.newlyQuarantined) conflicts++;
        logger.error('eventId reused with a different payload; quarantined', {
          eventId: r.eventId,
          reason: 'EVENT_ID_CONFLICT',
        });
        break;
      case 'quarantined':
        if (r.newlyQuarantined) quarantined++;
        logger.warn('record quarantined', {
          eventId: r.rejection.eventId,
          reason: r.rejection.reason,
          detail: r.rejection.detail,
        });
        break;
    }
  }
  metrics.addMetric('EventsAccepted', MetricUnit.Count, accepted);
  metrics.addMetric('DuplicateEvents', MetricUnit.Count, duplicates);
  metrics.addMetric('EventIdConflicts', MetricUnit.Count, conflicts);
  metrics.addMetric('RecordsQuarantined', MetricUnit.Count, quarantined);
  for (const [channel, count] of created) countBy('NotificationsCreated', { channel }, count);
}

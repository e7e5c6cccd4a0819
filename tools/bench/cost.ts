/**
 * What the measured figures cost and carry: one million notifications on list prices (prices.ts), notifier next to
 * the baseline, and the capacity model (capacity.ts) fed with the units and durations this run measured.
 */

import { writeUnits } from './billing.ts';
import { capacityModel, type Measured } from './capacity.ts';
import type { measureDispatch } from './dispatch.ts';
import type { Measure } from './measure.ts';
import { costOf, US_EAST_1_PRICES } from './prices.ts';
import type { measureQuotaFigures } from './quota.ts';
import { INGEST_CONCURRENCY, SIZES, WORKLOAD_MIX } from './workload.ts';

export type IngestReport = {
  notifier: Measure;
  powertools: Measure;
  withDuplicates: { duplicateShare: number; notifier: Measure; powertools: Measure }[];
};
export type LatencyRow = { concurrency: number; eventsPerSec: number; powertoolsEventsPerSec: number };
export type LatencyDupRow = LatencyRow & { duplicateShare: number };

/** Per-record units at a duplicate share (0: the main run), for one side. */
function unitsAt(ingest: IngestReport, share: number, side: 'notifier' | 'powertools'): Measure {
  if (share === 0) return ingest[side];
  const row = ingest.withDuplicates.find((d) => d.duplicateShare === share);
  if (row === undefined) throw new Error(`no ingest run at ${share}`);
  return row[side];
}
/** Invocation seconds per record at the stack's concurrency under 10 ms per call, for one side. */
function secondsPerRecordAt(
  latency: LatencyRow[],
  withDups: LatencyDupRow[],
  share: number,
  side: 'notifier' | 'powertools',
): number {
  const row =
    share === 0
      ? latency.find((l) => l.concurrency === INGEST_CONCURRENCY)
      : withDups.find((l) => l.duplicateShare === share && l.concurrency === INGEST_CONCURRENCY);
  if (row === undefined) throw new Error(`no latency run at ${share}`);
  return 1 / (side === 'notifier' ? row.eventsPerSec : row.powertoolsEventsPerSec);
}

type DispatchReport = Awaited<ReturnType<typeof measureDispatch>>;
type QuotaReport = Awaited<ReturnType<typeof measureQuotaFigures>>;

/** What the capacity model needs, from this run: per new event and per duplicate, and per send. */
export function measuredPerRecord(
  ingest: IngestReport,
  latency: LatencyRow[],
  withDups: LatencyDupRow[],
  dispatch: DispatchReport,
  quota: QuotaReport,
): Measured {
  const all = unitsAt(ingest, 1, 'notifier');
  return {
    ingestWruPerEvent: ingest.notifier.wruPerEvent,
    ingestRruPerEvent: ingest.notifier.rruPerEvent,
    ingestWruPerDuplicate: all.wruPerEvent,
    ingestRruPerDuplicate: all.rruPerEvent,
    ingestSecondsPerRecord: secondsPerRecordAt(latency, withDups, 0.1, 'notifier'),
    dispatchSecondsPerSend: dispatchSecondsPerSend(dispatch),
    pacerWritesPerSend: Math.max(...quota.pacing.map((p) => p.writesPerSend)),
  };
}
/** Invocation time per send: the measured send rate per invocation, inverted. */
/** Lambda time per send: the bench runs one environment, its invocations one at a time. */
const dispatchSecondsPerSend = (d: DispatchReport) => 1 / d.sendsPerSec;

/**
 * One million notifications on list prices, at 0%, 10% and 50% duplicates: ingest as measured for each side
 * (units per record on DynamoDB Local, invocation time per record under 10 ms per call at the stack's concurrency);
 * dispatch and the providers the same for both (the baseline only replaces ingest): its DynamoDB units from the
 * notification's size and the key design (capacity.ts), its time as measured, the pacer's writes as measured.
 */
export function costPerMillion(
  ingest: IngestReport,
  latency: LatencyRow[],
  withDups: LatencyDupRow[],
  dispatch: DispatchReport,
  quota: QuotaReport,
) {
  const NOTIFICATIONS = 1_000_000;
  const events = NOTIFICATIONS / WORKLOAD_MIX.channelsPerEvent;
  const memoryGb = 0.5;
  const dispatchWru =
    NOTIFICATIONS *
    (writeUnits(SIZES.notificationBytes + 120) +
      writeUnits(SIZES.notificationBytes + 160) +
      3 +
      Math.max(...quota.pacing.map((p) => p.writesPerSend)));
  const dispatchGbSeconds = NOTIFICATIONS * memoryGb * dispatchSecondsPerSend(dispatch);
  const side = (share: number, which: 'notifier' | 'powertools') => {
    const records = events / (1 - share);
    const u = unitsAt(ingest, share, which);
    return costOf({
      wru: records * u.wruPerEvent + dispatchWru,
      rru: records * u.rruPerEvent,
      lambdaGbSeconds: records * memoryGb * secondsPerRecordAt(latency, withDups, share, which) + dispatchGbSeconds,
      lambdaRequests: records / 100 + NOTIFICATIONS / 100,
      emails: NOTIFICATIONS * WORKLOAD_MIX.channelMix.EMAIL,
      pushes: NOTIFICATIONS * WORKLOAD_MIX.channelMix.PUSH,
      sms: NOTIFICATIONS * WORKLOAD_MIX.channelMix.SMS,
    });
  };
  return {
    prices: US_EAST_1_PRICES,
    channelMix: WORKLOAD_MIX.channelMix,
    byDuplicateShare: [0, 0.1, 0.5].map((share) => ({
      duplicateShare: share,
      notifier: side(share, 'notifier'),
      powertools: side(share, 'powertools'),
    })),
  };
}

export const capacityAt = (notificationsPerSec: number, measured: Measured) =>
  capacityModel({
    notificationsPerSec,
    channelsPerEvent: WORKLOAD_MIX.channelsPerEvent,
    channelMix: WORKLOAD_MIX.channelMix,
    duplicateShare: 0.1,
    measured,
    sizes: SIZES,
  });

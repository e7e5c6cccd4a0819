/** The bench's figures as the tables a person reads (`--json` prints the document itself). */

import type { measureAll } from './all.ts';
import type { measureBundles } from './bundles.ts';
import type { measureFullCost } from './full-cost.ts';
import { LATENCY_MS } from './ingest.ts';
import type { Measure } from './measure.ts';
import type { PipelineRun } from './pipeline.ts';
import { INGEST_CONCURRENCY, round2 } from './workload.ts';

export function table(report: Awaited<ReturnType<typeof measureAll>>): string {
  const i = report.ingest;
  const row = (name: string, m: Measure | undefined) =>
    m ? `| ${name} | ${m.eventsPerSec} | ${m.requestsPerEvent} | ${m.wruPerEvent} | ${m.rruPerEvent} |` : '';
  const cost = report.costPerMillionNotifications;
  const cap = report.capacity;
  return [
    `notifier benchmark — ${report.events} events × ${report.rounds} rounds${report.quick ? ' (--quick)' : ''}, Node ${report.machine.node}, ${report.machine.cpus} cores`,
    '',
    'Ingest on DynamoDB Local (median of rounds; units as DynamoDB bills them, tools/bench/billing.ts)',
    '| path | events/s | DynamoDB requests/event | WRU/event | RRU/event |',
    '|---|---|---|---|---|',
    row(`notifier (concurrency ${INGEST_CONCURRENCY})`, i.notifier),
    row('notifier (concurrency 1)', i.sequential),
    row('Powertools Idempotency baseline', i.powertools),
    `ratio notifier / Powertools: ${i.ratioVsPowertools}×`,
    '',
    '| duplicates | notifier events/s | req/event | WRU/event | RRU/event | Powertools events/s | req/event | WRU/event | RRU/event | ratio |',
    '|---|---|---|---|---|---|---|---|---|---|',
    ...[{ duplicateShare: 0, ...i }, ...i.withDuplicates].map(
      (d) =>
        `| ${d.duplicateShare * 100}% | ${d.notifier.eventsPerSec} | ${d.notifier.requestsPerEvent} | ${d.notifier.wruPerEvent} | ${d.notifier.rruPerEvent} | ${d.powertools.eventsPerSec} | ${d.powertools.requestsPerEvent} | ${d.powertools.wruPerEvent} | ${d.powertools.rruPerEvent} | ${d.ratioVsPowertools}× |`,
    ),
    '',
    `Ingest with ${LATENCY_MS} ms per DynamoDB call (the network in AWS)`,
    '| duplicates | concurrency | notifier events/s | req/event | Powertools events/s | req/event | ratio |',
    '|---|---|---|---|---|---|---|',
    ...[...report.latency.map((l) => ({ duplicateShare: 0, ...l })), ...report.latencyWithDuplicates].map(
      (l) =>
        `| ${l.duplicateShare * 100}% | ${l.concurrency} | ${l.eventsPerSec} | ${l.requestsPerEvent} | ${l.powertoolsEventsPerSec} | ${l.powertoolsRequestsPerEvent} | ${l.ratioVsPowertools}× |`,
    ),
    '',
    `One million notifications on list prices (${cost.prices.region}, ${cost.prices.asOf}; USD; channel mix EMAIL ½, PUSH ⅓, SMS ⅙)`,
    '| duplicates | notifier DynamoDB | Lambda | own total | Powertools DynamoDB | Lambda | own total | SES + SNS (both) |',
    '|---|---|---|---|---|---|---|---|',
    ...cost.byDuplicateShare.map(
      (c) =>
        `| ${c.duplicateShare * 100}% | ${c.notifier.dynamodb} | ${c.notifier.lambda} | ${c.notifier.notifierOwn} | ${c.powertools.dynamodb} | ${c.powertools.lambda} | ${c.powertools.notifierOwn} | ${round2(c.notifier.ses + c.notifier.sns)} |`,
    ),
    '',
    `Capacity at ${cap.notificationsPerSec} notifications/s (${cap.duplicateShare * 100}% duplicates): ${cap.sweepShards} sweep shards, hottest index key ${cap.hottestKeyWritesPerSec} writes/s (${cap.hottestKeyWritesPerSecAllOneChannel} if all on one channel), table ${cap.tableWcuPerSec} WRU/s + index ${cap.indexWcuPerSec} WRU/s, ${cap.tableRcuPerSec} RRU/s, ${cap.mskPartitions} MSK partitions, Lambda ${cap.lambdaConcurrency.ingest} + ${cap.lambdaConcurrency.dispatch} + 1, first limit: ${cap.firstLimit}`,
    '',
    `CPU per event (decode + validate + route + build): ${report.cpuMicrosPerEvent} µs`,
    `Dispatch: ${report.dispatch.sendsPerSec} sends/s with evidence (one environment: ${report.dispatch.invocations} invocations one at a time, ${report.dispatch.concurrencyPerInvocation} sends in flight each, batch ${report.dispatch.batchSize}, provider ${report.dispatch.providerLatencyMs} ms, table ${report.dispatch.storeLatencyMs} ms); per slot ${report.dispatch.slotSendsPerSec.withEvidence} with evidence against ${report.dispatch.slotSendsPerSec.withoutEvidence} without (${report.dispatch.slotRatioWithEvidence}×), CPU ${report.dispatch.cpuMicrosPerSend.withEvidence} against ${report.dispatch.cpuMicrosPerSend.withoutEvidence} µs per send`,
    `Dispatch at a low rate (${report.dispatch.lowRate.invocations} invocations of ${report.dispatch.lowRate.batchSize}, their evidence spooled: ${report.dispatch.lowRate.spooled} records): per slot ${report.dispatch.lowRate.slotSendsPerSec.withEvidence} with evidence against ${report.dispatch.lowRate.slotSendsPerSec.withoutEvidence} without (${report.dispatch.lowRate.slotRatioWithEvidence}×), until SENT ${report.dispatch.lowRate.outcomeRatioWithEvidence}×, ${report.dispatch.lowRate.sendsPerSec} sends/s with the close`,
    `Dispatch at a low rate, busier (${report.dispatch.busyLowRate.invocations} invocations of ${report.dispatch.busyLowRate.batchSize}, more records than slots, spooled: ${report.dispatch.busyLowRate.spooled} records): per slot ${report.dispatch.busyLowRate.slotRatioWithEvidence}×, until SENT ${report.dispatch.busyLowRate.outcomeRatioWithEvidence}× with evidence over without, ${report.dispatch.busyLowRate.sendsPerSec} sends/s with the close`,
    '',
    bundlesTable(report.bundles),
    completeCostTable(report.completeCost),
    '',
    'Pacing against a quota (4 environments × 10 senders, shared token bucket on DynamoDB Local)',
    '| quota/s | achieved/s | of quota | most taken in a window | most granted in a second | writes/send | WCU/send |',
    '|---|---|---|---|---|---|---|',
    ...report.quota.pacing.map(
      (p) =>
        `| ${p.quotaPerSecond} | ${p.achievedPerSecond} | ${p.ofQuota} | ${p.maxTakenInAnyWindow} | ${p.maxInAnyWindow} | ${p.writesPerSend} | ${p.wcuPerSend} |`,
    ),
    '',
    `Sweeper drain: ${report.quota.sweeper.items} due items in ${report.quota.sweeper.seconds} s (${report.quota.sweeper.itemsPerSecond} items/s, ${report.quota.sweeper.wcuPerItem} WCU/item); 100,000 ≈ ${report.quota.sweeper.extrapolated100k.minutesOfSweeping} min of sweeping, ${report.quota.sweeper.extrapolated100k.scheduledRuns} scheduled runs`,
    `Held release: ${report.quota.heldRelease.held} held emails and ${report.quota.heldRelease.critical} critical at the window's opening: ${report.quota.heldRelease.runs.length} sweeper runs of at most ${report.quota.heldRelease.capPerRun}, ${report.quota.heldRelease.releasedPerSecond}/s released in the runs the cap bound (${report.quota.heldRelease.meanRunWallMs} ms a run); critical woken in run ${report.quota.heldRelease.criticalWokenInRun}, ${report.quota.heldRelease.heldReleasedBeforeCritical} held before them`,
    '',
  ].join('\n');
}

type Bundles = Awaited<ReturnType<typeof measureBundles>>;
export function bundlesTable(bundles: Bundles): string {
  return [
    `Bundles as deployed (split into chunks) against a bundle of only their SDK clients; init = import in a fresh Node ${[...new Set(bundles.map((b) => b.node))].join(', ')} (the Lambda runtime's major)`,
    '| function | bytes at init | bytes in all | chunks | init ms | SDK-only bytes | SDK-only init ms | bytes / floor | init / floor | init CPU ms | SDK-only init CPU ms | CPU / floor | init ms, compile cache | SDK-only, compile cache |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|',
    ...bundles.map(
      (b) =>
        `| ${b.name} | ${b.initBytes} | ${b.totalBytes} | ${b.chunks} | ${b.initMs} | ${b.floorBytes} | ${b.floorInitMs} | ${b.bytesOverFloor}× | ${b.initOverFloor}× | ${b.initCpuMs} | ${b.floorInitCpuMs} | ${b.initCpuOverFloor}× | ${b.initMsCompileCache} | ${b.floorInitMsCompileCache} |`,
    ),
    '',
  ].join('\n');
}

type CompleteCost = Awaited<ReturnType<typeof measureFullCost>>;
/**
 * The complete cost per million notifications: the run as it ran (a burst), then at each rate — each part per channel
 * and for the mix, the floor beside it, pacing at a quota in both, and what the settings and fixed costs add.
 */
export function completeCostTable(cost: CompleteCost): string {
  const runs = [...Object.entries(cost.byChannel), ['mix', cost.mix] as const];
  const head = (extra: string) => [
    `| part | ${runs.map(([n]) => n).join(' | ')}${extra}`,
    `|---|${runs.map(() => '---|').join('')}${extra === '' ? '' : '---|'}`,
  ];
  const burst = Object.keys(cost.mix.perMillion);
  const lines = [
    `The complete cost of one million notifications, notifier's own (USD, ${cost.prices.region} list prices; tools/bench/full-cost.ts)`,
    '',
    'As the local run ran (a burst: every batch full — not a production density)',
    ...head(''),
    ...burst.map((k) => `| ${k} | ${runs.map(([, r]) => (r.perMillion as Record<string, number>)[k]).join(' | ')} |`),
  ];
  cost.mix.atRates.forEach((mixAt, i) => {
    const at = runs.map(([, r]) => r.atRates[i] as typeof mixAt);
    const row = (label: string, f: (a: typeof mixAt) => unknown, floor: unknown = '') =>
      `| ${label} | ${at.map((a) => f(a)).join(' | ')} | ${floor} |`;
    lines.push(
      '',
      `At ${mixAt.name} (${mixAt.ratePerSec.toFixed(2)} notifications/s held)`,
      ...head(' | floor (mix) |'),
    );
    const keys = [...new Set([...Object.keys(mixAt.perMillion), ...Object.keys(mixAt.floor)])].filter(
      (k) => k !== 'total',
    );
    for (const k of [...keys, 'total'])
      lines.push(
        row(
          k,
          (a) => (a.perMillion as Record<string, number>)[k] ?? '',
          (mixAt.floor as Record<string, number>)[k] ?? '',
        ),
      );
    lines.push(
      row('pacing (counted once: at the rate or at a quota)', (a) => a.pacingAtQuota.cost, mixAt.pacingAtQuota.floor),
      row('**total with pacing**', (a) => `**${a.withPacing.cost}**`, `**${mixAt.withPacing.floor}**`),
      row('over the floor', (a) => `${a.overFloor}×`),
      ...Object.keys(mixAt.withSettings).map((k) =>
        row(`with settings: ${k}`, (a) => (a.withSettings as Record<string, number>)[k]),
      ),
      row('records per dispatch invocation', (a) => a.recordsPerInvocation.dispatch),
      row('records per feedback invocation', (a) => a.recordsPerInvocation.feedback),
      ...Object.keys(mixAt.perNotification).map((k) =>
        row(`per notification: ${k}`, (a) => (a.perNotification as Record<string, number>)[k]),
      ),
    );
  });
  lines.push('', `Fixed monthly (USD): ${JSON.stringify(cost.mix.atRates[0]?.fixedMonthly)}`, '');
  return lines.join('\n');
}

export function pipelineTable(runs: PipelineRun[]): string {
  return [
    '| events | DynamoDB Local | seconds | events/s | sends/s | peak RSS node | peak RSS DynamoDB Local | data on disk |',
    '|---|---|---|---|---|---|---|---|',
    ...runs.map(
      (r) =>
        `| ${r.events} | ${r.storage} | ${r.seconds} | ${r.eventsPerSec} | ${r.sendsPerSec} | ${r.peakRssMb.node} MB | ${r.peakRssMb.dynamodbLocal} MB | ${r.peakDataMb} MB |`,
    ),
    '',
  ].join('\n');
}

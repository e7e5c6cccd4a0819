/**
 * `npm run bench`: figures measured side by side in one run, so a noisy machine still gives fair ratios.
 *
 *   npm run bench -- [--events N] [--rounds R] [--json] [--quick]
 *
 * - ingest on DynamoDB Local: notifier's batch path (a), the same at concurrency 1 (b), and the Powertools
 *   Idempotency baseline (c), in alternating rounds; events/s (median), DynamoDB requests and the read and write
 *   units DynamoDB bills per record (tools/bench/billing.ts); again with 10%, 50% and 100% duplicates — records of events
 *   ingested before the measurement (a redelivery or a resend), spread evenly through the stream.
 * - ingest against a DynamoDB answering after 10 ms per call (tools/bench/latency-dynamodb.ts), at concurrency 1/4/16/64,
 *   with no duplicates and with 10%, 50% and 100%.
 * - the cost of one million notifications on list prices (tools/bench/prices.ts), notifier next to the baseline, and the
 *   capacity model at 10,000 notifications per second (tools/bench/capacity.ts) from the units and durations measured here.
 * - `--quick`: small sizes, one round, for development (the figures are noisy; the full run is the one to quote).
 * - CPU per event (decode + validate + route + build the transaction) with an instant client.
 * - dispatch sends/s at batch 100 against providers with 50 ms latency, at the stack's concurrency.
 * - each function's bundle size and its init time in a fresh Node process (median of 10).
 * - with the quota: the sweeper releasing a held backlog at its window's opening (tools/bench/held-release.ts).
 * - `--pipeline`: only the whole pipeline, end to end, as `npm start -- --events FILE` runs it, at two sizes
 *   (tools/bench/pipeline.ts): its rate and its peak memory.
 * - `--e2e`: only the end-to-end latency of a notice, record delivered to ingest → provider accepted, through the
 *   local pipeline with every part running at once (tools/bench/e2e.ts); with `--critical --backlog N`, critical
 *   emails while a backlog of N normal emails drains at the SES quota, and where their time goes.
 */
import './env.ts';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EXIT, onExit, runCommand } from '../local/cli.ts';
import { startDynamoDbLocal } from '../local/dynamodb-local.ts';
import { measureBundles } from './bundles.ts';
import { capacityAt, costPerMillion, measuredPerRecord } from './cost.ts';
import { measureCpu, measureCpuOnly } from './cpu.ts';
import { measureDispatch } from './dispatch.ts';
import { endToEndTable, measureEndToEnd } from './e2e.ts';
import { measureFullCost } from './full-cost.ts';
import { measureHeldRelease } from './held-release.ts';
import { measureIngest, measureLatency, underLatency } from './ingest.ts';
import { type BenchArgs, parseOptions, sized } from './options.ts';
import { type PipelineRun, runPipeline } from './pipeline.ts';
import { measureCriticalUnderBacklog, measurePacing, measureSweeperDrain } from './quota.ts';
import { REPO } from './repo.ts';
import { bundlesTable, completeCostTable, pipelineTable, table } from './report.ts';
import { eventValue, INGEST_CONCURRENCY, log, SIZES } from './workload.ts';

/** Each mode of the command line, one at a time; the default measures everything on one DynamoDB Local. */
async function main(args: BenchArgs) {
  if (args.pipeline) return { pipeline: await measurePipeline(args) };
  if (args.e2e) return { endToEnd: await measureE2e(args) };
  if (args.cpu) return measureCpuOnly(args);
  if (args.bundles) return { bundles: await measureBundles(args.quick ? 3 : 10) };
  if (args.cost) return { completeCost: await measureCompleteCost(args) };
  const db = await startDynamoDbLocal();
  const forget = onExit(() => db.stop());
  try {
    if (args.quota) return { quota: await measureQuota(args) };
    if (args.critical) {
      log(
        `critical first: ${args.backlog} normal emails at 14/s (${Math.round(args.backlog / 14)} s) with a critical one every 2 s`,
      );
      return {
        criticalFirst: await measureCriticalUnderBacklog(db.endpoint, {
          rate: 14,
          environments: 5,
          backlog: args.backlog,
          criticalEveryMs: 2_000,
        }),
      };
    }
    return await measureAll(db.endpoint, args);
  } finally {
    forget();
    await db.stop();
  }
}

/** The default run: ingest (and under latency), CPU, dispatch, bundles, the quota; then cost and capacity from them. */
export async function measureAll(endpoint: string, args: BenchArgs) {
  const ingest = await measureIngest(endpoint, args);
  const { latency, latencyWithDuplicates } = await measureLatency(args);
  const cpuMicrosPerEvent = (await measureCpu(args)).wall;
  log('cpu done');
  const dispatch = await measureDispatch();
  log('dispatch done');
  const bundles = await measureBundles(args.quick ? 3 : Math.min(10, Math.max(3, args.rounds * 3)));
  log('bundles done');
  const quota = await measureQuota(args);
  const measured = measuredPerRecord(ingest, latency, latencyWithDuplicates, dispatch, quota);
  return {
    machine: { node: process.version, cpus: (await import('node:os')).cpus().length },
    events: args.events,
    rounds: args.rounds,
    quick: args.quick,
    itemSizes: SIZES,
    ingest,
    latency,
    latencyWithDuplicates,
    cpuMicrosPerEvent,
    dispatch,
    bundles,
    quota,
    costPerMillionNotifications: costPerMillion(ingest, latency, latencyWithDuplicates, dispatch, quota),
    // Small runs below the default size, as the quota's (the full run is the one to quote).
    completeCost: await measureFullCost(args.quick || args.events < 1000, measured),
    // The model at 10,000 notifications per second (and at 100 and 1,000 for docs/scaling.md), from the units and
    // durations this run measured.
    capacity: capacityAt(10_000, measured),
    capacityByPeak: [100, 1_000, 10_000].map((n) => capacityAt(n, measured)),
    measuredForCapacity: measured,
  };
}

/**
 * Pacing against a quota and the sweeper's drain rate (tools/bench/quota.ts); full size from 1,000 events up. On a
 * DynamoDB Local of their own: after the ingest phases the shared one holds over a gigabyte of items, and the
 * sweeper's queries ran 50 times slower there (5,000 items drained in 510 s instead of 10 s) — a measure of that
 * process, not of the sweeper.
 */
async function measureQuota(args: BenchArgs) {
  const own = await startDynamoDbLocal();
  const forget = onExit(() => own.stop());
  try {
    return await measureQuotaFigures(own.endpoint, args.events >= 1000);
  } finally {
    forget();
    await own.stop();
  }
}

export async function measureQuotaFigures(endpoint: string, full: boolean) {
  const pacing = [];
  for (const rate of [14, 100]) {
    pacing.push(await measurePacing(endpoint, { rate, environments: 4, seconds: full ? 10 : 2 }));
    log(`pacing at ${rate}/s done`);
  }
  const sweeper = await measureSweeperDrain(endpoint, { items: full ? 5_000 : 200 });
  log('sweeper drain done');
  // A night's held statements released at the window's opening, at the quota, critical notices still first.
  const heldRelease = await measureHeldRelease(endpoint, { held: full ? 5_000 : 1_000, critical: full ? 20 : 5 });
  log('held release done');
  return { pacing, sweeper, heldRelease };
}

/**
 * --cost alone: the complete cost, with Lambda's time from a dispatch measurement and one ingest run under 10 ms per
 * DynamoDB call at the stack's concurrency (the default run takes them from its own measurements).
 */
async function measureCompleteCost(args: BenchArgs) {
  const dispatch = await measureDispatch();
  const ingest = await underLatency(args, 0, INGEST_CONCURRENCY);
  return measureFullCost(args.quick, {
    ingestSecondsPerRecord: 1 / ingest.eventsPerSec,
    dispatchSecondsPerSend: dispatch.invocations / dispatch.sendsPerSec,
  });
}

/** The end-to-end latency through the local pipeline (tools/bench/e2e.ts), mixed or under a backlog. */
function measureE2e(args: BenchArgs) {
  const quick = args.quick;
  const backlog = args.critical ? (quick && !args.backlogGiven ? 300 : args.backlog) : 0;
  return measureEndToEnd(
    {
      events: args.eventsGiven ?? (quick ? 60 : 300),
      ratePerSecond: args.rate,
      backlog,
      critical: args.criticalCount ?? (quick ? 5 : 100),
      sesRate: 14,
      sweepEverySeconds: args.sweepEvery,
    },
    log,
  );
}

/**
 * `npm start` itself at two sizes on disk, and the smaller in memory: the rate a large file runs at, and whether
 * anything grows with the file (tools/bench/pipeline.ts).
 */
async function measurePipeline(args: BenchArgs): Promise<PipelineRun[]> {
  const [small, large] = args.quick ? [200, 600] : [2000, 6000];
  const dir = mkdtempSync(join(tmpdir(), 'notifier-bench-pipeline-'));
  const values = (n: number) => Array.from({ length: n }, (_, i) => eventValue(`pipe-${n}-${i}`, i));
  const runs: PipelineRun[] = [];
  try {
    for (const [n, storage] of [
      [small, 'memory'],
      [small, 'disk'],
      [large, 'disk'],
    ] as const) {
      runs.push(await runPipeline(REPO, dir, values(n), storage));
      log(`pipeline ${n} events (${storage}) done`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return runs;
}

runCommand('bench', async () => {
  const args = sized(parseOptions(process.argv.slice(2)));
  const report = await main(args);
  if ('pipeline' in report && report.pipeline !== undefined && !args.json)
    process.stdout.write(pipelineTable(report.pipeline));
  else if ('endToEnd' in report && report.endToEnd !== undefined && !args.json)
    process.stdout.write(endToEndTable(report.endToEnd));
  else if ('completeCost' in report && report.completeCost !== undefined && !args.json && !('ingest' in report))
    process.stdout.write(completeCostTable(report.completeCost));
  else if ('bundles' in report && report.bundles !== undefined && !args.json && !('ingest' in report))
    process.stdout.write(bundlesTable(report.bundles));
  else if (!('ingest' in report)) process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  else process.stdout.write(args.json ? `${JSON.stringify(report, null, 2)}\n` : table(report));
  return EXIT.OK;
});

/**
 * The bench's default run (every figure side by side on one DynamoDB Local), the quota's figures on a DynamoDB Local of
 * their own, and the complete cost alone: what tools/bench/run.ts's command line runs, apart from it so the report's
 * types come from here and nothing imports the command back.
 */
import { onExit } from '../local/cli.ts';
import { startDynamoDbLocal } from '../local/dynamodb-local.ts';
import { measureBundles } from './bundles.ts';
import { capacityAt, costPerMillion, measuredPerRecord } from './cost.ts';
import { measureCpu } from './cpu.ts';
import { measureDispatch } from './dispatch.ts';
import { measureFullCost } from './full-cost.ts';
import { measureIngest, measureLatency, underLatency } from './ingest.ts';
import type { BenchArgs } from './options.ts';
import { measurePacing, measureQuotaFigures } from './quota.ts';
import { INGEST_CONCURRENCY, log, SIZES } from './workload.ts';

/** The default run: ingest (and under latency), CPU, dispatch, bundles, the quota; then cost and capacity from them. */
export async function measureAll(endpoint: string, args: BenchArgs) {
  const ingest = await measureIngest(endpoint, args);
  const { latency, latencyWithDuplicates } = await measureLatency(args);
  const cpuMicrosPerEvent = (await measureCpu(args)).wall;
  log('cpu done');
  const dispatch = await measureDispatch(args.quick ? 1 : undefined);
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
export async function measureQuota(args: BenchArgs) {
  const own = await startDynamoDbLocal();
  const forget = onExit(() => own.stop());
  try {
    return await measureQuotaFigures(own.endpoint, args.events >= 1000);
  } finally {
    forget();
    await own.stop();
  }
}

/**
 * --cost alone: the complete cost, with Lambda's time from a dispatch measurement and one ingest run under 10 ms per
 * DynamoDB call at the stack's concurrency (the default run takes them from its own measurements).
 */
export async function measureCompleteCost(args: BenchArgs) {
  const dispatch = await measureDispatch(args.quick ? 1 : undefined);
  const ingest = await underLatency(args, 0, INGEST_CONCURRENCY);
  const pacing = await pacingAtQuota(args.quick);
  return measureFullCost(args.quick, {
    ingestSecondsPerRecord: 1 / ingest.eventsPerSec,
    // One environment, its invocations one at a time (tools/bench/dispatch.ts): its time per send.
    dispatchSecondsPerSend: 1 / dispatch.sendsPerSec,
    pacerWritesPerSend: pacing.writesPerSend,
  });
}

/** The pacer's writes per send at a 14/s quota with a backlog, on a DynamoDB Local of its own (tools/bench/quota.ts). */
async function pacingAtQuota(quick: boolean) {
  const own = await startDynamoDbLocal();
  const forget = onExit(() => own.stop());
  try {
    return await measurePacing(own.endpoint, { rate: 14, environments: 4, seconds: quick ? 2 : 10 });
  } finally {
    forget();
    await own.stop();
  }
}

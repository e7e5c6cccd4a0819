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
 * - dispatch sends/s at batch 100 against providers with 50 ms latency and a table with 10 ms, at the stack's
 *   concurrency, with and without evidence (sends per slot, CPU per send).
 * - each function's bundle size and its init time in a fresh Node process (median of 10).
 * - with the quota: the sweeper releasing a held backlog at its window's opening (tools/bench/held-release.ts).
 * - `--promote`: only a failover's promotion over 1,000 and 10,000 unfinished notices (tools/bench/promote-backlog.ts).
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
import { EXIT, runCommand } from '../local/cli.ts';
import { type BenchArgs, parseOptions, sized } from './options.ts';
import type { PipelineRun } from './pipeline.ts';

/**
 * The measuring modules load after the command line is read: a bad flag answers in a second, not after the whole
 * product and its AWS clients have loaded (a usage error once took a minute on a loaded CI machine).
 */
const load = {
  all: () => import('./all.ts'),
  bundles: () => import('./bundles.ts'),
  console: () => import('./console.ts'),
  cpu: () => import('./cpu.ts'),
  dispatch: () => import('./dispatch.ts'),
  e2e: () => import('./e2e.ts'),
  pipeline: () => import('./pipeline.ts'),
  promote: () => import('./promote-backlog.ts'),
  quota: () => import('./quota.ts'),
  report: () => import('./report.ts'),
  workload: () => import('./workload.ts'),
};

/** Each mode of the command line, one at a time; the default measures everything on one DynamoDB Local. */
async function main(args: BenchArgs) {
  if (args.pipeline) return { pipeline: await measurePipeline(args) };
  if (args.e2e) return { endToEnd: await measureE2e(args) };
  if (args.cpu) return (await load.cpu()).measureCpuOnly(args);
  if (args.bundles) return { bundles: await (await load.bundles()).measureBundles(args.quick ? 3 : 10) };
  if (args.dispatch) return { dispatch: await (await load.dispatch()).measureDispatch(args.quick ? 1 : undefined) };
  const { measureAll, measureCompleteCost, measureQuota } = await load.all();
  if (args.cost) return { completeCost: await measureCompleteCost(args) };
  const { onExit } = await import('../local/cli.ts');
  const { startDynamoDbLocal } = await import('../local/dynamodb-local.ts');
  const db = await startDynamoDbLocal();
  const forget = onExit(() => db.stop());
  try {
    if (args.quota) return { quota: await measureQuota(args) };
    if (args.console) return { console: await (await load.console()).measureConsole(db.endpoint, args) };
    if (args.promote) {
      const sizes = args.quick ? [1_000] : [1_000, 10_000];
      const { measurePromote } = await load.promote();
      const figures = [];
      for (const n of sizes) figures.push(await measurePromote(db.endpoint, n));
      return { promote: figures };
    }
    if (args.critical) {
      const { log } = await load.workload();
      const { measureCriticalUnderBacklog } = await load.quota();
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

/** The end-to-end latency through the local pipeline (tools/bench/e2e.ts), mixed or under a backlog. */
async function measureE2e(args: BenchArgs) {
  const { measureEndToEnd } = await load.e2e();
  const { log } = await load.workload();
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
  const { runPipeline } = await load.pipeline();
  const { eventValue, log } = await load.workload();
  const { REPO } = await import('./repo.ts');
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
  const { bundlesTable, completeCostTable, pipelineTable, table } = await load.report();
  const { endToEndTable } = await load.e2e();
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

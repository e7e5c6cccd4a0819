/**
 * CPU per event (decode + validate + normalise + hash + route + build the transaction): the ingest use case against
 * an instant client — no network, no DynamoDB, only our code. With --baseline DIR, another checkout is measured by
 * its own bench (`npm run bench -- --cpu` there), round by round alternating with this one, each in a process of its
 * own: both meet the same moments of the machine, and neither loads the other's code.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DynamoInboxStore } from '../../functions/ingest/inbox-store.ts';
import { ingestBatch } from '../../functions/ingest/ingest-batch.ts';
import { UsageError } from '../local/cli.ts';
import { ingestDeps } from './ingest.ts';
import type { BenchArgs } from './options.ts';
import { REPO } from './repo.ts';
import { log, round2, workload } from './workload.ts';

export interface CpuRun {
  /** Wall time per event (µs). */
  readonly wall: number;
  /** The process's own CPU time (user + system) per event (µs): what a busy machine does not inflate. */
  readonly cpu: number;
}

/** One measured pass over the CPU workload. */
export async function measureCpu(args: Pick<BenchArgs, 'quick' | 'events'>): Promise<CpuRun> {
  const instant = new DynamoInboxStore({ send: async () => ({}) } as unknown as DynamoDBDocumentClient, 'instant');
  const run = async (b: ReturnType<typeof workload>['batches'][number]) => {
    const summary = await ingestBatch(b, { ...ingestDeps(16), store: instant });
    if (summary.failure !== undefined || summary.results.some((r) => r.kind !== 'accepted')) {
      throw new Error('bench workload record not accepted');
    }
  };
  const cpuBatches = workload('cpu', args.quick ? 1000 : Math.max(args.events, 2000), 0).batches;
  for (const b of cpuBatches.slice(0, 5)) await run(b); // warm up
  const tCpu = performance.now();
  const cpu0 = process.cpuUsage();
  for (const b of cpuBatches) await run(b);
  const used = process.cpuUsage(cpu0);
  const events = cpuBatches.length * 100;
  return {
    wall: round2(((performance.now() - tCpu) * 1000) / events),
    cpu: round2((used.user + used.system) / events),
  };
}

const medianOf = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const summary = (runs: readonly CpuRun[]) => ({
  cpuMicrosPerEventMedian: medianOf(runs.map((r) => r.wall)),
  processCpuMicrosPerEventMedian: medianOf(runs.map((r) => r.cpu)),
  runs: runs.map((r) => r.wall),
  processRuns: runs.map((r) => r.cpu),
});

/** --cpu: 5 warm-up runs, then R × 5 measured runs, in this process. */
export async function cpuRuns(args: BenchArgs): Promise<CpuRun[]> {
  // The JIT settles over the first runs: five are not counted.
  for (let i = 0; i < 5; i++) await measureCpu(args);
  const runs: CpuRun[] = [];
  for (let i = 0; i < args.rounds * 5; i++) runs.push(await measureCpu(args));
  return runs;
}

/** One round of a checkout's own `--cpu` run, in a process of its own (its bench, its code, its node_modules). */
function cpuRoundOf(dir: string, args: BenchArgs): CpuRun[] {
  const argv = ['--import', 'tsx', join(dir, 'tools/bench/run.ts'), '--cpu', '--json', '--rounds', '1'];
  const sized = [...argv, '--events', String(args.events), ...(args.quick ? ['--quick'] : [])];
  const out = execFileSync(process.execPath, sized, {
    cwd: dir,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const cpu = (JSON.parse(out) as { cpu: { runs: number[]; processRuns: number[] } }).cpu;
  return cpu.runs.map((wall, i) => ({ wall, cpu: cpu.processRuns[i] ?? wall }));
}

export async function measureCpuOnly(args: BenchArgs) {
  if (args.baseline === undefined) return { cpu: summary(await cpuRuns(args)) };
  const dir = args.baseline;
  if (!existsSync(join(dir, 'tools/bench/run.ts')) || !existsSync(join(dir, 'node_modules'))) {
    throw new UsageError(`--baseline ${dir} must be a checkout of notifier with its dependencies (npm ci there)`);
  }
  const mine: CpuRun[] = [];
  const theirs: CpuRun[] = [];
  for (let round = 0; round < args.rounds; round++) {
    // Alternate which goes first, so neither always meets the machine first.
    const order = round % 2 === 0 ? (['mine', 'theirs'] as const) : (['theirs', 'mine'] as const);
    for (const side of order) {
      if (side === 'mine') mine.push(...cpuRoundOf(REPO, args));
      else theirs.push(...cpuRoundOf(dir, args));
    }
    log(`cpu round ${round + 1}/${args.rounds}`);
  }
  const ratio = (pick: (r: CpuRun) => number) => round2(medianOf(mine.map((m, i) => pick(m) / pick(theirs[i] ?? m))));
  return {
    cpu: {
      ...summary(mine),
      baseline: { dir, ...summary(theirs) },
      // This checkout over the baseline, run by run (each pair met the same round of the machine).
      ratioMedian: ratio((r) => r.wall),
      processRatioMedian: ratio((r) => r.cpu),
    },
  };
}

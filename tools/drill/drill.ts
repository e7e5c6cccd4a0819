/**
 * The drill's run: N schedules on two DynamoDB Local instances started for it and stopped after it (run.ts is its CLI).
 * Schedules are independent — each has its own clock and shims, and its worker's tables, emptied for it (tables.ts) —
 * so `parallel` workers play at once on the same two instances: a schedule mostly waits on DynamoDB Local's answers,
 * one at a time, so several keep both busy.
 */
import { onExit } from '../local/cli.ts';
import { type DynamoDbLocal, startDynamoDbLocal } from '../local/dynamodb-local.ts';
import { play } from './play.ts';
import type { Drilled } from './region.ts';
import { drawSchedule, type ScenarioName } from './schedule.ts';
import { RegionTables } from './tables.ts';
import { type DrillVerdict, judgeDrill, judgeSchedule, type ScheduleVerdict } from './verdict.ts';

export interface DrillOptions {
  /** These scenarios in turn (schedule i plays the i-th, round) instead of one drawn from the seed. */
  readonly scenarios?: readonly ScenarioName[];
  /** Schedules played at once (default 1). */
  readonly parallel?: number;
  /** Two DynamoDB Local instances already running (a test's): none is started or stopped. */
  readonly endpoints?: readonly [string, string];
}

let runs = 0;

/** Runs the schedules on two DynamoDB Local instances started for the run and stopped after it. */
export async function runDrill(
  schedules: number,
  seed: number,
  drilled: Drilled,
  onSchedule: (v: ScheduleVerdict, i: number) => void = () => undefined,
  options: DrillOptions = {},
): Promise<DrillVerdict> {
  const dbs: DynamoDbLocal[] = [];
  const forget = onExit(() => Promise.all(dbs.map((d) => d.stop())).then(() => undefined));
  try {
    if (options.endpoints === undefined) dbs.push(await startDynamoDbLocal(), await startDynamoDbLocal());
    const [primary, recovery] = options.endpoints ?? (dbs.map((d) => d.endpoint) as [string, string]);
    const scenarios = options.scenarios ?? [];
    // Tables named per run: runs that share two instances (a test's) never meet.
    const run = ++runs;
    const verdicts: ScheduleVerdict[] = [];
    let next = 0;
    const worker = async (w: number) => {
      const name = (r: string) => `drill-${process.pid}-${run}-w${w}-${r}`;
      const tables = [
        new RegionTables(primary, name('a'), name('a-fence')),
        new RegionTables(recovery, name('b'), name('b-fence')),
      ] as const;
      try {
        for (let i = next++; i < schedules; i = next++) {
          const schedule = drawSchedule(seed + i, scenarios[i % scenarios.length]);
          const v = judgeSchedule(await play(tables, schedule, drilled));
          verdicts[i] = v;
          onSchedule(v, i);
        }
      } finally {
        await Promise.all(tables.map((t) => t.remove()));
      }
    };
    await Promise.all(
      Array.from({ length: Math.min(schedules, Math.max(1, options.parallel ?? 1)) }, (_, w) => worker(w)),
    );
    return judgeDrill(verdicts);
  } finally {
    forget();
    await Promise.all(dbs.map((d) => d.stop()));
  }
}

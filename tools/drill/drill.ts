/** The drill's run: N schedules on two DynamoDB Local instances started for it and stopped after it (run.ts is its CLI). */
import { onExit } from '../local/cli.ts';
import { type DynamoDbLocal, startDynamoDbLocal } from '../local/dynamodb-local.ts';
import { play } from './play.ts';
import type { Drilled } from './region.ts';
import { drawSchedule, SCENARIOS } from './schedule.ts';
import { type DrillVerdict, judgeDrill, judgeSchedule, type ScheduleVerdict } from './verdict.ts';

/** Runs the schedules on two DynamoDB Local instances started for the run and stopped after it. */
export async function runDrill(
  schedules: number,
  seed: number,
  drilled: Drilled,
  onSchedule: (v: ScheduleVerdict, i: number) => void = () => undefined,
  /** Each scenario in turn instead of drawn from the seed. */
  cycle = false,
): Promise<DrillVerdict> {
  const dbs: DynamoDbLocal[] = [];
  const forget = onExit(() => Promise.all(dbs.map((d) => d.stop())).then(() => undefined));
  try {
    dbs.push(await startDynamoDbLocal(), await startDynamoDbLocal());
    const endpoints = [dbs[0]?.endpoint ?? '', dbs[1]?.endpoint ?? ''] as const;
    const verdicts: ScheduleVerdict[] = [];
    for (let i = 0; i < schedules; i++) {
      const v = judgeSchedule(
        await play(endpoints, drawSchedule(seed + i, cycle ? SCENARIOS[i % SCENARIOS.length] : undefined), drilled),
      );
      verdicts.push(v);
      onSchedule(v, i);
    }
    return judgeDrill(verdicts);
  } finally {
    forget();
    await Promise.all(dbs.map((d) => d.stop()));
  }
}

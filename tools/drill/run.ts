/**
 * `npm run drill`: two local regions fail over, and nothing is sent twice (docs/regions.md "The drill").
 *
 *   npm run drill -- [--schedules N] [--seed S] [--parallel P] [--plant <fault>] [--json]
 *
 * Runs N seeded schedules, each on fresh tables in two DynamoDB Local instances (the two "regions"), and prints one
 * verdict: exit 0 pass, 1 fail, 2 usage. Schedule i draws from seed S + i, so a failing schedule replays alone with
 * `--schedules 1 --seed <its seed>`. A planted fault must fail the verdict.
 */
import { EXIT, intOption, parseCommandLine, runCommand, UsageError } from '../local/cli.ts';
import { runDrill } from './drill.ts';
import { type Drilled, PLANTS, type Plant } from './region.ts';
import type { DrillVerdict, Totals } from './verdict.ts';

const USAGE = `
Usage: npm run drill -- [--schedules N] [--seed S] [--parallel P] [--plant <fault>] [--json]

Two local regions (two DynamoDB Local instances), replication with lag, partitions, reordering and last writer wins,
a replicated topic read again from a low-water mark, the real ingest and dispatch in both, a region lost at a random
instant, promotion, the old region's return, demotion and reconciliation; or a planned switchover; a failback; a
cluster destroyed — one verdict, in total and per scenario.

  --schedules N   schedules to run (default 20)
  --seed S        the first schedule's seed (default: random, printed); schedule i uses S + i
  --parallel P    schedules played at once on the same two instances (default 4); the verdict does not depend on it
  --plant F       run with a planted fault that must fail the verdict: ${PLANTS.join(', ')}
  --json          standard output is exactly one JSON document
  -h, --help      this text

Exit codes: 0 PASS; 1 FAIL (an invariant broke) or the run itself failed; 2 usage; 130/143/129 interrupted.
`;
const say = (m: string) => process.stderr.write(`[drill] ${m}\n`);

async function main(): Promise<number> {
  const { values } = parseCommandLine(
    {
      usage: USAGE,
      options: {
        schedules: { type: 'string', default: '20' },
        seed: { type: 'string' },
        parallel: { type: 'string', default: '4' },
        plant: { type: 'string' },
        json: { type: 'boolean', default: false },
      },
    },
    process.argv.slice(2),
  );
  const schedules = intOption('schedules', values.schedules, 1) ?? 20;
  const seed = intOption('seed', values.seed, 0) ?? Math.floor(Math.random() * 2 ** 30);
  const parallel = intOption('parallel', values.parallel, 1) ?? 4;
  if (values.plant !== undefined && !PLANTS.includes(values.plant as Plant))
    throw new UsageError(`unknown --plant ${values.plant}: one of ${PLANTS.join(', ')}`);
  const drilled: Drilled = values.plant === undefined ? {} : { plant: values.plant as Plant };
  say(`seeds ${seed}..${seed + schedules - 1}${drilled.plant ? `, planted fault ${drilled.plant}` : ''}`);
  // One line a schedule on standard error: a long run stopped early still says what it did.
  let done = 0;
  const verdict = await runDrill(schedules, seed, drilled, (v) => say(`${++done}/${schedules} ${JSON.stringify(v)}`), {
    parallel,
  });
  process.stdout.write(values.json ? `${JSON.stringify({ seed, ...verdict }, null, 2)}\n` : table(verdict, seed));
  return verdict.pass ? EXIT.OK : EXIT.FAILED;
}

function table(v: DrillVerdict, seed: number): string {
  return [
    `notifier drill — ${v.schedules} schedules from seed ${seed}: ${v.pass ? 'PASS' : 'FAIL'} (${v.passed} passed)`,
    ...lines(v),
    ...Object.entries(v.byScenario).flatMap(([name, t]) => [
      `${name}: ${t.schedules} schedules, ${t.passed} passed`,
      ...lines(t).map((l) => `  ${l}`),
    ]),
    ...v.failures.map((f) => `  FAIL seed ${f.seed} ${f.scenario}: ${f.broken.join(', ')} ${f.errors.join(' | ')}`),
    '',
  ].join('\n');
}

function lines(v: Totals): string[] {
  return [
    `duplicates on at-most-once channels ${v.duplicates.atMostOnce}`,
    `notices: ${Object.entries(v.accounted)
      .map(([k, n]) => `${k} ${n}`)
      .join('  ')}`,
    `fence: sends while fenced ${v.fence.sendsWhileFenced}  writes to foreign items ${v.fence.writesToForeignItems}  self-demotions ${v.fence.selfDemotions}  replicated not taken ${v.fence.replicatedNotTaken}  unresolved at promotion ${v.unresolvedAtPromotion}`,
    `RPO: held or unknown at promotion ${v.rpo.heldOrUnknownAtPromotion} (at most ${v.rpo.maxPerSchedule} in one schedule)`,
    `RTO, promotion to first send (simulated ms): p50 ${v.rto.p50}  p99 ${v.rto.p99}  max ${v.rto.max}`,
  ];
}

runCommand('drill', main);

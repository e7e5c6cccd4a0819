/**
 * `npm run chaos`: the fault-injection run, reported the way a Jepsen analysis would.
 *
 *   npm run chaos -- [--events N] [--seed S] [--json]
 *
 * One verdict (verdict.ts) decides the exit code (0 pass, 1 fail), the table's PASS/FAIL and the --json `verdict`:
 * any broken invariant fails the run. The seed is printed; the same seed replays the same run. The command line
 * follows tools/local/cli.ts (--help, usage errors exit 2, signals stop the world).
 */
import { EXIT, intOption, onExit, parseCommandLine, runCommand } from '../local/cli.ts';
import { runChaos } from './random-run.ts';
import { judge, type Verdict } from './verdict.ts';
import { openWorld } from './world.ts';

const USAGE = `
Usage: npm run chaos -- [--events N] [--seed S] [--json]

The fault-injection run on DynamoDB Local: every invariant checked, one verdict (README "Reliability").

  --events N   events in the run (default 500)
  --seed S     replay a run: the same seed, the same faults (default: random, printed)
  --json       standard output is exactly one JSON document
  -h, --help   this text

Exit codes: 0 PASS; 1 FAIL (an invariant broke) or the run itself failed; 2 usage; 130/143/129 interrupted.
`;
const say = (m: string) => process.stderr.write(`[chaos] ${m}\n`);

async function main(): Promise<number> {
  const { values } = parseCommandLine(
    {
      usage: USAGE,
      options: {
        events: { type: 'string', default: '500' },
        seed: { type: 'string' },
        json: { type: 'boolean', default: false },
      },
    },
    process.argv.slice(2),
  );
  const seed = intOption('seed', values.seed, 0) ?? Math.floor(Math.random() * 2 ** 31);
  const events = intOption('events', values.events, 1) ?? 500;
  say(`seed ${seed}, ${events} events (replay: npm run chaos -- --events ${events} --seed ${seed})`);
  const world = await openWorld();
  const forget = onExit(() => world.stop());
  const started = performance.now(); // Date.now runs on the suite's fake clock
  try {
    const report = await runChaos({ events, seed });
    const verdict = judge(report);
    const { problems, ...figures } = report;
    const out = values.json
      ? `${JSON.stringify({ verdict, ...figures, problems: problems.slice(0, 20) }, null, 2)}\n`
      : table(report, verdict, (performance.now() - started) / 1000);
    world.output.writeStdout(out);
    return verdict.pass ? EXIT.OK : EXIT.FAILED;
  } finally {
    forget();
    await world.stop();
  }
}

function table(r: Awaited<ReturnType<typeof runChaos>>, verdict: Verdict, seconds: number): string {
  const f = r.figures;
  return [
    `notifier chaos run — seed ${r.seed}, ${r.events} events, ${seconds.toFixed(0)} s: ${verdict.pass ? 'PASS' : 'FAIL'}`,
    ...verdict.failures.map((failure) => `  FAIL ${failure}`),
    '',
    `records ${r.records}  deliveries ${r.deliveries}  redeliveries ${r.redeliveries}`,
    `faults   ${Object.entries(r.faults)
      .map(([k, v]) => `${k}=${v}`)
      .join('  ')}`,
    '',
    `expected sends ${r.expectedSends}  sent once ${r.sentOnce}  unknown ${r.unknown}  failed ${r.failed}`,
    `duplicates: bug ${r.duplicates.bug}, after an unknown outcome ${r.duplicates.afterUnknownOutcome}  stale writes ${r.staleWrites}`,
    `FAILED by a quota or an account-level error ${r.failedByQuotaOrAccount}  resent after 500/reset-after-accept on an at-most-once channel ${r.resentAfterAcceptAtMostOnce}`,
    `sends started without time to finish ${r.sendsWithoutTime}  channel held for one endpoint or application ${r.heldTooWide}  preference cases ${r.preferences.cases} (mismatches ${r.preferences.mismatches})`,
    `lost ${r.lost}  quarantined ${r.quarantined} (mismatches ${r.quarantineMismatches})  conflicts ${r.conflicts}`,
    `PII leaks ${r.piiLeaks}  illegal transitions ${r.illegalTransitions}  inbox⇎notifications ${r.inboxWithoutNotifications}  header injections ${r.headerInjections}  unescaped markup ${r.unescapedMarkup}  unsafe text ${r.unsafeText}  prototype polluted ${r.prototypePolluted}`,
    `display text cases ${r.displayText.cases} (mismatches ${r.displayText.mismatches})  input cases ${r.inputCases.cases} (mismatches ${r.inputCases.mismatches})  too old ${r.tooOld.events} (mismatches ${r.tooOld.mismatches})  later offset won ${r.laterOffsetWon}`,
    `ingest figures: delivered ${f.received} = accepted ${f.accepted} + duplicates ${f.duplicates} + conflicts ${f.conflicts} + quarantined ${f.quarantined} + requarantined ${f.requarantined} + failed ${f.failed}: ${r.reconciled ? 'reconciled' : 'DOES NOT RECONCILE'}`,
    ...(r.problems.length ? ['', 'problems:', ...r.problems.slice(0, 20).map((p) => `  ${p}`)] : []),
    '',
  ].join('\n');
}

runCommand('chaos', main);

/**
 * `npm run chaos`: the fault-injection run, reported the way a Jepsen analysis would.
 *
 *   npm run chaos -- [--events N] [--seed S] [--json]
 *
 * One verdict (verdict.ts) decides the exit code (0 pass, 1 fail), the table's PASS/FAIL and the --json `verdict`:
 * any broken invariant fails the run. The seed is printed; the same seed replays the same run.
 */
import { parseArgs } from 'node:util';
import { runChaos } from './scenario.ts';
import { judge, type Verdict } from './verdict.ts';
import { openWorld } from './world.ts';

const { values } = parseArgs({
  options: {
    events: { type: 'string', default: '500' },
    seed: { type: 'string' },
    json: { type: 'boolean', default: false },
  },
});
const seed = values.seed === undefined ? Math.floor(Math.random() * 2 ** 31) : Number(values.seed);
const events = Number(values.events);
const say = (m: string) => process.stderr.write(`[chaos] ${m}\n`);

async function main(): Promise<number> {
  say(`seed ${seed}, ${events} events (replay: npm run chaos -- --events ${events} --seed ${seed})`);
  const world = await openWorld();
  const started = performance.now(); // Date.now runs on the suite's fake clock
  try {
    const report = await runChaos({ events, seed });
    const verdict = judge(report);
    const { problems, ...figures } = report;
    const out = values.json
      ? `${JSON.stringify({ verdict, ...figures, problems: problems.slice(0, 20) }, null, 2)}\n`
      : table(report, verdict, (performance.now() - started) / 1000);
    world.output.writeStdout(out);
    return verdict.pass ? 0 : 1;
  } finally {
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
    `lost ${r.lost}  quarantined ${r.quarantined} (mismatches ${r.quarantineMismatches})  conflicts ${r.conflicts}`,
    `PII leaks ${r.piiLeaks}  illegal transitions ${r.illegalTransitions}  inbox⇎notifications ${r.inboxWithoutNotifications}  header injections ${r.headerInjections}  unescaped markup ${r.unescapedMarkup}  unsafe text ${r.unsafeText}  prototype polluted ${r.prototypePolluted}`,
    `display text cases ${r.displayText.cases} (mismatches ${r.displayText.mismatches})  too old ${r.tooOld.events} (mismatches ${r.tooOld.mismatches})  later offset won ${r.laterOffsetWon}`,
    `ingest figures: delivered ${f.received} = accepted ${f.accepted} + duplicates ${f.duplicates} + conflicts ${f.conflicts} + quarantined ${f.quarantined} + requarantined ${f.requarantined} + failed ${f.failed}: ${r.reconciled ? 'reconciled' : 'DOES NOT RECONCILE'}`,
    ...(r.problems.length ? ['', 'problems:', ...r.problems.slice(0, 20).map((p) => `  ${p}`)] : []),
    '',
  ].join('\n');
}

main().then(
  (code) => process.exit(code),
  (error) => {
    process.stderr.write(`chaos failed: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(2);
  },
);

/**
 * `npm run chaos`: the fault-injection run, reported the way a Jepsen analysis would.
 *
 *   npm run chaos -- [--events N] [--seed S] [--json]
 *
 * Pass: lost = 0, duplicates.bug = 0, failedByQuotaOrAccount = 0, resentAfterAcceptAtMostOnce = 0, always. The seed is printed; the same seed replays the same run.
 */
import { parseArgs } from 'node:util';
import { runChaos } from './scenario.ts';
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
    const { problems, ...figures } = report;
    const out = values.json
      ? `${JSON.stringify({ ...figures, problems: problems.slice(0, 20) }, null, 2)}\n`
      : table(report, (performance.now() - started) / 1000);
    world.output.writeStdout(out);
    return report.lost === 0 &&
      report.duplicates.bug === 0 &&
      report.piiLeaks === 0 &&
      report.illegalTransitions === 0 &&
      report.failedByQuotaOrAccount === 0 &&
      report.resentAfterAcceptAtMostOnce === 0
      ? 0
      : 1;
  } finally {
    await world.stop();
  }
}

function table(r: Awaited<ReturnType<typeof runChaos>>, seconds: number): string {
  const verdict =
    r.lost === 0 && r.duplicates.bug === 0 && r.failedByQuotaOrAccount === 0 && r.resentAfterAcceptAtMostOnce === 0
      ? 'PASS'
      : 'FAIL';
  return [
    `notifier chaos run — seed ${r.seed}, ${r.events} events, ${seconds.toFixed(0)} s: ${verdict}`,
    '',
    `records ${r.records}  deliveries ${r.deliveries}  redeliveries ${r.redeliveries}`,
    `faults   ${Object.entries(r.faults)
      .map(([k, v]) => `${k}=${v}`)
      .join('  ')}`,
    '',
    `expected sends ${r.expectedSends}  sent once ${r.sentOnce}  unknown ${r.unknown}  failed ${r.failed}`,
    `duplicates: bug ${r.duplicates.bug}, after an unknown outcome ${r.duplicates.afterUnknownOutcome}`,
    `FAILED by a quota or an account-level error ${r.failedByQuotaOrAccount}  resent after 500/reset-after-accept on an at-most-once channel ${r.resentAfterAcceptAtMostOnce}`,
    `lost ${r.lost}  quarantined ${r.quarantined} (mismatches ${r.quarantineMismatches})  conflicts ${r.conflicts}`,
    `PII leaks ${r.piiLeaks}  illegal transitions ${r.illegalTransitions}  inbox⇎notifications ${r.inboxWithoutNotifications}  header injections ${r.headerInjections}  unescaped markup ${r.unescapedMarkup}  prototype polluted ${r.prototypePolluted}`,
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

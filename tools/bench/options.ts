/** `npm run bench`'s command line: what it measures, and the checks that refuse a combination that means nothing. */
import { intOption, parseCommandLine, UsageError } from '../local/cli.ts';

export const USAGE = `
Usage: npm run bench -- [--events N] [--rounds R] [--json] [--quota | --critical [--backlog N] | --pipeline | --cpu [--baseline DIR] | --cost | --bundles | --dispatch | --console | --promote] [--quick]
       npm run bench -- --e2e [--events N] [--rate R] [--critical --backlog N --critical-count C] [--sweep-every S] [--json] [--quick]

Measures ingest, dispatch, CPU, bundle size and init time side by side on DynamoDB Local (README "Performance").

  --events N   events per ingest measurement (default 1000)
  --rounds R   alternating rounds per comparison; medians are reported (default 3)
  --json       standard output is exactly one JSON document
  --promote    only a failover's promotion over a backlog of 1,000 and 10,000 unfinished notices (--quick: 1,000),
               in runs of at most 15 s: when the fence moved, the runs, the pass's time (tools/bench/promote-backlog.ts)
  --quota      only the pacing, sweeper-drain and held-release figures (tools/bench/quota.ts, held-release.ts)
  --critical   only critical first: --backlog N normal emails (default 10000) drain at 14/s through 5 environments
               while a critical email arrives every 2 s; its token wait p50/p99, the drain rate (tools/bench/quota.ts)
  --backlog N  with --critical: the normal emails of the backlog
  --cost       only the complete cost of a notification (tools/bench/full-cost.ts): npm start runs each channel
               alone (200 events) and the bench's mix (600), every DynamoDB request, index write, evidence request
               and byte, log line and invocation counted in its process, priced per channel and in total beside the
               floor for the same guarantees; Lambda's time from the dispatch and ingest measurements
  --dispatch   only dispatch's sends per second with and without evidence, in alternating rounds (tools/bench/dispatch.ts):
               sends per slot, their ratio, the CPU per send
  --bundles    only each function's bundle: its bytes loaded at init and in all, its init time in a fresh Node (also with
               Node's compile cache warm), and the same for a bundle of only its SDK clients (the floor)
  --console    only the support console: a customer's first and older page and a quarantined event's look-up through
               its API, and ops quarantine --since 1h/1d with its counts, among other customers' events, a day of
               quarantined records and audit records (tools/bench/console.ts)
  --pipeline   only the whole pipeline as npm start runs it, 2,000 and 6,000 events (tools/bench/pipeline.ts): rate and
               peak memory, DynamoDB Local on disk (and 2,000 in memory, for comparison)
  --cpu        only the CPU per event of the ingest path (no DynamoDB): 5 warm-up runs, then R × 5 runs of
               max(N, 2000) events; each figure (wall and the process's own CPU time) and their medians
  --baseline DIR
               with --cpu: another checkout (e.g. git worktree add ../base main, then npm ci there) measured by its own
               bench, round by round alternating with this one, each in a process of its own, and the median ratio:
               a change's cost on a busy machine
  --e2e        only the end-to-end latency of a notice, record delivered to ingest → provider accepted, through the
               local pipeline (the real handlers on DynamoDB Local, the stream polled 4 times a second, the sweeper on
               its schedule, the SES emulator and local SNS; tools/bench/e2e.ts): p50/p99/max per channel and class, and
               where the time goes (ingest, stream, dispatch queue, claim, pacing wait, audience check, provider).
               Alone: --events N (default 300) events at --rate R per second (default 10), a normal, a critical and a
               bulk type in turn, every channel each allows, providers without a quota.
               With --critical: --backlog N normal emails (default 10000) at once into a 14/s SES account (emulator
               quota and the real shared token bucket), and --critical-count C critical emails (default 100) spread
               through the drain; the drain rate against 14/s, and whether every notification ended SENT
  --rate R     with --e2e: events per second of the mixed workload
  --critical-count C
               with --e2e --critical: the critical emails sent during the drain
  --sweep-every S
               with --e2e: the sweeper's schedule in seconds (default 60, production's)
  --quick      small sizes and one round: for development, not for quoting
               (--e2e: 60 events; with --critical, a backlog of 300 and 5 critical emails)
  -h, --help   this text

Exit codes: 0 measured; 1 a measurement failed; 2 usage (unknown flag, bad value); 130/143/129 interrupted.
`;

export function parseOptions(argv: string[]) {
  const { values } = parseCommandLine(
    {
      usage: USAGE,
      options: {
        events: { type: 'string' },
        rounds: { type: 'string', default: '3' },
        json: { type: 'boolean', default: false },
        quota: { type: 'boolean', default: false },
        critical: { type: 'boolean', default: false },
        backlog: { type: 'string' },
        pipeline: { type: 'boolean', default: false },
        cost: { type: 'boolean', default: false },
        bundles: { type: 'boolean', default: false },
        dispatch: { type: 'boolean', default: false },
        console: { type: 'boolean', default: false },
        promote: { type: 'boolean', default: false },
        cpu: { type: 'boolean', default: false },
        baseline: { type: 'string' },
        quick: { type: 'boolean', default: false },
        e2e: { type: 'boolean', default: false },
        rate: { type: 'string' },
        'critical-count': { type: 'string' },
        'sweep-every': { type: 'string' },
      },
    },
    argv,
  );
  const modes = [
    values.quota,
    values.pipeline,
    values.cpu,
    values.critical,
    values.cost,
    values.bundles,
    values.dispatch,
    values.console,
    values.promote,
  ];
  if (modes.filter((v) => v === true).length > 1) {
    throw new UsageError(
      '--quota, --pipeline, --cpu, --critical, --cost, --bundles, --dispatch, --console and --promote are separate runs: give one of them',
    );
  }
  if (
    values.e2e === true &&
    [values.quota, values.pipeline, values.cpu, values.cost, values.bundles, values.dispatch].some((v) => v === true)
  ) {
    throw new UsageError('--e2e is a run of its own: give it alone, or with --critical');
  }
  const e2eOnly = {
    rate: values.rate,
    'critical-count': values['critical-count'],
    'sweep-every': values['sweep-every'],
  };
  for (const [flag, value] of Object.entries(e2eOnly)) {
    if (value !== undefined && values.e2e !== true)
      throw new UsageError(`--${flag} belongs to --e2e: give it with --e2e`);
  }
  if (values['critical-count'] !== undefined && values.critical !== true) {
    throw new UsageError('--critical-count is the critical emails during a backlog: give it with --e2e --critical');
  }
  if (values.backlog !== undefined && values.critical !== true) {
    throw new UsageError('--backlog is the normal emails critical ones must overtake: give it with --critical');
  }
  if (values.e2e === true && values.critical === true && (values.events ?? values.rate) !== undefined) {
    throw new UsageError(
      '--events and --rate size the mixed --e2e workload; under a backlog: --backlog, --critical-count',
    );
  }
  if (values.baseline !== undefined && values.cpu !== true) {
    throw new UsageError('--baseline compares the CPU per event: give it with --cpu');
  }
  return {
    json: values.json === true,
    quota: values.quota === true,
    critical: values.critical === true,
    backlog: intOption('backlog', values.backlog, 1) ?? 10_000,
    e2e: values.e2e === true,
    rate: intOption('rate', values.rate, 1, 1_000) ?? 10,
    criticalCount: intOption('critical-count', values['critical-count'], 1),
    sweepEvery: intOption('sweep-every', values['sweep-every'], 1, 3_600) ?? 60,
    eventsGiven: intOption('events', values.events, 1),
    pipeline: values.pipeline === true,
    cost: values.cost === true,
    bundles: values.bundles === true,
    dispatch: values.dispatch === true,
    console: values.console === true,
    promote: values.promote === true,
    cpu: values.cpu === true,
    baseline: values.baseline,
    quick: values.quick === true,
    events: intOption('events', values.events, 1) ?? 1000,
    backlogGiven: values.backlog !== undefined,
    rounds: intOption('rounds', values.rounds, 1) ?? 3,
  };
}

/** What a run measures with: the command line, with --quick's small sizes applied. */
export type BenchArgs = ReturnType<typeof parseOptions>;

export const sized = (args: BenchArgs): BenchArgs => ({
  ...args,
  events: args.quick ? Math.min(args.events, 200) : args.events,
  rounds: args.quick ? 1 : args.rounds,
});

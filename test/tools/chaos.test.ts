/**
 * The reliability suite in the default test run: a seeded fault-injection scenario over the real pipeline, and
 * fast-check model-based runs whose scheduler picks the interleaving of racing invocations. Every invariant of
 * docs/guarantees.md is asserted after convergence. Replay: CHAOS_SEED=<seed> npm run test:tools -- chaos.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DISPATCH_FILTER_PATTERN, matchesFilter } from '../../functions/contracts/stream-filter.ts';
import type { Channel } from '../../functions/domain/channels.ts';
import { invokeDispatch, runSweeper } from '../../tools/chaos/converge.ts';
import { CRASH_POINTS, clock, DYNAMO_FAULTS } from '../../tools/chaos/faults.ts';
import { eventArbitrary, withCase } from '../../tools/chaos/generate.ts';
import { type ChaosReport, PROVIDER_MODES } from '../../tools/chaos/model.ts';
import { DISPLAY_TEXT_CASES, INPUT_CASES, POISON_KINDS } from '../../tools/chaos/poison.ts';
import { runChaos } from '../../tools/chaos/random-run.ts';
import { ChaosRun } from '../../tools/chaos/scenario.ts';
import { judge } from '../../tools/chaos/verdict.ts';
import { openWorld, type World } from '../../tools/chaos/world.ts';

const seed = Number(process.env.CHAOS_SEED ?? 20261130);
let world: World;

beforeAll(async () => {
  world = await openWorld();
}, 180_000);
afterAll(async () => {
  await world.stop();
});

/** The one verdict `npm run chaos` also uses: every invariant, each named when it breaks. */
function expectInvariants(r: ChaosReport) {
  expect(judge(r), `seed ${r.seed}; problems: ${r.problems.slice(0, 10).join(' | ')}`).toEqual({
    pass: true,
    failures: [],
  });
  expect(r.problems, `problems (seed ${r.seed})`).toEqual([]);
}

describe('chaos: seeded fault injection over the real pipeline', () => {
  it(`never twice, never lost (seed ${seed})`, async () => {
    console.log(`chaos seed ${seed} — replay: npm run chaos -- --events 250 --seed ${seed}`);
    const r = await runChaos({ events: 250, seed, dynamoFaultRate: 0.04, armEveryFault: true });
    console.log(JSON.stringify({ ...r, problems: r.problems.length }));
    expectInvariants(r);
    expect(r.sentOnce).toBeGreaterThan(r.expectedSends / 2);
    // The run met every kind of fault it claims to survive.
    for (const f of [...DYNAMO_FAULTS, ...CRASH_POINTS]) expect(r.faults[f], f).toBeGreaterThan(0);
    for (const m of PROVIDER_MODES.slice(1)) expect(r.faults[`provider:${m}`], m).toBeGreaterThan(0);
    // The account-level window, the disabled platform application and the quota burst happened, and were met.
    expect(r.faults.accountPausedRefusals, 'account paused').toBeGreaterThan(0);
    expect(r.faults.applicationDisabledRefusals, 'platform application disabled').toBeGreaterThan(0);
    // Customers changed their preferences just before a transfer (some far in the future first), and it was judged.
    expect(r.faults.preferenceRecords).toBeGreaterThan(0);
    expect(r.preferences.cases).toBeGreaterThan(0);
    expect(r.faults.quotaThrottled, 'quota burst').toBeGreaterThan(0);
    expect(r.faults.poisonRecords).toBeGreaterThanOrEqual(POISON_KINDS.length);
    expect(POISON_KINDS.length).toBeGreaterThanOrEqual(50);
    // Every display-text case ran and was sent clean; some events were too old to send.
    expect(r.displayText.cases).toBeGreaterThanOrEqual(DISPLAY_TEXT_CASES.length);
    // Every producer's input case ran: spellings accepted and sent, a bad contact point refusing its channel alone.
    expect(r.inputCases.cases).toBeGreaterThanOrEqual(INPUT_CASES.length);
    expect(r.tooOld.events).toBeGreaterThan(0);
    expect(r.figures.requarantined).toBeGreaterThan(0);
    expect(r.redeliveries).toBeGreaterThan(0);
    expect(r.conflicts).toBeGreaterThan(0);
  }, 240_000);
});

describe('chaos: a seed replays', () => {
  it('the same seed gives the same records, schedule of deliveries and faults, and ingest outcome', async () => {
    const options = { events: 30, seed: seed + 1, dynamoFaultRate: 0.04 };
    const first = await runChaos(options);
    const again = await runChaos(options);
    // What a seed decides: the records, the schedule (deliveries, copies, rebalances, pumps, trim, pause, burst), the
    // provider behaviour per address, and every fault inside an ingest invocation — keyed by (seed, the operation).
    const replayed = (r: ChaosReport) => ({
      scheduleDigest: r.scheduleDigest,
      records: r.records,
      deliveries: r.deliveries,
      redeliveries: r.redeliveries,
      figures: r.figures,
      conflicts: r.conflicts,
      quarantined: r.quarantined,
      expectedSends: r.expectedSends,
      faults: Object.fromEntries(
        Object.entries(r.faults).filter(([k]) =>
          /^(provider:|poisonRecords|streamRecordsTrimmed|failedIngestInvocations|TransactionConflict|ThrottlingError|ProvisionedThroughputExceeded|beforeTransaction|afterCommit)/.test(
            k,
          ),
        ),
      ),
      verdict: judge(r),
    });
    expect(replayed(again)).toEqual(replayed(first));
    expect(first.deliveries).toBeGreaterThan(first.records);
  }, 300_000);
});

// ── Model-based: commands over a small id space, racing invocations ordered by fast-check's scheduler ──

type Model = { produced: number };
type Real = { run: ChaosRun; s: fc.Scheduler };

const scheduled =
  (s: fc.Scheduler) =>
  async <T>(starts: (() => Promise<T>)[]): Promise<T[]> => {
    const running = starts.map((start) => s.schedule(Promise.resolve()).then(start));
    await s.waitAll();
    return Promise.all(running);
  };

const cmd = <A>(
  name: string,
  arb: fc.Arbitrary<A>,
  run: (a: A, m: Model, r: Real) => Promise<void>,
  needsEvents = false,
) =>
  arb.map(
    (a): fc.AsyncCommand<Model, Real> => ({
      check: (m) => !needsEvents || m.produced > 0,
      run: async (m, r) => run(a, m, r),
      toString: () => `${name}(${JSON.stringify(a)})`,
    }),
  );

const commands = [
  cmd(
    'produce',
    fc.tuple(fc.integer({ min: 0, max: 4 }), fc.nat(2), eventArbitrary(0.3)),
    async ([id, p, make], m, { run }) => {
      const spec = run.event((i, prefix) => make(i, prefix, id));
      run.append(p, { kind: 'event', spec, value: spec.value });
      m.produced++;
    },
  ),
  cmd(
    'produceDisplayTextOrTooOld',
    fc.tuple(fc.integer({ min: 0, max: 4 }), fc.nat(2), eventArbitrary(0.3), fc.nat(DISPLAY_TEXT_CASES.length)),
    async ([id, p, make, c], m, { run }) => {
      // c = DISPLAY_TEXT_CASES.length: an event too old to send.
      const tooOld = c === DISPLAY_TEXT_CASES.length;
      const spec = run.event((i, prefix) => withCase(make(i, prefix, id), tooOld ? undefined : c, tooOld));
      run.append(p, { kind: 'event', spec, value: spec.value });
      m.produced++;
    },
  ),
  cmd(
    'resend',
    fc.tuple(fc.nat(), fc.nat(2)),
    async ([k, p], _m, { run }) => {
      const spec = run.specs[k % run.specs.length]!;
      run.append(p, { kind: 'event', spec, value: spec.value });
    },
    true,
  ),
  cmd('poison', fc.tuple(fc.nat(POISON_KINDS.length - 1), fc.nat(2)), async ([kind, p], _m, { run }) => {
    run.append(p, {
      kind: 'poison',
      poison: kind,
      value: POISON_KINDS[kind]!.make(`${run.prefix}p${run.parts.flat().length}`),
    });
  }),
  cmd(
    'deliver',
    fc.tuple(fc.nat(2), fc.integer({ min: 1, max: 4 }), fc.boolean()),
    async ([p, copies, concurrent], _m, { run, s }) => {
      await run.deliverNext(p, 8, copies, concurrent, scheduled(s));
    },
  ),
  cmd('rebalance', fc.tuple(fc.nat(2), fc.integer({ min: 1, max: 6 })), async ([p, back], _m, { run }) =>
    run.rebalance(p, back),
  ),
  cmd('inject', fc.constantFrom(...DYNAMO_FAULTS, ...CRASH_POINTS), async (fault, _m, { run }) => {
    run.w.armed.push(fault);
  }),
  cmd('advanceClock', fc.integer({ min: 1_000, max: 120_000 }), async (ms) => clock.advance(ms)),
  cmd('sweep', fc.constant(null), async (_a, _m, { run }) => runSweeper(run.w)),
  cmd('pump', fc.constantFrom(0, 0.5), async (dropRate, _m, { run }) => {
    await run.pump(dropRate, 0.5);
  }),
  cmd('raceDispatch', fc.constant(null), async (_a, _m, { run, s }) => {
    // Two dispatch invocations racing on the same stream batch.
    const fresh = await run.w.reader.poll();
    run.seen.push(...fresh);
    const batch = fresh.filter((r) => matchesFilter(DISPATCH_FILTER_PATTERN, r));
    if (batch.length > 0) await scheduled(s)([() => invokeDispatch(run.w, batch), () => invokeDispatch(run.w, batch)]);
  }),
  cmd('trim', fc.constant(null), async (_a, _m, { run }) => run.trim()),
  cmd('pauseAccount', fc.constantFrom('EMAIL', 'PUSH', 'SMS') as fc.Arbitrary<Channel>, async (c, _m, { run }) =>
    run.pause(c),
  ),
  cmd('resumeAccounts', fc.constant(null), async (_a, _m, { run }) => run.resume()),
  cmd('quotaBurst', fc.integer({ min: 1, max: 20 }), async (rate, _m, { run }) => run.w.startQuotaBurst(rate)),
  cmd('quotaEnd', fc.constant(null), async (_a, _m, { run }) => run.w.endQuotaBurst()),
];

describe('chaos: fast-check model-based runs', () => {
  it('every interleaving of produce, resend, deliver, redeliver, crash, inject, clock, sweep and trim keeps the guarantees', async () => {
    const fcSeed = Number(process.env.CHAOS_SEED ?? Math.floor(Math.random() * 2 ** 31));
    console.log(`fast-check seed ${fcSeed} — replay: CHAOS_SEED=${fcSeed} npm run test:tools -- chaos`);
    await fc.assert(
      fc.asyncProperty(fc.commands(commands, { maxCommands: 40 }), fc.scheduler(), async (cmds, s) => {
        const run = new ChaosRun(world, { events: 0, seed: fcSeed }, Math.random);
        await fc.asyncModelRun(() => ({ model: { produced: 0 }, real: { run, s } }), cmds);
        expectInvariants(await run.finish());
      }),
      { seed: fcSeed, numRuns: 25, endOnFailure: true },
    );
  }, 240_000);
});

/**
 * The random scenario of `npm run chaos`: everything drawn from the seed — the records written (events of every
 * provider mode, display-text and input case, preferences, resends, conflicts, poison), then their delivery with the
 * faults of a run (redeliveries, rebalances, an account pause, a quota burst, a disabled push application, a stream
 * trim) — run as one ChaosRun (scenario.ts) and judged.
 */
import fc from 'fast-check';
import type { Channel } from '../../functions/domain/channels.ts';
import { CONTACT_FIELD_OF } from '../../functions/domain/contact.ts';
import { SENT_TO_ENDPOINT } from '../../functions/domain/push-endpoint.ts';
import { CRASH_POINTS, clock, DYNAMO_FAULTS } from './faults.ts';
import {
  eventArbitrary,
  PUSH_APPS,
  PUSH_ONLY_MODES,
  preferencesValue,
  seededRandom,
  withCase,
  withInput,
  withMode,
} from './generate.ts';
import { type ChaosOptions, type ChaosReport, type EventSpec, PROVIDER_MODES, type ProviderMode } from './model.ts';
import { DISPLAY_TEXT_CASES, INPUT_CASES, POISON_KINDS } from './poison.ts';
import { ChaosRun } from './scenario.ts';
import { openWorld, type World } from './world.ts';

const hasContact = (spec: EventSpec, channel: Channel) => {
  const r = spec.value.recipient as Record<string, unknown>;
  const listed = spec.value.channels as Channel[] | undefined;
  const address = r[CONTACT_FIELD_OF[channel]];
  return address !== undefined && (listed === undefined || listed.includes(channel));
};

/** Gives the event the next provider mode still to be met in this run, when it has a channel for it. */
function covered(spec: EventSpec, order: ProviderMode[]): EventSpec {
  const mode = order[0];
  if (mode === undefined) return spec;
  const channel = (['PUSH', 'EMAIL', 'SMS'] as const).find(
    (c) => hasContact(spec, c) && (!PUSH_ONLY_MODES.includes(mode) || SENT_TO_ENDPOINT[c]),
  );
  if (channel === undefined) return spec;
  order.shift();
  return withMode(spec, channel, mode);
}

/** The random scenario of `npm run chaos`: everything drawn from the seed. */
export async function runChaos(options: ChaosOptions): Promise<ChaosReport> {
  const w = await openWorld();
  // A seed replays whatever ran before it in this world: what is left on the stream is read and set aside, and the
  // clock moves an hour on, past every channel hold, send-rate window and breaker cache of an earlier run.
  await w.reader.poll();
  clock.advance(3_600_000);
  // The handlers' own jitter (backoff, hold spread) draws from Math.random: seeded too, for the run.
  const mathRandom = Math.random;
  Math.random = seededRandom(options.seed ^ 0x5bd1e995);
  try {
    return await scenario(w, options);
  } finally {
    Math.random = mathRandom;
  }
}

async function scenario(w: World, options: ChaosOptions): Promise<ChaosReport> {
  const draw = drawsOf(seededRandom(options.seed));
  const run = new ChaosRun(w, options, draw.rand);
  writeRecords(run, options, draw);
  await deliverRecords(w, run, options, draw);
  return run.finish();
}

/** The seed's draws: a number in [0, 1), one of a list, a yes with probability p. */
function drawsOf(rand: () => number) {
  return {
    rand,
    pick: <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)] as T,
    chance: (p: number) => rand() < p,
  };
}
type Draws = ReturnType<typeof drawsOf>;

/** The scenario: events, resends, conflicts and poison records spread over partitions. */
function writeRecords(run: ChaosRun, options: ChaosOptions, { rand, pick, chance }: Draws): void {
  const partitions = run.parts.length;
  const makers = fc.sample(eventArbitrary(options.providerFaultRate ?? 0.15), {
    seed: options.seed,
    numRuns: options.events,
  });
  const poisonOrder = [...POISON_KINDS.keys()];
  const displayOrder = [...DISPLAY_TEXT_CASES.keys()];
  // Every provider mode early in the run, on a channel the event has (a push-only mode on its push endpoint).
  const modeOrder: ProviderMode[] = [...PROVIDER_MODES.slice(1)];
  const inputOrder = [...INPUT_CASES.keys()];
  for (const make of makers) {
    // Every display-text case early in the run, then now and then; a few events too old to send.
    const display =
      displayOrder.length > 0 && chance(0.3)
        ? displayOrder.shift()
        : chance(0.02)
          ? Math.floor(rand() * DISPLAY_TEXT_CASES.length)
          : undefined;
    const tooOld = display === undefined && chance(0.03);
    // Every producer's input case early in the run too, on events that carry no other case.
    const input =
      display === undefined && !tooOld && inputOrder.length > 0 && chance(0.3) ? inputOrder.shift() : undefined;
    const spec = run.event((i, prefix) => {
      const made = withCase(make(i, prefix, i), display, tooOld);
      return input === undefined ? covered(made, modeOrder) : withInput(made, input, i, prefix);
    });
    const home = spec.i % partitions;
    if (!tooOld && chance(0.06)) changePreferencesBefore(run, spec, home, chance);
    run.append(home, { kind: 'event', spec, value: spec.value });
    if (chance(0.08)) {
      const earlier = pick(run.specs);
      // A producer resend: the same event at a new offset, on any partition.
      run.append(Math.floor(rand() * partitions), { kind: 'event', spec: earlier, value: earlier.value });
    }
    if (chance(0.04)) {
      // The same eventId with a different payload, after the original on its partition: EVENT_ID_CONFLICT.
      const earlier = pick(run.specs);
      const data = earlier.value.data as Record<string, unknown>;
      // Another amount, valid for the currency's minor unit.
      const amount = data.currency === 'JPY' ? `${spec.i + 1}` : `${spec.i + 1}.99`;
      const changed = { ...earlier.value, data: { ...data, amount } };
      run.append(earlier.i % partitions, { kind: 'event', spec: earlier, value: changed });
    }
    if (poisonOrder.length > 0 ? chance(0.25) : chance(0.04)) {
      const kind = poisonOrder.length > 0 ? (poisonOrder.shift() as number) : Math.floor(rand() * POISON_KINDS.length);
      run.append(Math.floor(rand() * partitions), {
        kind: 'poison',
        poison: kind,
        value: POISON_KINDS[kind]!.make(`${run.prefix}p${spec.i}`),
      });
    }
  }
}

/**
 * The customer changes their preferences just before this transfer, on its partition: the opt-out must be in force
 * when the transfer is sent. Now and then a producer first publishes one dated far in the future, which must not
 * outrank the real one (admission decides what is let in).
 */
function changePreferencesBefore(run: ChaosRun, spec: EventSpec, home: number, chance: (p: number) => boolean) {
  const userId = String((spec.value.recipient as Record<string, unknown>).userId);
  const reachable = (['EMAIL', 'PUSH', 'SMS'] as const).filter(
    (c) => spec.modes[c] !== undefined && hasContact(spec, c),
  );
  const optOut = reachable.filter(() => chance(0.5));
  if (chance(0.3)) {
    const id = `${run.prefix}pref${spec.i}f`;
    run.preferences(home, id, userId, preferencesValue(id, userId, [], '2099-01-01T00:00:00Z'));
  }
  const id = `${run.prefix}pref${spec.i}`;
  run.preferences(
    home,
    id,
    userId,
    preferencesValue(id, userId, optOut.length > 0 ? optOut : reachable.slice(0, 1), '2026-11-30T09:10:00Z'),
  );
}

/** Delivery: partitions interleaved, batches redelivered 2–5×, rebalances, DynamoDB faults and crashes. */
async function deliverRecords(w: World, run: ChaosRun, options: ChaosOptions, { rand, pick, chance }: Draws) {
  const batchSize = options.batchSize ?? 20;
  w.dynamoFaultRate = options.dynamoFaultRate ?? 0.03;
  if (options.armEveryFault) w.armed.push(...DYNAMO_FAULTS, ...CRASH_POINTS);
  let delivered = 0;
  let trimmed = false;
  // One account pause and one quota burst per run, each over a few deliveries, at a point drawn from the seed.
  const totalBatches = Math.ceil(run.parts.flat().length / batchSize);
  const pauseAt = 1 + Math.floor(rand() * Math.max(1, totalBatches - 6));
  const pausedChannel = pick(['EMAIL', 'PUSH', 'SMS'] as const);
  const burstAt = 1 + Math.floor(rand() * Math.max(1, totalBatches - 6));
  const appOffAt = 1 + Math.floor(rand() * Math.max(1, totalBatches - 6));
  for (;;) {
    const open = run.cursor.map((c, p) => (c < run.parts[p]!.length ? p : -1)).filter((p) => p >= 0);
    if (open.length === 0) break;
    // Each meets at least the stream pump started with it. The quota burst lasts four deliveries, the account pause
    // six (its holds pass on the fake clock); both are decided from the seed, never by real time.
    if (delivered === pauseAt) {
      run.pause(pausedChannel);
      await run.pump();
    }
    if (delivered === pauseAt + 6) run.resume();
    if (delivered === burstAt) {
      run.schedule.push('quota burst');
      w.startDecidedQuotaBurst(0.8);
      await run.pump();
    }
    if (delivered === burstAt + 4) {
      run.schedule.push('quota burst ends');
      w.endQuotaBurst();
    }
    // One push platform application disabled for five deliveries (an expired certificate, then renewed).
    if (delivered === appOffAt) {
      run.disableApp(PUSH_APPS[0]);
      await run.pump();
    }
    if (delivered === appOffAt + 5) run.enableApps();
    const p = pick(open);
    const copies = chance(0.2) ? 2 + Math.floor(rand() * 4) : 1;
    await run.deliverNext(p, batchSize, copies, chance(0.5));
    if (chance(0.1)) await run.rebalance(p, 1 + Math.floor(rand() * batchSize));
    if (++delivered % 3 === 0) await run.pump(options.dropRate ?? 0.02, 0.2);
    if (!trimmed && delivered > 4 && chance(0.3)) {
      trimmed = true;
      await run.trim();
    }
  }
}

/**
 * One chaos run: a seeded scenario (fast-check), executed against the real pipeline in the chaos world, then every
 * invariant checked. The expected outcome of each fault is written next to it (PROVIDER_MODES, POISON_KINDS,
 * CRASH_POINTS in faults.ts).
 */
import { createHash } from 'node:crypto';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import fc from 'fast-check';
import {
  cleanDisplayText,
  isCleanDisplayText,
  isCleanMultilineText,
  NAME_MAX_GRAPHEMES,
  REASON_MAX_GRAPHEMES,
} from '../functions/domain/display-text.ts';
import { type Channel, parseEventJson } from '../functions/domain/event.ts';
import { type NotificationStatus, TERMINAL_STATUSES } from '../functions/domain/notification.ts';
import { route } from '../functions/domain/routing.ts';
import { FIGURE_METRICS, type IngestFigures, reconciles } from '../functions/ingest/figures.ts';
import { mskEvent } from '../local/msk.ts';
import type { Fault } from '../local/providers.ts';
import { CRASH_POINTS, clock, DYNAMO_FAULTS, faultCounts } from './faults.ts';
import { DISPLAY_TEXT_CASES, POISON_KINDS } from './poison.ts';
import {
  attributeSends,
  convergeRun,
  type DeliveryStats,
  deliverKafkaBatch,
  FaultDecisions,
  LEASE_MS,
  MAX_AGE_MS,
  newStreamState,
  newWitness,
  openWorld,
  POLICIES,
  pumpStream,
  runItems,
  runSweeper,
  transitionViolations,
  type World,
} from './world.ts';

/**
 * What each provider mode does to one notification, and the outcome the suite expects:
 * - ok: SENT, one send.
 * - reject: FAILED with the provider's reason, no send.
 * - throttleOnce: deferred, then SENT: one send.
 * - throttleMany: throttled six times — more than MAX_SEND_ATTEMPTS — then accepted: SENT, one send (throttling never
 *   uses the attempt budget).
 * - clockSkew: RequestExpired once (nothing sent), then SENT: one send.
 * - acceptThenHang: accepted, no answer: UNKNOWN with one send (at most once); resent, SENT with two sends, counted as
 *   a duplicate after an unknown outcome (at least once).
 * - acceptThen500 / acceptThenReset: accepted (ledger), then a 500 / a reset connection: as acceptThenHang. On an
 *   at-most-once channel there must never be a second send (resentAfterAcceptAtMostOnce).
 * - slow: accepted after the lease expired and the sweeper took over: as acceptThenHang, and the late SENT is fenced.
 * Account-level and quota faults are not per address: the scenario pauses a channel's account for a window (every
 * send refused with AccountSendingPaused / AuthorizationError), and shrinks the providers' quotas for a burst.
 * Neither may end anything FAILED (failedByQuotaOrAccount).
 */
export const PROVIDER_MODES = [
  'ok',
  'reject',
  'throttleOnce',
  'throttleMany',
  'clockSkew',
  'acceptThenHang',
  'acceptThen500',
  'acceptThenReset',
  'slow',
] as const;
export type ProviderMode = (typeof PROVIDER_MODES)[number];

export interface ChaosOptions {
  readonly events: number;
  readonly seed: number;
  readonly partitions?: number;
  readonly batchSize?: number;
  /** Share of DynamoDB calls given a random fault (kinds of faults.ts DYNAMO_FAULTS and crash points). */
  readonly dynamoFaultRate?: number;
  readonly providerFaultRate?: number;
  readonly dropRate?: number;
  /** Arm one of every DynamoDB fault and crash point up front, so a short run still meets each of them. */
  readonly armEveryFault?: boolean;
}

export interface ChaosReport {
  seed: number;
  events: number;
  /** sha256 of the run's records and its schedule of deliveries and faults (ChaosRun.schedule): equal for equal seeds. */
  scheduleDigest: string;
  records: number;
  deliveries: number;
  redeliveries: number;
  faults: Record<string, number>;
  expectedSends: number;
  sentOnce: number;
  /**
   * A second accepted send is legitimate only on an at-least-once channel, made by a later attempt than the one
   * before it, that one having ended with an unknown outcome; anything else — two sends of one attempt, a resend
   * after a known outcome, a send no attempt can be tied to — is a bug.
   */
  duplicates: { bug: number; afterUnknownOutcome: number };
  /** Transitions a stale holder got applied after a newer claim: fencing failed. Must be 0. */
  staleWrites: number;
  lost: number;
  unknown: number;
  failed: number;
  quarantined: number;
  quarantineMismatches: number;
  conflicts: number;
  piiLeaks: number;
  illegalTransitions: number;
  inboxWithoutNotifications: number;
  headerInjections: number;
  unescapedMarkup: number;
  /** Sends whose text holds a control, line separator, bidi or other format character, or ill-formed text. */
  unsafeText: number;
  /** Display-text cases run, and those whose stored text is not the cleaned text (or that were not accepted). */
  displayText: { cases: number; mismatches: number };
  /** Events older than the max event age: recorded, never sent. `mismatches`: not recorded as TOO_OLD, or sent. */
  tooOld: { events: number; mismatches: number };
  /** Events whose original (the inbox's record) is not the lowest offset of that eventId on its partition. */
  laterOffsetWon: number;
  prototypePolluted: boolean;
  /** FAILED for a throttle, a quota, an account state or age: must be 0 (issue 11). */
  failedByQuotaOrAccount: number;
  /** A second send after a 500 or reset following an accept, on an at-most-once channel: must be 0 (issue 11). */
  resentAfterAcceptAtMostOnce: number;
  /** The ingest function's own figures (EMF metrics) over the run, and whether they reconcile with the deliveries. */
  figures: IngestFigures;
  reconciled: boolean;
  problems: string[];
}

/** occurredAt of the run's too-old events: older than the world's MAX_EVENT_AGE_SECONDS, forever. */
export const TOO_OLD_OCCURRED_AT = '1990-01-01T00:00:00Z';

export interface EventSpec {
  i: number;
  eventId: string;
  value: Record<string, unknown>;
  modes: Record<Channel, ProviderMode>;
  /** Index into DISPLAY_TEXT_CASES when this event carries one. */
  display?: number;
  tooOld?: boolean;
}
export type RecordSpec =
  | { kind: 'event'; spec: EventSpec; value: Record<string, unknown> }
  | { kind: 'poison'; poison: number; value: string | Buffer | null };

let runCounter = 0;

const NAMES = [
  'Taro Yamada',
  '山田 太郎',
  'Jordan Lee',
  '<script>alert(1)</script>',
  'O\'Brien & "Sons"',
  'Ünïcödé ✓',
  // Third-party names as an attacker writes them: accepted, sent clean.
  'Pat\r\nBcc: all@example.com',
  '\u202egnp.exe',
  'Lee\u2028\u0000',
];

/**
 * One run's records, deliveries and stream, on its own topic and eventId prefix. The random scenario (runChaos) and
 * the fast-check model run (test/integration/chaos.test.ts) both drive it, then `finish()` converges and analyses.
 */
export class ChaosRun {
  readonly prefix = `r${process.pid % 1000}x${runCounter++}-`;
  readonly topic = `${this.prefix}topic`;
  readonly parts: RecordSpec[][];
  readonly specs: EventSpec[] = [];
  readonly stats: DeliveryStats = { deliveries: 0, redeliveries: 0, failedInvocations: 0 };
  readonly stream = newStreamState();
  readonly cursor: number[];
  /** What the run did, in order (deliveries, pumps, trims, pauses, bursts): the same seed gives the same schedule. */
  readonly schedule: string[] = [];
  private rebalances = 0;
  private readonly logStart: number;
  private readonly ledgerStart: { ses: number; sns: number };
  private readonly faultsBefore: Record<string, number>;
  private readonly providerBefore: { quotaThrottled: number; accountRefusals: number };
  private readonly metricsBefore: Record<string, number>;
  private readonly modeByAddress = new Map<string, ProviderMode>();
  /** The notification (eventId, channel) each address belongs to. */
  private readonly keyByAddress = new Map<string, { pk: string; sk: string; channel: Channel }>();
  /** The address whose send is slow right now (the provider holds its answer while `whileSlow` runs). */
  private slowAddress: string | undefined;
  private readonly attempts = new Map<string, number>();

  constructor(
    readonly w: World,
    readonly options: ChaosOptions,
    readonly random: () => number,
  ) {
    const partitions = options.partitions ?? 3;
    this.parts = Array.from({ length: partitions }, () => []);
    this.cursor = Array(partitions).fill(0) as number[];
    this.logStart = w.logLines.length;
    this.ledgerStart = { ses: w.ses.sends.length, sns: w.sns.sends.length };
    this.faultsBefore = { ...faultCounts };
    this.providerBefore = { quotaThrottled: w.quotaThrottled(), accountRefusals: w.accountRefusals };
    this.metricsBefore = { ...w.output.metrics };
    w.random = random;
    // This run's fault decisions hash its seed with each operation's identity (its own prefix left out).
    w.decide = new FaultDecisions(options.seed, this.prefix);
    w.witness = newWitness();
    w.armed = [];
    w.providerFault = (_channel, to) => this.providerFault(to);
    const slowTakeover = async () => {
      // The send outlives its lease: the clock moves past it and the sweeper takes over while the send is in flight.
      clock.advance(LEASE_MS + 1_000);
      await runSweeper(w, `slow takeover ${this.slowAddress}`);
      // On an at-least-once channel the sweeper put it back to PENDING: another execution environment claims it
      // (attempt + 1) before the slow holder's answer arrives. The slow holder's SENT must now be fenced out; a write
      // that gets through is a stale write. (The new holder then dies; its lease expires and the sweeper resolves it.)
      const key = this.slowAddress === undefined ? undefined : this.keyByAddress.get(this.slowAddress);
      this.slowAddress = undefined;
      if (key !== undefined && POLICIES[key.channel] === 'AT_LEAST_ONCE') await w.takeover(key);
    };
    w.ses.whileSlow = slowTakeover;
    w.sns.whileSlow = slowTakeover;
  }

  /** An event for eventId index `id` (a small id space makes collisions); `variant` changes the amount only. */
  event(make: (i: number, prefix: string) => EventSpec): EventSpec {
    const spec = make(this.specs.length, this.prefix);
    this.specs.push(spec);
    const r = spec.value.recipient as Record<string, string>;
    if (r.email) this.modeByAddress.set(r.email, spec.modes.EMAIL);
    if (r.pushEndpointArn) this.modeByAddress.set(r.pushEndpointArn, spec.modes.PUSH);
    if (r.phoneNumber) this.modeByAddress.set(r.phoneNumber, spec.modes.SMS);
    for (const [address, channel] of [
      [r.email, 'EMAIL'],
      [r.pushEndpointArn, 'PUSH'],
      [r.phoneNumber, 'SMS'],
    ] as const) {
      if (address)
        this.keyByAddress.set(address, { pk: `EVENT#${spec.eventId}`, sk: `NOTIFICATION#${channel}`, channel });
    }
    return spec;
  }

  append(partition: number, record: RecordSpec): void {
    this.parts[partition % this.parts.length]!.push(record);
  }

  private providerFault(to: string): Fault {
    const n = (this.attempts.get(to) ?? 0) + 1;
    this.attempts.set(to, n);
    switch (this.modeByAddress.get(to) ?? 'ok') {
      case 'ok':
        return 'ok';
      case 'reject':
        return 'reject';
      case 'throttleOnce':
        return n === 1 ? 'throttle' : 'ok';
      case 'throttleMany':
        return n <= 6 ? 'throttle' : 'ok';
      case 'clockSkew':
        return n === 1 ? 'clockSkew' : 'ok';
      case 'acceptThen500':
        return n === 1 ? 'acceptThen500' : 'ok';
      case 'acceptThenReset':
        return n === 1 ? 'acceptThenReset' : 'ok';
      case 'acceptThenHang':
        return n === 1 ? 'acceptThenHang' : 'ok';
      case 'slow':
        if (n !== 1) return 'ok';
        this.slowAddress = to;
        return 'slow';
    }
  }

  batch(p: number, from: number, to: number) {
    return mskEvent(
      this.parts[p]!.slice(from, to).map((r, j) => ({
        topic: this.topic,
        partition: p,
        offset: from + j,
        value:
          r.value === null
            ? null
            : Buffer.isBuffer(r.value)
              ? r.value
              : typeof r.value === 'string'
                ? r.value
                : JSON.stringify(r.value),
      })),
    );
  }

  /**
   * Delivers the partition's next records as one batch, `copies` times: concurrently (their start order chosen by
   * `startOrder`, e.g. fast-check's scheduler) or one after the other.
   */
  async deliverNext(
    p: number,
    max: number,
    copies: number,
    concurrent: boolean,
    startOrder?: <T>(starts: (() => Promise<T>)[]) => Promise<T[]>,
  ): Promise<void> {
    const from = this.cursor[p]!;
    const to = Math.min(from + max, this.parts[p]!.length);
    if (to <= from) return;
    this.schedule.push(`deliver ${p} ${from}-${to} x${copies}${concurrent ? ' concurrently' : ''}`);
    this.stats.redeliveries += (copies - 1) * (to - from);
    const one = (copy: number) => () =>
      deliverKafkaBatch(this.w, this.batch(p, from, to), this.stats, 25, `${p}:${from}-${to} copy ${copy}`);
    if (concurrent) {
      const starts = Array.from({ length: copies }, (_, copy) => one(copy));
      await (startOrder ? startOrder(starts) : Promise.all(starts.map((s) => s())));
    } else for (let c = 0; c < copies; c++) await one(c)();
    this.cursor[p] = to;
  }

  /** A rebalance: the partition's new owner starts again `back` records before its committed offset. */
  async rebalance(p: number, back: number): Promise<void> {
    const to = this.cursor[p]!;
    const from = Math.max(0, to - back);
    if (to <= from) return;
    this.schedule.push(`rebalance ${p} ${from}-${to}`);
    this.stats.redeliveries += to - from;
    await deliverKafkaBatch(
      this.w,
      this.batch(p, from, to),
      this.stats,
      25,
      `${p}:${from}-${to} rebalance ${this.rebalances++}`,
    );
  }

  pump(dropRate = 0, unfilteredRate = 0): Promise<number> {
    this.schedule.push(`pump drop=${dropRate} unfiltered=${unfilteredRate}`);
    return pumpStream(this.w, this.stream, { dropRate, unfilteredRate });
  }

  /** The 24 h trim: what is on the stream and not yet read is gone; the clock moves a day on. */
  async trim(): Promise<void> {
    this.schedule.push('trim');
    const gone = await this.w.reader.poll();
    this.stream.seen.push(...gone);
    this.stream.trimmed += gone.length;
    clock.advance(25 * 3_600_000);
  }

  /** The provider account of `channel` is paused (every send refused at the account level) until `resume`. */
  pause(channel: Channel): void {
    this.schedule.push(`pause ${channel}`);
    this.w.accountPaused.add(channel);
  }
  resume(): void {
    this.schedule.push('resume');
    this.w.accountPaused.clear();
  }

  /** Delivers what is left, converges, checks every invariant. */
  async finish(): Promise<ChaosReport> {
    this.w.dynamoFaultRate = 0;
    // Accounts recover and quotas come back: what was held or throttled must now go out, none of it FAILED.
    this.resume();
    this.w.endQuotaBurst();
    for (const [p, records] of this.parts.entries()) {
      while (this.cursor[p]! < records.length) await this.deliverNext(p, this.options.batchSize ?? 20, 1, false);
    }
    await convergeRun(this.w, this.stream, this.prefix);
    this.w.ses.whileSlow = undefined;
    this.w.sns.whileSlow = undefined;
    return analyse(this.w, {
      prefix: this.prefix,
      topic: this.topic,
      parts: this.parts,
      specs: this.specs,
      stats: this.stats,
      stream: this.stream,
      logStart: this.logStart,
      ledgerStart: this.ledgerStart,
      faultsBefore: this.faultsBefore,
      providerBefore: this.providerBefore,
      modeByAddress: this.modeByAddress,
      metricsBefore: this.metricsBefore,
      options: this.options,
      schedule: this.schedule,
    });
  }
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
  const rand = seededRandom(options.seed);
  const run = new ChaosRun(w, options, rand);
  const partitions = run.parts.length;
  const batchSize = options.batchSize ?? 20;
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)] as T;
  const chance = (p: number) => rand() < p;

  // ── The scenario: events, resends, conflicts and poison records spread over partitions ──
  const makers = fc.sample(eventArbitrary(options.providerFaultRate ?? 0.15), {
    seed: options.seed,
    numRuns: options.events,
  });
  const poisonOrder = [...POISON_KINDS.keys()];
  const displayOrder = [...DISPLAY_TEXT_CASES.keys()];
  for (const make of makers) {
    // Every display-text case early in the run, then now and then; a few events too old to send.
    const display =
      displayOrder.length > 0 && chance(0.3)
        ? displayOrder.shift()
        : chance(0.02)
          ? Math.floor(rand() * DISPLAY_TEXT_CASES.length)
          : undefined;
    const tooOld = display === undefined && chance(0.03);
    const spec = run.event((i, prefix) => withCase(make(i, prefix, i), display, tooOld));
    const home = spec.i % partitions;
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

  // ── Delivery: partitions interleaved, batches redelivered 2–5×, rebalances, DynamoDB faults and crashes ──
  w.dynamoFaultRate = options.dynamoFaultRate ?? 0.03;
  if (options.armEveryFault) w.armed.push(...DYNAMO_FAULTS, ...CRASH_POINTS);
  let delivered = 0;
  let trimmed = false;
  // One account pause and one quota burst per run, each over a few deliveries, at a point drawn from the seed.
  const totalBatches = Math.ceil(run.parts.flat().length / batchSize);
  const pauseAt = 1 + Math.floor(rand() * Math.max(1, totalBatches - 6));
  const pausedChannel = pick(['EMAIL', 'PUSH', 'SMS'] as const);
  const burstAt = 1 + Math.floor(rand() * Math.max(1, totalBatches - 6));
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
  return run.finish();
}

/** Gives an event a display-text case (its name or its reason, a TransferFailed for a reason) or makes it too old. */
export function withCase(spec: EventSpec, display: number | undefined, tooOld: boolean): EventSpec {
  if (tooOld) return { ...spec, tooOld, value: { ...spec.value, occurredAt: TOO_OLD_OCCURRED_AT } };
  if (display === undefined) return spec;
  const c = DISPLAY_TEXT_CASES[display]!;
  const data = { ...(spec.value.data as Record<string, unknown>), [c.field]: c.value };
  const value = { ...spec.value, data, ...(c.field === 'reason' ? { type: 'TransferFailed' } : {}) };
  return { ...spec, display, value };
}

export function eventArbitrary(providerFaultRate: number) {
  const mode = fc.oneof(
    { weight: Math.round((1 - providerFaultRate) * 100), arbitrary: fc.constant<ProviderMode>('ok') },
    {
      weight: Math.max(1, Math.round(providerFaultRate * 100)),
      arbitrary: fc.constantFrom<ProviderMode>(...PROVIDER_MODES.slice(1)),
    },
  );
  return fc
    .record({
      type: fc.constantFrom('TransferCompleted', 'TransferFailed'),
      locale: fc.constantFrom('en', 'ja'),
      channels: fc.subarray(['EMAIL', 'PUSH', 'SMS'] as Channel[], { minLength: 1 }),
      listChannels: fc.boolean(),
      amount: fc.tuple(fc.integer({ min: 0, max: 9_999_999 }), fc.integer({ min: 0, max: 99 })),
      currency: fc.constantFrom('JPY', 'USD', 'EUR'),
      name: fc.option(fc.constantFrom(...NAMES), { nil: undefined }),
      protoKey: fc.boolean(),
      modes: fc.record({ EMAIL: mode, PUSH: mode, SMS: mode }),
    })
    .map((g) => (i: number, prefix: string, idIndex: number): EventSpec => {
      // Addresses follow the eventId, so every send the providers accept can be tied back to (eventId, channel); the
      // phone number and push endpoint leave the run's prefix out, so two runs of one seed send to the same ones.
      const eventId = `${prefix}e${idIndex}`;
      const contact: Record<string, string> = {};
      if (g.channels.includes('EMAIL')) contact.email = `${prefix}${idIndex}@example.com`;
      if (g.channels.includes('PUSH')) {
        contact.pushEndpointArn = `arn:aws:sns:us-east-1:123456789012:endpoint/APNS/app/${createHash('sha256').update(`e${idIndex}`).digest('hex').slice(0, 32)}`;
      }
      if (g.channels.includes('SMS'))
        contact.phoneNumber = `+1${String(2_000_000_000 + (hashInt(`e${idIndex}`) % 7_000_000_000)).slice(0, 10)}`;
      const value: Record<string, unknown> = {
        eventId,
        type: g.type,
        occurredAt: '2026-11-30T09:15:00Z',
        recipient: { userId: `u-${idIndex}`, locale: g.locale, ...contact },
        data: {
          transferId: `t-${idIndex}`,
          amount: g.currency === 'JPY' ? String(g.amount[0]) : `${g.amount[0]}.${String(g.amount[1]).padStart(2, '0')}`,
          currency: g.currency,
          ...(g.name === undefined ? {} : { counterpartyName: g.name }),
          ...(g.type === 'TransferFailed' ? { reason: 'insufficient funds' } : {}),
        },
        ...(g.listChannels ? { channels: g.channels } : {}),
      };
      if (g.protoKey) Object.defineProperty(value, '__proto__', { value: { polluted: true }, enumerable: true });
      return { i, eventId, value, modes: g.modes };
    });
}

const hashInt = (s: string) => createHash('sha256').update(s).digest().readUInt32BE(0);

/** mulberry32: a small seeded PRNG for the delivery schedule, so a seed replays the whole run. */
function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

const hashOf = (value: unknown): string | undefined => {
  const d = parseEventJson(JSON.stringify(value));
  return d.ok ? d.payloadHash : undefined;
};

/** The only FAILED reasons a notification may end with: its own (a provider's per-message refusal, its template) or
 * an at-least-once resend budget spent after unknown outcomes. Never a quota, an account state, or age. */
const MESSAGE_OWN_FAILURE =
  /^(MessageRejected|InvalidParameter|InvalidParameterValue|ParameterValueInvalid|EndpointDisabled|NotFound|OptedOut|RENDER_ERROR|RETRIES_EXHAUSTED)\b/;

interface AnalysisInput {
  prefix: string;
  topic: string;
  parts: RecordSpec[][];
  specs: EventSpec[];
  stats: DeliveryStats;
  stream: ReturnType<typeof newStreamState>;
  logStart: number;
  ledgerStart: { ses: number; sns: number };
  faultsBefore: Record<string, number>;
  providerBefore: { quotaThrottled: number; accountRefusals: number };
  modeByAddress: Map<string, ProviderMode>;
  metricsBefore: Record<string, number>;
  options: ChaosOptions;
  schedule: string[];
}

async function analyse(w: World, a: AnalysisInput): Promise<ChaosReport> {
  const problems: string[] = [];
  const items = await runItems(w, a.prefix);
  const inbox = new Map(items.filter((i) => i.sk === 'INBOX').map((i) => [String(i.eventId), i]));
  const notifications = new Map(
    items.filter((i) => i.kind === 'NOTIFICATION').map((i) => [String(i.notificationId), i]),
  );
  const quarantine = new Map(items.filter((i) => i.kind === 'QUARANTINE').map((i) => [String(i.pk), i]));

  // Every distinct payload per eventId: exactly one wins (the inbox hash); every record of another payload is a conflict.
  let quarantineMismatches = 0;
  let conflicts = 0;
  let lost = 0;
  const expected = new Map<string, Channel[]>();
  for (const [p, records] of a.parts.entries()) {
    for (const [offset, r] of records.entries()) {
      const pk = `QUARANTINE#${a.topic}#${p}#${offset}`;
      if (r.kind === 'poison') {
        const reason = quarantine.get(pk)?.reason;
        if (reason !== POISON_KINDS[r.poison]!.reason) {
          quarantineMismatches++;
          problems.push(`poison "${POISON_KINDS[r.poison]!.kind}" at ${p}/${offset}: quarantined as ${String(reason)}`);
        }
        continue;
      }
      const stored = inbox.get(r.spec.eventId);
      if (!stored) {
        lost++;
        problems.push(`event ${r.spec.eventId} has no inbox item`);
        continue;
      }
      const mine = hashOf(r.value);
      if (stored.payloadHash === mine) {
        const d = parseEventJson(JSON.stringify(r.value));
        if (d.ok) {
          const routed = route(d.event);
          expected.set(r.spec.eventId, routed.ok && !r.spec.tooOld ? routed.channels : []);
        }
      } else {
        conflicts++;
        if (quarantine.get(pk)?.reason !== 'EVENT_ID_CONFLICT') {
          quarantineMismatches++;
          problems.push(`conflicting record ${r.spec.eventId} at ${p}/${offset} not quarantined as EVENT_ID_CONFLICT`);
        }
      }
    }
  }

  // The witness: sends the providers accepted, tied back to (eventId, channel) by the run's unique addresses.
  const addressOwner = new Map<string, string>();
  const addressOf = new Map<string, string>();
  for (const spec of a.specs) {
    const rcp = spec.value.recipient as Record<string, string>;
    for (const address of [rcp.email, rcp.pushEndpointArn, rcp.phoneNumber])
      if (address) addressOwner.set(address, spec.eventId);
    if (rcp.email) addressOf.set(`${spec.eventId}#EMAIL`, rcp.email);
    if (rcp.pushEndpointArn) addressOf.set(`${spec.eventId}#PUSH`, rcp.pushEndpointArn);
    if (rcp.phoneNumber) addressOf.set(`${spec.eventId}#SMS`, rcp.phoneNumber);
  }
  const sends = [...w.ses.sends.slice(a.ledgerStart.ses), ...w.sns.sends.slice(a.ledgerStart.sns)];
  const attempts = attributeSends(sends, w.witness);
  const sendCount = new Map<string, number>();
  const sendAttempts = new Map<string, (number | undefined)[]>();
  for (const [k, s] of sends.entries()) {
    const owner = addressOwner.get(s.to);
    if (owner === undefined) continue;
    const id = `${owner}#${s.channel}`;
    sendCount.set(id, (sendCount.get(id) ?? 0) + 1);
    sendAttempts.set(id, [...(sendAttempts.get(id) ?? []), attempts[k]]);
  }

  // Which attempts ended with an unknown outcome (the only legitimate cause of a later attempt's second send):
  // SENDING of that attempt → PENDING or UNKNOWN, released for an unknown outcome or its lease expired.
  const unknownAttempts = new Set<string>();
  for (const r of a.stream.seen) {
    const before = r.dynamodb?.OldImage;
    const after = r.dynamodb?.NewImage;
    if (r.eventName !== 'MODIFY' || !before || !after) continue;
    const o = unmarshall(before as Record<string, AttributeValue>);
    const n = unmarshall(after as Record<string, AttributeValue>);
    if (
      n.kind === 'NOTIFICATION' &&
      o.status === 'SENDING' &&
      (n.status === 'PENDING' || n.status === 'UNKNOWN') &&
      /^(UNKNOWN_OUTCOME|LEASE_EXPIRED)/.test(String(n.lastError ?? ''))
    )
      unknownAttempts.add(`${n.notificationId}@${o.attempt}`);
  }
  /** Every send but the last made by a distinct, earlier attempt that ended unknown. */
  const resentAfterUnknown = (id: string): boolean => {
    const made = sendAttempts.get(id) ?? [];
    if (made.some((x) => x === undefined)) return false;
    const sorted = [...(made as number[])].sort((x, y) => x - y);
    return sorted.every((x, k) => k === sorted.length - 1 || (x < sorted[k + 1]! && unknownAttempts.has(`${id}@${x}`)));
  };
  const staleWrites = w.witness.staleWrites.filter((line) => line.startsWith(a.prefix));
  problems.push(...staleWrites.slice(0, 10).map((line) => `stale write: ${line}`));

  let expectedSends = 0;
  let sentOnce = 0;
  let unknown = 0;
  let failed = 0;
  let failedByQuotaOrAccount = 0;
  let resentAfterAcceptAtMostOnce = 0;
  const duplicates = { bug: 0, afterUnknownOutcome: 0 };
  for (const [eventId, channels] of expected) {
    for (const channel of channels) {
      expectedSends++;
      const id = `${eventId}#${channel}`;
      const n = notifications.get(id);
      const status = n?.status as NotificationStatus | undefined;
      if (status === undefined || !TERMINAL_STATUSES.includes(status)) {
        lost++;
        problems.push(`${id} ended ${status ?? 'missing'}`);
        continue;
      }
      if (status === 'UNKNOWN') unknown++;
      if (status === 'FAILED') failed++;
      // EXPIRED is legitimate only for a notification really past the maximum age on the suite's clock.
      const expiredInTime = n?.lastError === 'EXPIRED' && clock.now() - Date.parse(String(n?.createdAt)) > MAX_AGE_MS;
      if (status === 'FAILED' && !MESSAGE_OWN_FAILURE.test(String(n?.lastError ?? '')) && !expiredInTime) {
        failedByQuotaOrAccount++;
        problems.push(`${id} ended FAILED for a reason not its own: ${String(n?.lastError)}`);
      }
      const count = sendCount.get(id) ?? 0;
      const mode = a.modeByAddress.get(addressOf.get(id) ?? '');
      if (
        count > 1 &&
        POLICIES[channel] === 'AT_MOST_ONCE' &&
        (mode === 'acceptThen500' || mode === 'acceptThenReset')
      ) {
        resentAfterAcceptAtMostOnce++;
        problems.push(`${id} was sent again after a ${mode} on an at-most-once channel`);
      }
      if (count === 1) sentOnce++;
      if (count > 1) {
        if (POLICIES[channel] === 'AT_LEAST_ONCE' && resentAfterUnknown(id)) duplicates.afterUnknownOutcome++;
        else {
          duplicates.bug++;
          problems.push(`${id} was sent ${count} times, by attempts ${JSON.stringify(sendAttempts.get(id))}`);
        }
      }
      if (status === 'SENT' && count === 0) {
        lost++;
        problems.push(`${id} is SENT but no provider accepted it`);
      }
    }
  }
  let inboxWithoutNotifications = 0;
  for (const [eventId, item] of inbox) {
    for (const c of item.channels as Channel[]) {
      if (!notifications.has(`${eventId}#${c}`)) inboxWithoutNotifications++;
    }
  }
  for (const n of notifications.values()) if (!inbox.has(String(n.eventId))) inboxWithoutNotifications++;

  // The lowest offset is the original: the inbox's record is the first of its eventId on its partition.
  let laterOffsetWon = 0;
  for (const [eventId, item] of inbox) {
    const { partition, offset } = item.source as { partition: number; offset: number };
    const first = a.parts[partition]?.findIndex((r) => r.kind === 'event' && r.spec.eventId === eventId);
    if (first !== offset) {
      laterOffsetWon++;
      problems.push(`${eventId}: written from offset ${partition}/${offset}, its first record is at ${first}`);
    }
  }

  // Display text: accepted, stored and sent cleaned. Too-old events: recorded as TOO_OLD, nothing sent.
  const displayText = { cases: 0, mismatches: 0 };
  const tooOld = { events: 0, mismatches: 0 };
  for (const spec of a.specs) {
    const stored = inbox.get(spec.eventId);
    if (stored === undefined || stored.payloadHash !== hashOf(spec.value)) continue; // not this payload's event
    if (spec.display !== undefined) {
      displayText.cases++;
      const c = DISPLAY_TEXT_CASES[spec.display]!;
      const max = c.field === 'reason' ? REASON_MAX_GRAPHEMES : NAME_MAX_GRAPHEMES;
      const want = cleanDisplayText(c.value, max).text || undefined;
      for (const channel of expected.get(spec.eventId) ?? []) {
        const got = (notifications.get(`${spec.eventId}#${channel}`)?.data as Record<string, unknown> | undefined)?.[
          c.field
        ];
        if (got !== want) {
          displayText.mismatches++;
          problems.push(`display text "${c.kind}" of ${spec.eventId}#${channel}: stored ${JSON.stringify(got)}`);
        }
      }
    }
    if (spec.tooOld) {
      tooOld.events++;
      const sent = [...sendCount.keys()].filter((k) => k.startsWith(`${spec.eventId}#`)).length;
      if (stored.skipped !== 'TOO_OLD' || sent > 0) {
        tooOld.mismatches++;
        problems.push(`too-old event ${spec.eventId}: skipped=${String(stored.skipped)}, ${sent} channels sent`);
      }
    }
  }

  const illegal = transitionViolations(a.stream.seen, a.prefix);
  problems.push(...illegal.slice(0, 10));

  // No email address or phone number in any log line; no CR/LF in a header; no unescaped markup.
  const logs = w.logLines.slice(a.logStart);
  const pii = /[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+\.[A-Za-z.]{2,}|\+\d{8,15}/;
  const leaks = logs.filter((l) => pii.test(l));
  problems.push(...leaks.slice(0, 3).map((l) => `PII in a log line: ${l.slice(0, 160)}`));
  const headerInjections = sends.filter((s) => /[\r\n]/.test(s.subject ?? '')).length;
  const unescapedMarkup = sends.filter((s) => (s.html ?? '').includes('<script')).length;
  // An email's text alternative has the template's line breaks; every other text is one line.
  const unsafe = sends.filter(
    (s) =>
      ![s.subject ?? '', s.html ?? ''].every(isCleanDisplayText) ||
      !(s.channel === 'EMAIL' ? isCleanMultilineText(s.text) : isCleanDisplayText(s.text)),
  );
  problems.push(...unsafe.slice(0, 3).map((s) => `unsafe characters sent to ${s.channel}: ${JSON.stringify(s.text)}`));

  // The ingest function's own figures over this run: delivered = accepted + duplicates + conflicts + quarantined +
  // requarantined + failed, and delivered is what the Kafka simulator handed it.
  const figures = Object.fromEntries(
    Object.entries(FIGURE_METRICS).map(([k, metric]) => [
      k,
      (w.output.metrics[metric] ?? 0) - (a.metricsBefore[metric] ?? 0),
    ]),
  ) as unknown as IngestFigures;
  const reconciled = reconciles(figures) && figures.received === a.stats.deliveries;
  if (!reconciled)
    problems.push(`figures do not reconcile: ${JSON.stringify(figures)}, deliveries ${a.stats.deliveries}`);

  const faults: Record<string, number> = {};
  for (const [k, v] of Object.entries(faultCounts))
    if (v - (a.faultsBefore[k] ?? 0) > 0) faults[k] = v - (a.faultsBefore[k] ?? 0);
  const poisonRecords = a.parts.flat().filter((r) => r.kind === 'poison').length;
  if (poisonRecords) faults.poisonRecords = poisonRecords;
  if (a.stream.dropped) faults.streamRecordsDropped = a.stream.dropped;
  if (a.stream.trimmed) faults.streamRecordsTrimmed = a.stream.trimmed;
  if (a.stream.onFailure.length) faults.streamRecordsGivenUp = a.stream.onFailure.length;
  if (a.stream.unfilteredDeliveries) faults.unfilteredStreamBatches = a.stream.unfilteredDeliveries;
  if (a.stream.bisections) faults.streamBatchBisections = a.stream.bisections;
  if (a.stats.failedInvocations) faults.failedIngestInvocations = a.stats.failedInvocations;
  const quotaThrottled = w.quotaThrottled() - a.providerBefore.quotaThrottled;
  if (quotaThrottled) faults.quotaThrottled = quotaThrottled;
  const accountRefusals = w.accountRefusals - a.providerBefore.accountRefusals;
  if (accountRefusals) faults.accountPausedRefusals = accountRefusals;
  for (const m of PROVIDER_MODES.slice(1)) {
    const n = a.specs.reduce(
      (acc, s) => acc + (expected.get(s.eventId) ?? []).filter((c) => s.modes[c] === m).length,
      0,
    );
    if (n) faults[`provider:${m}`] = n;
  }

  return {
    seed: a.options.seed,
    events: a.specs.length,
    scheduleDigest: createHash('sha256')
      .update(
        JSON.stringify({
          records: a.parts.map((records) => records.map((r) => (r.kind === 'event' ? r.value : String(r.value)))),
          schedule: a.schedule,
        })
          .split(a.prefix)
          .join(''),
      )
      .digest('hex'),
    records: a.parts.flat().length,
    deliveries: a.stats.deliveries,
    redeliveries: a.stats.redeliveries,
    faults,
    expectedSends,
    sentOnce,
    duplicates,
    staleWrites: staleWrites.length,
    lost,
    unknown,
    failed,
    quarantined: [...quarantine.values()].length,
    quarantineMismatches,
    conflicts,
    piiLeaks: leaks.length,
    illegalTransitions: illegal.length,
    inboxWithoutNotifications,
    headerInjections,
    unescapedMarkup,
    unsafeText: unsafe.length,
    displayText,
    tooOld,
    laterOffsetWon,
    prototypePolluted: ({} as Record<string, unknown>).polluted !== undefined,
    failedByQuotaOrAccount,
    resentAfterAcceptAtMostOnce,
    figures,
    reconciled,
    problems,
  };
}

/**
 * One chaos run: a seeded scenario (fast-check), executed against the real pipeline in the chaos world, then every
 * invariant checked. The expected outcome of each fault is written next to it (PROVIDER_MODES, POISON_KINDS,
 * CRASH_POINTS in faults.ts).
 */
import { createHash } from 'node:crypto';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import fc from 'fast-check';
import { route } from '../functions/domain/channels.ts';
import { type Channel, parseEventJson } from '../functions/domain/event.ts';
import { type NotificationStatus, TERMINAL_STATUSES } from '../functions/domain/notification.ts';
import { mskEvent } from '../local/msk.ts';
import type { Fault } from '../local/providers.ts';
import { clock, faultCounts } from './faults.ts';
import { POISON_KINDS } from './poison.ts';
import {
  convergeRun,
  type DeliveryStats,
  deliverKafkaBatch,
  LEASE_MS,
  ledger,
  newStreamState,
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
 * - throttleOnce: back to PENDING, then SENT: one send.
 * - throttleAlways: FAILED (RETRIES_EXHAUSTED), no send.
 * - acceptThenHang: accepted, no answer: UNKNOWN with one send (at most once); resent, SENT with two sends, counted as
 *   a duplicate after an unknown outcome (at least once).
 * - slow: accepted after the lease expired and the sweeper took over: as acceptThenHang, and the late SENT is fenced.
 */
export const PROVIDER_MODES = ['ok', 'reject', 'throttleOnce', 'throttleAlways', 'acceptThenHang', 'slow'] as const;
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
}

export interface ChaosReport {
  seed: number;
  events: number;
  records: number;
  deliveries: number;
  redeliveries: number;
  faults: Record<string, number>;
  expectedSends: number;
  sentOnce: number;
  duplicates: { bug: number; afterUnknownOutcome: number };
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
  prototypePolluted: boolean;
  problems: string[];
}

interface EventSpec {
  i: number;
  eventId: string;
  value: Record<string, unknown>;
  modes: Record<Channel, ProviderMode>;
}
type RecordSpec =
  | { kind: 'event'; spec: EventSpec; value: Record<string, unknown> }
  | { kind: 'poison'; poison: number; value: string | Buffer | null };

let runCounter = 0;

const NAMES = ['Taro Yamada', '山田 太郎', 'Jordan Lee', '<script>alert(1)</script>', 'O\'Brien & "Sons"', 'Ünïcödé ✓'];

export async function runChaos(options: ChaosOptions): Promise<ChaosReport> {
  const w = await openWorld();
  const prefix = `r${process.pid % 1000}x${runCounter++}-`;
  const topic = `${prefix}topic`;
  const partitions = options.partitions ?? 3;
  const batchSize = options.batchSize ?? 20;
  const rand = seededRandom(options.seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)] as T;
  const chance = (p: number) => rand() < p;
  const logStart = w.logLines.length;
  const ledgerStart = { ses: w.ses.sends.length, sns: w.sns.sends.length };
  const faultsBefore = { ...faultCounts };

  // ── The scenario: events, resends, conflicts and poison records spread over partitions ──
  const specs: EventSpec[] = fc
    .sample(eventArbitrary(prefix, options.providerFaultRate ?? 0.15), { seed: options.seed, numRuns: options.events })
    .map((make, i) => make(i));
  const parts: RecordSpec[][] = Array.from({ length: partitions }, () => []);
  const home = (spec: EventSpec) => spec.i % partitions;
  const poisonOrder = [...POISON_KINDS.keys()];
  for (const spec of specs) {
    parts[home(spec)]!.push({ kind: 'event', spec, value: spec.value });
    if (chance(0.08)) {
      const earlier = pick(specs.slice(0, spec.i + 1));
      // A producer resend: same event, any partition, a new offset.
      parts[Math.floor(rand() * partitions)]!.push({ kind: 'event', spec: earlier, value: earlier.value });
    }
    if (chance(0.04)) {
      const earlier = pick(specs.slice(0, spec.i + 1));
      const changed = { ...earlier.value, data: { ...(earlier.value.data as object), amount: `${spec.i + 1}.99` } };
      parts[home(earlier)]!.push({ kind: 'event', spec: earlier, value: changed });
    }
    if (poisonOrder.length > 0 ? chance(0.25) : chance(0.04)) {
      const kind = poisonOrder.length > 0 ? (poisonOrder.shift() as number) : Math.floor(rand() * POISON_KINDS.length);
      parts[Math.floor(rand() * partitions)]!.push({
        kind: 'poison',
        poison: kind,
        value: POISON_KINDS[kind]!.make(`${prefix}p${spec.i}`),
      });
    }
  }

  // ── Provider behaviour: each address has its mode; attempts are counted per address ──
  const modeByAddress = new Map<string, ProviderMode>();
  for (const spec of specs) {
    const r = spec.value.recipient as Record<string, string>;
    modeByAddress.set(r.email ?? '', spec.modes.EMAIL);
    modeByAddress.set(r.pushEndpointArn ?? '', spec.modes.PUSH);
    modeByAddress.set(r.phoneNumber ?? '', spec.modes.SMS);
  }
  const attempts = new Map<string, number>();
  w.providerFault = (_channel, to): Fault => {
    const n = (attempts.get(to) ?? 0) + 1;
    attempts.set(to, n);
    switch (modeByAddress.get(to) ?? 'ok') {
      case 'ok':
        return 'ok';
      case 'reject':
        return 'reject';
      case 'throttleOnce':
        return n === 1 ? 'throttle' : 'ok';
      case 'throttleAlways':
        return 'throttle';
      case 'acceptThenHang':
        return n === 1 ? 'acceptThenHang' : 'ok';
      case 'slow':
        return n === 1 ? 'slow' : 'ok';
    }
  };
  const slowTakeover = async () => {
    clock.advance(LEASE_MS + 1_000);
    await runSweeper(w);
  };
  w.ses.whileSlow = slowTakeover;
  w.sns.whileSlow = slowTakeover;

  // ── Delivery: partitions interleaved, batches redelivered 2–5×, rebalances, DynamoDB faults and crashes ──
  w.random = rand;
  w.dynamoFaultRate = options.dynamoFaultRate ?? 0.03;
  const stats: DeliveryStats = { deliveries: 0, redeliveries: 0, failedInvocations: 0 };
  const stream = newStreamState();
  const cursor = Array(partitions).fill(0) as number[];
  const batchOf = (p: number, from: number, to: number) =>
    mskEvent(
      parts[p]!.slice(from, to).map((r, j) => ({
        topic,
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
  let delivered = 0;
  let trimmedOnce = false;
  for (;;) {
    const open = cursor.map((c, p) => (c < parts[p]!.length ? p : -1)).filter((p) => p >= 0);
    if (open.length === 0) break;
    const p = pick(open);
    const from = cursor[p]!;
    const to = Math.min(from + batchSize, parts[p]!.length);
    const copies = chance(0.2) ? 2 + Math.floor(rand() * 4) : 1; // redelivery 2–5×
    stats.redeliveries += (copies - 1) * (to - from);
    if (chance(0.5))
      await Promise.all(Array.from({ length: copies }, () => deliverKafkaBatch(w, batchOf(p, from, to), stats)));
    else for (let c = 0; c < copies; c++) await deliverKafkaBatch(w, batchOf(p, from, to), stats);
    if (from > 0 && chance(0.1)) {
      // A rebalance: the new owner of the partition starts again a few records back.
      const back = Math.max(0, from - 1 - Math.floor(rand() * batchSize));
      stats.redeliveries += from - back;
      await deliverKafkaBatch(w, batchOf(p, back, from), stats);
    }
    cursor[p] = to;
    if (++delivered % 3 === 0) await pumpStream(w, stream, { dropRate: options.dropRate ?? 0.02, unfilteredRate: 0.2 });
    if (!trimmedOnce && delivered > 4 && chance(0.3)) {
      // The 24 h trim: records nobody read in time are gone; only the sweeper can find their notifications.
      trimmedOnce = true;
      const lost = await w.reader.poll();
      stream.seen.push(...lost);
      stream.trimmed += lost.length;
      clock.advance(25 * 3_600_000);
    }
  }
  w.dynamoFaultRate = 0;
  await convergeRun(w, stream, prefix);
  w.ses.whileSlow = undefined;
  w.sns.whileSlow = undefined;

  return analyse(w, { prefix, topic, parts, specs, stats, stream, logStart, ledgerStart, faultsBefore, options });
}

function eventArbitrary(prefix: string, providerFaultRate: number) {
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
    .map((g) => (i: number): EventSpec => {
      const eventId = `${prefix}e${i}`;
      const contact: Record<string, string> = {};
      if (g.channels.includes('EMAIL')) contact.email = `${prefix}${i}@example.com`;
      if (g.channels.includes('PUSH')) {
        contact.pushEndpointArn = `arn:aws:sns:us-east-1:123456789012:endpoint/APNS/app/${createHash('sha256').update(eventId).digest('hex').slice(0, 32)}`;
      }
      if (g.channels.includes('SMS'))
        contact.phoneNumber = `+1${String(2_000_000_000 + (hashInt(eventId) % 7_000_000_000)).slice(0, 10)}`;
      const value: Record<string, unknown> = {
        eventId,
        type: g.type,
        occurredAt: '2026-11-30T09:15:00Z',
        recipient: { userId: `u-${i}`, locale: g.locale, ...contact },
        data: {
          transferId: `t-${i}`,
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
  options: ChaosOptions;
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
          expected.set(r.spec.eventId, routed.ok ? routed.channels : []);
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
  for (const spec of a.specs) {
    const rcp = spec.value.recipient as Record<string, string>;
    for (const address of [rcp.email, rcp.pushEndpointArn, rcp.phoneNumber])
      if (address) addressOwner.set(address, spec.eventId);
  }
  const sends = [...w.ses.sends.slice(a.ledgerStart.ses), ...w.sns.sends.slice(a.ledgerStart.sns)];
  const sendCount = new Map<string, number>();
  for (const s of sends) {
    const owner = addressOwner.get(s.to);
    if (owner === undefined) continue;
    const id = `${owner}#${s.channel}`;
    sendCount.set(id, (sendCount.get(id) ?? 0) + 1);
  }

  // Which notifications went through an unknown outcome (the only legitimate cause of a second send).
  const unknownHistory = new Set<string>();
  for (const r of a.stream.seen) {
    const image = r.dynamodb?.NewImage;
    if (!image) continue;
    const n = unmarshall(image as Record<string, AttributeValue>);
    if (n.kind === 'NOTIFICATION' && /^(UNKNOWN_OUTCOME|LEASE_EXPIRED)/.test(String(n.lastError ?? '')))
      unknownHistory.add(String(n.notificationId));
  }

  let expectedSends = 0;
  let sentOnce = 0;
  let unknown = 0;
  let failed = 0;
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
      const count = sendCount.get(id) ?? 0;
      if (count === 1) sentOnce++;
      if (count > 1) {
        if (POLICIES[channel] === 'AT_LEAST_ONCE' && unknownHistory.has(id)) duplicates.afterUnknownOutcome++;
        else {
          duplicates.bug++;
          problems.push(`${id} was sent ${count} times`);
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

  const illegal = transitionViolations(a.stream.seen, a.prefix);
  problems.push(...illegal.slice(0, 10));

  // No email address or phone number in any log line; no CR/LF in a header; no unescaped markup.
  const logs = w.logLines.slice(a.logStart);
  const pii = /[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+\.[A-Za-z.]{2,}|\+\d{8,15}/;
  const leaks = logs.filter((l) => pii.test(l));
  problems.push(...leaks.slice(0, 3).map((l) => `PII in a log line: ${l.slice(0, 160)}`));
  const headerInjections = sends.filter((s) => /[\r\n]/.test(s.subject ?? '')).length;
  const unescapedMarkup = sends.filter((s) => (s.html ?? '').includes('<script')).length;

  const faults: Record<string, number> = {};
  for (const [k, v] of Object.entries(faultCounts))
    if (v - (a.faultsBefore[k] ?? 0) > 0) faults[k] = v - (a.faultsBefore[k] ?? 0);
  const poisonRecords = a.parts.flat().filter((r) => r.kind === 'poison').length;
  if (poisonRecords) faults.poisonRecords = poisonRecords;
  if (a.stream.dropped) faults.streamRecordsDropped = a.stream.dropped;
  if (a.stream.trimmed) faults.streamRecordsTrimmed = a.stream.trimmed;
  if (a.stream.onFailure.length) faults.streamRecordsGivenUp = a.stream.onFailure.length;
  if (a.stream.unfilteredDeliveries) faults.unfilteredStreamBatches = a.stream.unfilteredDeliveries;
  if (a.stats.failedInvocations) faults.failedIngestInvocations = a.stats.failedInvocations;
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
    records: a.parts.flat().length,
    deliveries: a.stats.deliveries,
    redeliveries: a.stats.redeliveries,
    faults,
    expectedSends,
    sentOnce,
    duplicates,
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
    prototypePolluted: ({} as Record<string, unknown>).polluted !== undefined,
    problems,
  };
}

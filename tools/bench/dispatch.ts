/**
 * Dispatch sends per second against providers answering after 50 ms and a table answering each call after 10 ms (the
 * deployed sender on real SDK clients, only their HTTP answered here), as one Lambda execution environment runs it:
 * one invocation at a time, its sends at the stack's per-invocation concurrency (DISPATCH_TIMING.concurrency), on
 * this process's one event loop. The dispatch use case (functions/dispatch/dispatch-notification.ts) on an in-memory
 * store, with no quota to pace against and no breaker to hold it — what the use case itself costs.
 *
 * With and without evidence, in alternating rounds, the evidence path as deployed (functions/dispatch/index.ts): the
 * invocation's InvocationEvidence, its intent written beside the first claims (each provider call waits for it), each
 * send's record built inside its slot, and the close after the sends — every DynamoDB call of it after 10 ms, an S3 PUT
 * after 30 ms. At three densities: a high rate's full batches (5 invocations of 100: one batch object each), a low
 * rate's few records (20 invocations of 5, under EVIDENCE_SPOOL_BELOW's 25: each record put in the spool before its
 * SENT write, its slot free once the put lands and its SENT write after, as the handler's slots do: send-slots.ts),
 * and a low rate's busier invocations (5 of 20: more records than slots, spooled too).
 *
 * Three rates: the slot rate, sends over the time the invocations' slots were busy (a spooled send's slot ends at its
 * put); the outcome rate, sends over the time until every outcome was on its item (SENT); the invocation rate, with the
 * evidence close too. The done-when asks sends per slot with evidence to be at least 0.9 of the rate without; at an
 * invocation of fewer records than slots no record waits for a slot, and there the outcome rate is the one a send's
 * latency follows (docs/measurements.md says both).
 */
import { randomUUID } from 'node:crypto';
import { SESClient } from '@aws-sdk/client-ses';
import { SNSClient } from '@aws-sdk/client-sns';
import { DISPATCH_TIMING } from '../../functions/contracts/dispatch-timing.ts';
import { type DispatchDeps, startDispatch } from '../../functions/dispatch/dispatch-notification.ts';
import { providerRequest } from '../../functions/dispatch/provider-request.ts';
import { InvocationEvidence } from '../../functions/dispatch/record-evidence.ts';
import { sendSlots } from '../../functions/dispatch/send-slots.ts';
import { ProviderSender } from '../../functions/dispatch/senders.ts';
import { decodeRecordValue, isTransfer } from '../../functions/domain/event/decode.ts';
import { uniformRetention } from '../../functions/domain/evidence.ts';
import { SPOOL_BELOW_RECORDS } from '../../functions/domain/evidence-spool.ts';
import { buildNotification, type NotificationItem } from '../../functions/domain/notification.ts';
import { DEFAULT_SWEEP_PLACEMENT } from '../../functions/domain/sweep-index.ts';
import type { EvidenceGaps } from '../../functions/stores/evidence-gaps.ts';
import type { EvidenceIndex } from '../../functions/stores/evidence-index.ts';
import type { EvidenceIntents } from '../../functions/stores/evidence-intents.ts';
import type { EvidenceSpool } from '../../functions/stores/evidence-spool.ts';
import type { EvidenceStore } from '../../functions/stores/evidence-store.ts';
import type { NotificationStore } from '../../functions/stores/notification-store.ts';
import { EXAMPLE_BRAND } from '../local/example-brand.ts';
import { MemoryNotificationStore } from './memory-store.ts';
import { eventValue } from './workload.ts';

/** No quota: every token at once. */
const UNPACED: DispatchDeps['pacer'] = { acquire: async () => ({ window: 0, rank: 0 }) };
/** No breaker: no channel is ever held. */
const NEVER_HELD: DispatchDeps['breaker'] = {
  heldUntil: async () => undefined,
  hold: async (_scope, _code, now) => now,
};

/**
 * The densities: a high rate's full batches (batch objects), a low rate's few records (the spool), and a low rate's
 * busier invocations — more records than slots, still spooled — where a slot freed at the spool put lets the next
 * record start sooner.
 */
const DENSITIES = {
  high: { invocations: 5, batch: 100 },
  low: { invocations: 20, batch: 5 },
  busy: { invocations: 5, batch: 20 },
} as const;
type Density = keyof typeof DENSITIES;
/** The stack's sends in flight per invocation. */
const PER_INVOCATION = DISPATCH_TIMING.concurrency;
const PROVIDER_MS = 50;
const STORE_MS = 10;
const EVIDENCE_PUT_MS = 30;
const ROUNDS = 5;

/** An adapter whose every call answers after `ms` with the given answer (undefined when none): AWS as it is timed. */
function timed<T>(ms: number, answers: Readonly<Record<string, unknown>> = {}): T {
  return new Proxy(
    {},
    {
      get: (_target, property) => async () => {
        await sleep(ms);
        return answers[String(property)];
      },
    },
  ) as T;
}

/** Where an invocation's evidence goes, as deployed: S3 for the objects, the table for the rest. */
function evidenceOutlets() {
  return {
    store: timed<EvidenceStore>(EVIDENCE_PUT_MS, { put: 'written' }),
    gaps: timed<EvidenceGaps>(STORE_MS),
    index: { index: timed<EvidenceIndex>(STORE_MS, { putBatch: 0 }), retentionDays: 2_557 },
    intents: timed<EvidenceIntents>(STORE_MS),
    spool: timed<EvidenceSpool>(STORE_MS),
  };
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * The deployed sender on real SDK clients whose HTTP handler answers SES's SendEmail after PROVIDER_MS, as SES
 * does: each send signs and serialises the whole message and parses the answer, as in Lambda — a sender that never
 * read the message would leave reading its rendered HTML (a string of many pieces) to the evidence alone.
 */
function providerSender(): ProviderSender {
  const requestHandler = {
    handle: async () => {
      await sleep(PROVIDER_MS);
      const body = `<SendEmailResponse><SendEmailResult><MessageId>${randomUUID()}</MessageId></SendEmailResult><ResponseMetadata><RequestId>${randomUUID()}</RequestId></ResponseMetadata></SendEmailResponse>`;
      return { response: { statusCode: 200, headers: { 'content-type': 'text/xml' }, body: Buffer.from(body) } };
    },
  };
  const config = {
    region: 'us-east-1',
    maxAttempts: 1,
    credentials: { accessKeyId: 'bench', secretAccessKey: 'bench' },
    requestHandler,
  };
  return new ProviderSender(new SESClient(config), new SNSClient(config), { senderEmail: 'notices@example.com' });
}

/** The store with every call answered after `ms`, as DynamoDB would be. */
function latent(store: MemoryNotificationStore, ms: number): NotificationStore {
  return new Proxy(store, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      return async (...args: unknown[]) => {
        await sleep(ms);
        return value.apply(target, args);
      };
    },
  }) as unknown as NotificationStore;
}

function seeded(round: string, density: Density) {
  const store = new MemoryNotificationStore();
  const keys: { pk: string; sk: string }[][] = [];
  for (let inv = 0; inv < DENSITIES[density].invocations; inv++) {
    const batch = [];
    for (let i = 0; i < DENSITIES[density].batch; i++) {
      const d = decodeRecordValue(
        Buffer.from(JSON.stringify(eventValue(`d-${density}-${round}-${inv}-${i}`, i))).toString('base64'),
        65_536,
      );
      if (!isTransfer(d)) throw new Error('bench event invalid');
      const item: NotificationItem = buildNotification(d.event, 'EMAIL', 'x@example.com', Date.now(), {
        retentionDays: 35,
      });
      store.put(item);
      batch.push({ pk: item.pk, sk: item.sk });
    }
    keys.push(batch);
  }
  return { store, keys };
}

/** One environment's invocations, one after the other; with evidence, each closes its batch after its sends. */
async function runOnce(round: string, withEvidence: boolean, density: Density) {
  const { store, keys } = seeded(round, density);
  const sender = providerSender();
  const deps: Omit<DispatchDeps, 'evidence'> = {
    store: latent(store, STORE_MS),
    sender,
    pacer: UNPACED,
    breaker: NEVER_HELD,
    now: Date.now,
    sleep: async () => undefined,
    policies: { EMAIL: 'AT_MOST_ONCE', PUSH: 'AT_MOST_ONCE', SMS: 'AT_MOST_ONCE' } as const,
    leaseMs: 120_000,
    sendTimeoutMs: 5_000,
    maxSendAttempts: 5,
    retryBaseMs: 1_000,
    retryMaxMs: 300_000,
    nearRetryMs: 2_000,
    pendingThresholdMs: DEFAULT_SWEEP_PLACEMENT.pendingThresholdMs,
    maxAgeMs: 86_400_000,
    brand: EXAMPLE_BRAND,
  };
  const budget = { finishBy: Date.now() + 600_000, maxWaitMs: 10_000 };
  const outlets = evidenceOutlets();
  let slotsMs = 0;
  let outcomesMs = 0;
  let closeMs = 0;
  let cpuMicros = 0;
  let spooled = 0;
  for (const [inv, batch] of keys.entries()) {
    // As the handler: the batch opened (its intent on its way) before the first record starts.
    const evidenceBatch = withEvidence
      ? new InvocationEvidence(outlets, {
          now: Date.now(),
          id: `bench${round.replace(/[^0-9a-z]/g, '')}${inv}`,
          dueMs: Date.now() + 60_000,
          putTimeoutMs: 2_000,
          spoolBelow: SPOOL_BELOW_RECORDS,
        })
      : undefined;
    void evidenceBatch?.open(batch.map((k) => store.items.get(`${k.pk}|${k.sk}`)?.notificationId ?? k.pk));
    const evidence =
      evidenceBatch === undefined
        ? undefined
        : {
            retention: uniformRetention(2_557),
            requestOf: (n: Parameters<typeof providerRequest>[0], m: Parameters<typeof providerRequest>[1]) =>
              providerRequest(n, m, { senderEmail: 'notices@example.com' }),
            batch: evidenceBatch,
          };
    // The handler's slots (send-slots.ts): a spooled send's slot is free at its spool put, its SENT write after.
    const slots = sendSlots(PER_INVOCATION);
    const cpu = process.cpuUsage();
    const t = performance.now();
    const started = await Promise.all(
      batch.map((k) =>
        slots(() =>
          startDispatch({ key: k, retryAt: undefined }, evidence === undefined ? deps : { ...deps, evidence }, budget),
        ),
      ),
    );
    slotsMs += performance.now() - t;
    const used = process.cpuUsage(cpu);
    cpuMicros += used.user + used.system;
    // Until every outcome is on its item (SENT): a spooled send's SENT write, pending when its slot was freed.
    await Promise.all(started.map((r) => (r.kind === 'recording' ? r.settled : r)));
    outcomesMs += performance.now() - t;
    // After the sends, as the handler does: the batch written (or the spool's puts awaited), indexed, intent closed.
    if (evidenceBatch !== undefined) {
      const c = performance.now();
      const closed = await evidenceBatch.close(10_000, 2_000, Date.now());
      if (closed.outcome !== 'written') throw new Error(`bench evidence batch ${closed.outcome}`);
      spooled += closed.spool?.spooled ?? 0;
      closeMs += performance.now() - c;
    }
  }
  const sent = [...store.items.values()].filter((n) => n.status === 'SENT').length;
  return {
    sent,
    spooled,
    slotSendsPerSec: sent / (slotsMs / 1000),
    outcomeSendsPerSec: sent / (outcomesMs / 1000),
    invocationSendsPerSec: sent / ((outcomesMs + closeMs) / 1000),
    cpuMicrosPerSend: cpuMicros / Math.max(1, sent),
  };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

/** `rounds` of each side at one density. */
async function measureAt(density: Density, rounds: number) {
  const runs = {
    without: [] as Awaited<ReturnType<typeof runOnce>>[],
    with: [] as Awaited<ReturnType<typeof runOnce>>[],
  };
  for (let r = 0; r < rounds; r++) {
    // Which side runs first alternates too: a load rising or falling through a round favours neither.
    for (const withEvidence of r % 2 === 0 ? [false, true] : [true, false]) {
      const run = await runOnce(`${r}${withEvidence ? 'b' : 'a'}`, withEvidence, density);
      (withEvidence ? runs.with : runs.without).push(run);
    }
  }
  const slot = (k: 'with' | 'without') => Math.round(median(runs[k].map((x) => x.slotSendsPerSec)));
  const outcome = (k: 'with' | 'without') => Math.round(median(runs[k].map((x) => x.outcomeSendsPerSec)));
  /** With evidence over without, the median of each round's ratio (its two runs one after the other). */
  const ratio = (of: (x: (typeof runs.with)[number]) => number) =>
    Math.round(median(runs.with.map((w, i) => of(w) / Math.max(1e-9, of(runs.without[i] ?? w)))) * 100) / 100;
  const whole = (k: 'with' | 'without') => Math.round(median(runs[k].map((x) => x.invocationSendsPerSec)));
  return {
    batchSize: DENSITIES[density].batch,
    invocations: DENSITIES[density].invocations,
    sends: median(runs.with.map((x) => x.sent)),
    /** Records the spool took (the low rate's path); 0: each invocation wrote a batch object. */
    spooled: median(runs.with.map((x) => x.spooled)),
    /** As deployed (evidence kept): sends per second of the invocations, the close included. */
    sendsPerSec: whole('with'),
    slotSendsPerSec: { withEvidence: slot('with'), withoutEvidence: slot('without') },
    /**
     * Sends per slot with evidence over without (the done-when: at least 0.9): the median of each round's ratio, its
     * two runs one after the other, so a load that changes between rounds (a shared machine) moves both sides alike.
     */
    slotRatioWithEvidence: ratio((x) => x.slotSendsPerSec),
    /**
     * Sends over the time until every outcome was on its item (SENT), with evidence and without: a spooled send's
     * SENT lands one round trip after its spool put, outside its slot.
     */
    outcomeSendsPerSec: { withEvidence: outcome('with'), withoutEvidence: outcome('without') },
    outcomeRatioWithEvidence: ratio((x) => x.outcomeSendsPerSec),
    /** The process's CPU per send while the slots ran (the close after them not included). */
    cpuMicrosPerSend: {
      withEvidence: Math.round(median(runs.with.map((x) => x.cpuMicrosPerSend))),
      withoutEvidence: Math.round(median(runs.without.map((x) => x.cpuMicrosPerSend))),
    },
  };
}

/** `rounds` of each side (a quick run: 1), at a high rate's density and then at a low rate's (the spool). */
export async function measureDispatch(rounds: number = ROUNDS) {
  const high = await measureAt('high', rounds);
  const low = await measureAt('low', rounds);
  const busy = await measureAt('busy', rounds);
  return {
    providerLatencyMs: PROVIDER_MS,
    storeLatencyMs: STORE_MS,
    evidencePutMs: EVIDENCE_PUT_MS,
    concurrencyPerInvocation: PER_INVOCATION,
    rounds,
    ...high,
    /** A low rate's invocations of few records: their evidence goes to the spool (EVIDENCE_SPOOL_BELOW). */
    lowRate: low,
    /** A low rate's busier invocations, more records than slots: their evidence spooled too. */
    busyLowRate: busy,
  };
}

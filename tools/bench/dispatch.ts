/**
 * Dispatch sends per second at batch 100 against providers answering after 50 ms and a table answering each call after
 * 10 ms, at the stack's concurrency (5 invocations × 10 sends each): the dispatch use case
 * (functions/dispatch/dispatch-notification.ts) on an in-memory store, with no quota to pace against and no breaker to
 * hold it — what the use case itself costs.
 *
 * With and without evidence, in alternating rounds: with it, each send builds its record (the provider request, its
 * exact bytes, their SHA-256) inside its slot, as deployed, and the invocation writes its one batch after its sends
 * (a 30 ms PUT). The slot rate is sends over the time the slots were busy; the invocation rate counts the batch write
 * too. The done-when asks the slot rate with evidence to be at least 0.9 of the rate without.
 */
import { randomUUID } from 'node:crypto';
import pLimit from 'p-limit';
import { type DispatchDeps, dispatchNotification } from '../../functions/dispatch/dispatch-notification.ts';
import { providerRequest } from '../../functions/dispatch/provider-request.ts';
import { decodeRecordValue, isTransfer } from '../../functions/domain/event/decode.ts';
import { uniformRetention } from '../../functions/domain/evidence.ts';
import { encodeBatch } from '../../functions/domain/evidence-batch.ts';
import { buildNotification, type NotificationItem } from '../../functions/domain/notification.ts';
import { DEFAULT_SWEEP_PLACEMENT } from '../../functions/domain/sweep-index.ts';
import type { NotificationStore } from '../../functions/stores/notification-store.ts';
import { EXAMPLE_BRAND } from '../local/example-brand.ts';
import { MemoryNotificationStore } from './memory-store.ts';
import { eventValue } from './workload.ts';

/** No quota: every token at once. */
const UNPACED: DispatchDeps['pacer'] = { acquire: async () => true };
/** No breaker: no channel is ever held. */
const NEVER_HELD: DispatchDeps['breaker'] = {
  heldUntil: async () => undefined,
  hold: async (_scope, _code, now) => now,
};

const INVOCATIONS = 5;
const PER_INVOCATION = 10;
const BATCH = 100;
const PROVIDER_MS = 50;
const STORE_MS = 10;
const EVIDENCE_PUT_MS = 30;
const ROUNDS = 3;

/** A send's proof, as the use case hands it to the invocation's batch. */
type SendProof = Parameters<NonNullable<DispatchDeps['evidence']>['batch']['add']>[0];

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

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

function seeded(round: string) {
  const store = new MemoryNotificationStore();
  const keys: { pk: string; sk: string }[][] = [];
  for (let inv = 0; inv < INVOCATIONS; inv++) {
    const batch = [];
    for (let i = 0; i < BATCH; i++) {
      const d = decodeRecordValue(
        Buffer.from(JSON.stringify(eventValue(`d-${round}-${inv}-${i}`, i))).toString('base64'),
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

/** One run of the five invocations; with evidence, each its own batch written after its sends. */
async function runOnce(round: string, withEvidence: boolean) {
  const { store, keys } = seeded(round);
  const sender = { send: () => new Promise<string>((r) => setTimeout(() => r(randomUUID()), PROVIDER_MS)) };
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
  const batches: { name: string; proofs: SendProof[] }[] = [];
  const cpu = process.cpuUsage();
  const t = performance.now();
  await Promise.all(
    keys.map(async (batch, inv) => {
      const proofs: SendProof[] = [];
      const name = `batches/bench-${round}-${inv}`;
      batches.push({ name, proofs });
      const evidence = withEvidence
        ? {
            retention: uniformRetention(2_557),
            requestOf: (n: Parameters<typeof providerRequest>[0], m: Parameters<typeof providerRequest>[1]) =>
              providerRequest(n, m, { senderEmail: 'notices@example.com' }),
            batch: { name, ready: async () => name, add: (p: SendProof) => void proofs.push(p) },
          }
        : undefined;
      const limit = pLimit(PER_INVOCATION);
      await Promise.all(
        batch.map((k) =>
          limit(() =>
            dispatchNotification(
              { key: k, retryAt: undefined },
              evidence === undefined ? deps : { ...deps, evidence },
              budget,
            ),
          ),
        ),
      );
    }),
  );
  const slotsSeconds = (performance.now() - t) / 1000;
  const used = process.cpuUsage(cpu);
  // After the sends, as the handler does: each invocation's batch bytes, then its one PUT. Timed one by one after
  // every slot is done — in Lambda each invocation has its own environment, here they share one event loop.
  let closeSeconds = 0;
  if (withEvidence) {
    for (const b of batches) {
      const c = performance.now();
      encodeBatch(b.name, 'dispatch', b.proofs);
      closeSeconds = Math.max(closeSeconds, (performance.now() - c + EVIDENCE_PUT_MS) / 1000);
    }
  }
  const sent = [...store.items.values()].filter((n) => n.status === 'SENT').length;
  return {
    sent,
    slotSendsPerSec: sent / slotsSeconds,
    invocationSendsPerSec: sent / (slotsSeconds + closeSeconds),
    cpuMicrosPerSend: (used.user + used.system) / Math.max(1, sent),
  };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

export async function measureDispatch() {
  const runs = {
    without: [] as Awaited<ReturnType<typeof runOnce>>[],
    with: [] as Awaited<ReturnType<typeof runOnce>>[],
  };
  for (let r = 0; r < ROUNDS; r++) {
    runs.without.push(await runOnce(`${r}-a`, false));
    runs.with.push(await runOnce(`${r}-b`, true));
  }
  const slot = (k: 'with' | 'without') => Math.round(median(runs[k].map((x) => x.slotSendsPerSec)));
  const whole = (k: 'with' | 'without') => Math.round(median(runs[k].map((x) => x.invocationSendsPerSec)));
  return {
    batchSize: BATCH,
    providerLatencyMs: PROVIDER_MS,
    storeLatencyMs: STORE_MS,
    evidencePutMs: EVIDENCE_PUT_MS,
    invocations: INVOCATIONS,
    concurrencyPerInvocation: PER_INVOCATION,
    rounds: ROUNDS,
    sends: median(runs.with.map((x) => x.sent)),
    /** As deployed (evidence kept): sends per second of the invocations, the batch write included. */
    sendsPerSec: whole('with'),
    slotSendsPerSec: { withEvidence: slot('with'), withoutEvidence: slot('without') },
    /** Sends per slot with evidence over without (the done-when: at least 0.9). */
    slotRatioWithEvidence: Math.round((slot('with') / Math.max(1, slot('without'))) * 100) / 100,
    /** The process's CPU per send while the slots ran: what the evidence adds to a slot when the CPU is not shared. */
    cpuMicrosPerSend: {
      withEvidence: Math.round(median(runs.with.map((x) => x.cpuMicrosPerSend))),
      withoutEvidence: Math.round(median(runs.without.map((x) => x.cpuMicrosPerSend))),
    },
  };
}

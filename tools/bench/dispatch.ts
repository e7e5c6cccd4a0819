/**
 * Dispatch sends per second at batch 100 against providers answering after 50 ms and a table answering each call after
 * 10 ms (the deployed sender on real SDK clients, only their HTTP answered here), as one Lambda execution environment
 * runs it: one invocation at a time, its sends at the stack's per-invocation
 * concurrency (DISPATCH_TIMING.concurrency), 5 invocations one after the other on this process's one event loop. The
 * dispatch use case (functions/dispatch/dispatch-notification.ts) on an in-memory store, with no quota to pace against
 * and no breaker to hold it — what the use case itself costs.
 *
 * With and without evidence, in alternating rounds: with it, each send builds its record (the provider request, its
 * exact bytes, their SHA-256) inside its slot, as deployed, and the invocation writes its one batch after its sends
 * (encoded, then a 30 ms PUT). The slot rate is sends over the time the invocations' slots were busy; the invocation
 * rate counts the batch write too. The done-when asks the slot rate with evidence to be at least 0.9 of the rate
 * without.
 */
import { randomUUID } from 'node:crypto';
import { SESClient } from '@aws-sdk/client-ses';
import { SNSClient } from '@aws-sdk/client-sns';
import pLimit from 'p-limit';
import { DISPATCH_TIMING } from '../../functions/contracts/dispatch-timing.ts';
import { type DispatchDeps, dispatchNotification } from '../../functions/dispatch/dispatch-notification.ts';
import { providerRequest } from '../../functions/dispatch/provider-request.ts';
import { ProviderSender } from '../../functions/dispatch/senders.ts';
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
/** The stack's sends in flight per invocation. */
const PER_INVOCATION = DISPATCH_TIMING.concurrency;
const BATCH = 100;
const PROVIDER_MS = 50;
const STORE_MS = 10;
const EVIDENCE_PUT_MS = 30;
const ROUNDS = 5;

/** A send's proof, as the use case hands it to the invocation's batch. */
type SendProof = Parameters<NonNullable<DispatchDeps['evidence']>['batch']['add']>[0];

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

/** One environment's five invocations, one after the other; with evidence, each writes its batch after its sends. */
async function runOnce(round: string, withEvidence: boolean) {
  const { store, keys } = seeded(round);
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
  let slotsMs = 0;
  let closeMs = 0;
  let cpuMicros = 0;
  for (const [inv, batch] of keys.entries()) {
    const proofs: SendProof[] = [];
    const name = `batches/bench-${round}-${inv}`;
    const evidence = withEvidence
      ? {
          retention: uniformRetention(2_557),
          requestOf: (n: Parameters<typeof providerRequest>[0], m: Parameters<typeof providerRequest>[1]) =>
            providerRequest(n, m, { senderEmail: 'notices@example.com' }),
          batch: { name, ready: async () => name, add: (p: SendProof) => void proofs.push(p) },
        }
      : undefined;
    const limit = pLimit(PER_INVOCATION);
    const cpu = process.cpuUsage();
    const t = performance.now();
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
    slotsMs += performance.now() - t;
    const used = process.cpuUsage(cpu);
    cpuMicros += used.user + used.system;
    // After the sends, as the handler does: the batch's bytes, then its one PUT.
    if (withEvidence) {
      const c = performance.now();
      encodeBatch(name, 'dispatch', proofs);
      closeMs += performance.now() - c + EVIDENCE_PUT_MS;
    }
  }
  const sent = [...store.items.values()].filter((n) => n.status === 'SENT').length;
  return {
    sent,
    slotSendsPerSec: sent / (slotsMs / 1000),
    invocationSendsPerSec: sent / ((slotsMs + closeMs) / 1000),
    cpuMicrosPerSend: cpuMicros / Math.max(1, sent),
  };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

/** `rounds` of each side (a quick run: 1). */
export async function measureDispatch(rounds: number = ROUNDS) {
  const runs = {
    without: [] as Awaited<ReturnType<typeof runOnce>>[],
    with: [] as Awaited<ReturnType<typeof runOnce>>[],
  };
  for (let r = 0; r < rounds; r++) {
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
    rounds,
    sends: median(runs.with.map((x) => x.sent)),
    /** As deployed (evidence kept): sends per second of the invocations, the batch write included. */
    sendsPerSec: whole('with'),
    slotSendsPerSec: { withEvidence: slot('with'), withoutEvidence: slot('without') },
    /** Sends per slot with evidence over without (the done-when: at least 0.9). */
    slotRatioWithEvidence: Math.round((slot('with') / Math.max(1, slot('without'))) * 100) / 100,
    /** The process's CPU per send while the slots ran (the batch's encoding after them not included). */
    cpuMicrosPerSend: {
      withEvidence: Math.round(median(runs.with.map((x) => x.cpuMicrosPerSend))),
      withoutEvidence: Math.round(median(runs.without.map((x) => x.cpuMicrosPerSend))),
    },
  };
}

/**
 * Dispatch sends per second at batch 100 against providers answering after 50 ms, at the stack's concurrency (5
 * invocations × 10 sends each): the dispatch use case (functions/dispatch/dispatch-notification.ts) on an in-memory
 * store, with no quota to pace against and no breaker to hold it — what the use case itself costs.
 */
import { randomUUID } from 'node:crypto';
import pLimit from 'p-limit';
import { type DispatchDeps, dispatchNotification } from '../../functions/dispatch/dispatch-notification.ts';
import { decodeRecordValue, isTransfer } from '../../functions/domain/event/decode.ts';
import { buildNotification, type NotificationItem } from '../../functions/domain/notification.ts';
import { DEFAULT_SWEEP_PLACEMENT } from '../../functions/domain/sweep-index.ts';
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

export async function measureDispatch() {
  const INVOCATIONS = 5;
  const PER_INVOCATION = 10;
  const BATCH = 100;
  const store = new MemoryNotificationStore();
  const keys: { pk: string; sk: string }[][] = [];
  for (let inv = 0; inv < INVOCATIONS; inv++) {
    const batch = [];
    for (let i = 0; i < BATCH; i++) {
      const d = decodeRecordValue(
        Buffer.from(JSON.stringify(eventValue(`d-${inv}-${i}`, i))).toString('base64'),
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
  const sender = { send: () => new Promise<string>((r) => setTimeout(() => r(randomUUID()), 50)) };
  const deps: DispatchDeps = {
    store,
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
  const t = performance.now();
  await Promise.all(
    keys.map(async (batch) => {
      const limit = pLimit(PER_INVOCATION);
      await Promise.all(
        batch.map((k) => limit(() => dispatchNotification({ key: k, retryAt: undefined }, deps, budget))),
      );
    }),
  );
  const seconds = (performance.now() - t) / 1000;
  const sent = [...store.items.values()].filter((n) => n.status === 'SENT').length;
  return {
    batchSize: BATCH,
    providerLatencyMs: 50,
    invocations: INVOCATIONS,
    concurrencyPerInvocation: PER_INVOCATION,
    sends: sent,
    sendsPerSec: Math.round(sent / seconds),
  };
}

/**
 * The send quota's figures, measured on DynamoDB Local with the real code:
 * - pacing: several "execution environments" (each its own SharedTokenBucket and DynamoDB client, as separate Lambda
 *   environments are), each with 10 concurrent senders asking for tokens as fast as they can for N seconds, a 50 ms
 *   send after each token. How close to the quota do they run together, never above it in any window, and what does
 *   a token cost in DynamoDB writes and WCU?
 * - sweeper drain: a backlog of due items (half SENDING with expired leases, half PENDING past their stuck threshold)
 *   swept by the real sweep() with the stack's budget, run after run, as the schedule would. Items per second, and the
 *   extrapolation to 100,000.
 */
import { randomUUID } from 'node:crypto';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { SharedTokenBucket } from '../../functions/dispatch/pacer.ts';
import { DynamoTokenWindows } from '../../functions/dispatch/send-quota-store.ts';
import { CHANNELS } from '../../functions/domain/channels.ts';
import { decodeRecordValue, isTransfer } from '../../functions/domain/event/decode.ts';
import { sweepKey } from '../../functions/domain/keys.ts';
import { buildNotification } from '../../functions/domain/notification.ts';
import { DEFAULT_SWEEP_PLACEMENT } from '../../functions/domain/sweep-index.ts';
import { isConditionFailure } from '../../functions/stores/condition-failure.ts';
import { DynamoSweepStore } from '../../functions/stores/sweep-store.ts';
import { sweep } from '../../functions/sweeper/sweep.ts';
import { createTable, localClient, scanAll } from '../local/dynamodb-local.ts';
import { measureHeldRelease } from './held-release.ts';
import { seedItems } from './seed.ts';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const round2 = (n: number) => Math.round(n * 100) / 100;
const progress = (m: string) => process.stderr.write(`[bench] ${m}\n`);

interface Usage {
  requests: number;
  wcu: number;
}
function counted(endpoint: string): { client: DynamoDBClient; usage: Usage } {
  const client = localClient(endpoint);
  const usage: Usage = { requests: 0, wcu: 0 };
  client.middlewareStack.add(
    (next) => async (a) => {
      usage.requests++;
      (a.input as { ReturnConsumedCapacity?: string }).ReturnConsumedCapacity ??= 'TOTAL';
      try {
        const out = await next(a);
        const cc = (out.output as { ConsumedCapacity?: { CapacityUnits?: number } }).ConsumedCapacity;
        usage.wcu += cc?.CapacityUnits ?? 0;
        return out;
      } catch (error) {
        // A failed condition is billed too: 1 WCU for an item this small.
        if (isConditionFailure(error)) usage.wcu += 1;
        throw error;
      }
    },
    { step: 'initialize', name: 'benchQuotaUsage' },
  );
  return { client, usage };
}

/** `environments` Lambda execution environments: each its own DynamoDB client (counted) and SharedTokenBucket. */
function environmentsOn(endpoint: string, table: string, options: { rate: number; environments: number }) {
  const usages: Usage[] = [];
  const clients: DynamoDBClient[] = [];
  const pacers = Array.from({ length: options.environments }, () => {
    const { client, usage } = counted(endpoint);
    usages.push(usage);
    clients.push(client);
    return new SharedTokenBucket(
      new DynamoTokenWindows(DynamoDBDocumentClient.from(client), table),
      { EMAIL: options.rate, PUSH: options.rate, SMS: options.rate },
      { now: Date.now, sleep },
    );
  });
  return { pacers, usages, clients };
}

/** The tokens each window's items counted (send-quota-store.ts: RATE#<channel>[#<shard>], <window start>, `used`). */
async function tokensTakenByWindow(endpoint: string, table: string): Promise<Map<string, number>> {
  const taken = new Map<string, number>();
  const windows = await scanAll(endpoint, table, {
    expression: 'kind = :rate AND begins_with(pk, :channel)',
    values: { ':rate': 'RATE', ':channel': 'RATE#EMAIL' },
  });
  for (const item of windows) taken.set(String(item.sk), (taken.get(String(item.sk)) ?? 0) + Number(item.used ?? 0));
  return taken;
}

export async function measurePacing(
  endpoint: string,
  options: { rate: number; environments: number; seconds: number; sendMs?: number },
) {
  const table = `quota-${randomUUID().slice(0, 6)}`;
  await createTable(endpoint, table);
  const { pacers, usages, clients } = environmentsOn(endpoint, table, options);
  // Start on a window boundary so the first and last windows are whole.
  await sleep(1000 - (Date.now() % 1000));
  const start = Date.now();
  const end = start + options.seconds * 1000;
  const grants: number[] = [];
  await Promise.all(
    pacers.flatMap((pacer) =>
      Array.from({ length: 10 }, async () => {
        while (Date.now() < end) {
          if (await pacer.acquire('EMAIL', Math.min(end, Date.now() + 5_000))) {
            grants.push(Date.now());
            await sleep(options.sendMs ?? 50);
          }
        }
      }),
    ),
  );
  for (const c of clients) c.destroy();
  const taken = await tokensTakenByWindow(endpoint, table);
  const inWindow = new Map<number, number>();
  for (const g of grants.filter((g) => g < end)) {
    const w = Math.floor(g / 1000);
    inWindow.set(w, (inWindow.get(w) ?? 0) + 1);
  }
  const sends = grants.filter((g) => g < end).length;
  const requests = usages.reduce((n, u) => n + u.requests, 0);
  const wcu = usages.reduce((n, u) => n + u.wcu, 0);
  return {
    quotaPerSecond: options.rate,
    environments: options.environments,
    sendersPerEnvironment: 10,
    seconds: options.seconds,
    sends,
    achievedPerSecond: round2(sends / options.seconds),
    ofQuota: round2(sends / options.seconds / options.rate),
    /** The pacer's guarantee: the tokens its windows' items counted, the most in any one window. */
    maxTakenInAnyWindow: Math.max(0, ...taken.values()),
    /**
     * Grants by the second they resolved in: on a loaded machine a token taken at a window's end may resolve after
     * it, so this can pass the quota while no window took more than it (then it says how late grants resolved).
     */
    maxInAnyWindow: Math.max(0, ...inWindow.values()),
    writesPerSend: round2(requests / Math.max(1, sends)),
    wcuPerSend: round2(wcu / Math.max(1, sends)),
  };
}

export async function measureSweeperDrain(endpoint: string, options: { items: number }) {
  const table = `drain-${randomUUID().slice(0, 6)}`;
  await createTable(endpoint, table);
  const { client, usage } = counted(endpoint);
  const doc = DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
  const now = Date.now();
  const items = Array.from({ length: options.items }, (_, i) => {
    const channel = CHANNELS[i % CHANNELS.length]!;
    const d = decodeRecordValue(
      Buffer.from(
        JSON.stringify({
          eventId: `drain-${i}`,
          type: 'TransferCompleted',
          occurredAt: '2026-11-30T09:15:00Z',
          recipient: {
            userId: `u-${i}`,
            locale: 'en',
            email: `u${i}@example.com`,
            pushEndpointArn:
              'arn:aws:sns:us-east-1:123456789012:endpoint/APNS/app/0f9c1d2e-3b4a-5c6d-7e8f-9a0b1c2d3e4f',
            phoneNumber: '+15550000000',
          },
          data: { transferId: `t-${i}`, amount: '1.00', currency: 'USD' },
        }),
      ).toString('base64'),
      65_536,
    );
    if (!isTransfer(d)) throw new Error('bench event invalid');
    const n = buildNotification(d.event, channel, 'x', now - 3_600_000, { retentionDays: 1 });
    return i % 2 === 0
      ? {
          ...n,
          status: 'SENDING',
          attempt: 1,
          leaseUntil: now - 60_000,
          sweepKey: sweepKey('SENDING', channel, n.notificationId),
          sweepAt: now - 60_000,
        }
      : { ...n, sweepAt: now - 60_000 };
  });
  await seedItems(doc, table, items);
  const before = { ...usage };
  const store = new DynamoSweepStore(doc, table);
  const t = performance.now();
  let runs = 0;
  let done = 0;
  for (;;) {
    const r = await sweep({
      store,
      now: Date.now,
      policies: { EMAIL: 'AT_MOST_ONCE', PUSH: 'AT_MOST_ONCE', SMS: 'AT_LEAST_ONCE' },
      pendingThresholdMs: DEFAULT_SWEEP_PLACEMENT.pendingThresholdMs,
      maxSendAttempts: 5,
      maxAgeMs: 86_400_000,
      // High rates: this measures the sweeper itself; in production re-drives are paced to each channel's rate.
      sendRates: { EMAIL: 100_000, PUSH: 100_000, SMS: 100_000 },
      intervalMs: 60_000,
      limit: 10_000,
      pageSize: 100,
      concurrency: 16,
      deadline: Date.now() + 53_000,
    });
    runs++;
    const handled = r.redriven.length + r.woken.length + r.resolvedUnknown.length + r.resolvedRetry.length;
    done += handled;
    if (r.examined === 0 || handled === 0) break;
  }
  const seconds = (performance.now() - t) / 1000;
  client.destroy();
  const perSecond = done / seconds;
  return {
    items: options.items,
    handled: done,
    runs: runs - 1,
    seconds: round2(seconds),
    itemsPerSecond: Math.round(perSecond),
    wcuPerItem: round2((usage.wcu - before.wcu) / Math.max(1, done)),
    extrapolated100k: {
      minutesOfSweeping: round2(100_000 / perSecond / 60),
      // One run a minute, each with a 10,000-item budget and a ~53 s deadline.
      scheduledRuns: Math.ceil(100_000 / Math.min(10_000, perSecond * 53)),
    },
  };
}

/**
 * Critical first, measured on DynamoDB Local with the real pacer: `backlog` normal emails drain at `rate`/s through
 * `environments` Lambda environments (each its own SharedTokenBucket and DynamoDB client, 10 senders each, a
 * `sendMs` send after each token), while a critical email arrives every `criticalEveryMs` at the next environment in
 * turn. Reports the critical notices' wait for a token (p50, p99, max), the backlog's drain rate against the quota,
 * the most sends in any one-second window, and that every notice of both got its token (nothing lost). The token wait
 * is the part of a notice's latency that a backlog can lengthen; the rest (ingest's transaction, the stream's
 * delivery, the provider's call) does not depend on it.
 */
export async function measureCriticalUnderBacklog(
  endpoint: string,
  options: { rate: number; environments: number; backlog: number; criticalEveryMs: number; sendMs?: number },
) {
  const table = `critical-${randomUUID().slice(0, 6)}`;
  await createTable(endpoint, table);
  const { pacers, clients } = environmentsOn(endpoint, table, options);
  await sleep(1000 - (Date.now() % 1000));
  const start = Date.now();
  let left = options.backlog;
  const normal: number[] = [];
  const critical: number[] = [];
  let criticalAsked = 0;
  // A sender retries a notice whose token did not come in time (dispatch would defer it and the sweeper wake it):
  // every notice is sent in the end, none is dropped.
  const drain = pacers.flatMap((pacer) =>
    Array.from({ length: 10 }, async () => {
      while (left > 0) {
        left--;
        while (!(await pacer.acquire('EMAIL', Date.now() + 5_000))) {}
        normal.push(Date.now());
        await sleep(options.sendMs ?? 50);
      }
    }),
  );
  const alerts = (async () => {
    for (let i = 0; left > 0; i++) {
      const asked = Date.now();
      criticalAsked++;
      const pacer = pacers[i % pacers.length] as SharedTokenBucket;
      while (!(await pacer.acquire('EMAIL', Date.now() + 5_000, 'critical'))) {}
      critical.push(Date.now() - asked);
      await sleep(Math.max(0, options.criticalEveryMs - (Date.now() - asked)));
    }
  })();
  await Promise.all([...drain, alerts]);
  const seconds = (Date.now() - start) / 1000;
  for (const c of clients) c.destroy();
  const inWindow = new Map<number, number>();
  for (const g of normal) inWindow.set(Math.floor(g / 1000), (inWindow.get(Math.floor(g / 1000)) ?? 0) + 1);
  const sorted = [...critical].sort((a, b) => a - b);
  const pct = (p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;
  return {
    quotaPerSecond: options.rate,
    environments: options.environments,
    backlog: options.backlog,
    seconds: round2(seconds),
    backlogSent: normal.length,
    backlogPerSecond: round2(normal.length / seconds),
    ofQuota: round2(normal.length / seconds / options.rate),
    maxNormalInAnyWindow: Math.max(0, ...inWindow.values()),
    critical: {
      asked: criticalAsked,
      sent: critical.length,
      tokenWaitMs: { p50: pct(50), p99: pct(99), max: sorted[sorted.length - 1] ?? 0 },
    },
  };
}

/** Pacing at 14/s and 100/s, the sweeper's drain and a held backlog's release, on one DynamoDB Local. */
export async function measureQuotaFigures(endpoint: string, full: boolean) {
  const pacing = [];
  for (const rate of [14, 100]) {
    pacing.push(await measurePacing(endpoint, { rate, environments: 4, seconds: full ? 10 : 2 }));
    progress(`pacing at ${rate}/s done`);
  }
  const sweeper = await measureSweeperDrain(endpoint, { items: full ? 5_000 : 200 });
  progress('sweeper drain done');
  // A night's held statements released at the window's opening, at the quota, critical notices still first.
  const heldRelease = await measureHeldRelease(endpoint, { held: full ? 5_000 : 1_000, critical: full ? 20 : 5 });
  progress('held release done');
  return { pacing, sweeper, heldRelease };
}

/**
 * The sweeper releasing a night's held backlog at the window's opening (docs/dispatch.md "The right moment"), on
 * DynamoDB Local with the real store and sweep and the stack's defaults: `held` StatementReady emails HELD until one
 * instant (their window's opening), and `critical` deferred sign-in alerts due a second after it. The sweeper runs
 * once a "minute" on a clock held at the opening + k minutes, as EventBridge would run it; each run may wake at most
 * the channel's rate × the period (14 emails/s × 60 s = 840). Reports per run what it released and woke, the wall
 * time each run took, and in which run the critical notices were woken — the first, ahead of every held one, is the
 * promise.
 */
import { randomUUID } from 'node:crypto';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DEFAULT_SEND_RATES } from '../../functions/contracts/environment.ts';
import { type DecodedTransfer, decodeRecordValue, isTransfer } from '../../functions/domain/event/decode.ts';
import { buildNotification, type NotificationItem } from '../../functions/domain/notification.ts';
import { DEFAULT_SWEEP_PLACEMENT } from '../../functions/domain/sweep-index.ts';
import { DynamoSweepStore } from '../../functions/stores/sweep-store.ts';
import { sweep } from '../../functions/sweeper/sweep.ts';
import { createTable, localClient } from '../local/dynamodb-local.ts';
import { seedItems } from './seed.ts';

const decoded = (event: object): DecodedTransfer => {
  const d = decodeRecordValue(Buffer.from(JSON.stringify(event)).toString('base64'), 65_536);
  if (!isTransfer(d)) throw new Error(`bench event invalid: ${JSON.stringify(d)}`);
  return d;
};

export interface HeldReleaseFigures {
  readonly held: number;
  readonly critical: number;
  /** The channel's cap per run: its rate × the schedule's period. */
  readonly capPerRun: number;
  readonly runs: { released: number; woken: number; wallMs: number }[];
  /** The run (1-based) that woke the critical notices, and the held ones released before it (0: critical first). */
  readonly criticalWokenInRun: number;
  readonly heldReleasedBeforeCritical: number;
  /** Notices released or woken per second of schedule in the runs the cap bound: the provider's quota. */
  readonly releasedPerSecond: number;
  readonly meanRunWallMs: number;
}

export async function measureHeldRelease(
  endpoint: string,
  options: { held: number; critical: number },
): Promise<HeldReleaseFigures> {
  const table = `held-${randomUUID().slice(0, 6)}`;
  await createTable(endpoint, table);
  const doc = DynamoDBDocumentClient.from(localClient(endpoint), { marshallOptions: { removeUndefinedValues: true } });
  const opening = Date.parse('2026-12-01T23:00:00Z'); // 08:00 in Tokyo
  const items: NotificationItem[] = [];
  for (let i = 0; i < options.held; i++) {
    const d = decoded({
      eventId: `held-${i}`,
      type: 'StatementReady',
      occurredAt: '2026-12-01T15:00:00Z',
      recipient: { userId: `u-${i}`, locale: 'ja', email: `u${i}@example.com` },
      data: { accountLast4: '0042', periodEnd: '2026-11-30' },
    });
    const n = buildNotification(d.event, 'EMAIL', `u${i}@example.com`, opening - 8 * 3_600_000, { retentionDays: 1 });
    items.push({ ...n, status: 'HELD', heldUntil: new Date(opening).toISOString(), sweepAt: opening, deferrals: 1 });
  }
  for (let i = 0; i < options.critical; i++) {
    const d = decoded({
      eventId: `crit-${i}`,
      type: 'PasswordChanged',
      occurredAt: new Date(opening - 60_000).toISOString(),
      recipient: { userId: `c-${i}`, locale: 'ja', email: `c${i}@example.com` },
      data: { changeId: `pw-${i}`, via: 'APP' },
    });
    const n = buildNotification(d.event, 'EMAIL', `c${i}@example.com`, opening - 60_000, { retentionDays: 1 });
    // Deferred by a provider's throttle, due a second after the held backlog: last in due order, first by class.
    items.push({ ...n, retryAt: opening + 1_000, sweepAt: opening + 1_000, deferrals: 1 });
  }
  await seedItems(doc, table, items);

  const store = new DynamoSweepStore(doc, table);
  const intervalMs = 60_000;
  const capPerRun = Math.floor((DEFAULT_SEND_RATES.EMAIL * intervalMs) / 1000);
  const runs: HeldReleaseFigures['runs'] = [];
  let released = 0;
  let criticalWokenInRun = 0;
  let heldReleasedBeforeCritical = 0;
  for (let run = 1; released < options.held || criticalWokenInRun === 0; run++) {
    if (run > Math.ceil(options.held / capPerRun) + 5) throw new Error('the held backlog did not drain');
    const now = opening + 2_000 + (run - 1) * intervalMs;
    const started = performance.now();
    const r = await sweep({
      store,
      now: () => now,
      policies: { EMAIL: 'AT_MOST_ONCE', PUSH: 'AT_MOST_ONCE', SMS: 'AT_LEAST_ONCE' },
      pendingThresholdMs: DEFAULT_SWEEP_PLACEMENT.pendingThresholdMs,
      maxSendAttempts: 5,
      maxAgeMs: 86_400_000,
      sendRates: DEFAULT_SEND_RATES,
      intervalMs,
      limit: 100_000,
      pageSize: 100,
      concurrency: 16,
      deadline: Number.POSITIVE_INFINITY,
    });
    runs.push({ released: r.released.length, woken: r.woken.length, wallMs: Math.round(performance.now() - started) });
    if (criticalWokenInRun === 0 && r.woken.some((e) => e.notificationId.startsWith('crit-'))) {
      criticalWokenInRun = run;
      heldReleasedBeforeCritical = released;
    }
    released += r.released.length;
  }
  const full = runs.filter((r) => r.released + r.woken >= capPerRun);
  const perRun = full.reduce((s, r) => s + r.released + r.woken, 0) / Math.max(1, full.length);
  return {
    held: options.held,
    critical: options.critical,
    capPerRun,
    runs,
    criticalWokenInRun,
    heldReleasedBeforeCritical,
    releasedPerSecond: Math.round(((perRun * 1000) / intervalMs) * 10) / 10,
    meanRunWallMs: Math.round(runs.reduce((s, r) => s + r.wallMs, 0) / runs.length),
  };
}

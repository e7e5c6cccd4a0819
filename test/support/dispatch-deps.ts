/**
 * Dispatch's dependencies as the tests build them: the store and the sender are the test's, everything else the
 * values the tests share (a fixed clock, no pacing, no hold, the default timing), each overridable.
 */
import { neverHeld } from '../../functions/dispatch/channel-breaker.ts';
import type { DispatchDeps, RecordBudget } from '../../functions/dispatch/dispatch-notification.ts';
import { unpaced } from '../../functions/dispatch/pacer.ts';
import { buildNotification, type NotificationItem } from '../../functions/domain/notification.ts';
import { DEFAULT_SWEEP_PLACEMENT } from '../../functions/domain/sweep-index.ts';
import { EXAMPLE_BRAND } from '../../tools/local/example-brand.ts';
import { decodeTransfer, PUSH_ARN, transferEvent } from './events.ts';

/** The clock every dispatch test reads. */
export const DISPATCH_NOW = Date.parse('2026-11-30T09:20:00Z');
/** One record's budget: plenty of time, a short wait. */
export const DISPATCH_BUDGET: RecordBudget = { finishBy: DISPATCH_NOW + 50_000, maxWaitMs: 5_000 };

const transfer = decodeTransfer(transferEvent()).event;
const ADDRESS = { EMAIL: 'hanako@example.com', PUSH: PUSH_ARN, SMS: '+819012345678' } as const;

/** A new PENDING notification of the fixture transfer; the handler tests run on the real clock and pass Date.now(). */
export const pendingNotification = (channel: keyof typeof ADDRESS, createdAt = DISPATCH_NOW - 1000) =>
  buildNotification(transfer, channel, ADDRESS[channel], createdAt, { retentionDays: 35 });

/** The same notification as a claim leaves it: SENDING under a lease. */
export const claimedNotification = (n: NotificationItem, attempt = 1, deferrals = 0): NotificationItem => ({
  ...n,
  status: 'SENDING',
  attempt,
  deferrals,
  leaseUntil: DISPATCH_NOW + 120_000,
});

export function dispatchDeps(
  over: Partial<DispatchDeps> & Pick<DispatchDeps, 'store' | 'sender'>,
  now = DISPATCH_NOW,
): DispatchDeps {
  return {
    pacer: unpaced,
    breaker: neverHeld,
    now: () => now,
    sleep: async () => undefined,
    policies: { EMAIL: 'AT_MOST_ONCE', PUSH: 'AT_MOST_ONCE', SMS: 'AT_LEAST_ONCE' },
    leaseMs: 120_000,
    sendTimeoutMs: 5_000,
    maxSendAttempts: 3,
    retryBaseMs: 1_000,
    retryMaxMs: 300_000,
    nearRetryMs: 2_000,
    pendingThresholdMs: DEFAULT_SWEEP_PLACEMENT.pendingThresholdMs,
    maxAgeMs: 86_400_000,
    brand: EXAMPLE_BRAND,
    ...over,
  };
}

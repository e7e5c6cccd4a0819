/**
 * Dispatch's audience check (issue 16): before the claim, never between a claim and its send; a suppressed address or
 * an opted-out channel ends PENDING → SUPPRESSED and nothing is claimed or sent.
 */
import { describe, expect, it } from 'vitest';
import type { AudienceGate } from '../../functions/commons/audience-store.ts';
import type { NotificationStore } from '../../functions/commons/notification-store.ts';
import { DISPATCH_FILTER_PATTERN, matchesFilter } from '../../functions/commons/stream-filter.ts';
import { neverHeld } from '../../functions/dispatch/channel-breaker.ts';
import { type DispatchDeps, dispatchNotification } from '../../functions/dispatch/dispatch-notification.ts';
import { unpaced } from '../../functions/dispatch/pacer.ts';
import type { Sender } from '../../functions/dispatch/senders.ts';
import { dispatchable } from '../../functions/dispatch/stream-record.ts';
import type { SuppressedReason } from '../../functions/domain/audience.ts';
import { buildNotification } from '../../functions/domain/notification.ts';
import { EXAMPLE_BRAND } from '../../local/example-brand.ts';
import { decodeTransfer, transferEvent } from '../support/events.ts';
import { streamRecord } from '../support/stream.ts';

const NOW = Date.parse('2026-11-30T09:20:00Z');
const d = decodeTransfer(transferEvent());
const item = buildNotification(d.event, 'EMAIL', 'hanako@example.com', NOW - 1000, { retentionDays: 35 });
const key = { pk: item.pk, sk: item.sk };
const addressee = {
  channel: 'EMAIL' as const,
  recipient: item.recipient,
  userId: item.userId,
  template: item.template,
};

function world(reason: SuppressedReason | undefined, suppressLost = false) {
  const calls: string[] = [];
  const store = {
    claim: async () => {
      calls.push('claim');
      return { kind: 'claimed', item: { ...item, status: 'SENDING', attempt: 1 } };
    },
    markSent: async () => {
      calls.push('markSent');
      return 'applied';
    },
    markSuppressed: async (_key: unknown, r: string) => {
      calls.push(`suppress:${r}`);
      return suppressLost ? 'lost' : 'applied';
    },
  } as unknown as NotificationStore;
  const audience: AudienceGate = {
    check: async () => {
      calls.push('check');
      return reason;
    },
  };
  const sender: Sender = {
    send: async () => {
      calls.push('send');
      return 'ses-1';
    },
  };
  const deps: DispatchDeps = {
    store,
    sender,
    pacer: unpaced,
    breaker: neverHeld,
    now: () => NOW,
    sleep: async () => undefined,
    policies: { EMAIL: 'AT_MOST_ONCE', PUSH: 'AT_MOST_ONCE', SMS: 'AT_MOST_ONCE' },
    leaseMs: 120_000,
    sendTimeoutMs: 5_000,
    maxSendAttempts: 3,
    retryBaseMs: 1_000,
    retryMaxMs: 300_000,
    nearRetryMs: 2_000,
    stuckAfterMs: 900_000,
    maxAgeMs: 86_400_000,
    brand: EXAMPLE_BRAND,
    audience,
  };
  const run = () =>
    dispatchNotification({ key, retryAt: undefined, addressee }, deps, { finishBy: NOW + 50_000, maxWaitMs: 5_000 });
  return { calls, run };
}

describe('the audience check in dispatch', () => {
  it('checks before the claim: nothing stands between the claim and the send', async () => {
    const w = world(undefined);
    expect((await w.run()).kind).toBe('sent');
    expect(w.calls).toEqual(['check', 'claim', 'send', 'markSent']);
  });

  it.each(['BOUNCED', 'COMPLAINED', 'OPTED_OUT'] as const)(
    '%s → SUPPRESSED with the reason: never claimed, never sent',
    async (reason) => {
      const w = world(reason);
      expect(await w.run()).toEqual({ kind: 'suppressed', key, channel: 'EMAIL', reason });
      expect(w.calls).toEqual(['check', `suppress:${reason}`]);
    },
  );

  it('a suppression that loses its condition (another dispatcher claimed it first) is skipped, not reported', async () => {
    const w = world('BOUNCED', true);
    expect(await w.run()).toEqual({ kind: 'skipped', why: 'taken' });
    expect(w.calls).not.toContain('send');
  });
});

describe('the stream filter needs no change for issue 16', () => {
  it('SUPPRESSED, feedback on a SENT item, suppression and preferences items never reach dispatch', () => {
    const sent = { ...item, status: 'SENT', attempt: 1 };
    const records = [
      streamRecord('MODIFY', { ...item, status: 'SUPPRESSED', suppressedReason: 'OPTED_OUT' }, item),
      streamRecord('MODIFY', { ...sent, deliveryStatus: 'BOUNCED', deliveryRank: 3 }, sent),
      streamRecord('INSERT', { pk: 'SUPPRESSION#EMAIL', sk: 'a'.repeat(64), kind: 'SUPPRESSION', state: 'ACTIVE' }),
      streamRecord('INSERT', { pk: 'PREFS#u-42', sk: 'PREFS', kind: 'PREFS', optOut: ['SMS'] }),
    ];
    for (const r of records) {
      expect(matchesFilter(DISPATCH_FILTER_PATTERN, r)).toBe(false);
      expect(dispatchable(r)).toBeUndefined();
    }
  });
});

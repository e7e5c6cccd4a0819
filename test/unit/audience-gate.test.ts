/**
 * Dispatch's audience check: the last step before the provider call, after the pacing wait; a suppressed address or an
 * opted-out channel ends SENDING → SUPPRESSED (fenced on the claim's attempt) and nothing is sent.
 */

import { describe, expect, it } from 'vitest';
import { DISPATCH_FILTER_PATTERN, matchesFilter } from '../../functions/contracts/stream-filter.ts';
import { type DispatchDeps, dispatchNotification } from '../../functions/dispatch/dispatch-notification.ts';
import { type Pacer, unpaced } from '../../functions/dispatch/pacer.ts';
import type { Sender } from '../../functions/dispatch/senders.ts';
import { dispatchable } from '../../functions/dispatch/stream-record.ts';
import type { SuppressedReason } from '../../functions/domain/audience.ts';
import { buildNotification } from '../../functions/domain/notification.ts';
import type { AudienceGate } from '../../functions/stores/audience-store.ts';
import type { NotificationStore } from '../../functions/stores/notification-store.ts';
import { DISPATCH_NOW, dispatchDeps } from '../support/dispatch-deps.ts';
import { decodeTransfer, transferEvent } from '../support/events.ts';
import { streamRecord } from '../support/stream.ts';

const NOW = DISPATCH_NOW;
const d = decodeTransfer(transferEvent());
const item = buildNotification(d.event, 'EMAIL', 'hanako@example.com', NOW - 1000, { retentionDays: 35 });
const key = { pk: item.pk, sk: item.sk };
function world(initial: SuppressedReason | undefined, suppressLost = false) {
  const calls: string[] = [];
  /** What the table says about this address and customer right now: a test may change it mid-dispatch. */
  const audienceState = { reason: initial };
  const store = {
    claim: async () => {
      calls.push('claim');
      return { kind: 'claimed', item: { ...item, status: 'SENDING', attempt: 1, leaseUntil: NOW + 120_000 } };
    },
    markSent: async () => {
      calls.push('markSent');
      return 'applied';
    },
    suppress: async (claimed: { status: string; attempt: number }, r: string) => {
      calls.push(`suppress:${r}:${claimed.status}@${claimed.attempt}`);
      return suppressLost ? 'lost' : 'applied';
    },
  } as unknown as NotificationStore;
  const audience: AudienceGate = {
    check: async (a) => {
      calls.push(`check:${a.channel}:${a.userId}:${a.template}`);
      return audienceState.reason;
    },
  };
  const sender: Sender = {
    send: async () => {
      calls.push('send');
      return 'ses-1';
    },
  };
  const deps: DispatchDeps = dispatchDeps({
    store,
    sender,
    policies: { EMAIL: 'AT_MOST_ONCE', PUSH: 'AT_MOST_ONCE', SMS: 'AT_MOST_ONCE' },
    audience,
  });
  const run = (pacer: Pacer = unpaced) =>
    dispatchNotification({ key, retryAt: undefined }, { ...deps, pacer }, { finishBy: NOW + 50_000, maxWaitMs: 5_000 });
  return { calls, run, audienceState };
}

describe('the audience check in dispatch', () => {
  it('checks after the claim and the pacing wait, immediately before the send', async () => {
    const w = world(undefined);
    const pacer: Pacer = {
      acquire: async () => {
        w.calls.push('token');
        return { window: 0, rank: 0 };
      },
    };
    expect((await w.run(pacer)).kind).toBe('sent');
    expect(w.calls).toEqual(['claim', 'token', 'check:EMAIL:u-42:TransferCompleted', 'send', 'markSent']);
  });

  it.each(['BOUNCED', 'COMPLAINED', 'OPTED_OUT'] as const)(
    '%s → SUPPRESSED with the reason, from the claim (fenced on its attempt): never sent',
    async (reason) => {
      const w = world(reason);
      expect(await w.run()).toEqual({
        kind: 'suppressed',
        key,
        notificationId: item.notificationId,
        channel: 'EMAIL',
        reason,
      });
      expect(w.calls).toEqual(['claim', 'check:EMAIL:u-42:TransferCompleted', `suppress:${reason}:SENDING@1`]);
    },
  );

  it('an opt-out written while the record waited for its send token stops the send', async () => {
    const w = world(undefined);
    const given: unknown[] = [];
    const token = { window: NOW - (NOW % 1_000), rank: 1 };
    const pacer: Pacer = {
      acquire: async () => {
        // The customer opts out during the (up to ~10 s) wait for a token.
        w.audienceState.reason = 'OPTED_OUT';
        return token;
      },
      giveBack: (channel, back) => void given.push([channel, back]),
    };
    expect(await w.run(pacer)).toMatchObject({ kind: 'suppressed', reason: 'OPTED_OUT' });
    expect(w.calls).not.toContain('send');
    // The unused token goes back for the next record, with the window it was taken in.
    expect(given).toEqual([['EMAIL', token]]);
  });

  it('a suppression that loses its condition (the sweeper took the claim over) is skipped, not reported', async () => {
    const w = world('BOUNCED', true);
    expect(await w.run()).toEqual({ kind: 'skipped', why: 'taken' });
    expect(w.calls).not.toContain('send');
  });
});

describe('the stream filter needs no change for the audience check', () => {
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

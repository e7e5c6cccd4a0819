/**
 * The right moment's last checks come after the send token (moment-checks.ts momentLast): when they stop the send, or
 * their read fails, the token goes back to the pacer exactly once — kept, it is a send the window loses; given back
 * twice, a send no window's count took.
 */

import { describe, expect, it } from 'vitest';
import { type DispatchDeps, dispatchNotification } from '../../functions/dispatch/dispatch-notification.ts';
import type { Pacer, SendToken } from '../../functions/dispatch/pacer.ts';
import type { Sender } from '../../functions/dispatch/senders.ts';
import type { Channel } from '../../functions/domain/channels.ts';
import { buildNotification } from '../../functions/domain/notification.ts';
import type { MomentStore } from '../../functions/stores/moment-store.ts';
import type { NotificationStore } from '../../functions/stores/notification-store.ts';
import { DISPATCH_NOW, dispatchDeps } from '../support/dispatch-deps.ts';
import { decodeTransfer, transferEvent } from '../support/events.ts';

const NOW = DISPATCH_NOW;
// A TransferCompleted: a normal type under a flood guard (30 an hour per customer and channel).
const item = buildNotification(decodeTransfer(transferEvent()).event, 'SMS', '+819012345678', NOW - 1000, {
  retentionDays: 35,
});
const key = { pk: item.pk, sk: item.sk };

/** One dispatch of the item with `moment` as the moment's store: what the store, the sender and the pacer were asked. */
async function dispatchWith(moment: MomentStore) {
  const calls: string[] = [];
  const store = {
    claim: async () => ({
      kind: 'claimed',
      item: { ...item, status: 'SENDING', attempt: 1, leaseUntil: NOW + 120_000 },
    }),
    endUnsent: async (_claimed: unknown, end: { status: string }) => {
      calls.push(`endUnsent:${end.status}`);
      return 'applied';
    },
    markSent: async () => {
      calls.push('markSent');
      return 'applied';
    },
    release: async () => {
      calls.push('release');
      return 'applied';
    },
  } as unknown as NotificationStore;
  const sender: Sender = {
    send: async () => {
      calls.push('send');
      return 'sns-1';
    },
  };
  const token: SendToken = { window: NOW - (NOW % 1_000), rank: 1 };
  const given: [Channel, SendToken][] = [];
  const pacer: Pacer = { acquire: async () => token, giveBack: (channel, back) => void given.push([channel, back]) };
  const deps: DispatchDeps = dispatchDeps({ store, sender, pacer, moment });
  const result = await dispatchNotification({ key, retryAt: undefined }, deps, {
    finishBy: NOW + 50_000,
    maxWaitMs: 5_000,
  });
  return { result, calls, given, token };
}

const noNewerNotice = async () => undefined;
const noSlotBack = async () => undefined;

describe('the send token, when the moment’s last checks stop the send', () => {
  it('the flood guard is full: THROTTLED, nothing sent, the token given back once', async () => {
    const { result, calls, given, token } = await dispatchWith({
      newerNotice: noNewerNotice,
      takeFloodSlot: async () => false,
      giveBackFloodSlot: noSlotBack,
    });
    expect(result).toMatchObject({ kind: 'unsent', end: { status: 'THROTTLED' } });
    expect(calls).toEqual(['endUnsent:THROTTLED']);
    expect(given).toEqual([['SMS', token]]);
  });

  it('the flood guard’s count fails (DynamoDB throttled): deferred NOT_SENT, nothing sent, the token given back once', async () => {
    const { result, calls, given, token } = await dispatchWith({
      newerNotice: noNewerNotice,
      takeFloodSlot: async () => {
        throw Object.assign(new Error('Rate of requests exceeds the allowed throughput'), {
          name: 'ThrottlingException',
        });
      },
      giveBackFloodSlot: noSlotBack,
    });
    expect(result).toMatchObject({ kind: 'deferred', reason: 'NOT_SENT', code: 'ThrottlingException' });
    expect(calls).toEqual(['release']);
    expect(given).toEqual([['SMS', token]]);
  });

  it('the moment allows the send: the token is spent, not given back', async () => {
    const { result, calls, given } = await dispatchWith({
      newerNotice: noNewerNotice,
      takeFloodSlot: async () => true,
      giveBackFloodSlot: noSlotBack,
    });
    expect(result).toMatchObject({ kind: 'sent' });
    expect(calls).toEqual(['send', 'markSent']);
    expect(given).toEqual([]);
  });
});

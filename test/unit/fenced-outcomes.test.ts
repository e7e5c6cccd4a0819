/**
 * A holder's closing write (markFailed, markUnknown, release) is fenced on its claim. When the fence holds it out — the
 * sweeper resolved the expired lease, another holder claimed since — the outcome never landed, and dispatch reports the
 * item taken instead of a FAILED, UNKNOWN or deferral that the table does not hold (which would count one notification
 * twice: once here, once by whoever moved it).
 */

import { describe, expect, it } from 'vitest';
import { dispatchNotification } from '../../functions/dispatch/dispatch-notification.ts';
import { SendError } from '../../functions/dispatch/send-error.ts';
import { buildNotification } from '../../functions/domain/notification.ts';
import type { NotificationStore, Transition } from '../../functions/stores/notification-store.ts';
import { DISPATCH_BUDGET, DISPATCH_NOW, dispatchDeps } from '../support/dispatch-deps.ts';
import { decodeTransfer, transferEvent } from '../support/events.ts';

const NOW = DISPATCH_NOW;
const item = buildNotification(decodeTransfer(transferEvent()).event, 'EMAIL', 'hanako@example.com', NOW - 1000, {
  retentionDays: 35,
});

function dispatchWith(failure: SendError, closingWrite: Transition) {
  const writes: string[] = [];
  const closing = (name: string) => async () => {
    writes.push(name);
    return closingWrite;
  };
  const store = {
    claim: async () => ({
      kind: 'claimed',
      item: { ...item, status: 'SENDING', attempt: 1, leaseUntil: NOW + 120_000 },
    }),
    markFailed: closing('markFailed'),
    markUnknown: closing('markUnknown'),
    release: closing('release'),
  } as unknown as NotificationStore;
  const deps = dispatchDeps({
    store,
    sender: {
      send: async () => {
        throw failure;
      },
    },
    audience: { check: async () => undefined },
  });
  const result = dispatchNotification({ key: { pk: item.pk, sk: item.sk }, retryAt: undefined }, deps, DISPATCH_BUDGET);
  return { result, writes };
}

const rejected = new SendError('rejected', 'MessageRejected', 'rejected');
const unknown = new SendError('unknown', 'ECONNRESET', 'reset');
const throttled = new SendError('throttled', 'Throttling', 'throttled');

describe('a closing write fenced out is reported as taken, never as the outcome it did not write', () => {
  it.each([
    ['FAILED', rejected, 'markFailed', 'failed'],
    ['UNKNOWN', unknown, 'markUnknown', 'unknown'],
    ['a deferral', throttled, 'release', 'deferred'],
  ] as const)('%s: applied → reported; lost → taken', async (_, failure, write, kind) => {
    const applied = dispatchWith(failure, 'applied');
    expect((await applied.result).kind).toBe(kind);
    expect(applied.writes).toEqual([write]);

    const lost = dispatchWith(failure, 'lost');
    expect(await lost.result).toEqual({ kind: 'skipped', why: 'taken' });
    expect(lost.writes).toEqual([write]);
  });
});

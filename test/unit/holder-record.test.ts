/**
 * The holder's writes of a provider's answer are retried through what a later try can get past: a SENT write that
 * meets another transaction on the item (an ingest replay's TransactWriteItems, ingest/inbox-store.ts) is tried again
 * and recorded, never given up after one try (that would leave the lease to the sweeper's policy: a second send, or
 * UNKNOWN for a send that happened); one DynamoDB will never accept is given up at once.
 */
import { TransactionConflictException } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { Holder } from '../../functions/dispatch/holder.ts';
import type { NotificationItem } from '../../functions/domain/notification.ts';
import type { NotificationStore } from '../../functions/stores/notification-store.ts';

const NOW = 1_800_000_000_000;

function holderWhoseSentWriteFails(first: Error) {
  const calls = { markSent: 0 };
  const store = {
    markSent: async () => {
      calls.markSent++;
      if (calls.markSent === 1) throw first;
      return 'applied' as const;
    },
    extendLease: async () => 'applied' as const,
  } as unknown as NotificationStore;
  const item = { pk: 'EVENT#e', sk: 'NOTIFICATION#EMAIL', attempt: 1, leaseUntil: NOW + 60_000 } as NotificationItem;
  const holder = new Holder(
    item,
    { store, now: () => NOW, sleep: async () => {}, random: () => 0.5, leaseMs: 60_000, sendTimeoutMs: 5_000 },
    { finishBy: NOW + 30_000, maxWaitMs: 1_000 },
  );
  return { holder, calls };
}

describe('Holder.recordAcceptance: a failed SENT write', () => {
  it('is tried again after a transaction conflict, and recorded', async () => {
    const { holder, calls } = holderWhoseSentWriteFails(
      new TransactionConflictException({
        message: 'Transaction is ongoing for the item',
        $metadata: { httpStatusCode: 400, attempts: 1 },
      }),
    );
    expect(await holder.recordAcceptance('ses-id')).toBe('recorded');
    expect(calls.markSent).toBe(2);
  });

  it('is given up at once when DynamoDB refuses the request', async () => {
    const { holder, calls } = holderWhoseSentWriteFails(
      Object.assign(new Error('bad'), { name: 'ValidationException', $metadata: { httpStatusCode: 400, attempts: 1 } }),
    );
    expect(await holder.recordAcceptance('ses-id')).toBe('notRecorded');
    expect(calls.markSent).toBe(1);
  });
});

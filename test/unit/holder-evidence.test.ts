/**
 * A holder's lease extension after the provider accepted carries the message id and the evidence the SENT write would
 * name (dispatch/holder.ts): should the holder die before that write, the sweeper's SENT from the id names the record
 * all the same (docs/evidence-and-privacy.md "Where such an invocation dies").
 */
import { describe, expect, it } from 'vitest';
import { Holder, LEASE_GUARD_MS } from '../../functions/dispatch/holder.ts';
import type { NotificationStore, SentEvidence } from '../../functions/stores/notification-store.ts';
import { claimedNotification, DISPATCH_NOW, pendingNotification } from '../support/dispatch-deps.ts';

const NOW = DISPATCH_NOW;
const LEASE_MS = 10_000;
const EVIDENCE: SentEvidence = {
  batch: 'batches/2026-11-30/092000-sweeper-spooldays35',
  sha256: 'ab'.repeat(32),
  acceptedAt: new Date(NOW).toISOString(),
};

/** A holder whose lease ends `leaseLeftMs` from now, over a store that records each write it is asked for. */
function holding(leaseLeftMs: number) {
  const writes: unknown[][] = [];
  const store = {
    extendLease: async (...args: unknown[]) => {
      writes.push(['extendLease', ...args.slice(1)]);
      return 'applied';
    },
    markSent: async (...args: unknown[]) => {
      writes.push(['markSent', ...args.slice(1)]);
      return 'applied';
    },
  } as unknown as NotificationStore;
  const item = { ...claimedNotification(pendingNotification('SMS')), leaseUntil: NOW + leaseLeftMs };
  const holder = new Holder(
    item,
    { store, now: () => NOW, sleep: async () => undefined, leaseMs: LEASE_MS, sendTimeoutMs: 1_000 },
    { finishBy: NOW + 50_000, maxWaitMs: 0 },
  );
  return { holder, writes };
}

describe("a holder's lease extension after the provider accepted", () => {
  it('before the spool put, near the lease end: extended with the message id and the record’s slice and digest', async () => {
    const { holder, writes } = holding(LEASE_GUARD_MS + 100);
    await holder.keepLeasePast(200, 'sns-1', EVIDENCE);
    expect(writes).toEqual([['extendLease', NOW + LEASE_MS, NOW, 'sns-1', EVIDENCE]]);
    // Its lease now far from its end: a second put needs no extension.
    await holder.keepLeasePast(200, 'sns-1', EVIDENCE);
    expect(writes).toHaveLength(1);
  });

  it('the SENT write that would outlive the lease: its extension carries the id and the same evidence as that write', async () => {
    const { holder, writes } = holding(LEASE_GUARD_MS - 1);
    expect(await holder.recordAcceptance('sns-3', EVIDENCE)).toBe('recorded');
    expect(writes).toEqual([
      ['extendLease', NOW + LEASE_MS, NOW, 'sns-3', EVIDENCE],
      ['markSent', 'sns-3', NOW, EVIDENCE, undefined],
    ]);
  });
});

/**
 * The complete cost's index writes (tools/bench/cost-probe.ts indexUnits), from the item before and after each write,
 * as DynamoDB bills them: a put when an item enters an index, a delete when it leaves, both when its index key
 * changes, one write when only a projected attribute changes.
 */
import { describe, expect, it } from 'vitest';
import { indexUnits } from '../../tools/bench/cost-probe.ts';

const pending = {
  pk: 'EVENT#e-1',
  sk: 'NOTIFICATION#EMAIL',
  notificationId: 'e-1#EMAIL',
  channel: 'EMAIL',
  status: 'PENDING',
  attempt: 0,
  createdAt: '2026-12-01T00:00:00.000Z',
  sweepKey: 'PENDING#EMAIL#3',
  sweepAt: 1_800_000_900_000,
};
const claimed = { ...pending, status: 'SENDING', attempt: 1, leaseUntil: 1_800_000_120_000, claimId: 'c' };
const finished = (extra: Record<string, unknown>) => {
  const { sweepKey: _k, sweepAt: _a, leaseUntil: _l, claimId: _c, ...rest } = claimed;
  return { ...rest, status: 'SENT', ...extra };
};

describe('index writes from the item before and after', () => {
  it('an update of projected attributes alone is one index write; one that moves the index key is two (the claim)', () => {
    expect(indexUnits(pending, claimed)).toEqual({ sweep: 1 });
    expect(indexUnits(pending, { ...claimed, sweepKey: 'SENDING#EMAIL#3', sweepAt: 1_800_000_120_000 })).toEqual({
      sweep: 2,
    });
    // An attribute the index does not project costs it nothing.
    expect(indexUnits(claimed, { ...claimed, claimEpoch: 2 })).toEqual({});
  });

  it("an email's SENT writes no providerMessage entry; an SMS's does", () => {
    expect(indexUnits(claimed, finished({ sesMessageId: 'ses-1' }))).toEqual({ sweep: 1 });
    const sms = { ...claimed, sk: 'NOTIFICATION#SMS', channel: 'SMS' };
    expect(indexUnits(sms, { ...finished({ providerMessageId: 'sns-1' }), sk: 'NOTIFICATION#SMS' })).toEqual({
      sweep: 1,
      providerMessage: 1,
    });
  });

  it('a new notification is one sweep-index put', () => {
    expect(indexUnits(undefined, pending)).toEqual({ sweep: 1 });
  });
});

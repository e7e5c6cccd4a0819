/**
 * The fence's and the failover's decisions, pure (docs/regions.md): which epoch a region claims at, when a send may
 * start, what a promotion does to each inherited notification and what the old region's record decides later.
 */
import { describe, expect, it } from 'vitest';
import { failoverSuccessor, inFlightResolution, reconcileDecision } from '../../functions/domain/failover.ts';
import {
  claimEpochOf,
  epochOf,
  fenceShardCount,
  HEARTBEAT_STALE_AFTER_MS,
  heartbeatStale,
  keeperDecision,
  nextEpoch,
  sendPermitted,
} from '../../functions/domain/fence.ts';
import { notificationOfKey, parseNotificationId, successorIdOf, successorSk } from '../../functions/domain/keys.ts';

/** The successor a decision is asked for. */
const E2 = 'NOTIFICATION#EMAIL#E2';

const control = (state: 'ACTIVE' | 'FENCED', epoch: number) =>
  ({ region: 'r', state, epoch, since: 0, by: 'x', reason: 'x', mode: 'CLEAN' }) as const;

describe('the fence', () => {
  it('a fenced region claims at no epoch; an active one at its own', () => {
    expect(claimEpochOf(control('FENCED', 3))).toBeUndefined();
    expect(claimEpochOf(undefined)).toBeUndefined();
    expect(claimEpochOf(control('ACTIVE', 3))).toBe(3);
  });

  it('a send starts only when the shard says ACTIVE at the very epoch of the claim', () => {
    expect(sendPermitted({ state: 'ACTIVE', epoch: 2 }, 2)).toBe(true);
    expect(sendPermitted({ state: 'ACTIVE', epoch: 3 }, 2)).toBe(false);
    expect(sendPermitted({ state: 'FENCED', epoch: 2 }, 2)).toBe(false);
    expect(sendPermitted(undefined, 2)).toBe(false);
    expect(sendPermitted({ state: 'ACTIVE', epoch: 2 }, undefined)).toBe(false);
  });

  it('an item written before epochs existed is the first epoch’s; a new epoch is above every one seen', () => {
    expect(epochOf({})).toBe(1);
    expect(epochOf({ epoch: 4 })).toBe(4);
    expect(nextEpoch(0, 1, undefined)).toBe(2);
    expect(nextEpoch(3, 5, 2)).toBe(6);
  });

  it('shards keep each key well under a partition’s reads: four at least, one per thousand sends a second', () => {
    expect(fenceShardCount(100)).toBe(4);
    expect(fenceShardCount(10_000)).toBe(10);
  });

  it('the keeper fences its region on sight of a higher epoch, and never on silence', () => {
    expect(keeperDecision(control('ACTIVE', 1), control('ACTIVE', 2))).toBe('FENCE_SELF');
    expect(keeperDecision(control('ACTIVE', 2), control('ACTIVE', 1))).toBe('BOTH_ACTIVE');
    expect(keeperDecision(control('ACTIVE', 1), undefined)).toBe('NOTHING');
    expect(keeperDecision(control('ACTIVE', 1), control('FENCED', 2))).toBe('NOTHING');
  });

  it("the other region's heartbeat is stale past a missed beat and half a minute, or when this replica never had one", () => {
    const now = Date.parse('2026-12-06T08:00:00Z');
    expect(HEARTBEAT_STALE_AFTER_MS).toBe(90_000);
    expect(heartbeatStale(now - 61_000, now)).toBe(false);
    expect(heartbeatStale(now - HEARTBEAT_STALE_AFTER_MS, now)).toBe(false);
    expect(heartbeatStale(now - HEARTBEAT_STALE_AFTER_MS - 1, now)).toBe(true);
    expect(heartbeatStale(undefined, now)).toBe(true);
  });
});

describe('successors', () => {
  it('a successor’s key and id name its original’s (eventId, channel) and its epoch', () => {
    expect(successorSk('EMAIL', 2)).toBe('NOTIFICATION#EMAIL#E2');
    expect(notificationOfKey({ pk: 'EVENT#e-1', sk: successorSk('SMS', 3) })).toEqual({
      eventId: 'e-1',
      channel: 'SMS',
    });
    expect(parseNotificationId(successorIdOf('e#1', 'PUSH', 2))).toEqual({ eventId: 'e#1', channel: 'PUSH' });
  });

  it('a failover holds what the old region had pending, marks unknown what it had in flight, and leaves the finished', () => {
    expect(failoverSuccessor({ status: 'PENDING', channel: 'SMS' }, [])).toEqual({
      status: 'FAILOVER_HELD',
      heldReason: 'INHERITED_PENDING',
    });
    expect(failoverSuccessor({ status: 'SENDING', channel: 'PUSH' }, [])).toEqual({
      status: 'UNKNOWN',
      heldReason: 'IN_FLIGHT_AT_FAILOVER',
    });
    for (const status of ['SENT', 'FAILED', 'UNKNOWN', 'SUPPRESSED', 'REFUSED', 'FAILOVER_HELD'] as const) {
      expect(failoverSuccessor({ status, channel: 'EMAIL' }, ['EMAIL'])).toBeUndefined();
    }
  });

  it('an email the bank allows a second copy of is sent again at once, marked a second copy; SMS never', () => {
    expect(failoverSuccessor({ status: 'SENDING', channel: 'EMAIL' }, ['EMAIL'])).toMatchObject({
      status: 'PENDING',
      secondCopy: true,
    });
    expect(failoverSuccessor({ status: 'SENDING', channel: 'SMS' }, ['EMAIL'])?.status).toBe('UNKNOWN');
  });

  it('the old region’s record decides: finished hands over, unknown stays unknown, never-sent releases only when quiet', () => {
    expect(reconcileDecision({ status: 'SENT' }, true, false, E2)).toEqual({ kind: 'HAND_OVER' });
    expect(reconcileDecision({ status: 'UNKNOWN' }, true, false, E2)).toEqual({ kind: 'UNKNOWN' });
    expect(reconcileDecision({ status: 'PENDING' }, true, false, E2)).toEqual({ kind: 'WAIT' });
    expect(reconcileDecision({ status: 'PENDING' }, true, true, E2)).toEqual({
      kind: 'RELEASE',
      handOverOriginal: true,
    });
    expect(reconcileDecision(undefined, false, true, E2)).toEqual({ kind: 'RELEASE', handOverOriginal: false });
    expect(reconcileDecision(undefined, true, true, E2)).toEqual({ kind: 'WAIT' });
    expect(reconcileDecision({ status: 'SENDING' }, true, true, E2)).toEqual({ kind: 'WAIT' });
  });

  it('an original handed over to this very successor is a release half done: it is finished, not handed over again', () => {
    const halfDone = { status: 'HANDED_OVER' as const, handedOverTo: E2 };
    expect(reconcileDecision(halfDone, true, true, E2)).toEqual({ kind: 'RELEASE', handOverOriginal: false });
    // Handed over to another epoch's successor (an earlier failover's): that one carries the notice, not this one.
    expect(reconcileDecision({ ...halfDone, handedOverTo: 'NOTIFICATION#EMAIL#E3' }, true, true, E2)).toEqual({
      kind: 'HAND_OVER',
    });
  });

  it('an original left in flight is sent if the provider’s acceptance is on it, else follows its channel’s policy', () => {
    expect(inFlightResolution({ providerMessageId: 'm' }, 'AT_MOST_ONCE')).toBe('SENT');
    expect(inFlightResolution({}, 'AT_MOST_ONCE')).toBe('UNKNOWN');
    expect(inFlightResolution({}, 'AT_LEAST_ONCE')).toBe('PENDING');
  });
});

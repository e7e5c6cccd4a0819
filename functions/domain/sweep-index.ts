/**
 * The sweep index's sizing and timing (its keys are built in keys.ts).
 *
 * The sparse sweep index is the delay queue: only PENDING and SENDING notifications carry sweepKey/sweepAt, and
 * sweepAt is when the item is next due for attention — a new PENDING item at createdAt + the pending threshold, a
 * deferred one at its retryAt. The key is `<state>#<channel>#<shard>` (a class too, below): the channel lets the
 * sweeper pace re-drives per channel without one channel's backlog hiding another's; the shards keep any one index
 * partition under DynamoDB's 1,000 write units per second per key.
 *
 * The claim leaves sweepKey and sweepAt as they are: a SENDING item waits in its PENDING partition at its PENDING
 * sweepAt, and the sweeper tells a live lease from an expired one by the projected status and leaseUntil
 * (functions/sweeper/sweep.ts, lease-pass.ts). A new index key would cost a delete and a put; the claim's change of
 * the projected status, attempt and lease is one index write, in place. SENDING keys are only read now: items claimed
 * under an earlier deploy, which moved them there, are still found. What lets the sweeper find every claimed item
 * without a key of its own is one invariant (leaseHorizon, below): every write that puts an item (back) to PENDING
 * sets sweepAt at most the pending threshold after the later of its time and its retryAt.
 *
 * Each notification therefore writes its PENDING key three times: a put when created, an update in place when
 * claimed, a delete when finished — 3 index writes a notification where the re-keying claim took 4. With every
 * notification on one channel (the worst case), one key takes 3 × N / shards writes per second at N notifications per
 * second on the average key. The shard count is sized from the stack's peak (sweepShardsFor) so that stays under
 * SWEEP_KEY_WRITES_TARGET, half the per-key ceiling: headroom for retries, deferrals and an uneven hash (the hottest
 * shard takes up to 1.32× the average at 256 shards: 659 writes/s at the largest peak, under the 1,000; docs/scaling.md).
 *
 * A PENDING partition is also kept apart by the notification's class (critical, normal, bulk), so the sweeper wakes
 * critical notices first: each class has the same shard count, since one class may be the whole peak (a statement
 * run is all bulk). The sweeper queries every partition once per run (sweepPartitions, functions/sweeper/sweep.ts):
 * (SENDING + 3 PENDING classes) × channels × shards.
 */

/** The shard count when the stack names no peak: enough for 1,333 notifications per second. */
export const SWEEP_SHARDS = 8;
/** The most shards the sweeper visits per (state, channel): every run queries each of them once. */
export const MAX_SWEEP_SHARDS = 256;
/** Writes per second the average sweep-index key may take at the stack's peak: half of DynamoDB's 1,000 per key. */
export const SWEEP_KEY_WRITES_TARGET = 500;
/** Sweep-index writes per notification on its PENDING key: the put, the claim's update in place, the delete. */
export const SWEEP_WRITES_PER_KEY_PER_NOTIFICATION = 3;

/** Shards per (state, channel) for a peak: a power of two (uniform over the hash byte), at least SWEEP_SHARDS. */
export function sweepShardsFor(peakNotificationsPerSecond: number): number {
  const needed = Math.ceil(
    (SWEEP_WRITES_PER_KEY_PER_NOTIFICATION * Math.max(0, peakNotificationsPerSecond)) / SWEEP_KEY_WRITES_TARGET,
  );
  let shards = SWEEP_SHARDS;
  while (shards < needed) shards *= 2;
  if (shards > MAX_SWEEP_SHARDS) {
    throw new RangeError(
      `${peakNotificationsPerSecond} notifications per second needs ${shards} sweep shards; at most ${MAX_SWEEP_SHARDS}`,
    );
  }
  return shards;
}

/** The highest peak the sweep index takes without a key above SWEEP_KEY_WRITES_TARGET. */
export const MAX_PEAK_NOTIFICATIONS_PER_SECOND = Math.floor(
  (MAX_SWEEP_SHARDS * SWEEP_KEY_WRITES_TARGET) / SWEEP_WRITES_PER_KEY_PER_NOTIFICATION,
);

/** Where a notification goes in the sweep index when it is (put back to) PENDING. */
export interface SweepPlacement {
  /**
   * The pending threshold: how long a PENDING notification may wait for dispatch before the sweeper re-drives it (its
   * sweepAt is then + this). The stack passes it as PENDING_THRESHOLD_SECONDS (dispatch-timing.ts checks it).
   */
  readonly pendingThresholdMs: number;
  /** Shards of the sweep index: the stack's, sized from its peak (sweepShardsFor). */
  readonly sweepShards: number;
}

/** A deployment's placement unless the stack says otherwise: 15 minutes, the fewest shards. */
export const DEFAULT_SWEEP_PLACEMENT: SweepPlacement = { pendingThresholdMs: 900_000, sweepShards: SWEEP_SHARDS };

/** Margin on the lease horizon for the clocks of dispatch and the sweeper (and an operator's resend, due in a minute). */
export const LEASE_HORIZON_SKEW_MS = 60_000;

/**
 * The sweepAt up to which a claimed item can sit at `now`. Every write that puts an item (back) to PENDING sets
 * sweepAt <= max(its time, retryAt) + the pending threshold; the claim needs retryAt passed and leaves sweepAt as it
 * was, so a claimed item's sweepAt is at most its claim time + the threshold, which is before the sweeper's `now` +
 * the threshold (+ the clocks' skew). test/unit/sweep-invariant.test.ts holds every PENDING writer to it.
 */
export const leaseHorizon = (now: number, pendingThresholdMs: number) =>
  now + pendingThresholdMs + LEASE_HORIZON_SKEW_MS;

/**
 * A deferred item's sweepAt: a near retry is re-driven by its own stream record, so the sweeper looks at it only a
 * pending threshold after its retryAt (the safety net); a far one only the sweeper wakes, at its retryAt.
 */
export const deferredSweepAt = (now: number, retryAt: number, nearRetryMs: number, pendingThresholdMs: number) =>
  retryAt - now <= nearRetryMs ? retryAt + pendingThresholdMs : retryAt;

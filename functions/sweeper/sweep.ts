/**
 * Use case: one sweeper run. Nothing is silently lost (DESIGN.md "Dispatch").
 *
 * Input: the clock and the thresholds. Output: how many items were re-driven or resolved.
 * Steps, per sweep-index shard, through the sparse index (never a scan):
 *   1. PENDING longer than the threshold (its stream record never arrived: 24 h trim, retries exhausted, dropped)
 *      → touch it (PENDING → PENDING) so a fresh stream record re-drives it.
 *   2. SENDING with an expired lease (the holder crashed or hung) → by the channel's policy: UNKNOWN (AT_MOST_ONCE),
 *      or PENDING again (AT_LEAST_ONCE, attempts left).
 * Bounded work per run (`limit`); every write is conditional on what the sweeper saw, so overlapping runs and a
 * racing dispatcher change each item at most once.
 */
import type { NotificationStore, SweepEntry } from '../commons/notification-store.ts';
import { type ChannelPolicies, SWEEP_SHARDS } from '../domain/notification.ts';

export interface SweepDeps {
  readonly store: NotificationStore;
  readonly now: () => number;
  readonly policies: ChannelPolicies;
  readonly pendingThresholdMs: number;
  readonly maxSendAttempts: number;
  readonly limit: number;
}

export interface SweepResult {
  redriven: SweepEntry[];
  resolvedUnknown: SweepEntry[];
  resolvedRetry: SweepEntry[];
  lostRaces: number;
}

export async function sweep(deps: SweepDeps): Promise<SweepResult> {
  const result: SweepResult = { redriven: [], resolvedUnknown: [], resolvedRetry: [], lostRaces: 0 };
  let budget = deps.limit;
  const now = deps.now();
  for (let shard = 0; shard < SWEEP_SHARDS && budget > 0; shard++) {
    for (const entry of await deps.store.findDue('PENDING', shard, now - deps.pendingThresholdMs, budget)) {
      budget--;
      if ((await deps.store.redrive(entry, now)) === 'applied') result.redriven.push(entry);
      else result.lostRaces++;
    }
    if (budget <= 0) break;
    for (const entry of await deps.store.findDue('SENDING', shard, now, budget)) {
      budget--;
      const resend = deps.policies[entry.channel] === 'AT_LEAST_ONCE' && entry.attempt < deps.maxSendAttempts;
      const to = resend ? 'PENDING' : 'UNKNOWN';
      if ((await deps.store.resolveExpired(entry, to, now)) !== 'applied') result.lostRaces++;
      else if (resend) result.resolvedRetry.push(entry);
      else result.resolvedUnknown.push(entry);
    }
  }
  return result;
}

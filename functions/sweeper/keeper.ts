/**
 * The keeper (docs/regions.md "The keeper"): run by the sweeper every minute in both regions. A region that can see
 * the other region active at a higher epoch fences itself — its sends first, then its intake — so an old region cut off
 * during a failover stops on its own as soon as it can see the new epoch. It never fences on silence: a passive region
 * that fails must not stop the active one. Both active with this one newer: alarmed; the other fences itself.
 */
import { type FenceControl, keeperDecision } from '../domain/fence.ts';
import type { DynamoFenceStore } from '../stores/fence-store.ts';

export interface KeeperDeps {
  readonly region: string;
  readonly fence: Pick<DynamoFenceStore, 'control' | 'fence'>;
  /** The other region's CONTROL, read across regions with a short timeout; undefined when it cannot be read. */
  readonly otherControl: () => Promise<FenceControl | undefined>;
  /** Disables this region's own ingest mapping. */
  readonly stopIntake: () => Promise<void>;
  /** This region's heartbeat in the global table, so the other region can see it alive and replicating. */
  readonly heartbeat?: (epoch: number | undefined) => Promise<void>;
  readonly now: () => number;
}

export type KeeperOutcome = 'SELF_DEMOTED' | 'BOTH_ACTIVE' | 'NOTHING';

export async function keep(deps: KeeperDeps): Promise<KeeperOutcome> {
  const own = await deps.fence.control(true);
  // With its fence's epoch: a promotion in the other region takes an epoch above it (functions/operator/promote.ts).
  await deps.heartbeat?.(own?.epoch);
  if (own === undefined) return 'NOTHING';
  const other = await deps.otherControl().catch(() => undefined);
  const decision = keeperDecision(own, other);
  if (decision !== 'FENCE_SELF') return decision === 'BOTH_ACTIVE' ? 'BOTH_ACTIVE' : 'NOTHING';
  const at = deps.now();
  await deps.fence.fence(
    { ...own, state: 'FENCED', since: at, by: deps.region, reason: 'SAW_HIGHER_EPOCH', mode: 'SELF', fencedAt: at },
    own,
  );
  await deps.stopIntake();
  return 'SELF_DEMOTED';
}

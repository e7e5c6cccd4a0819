/**
 * When a region command must not act, and why (docs/regions.md "Runbook"). Pure: the preview and the confirm ask the
 * same rule of the same fences, so a preview never invites an action the confirm then refuses.
 */
import type { FenceControl } from '../domain/fence.ts';

export type RegionRefusalCode = 'ALREADY_ACTIVE' | 'FROM_EPOCH_BEHIND' | 'NO_FENCE' | 'NOT_DEMOTED' | 'NOT_SUCCESSOR';

export class RegionRefused extends Error {
  override name = 'RegionRefused';
  constructor(
    readonly code: RegionRefusalCode,
    message: string,
  ) {
    super(message);
  }
}

/** A failover re-run at its own epoch (FORCED, from the same region) is the same promotion, not a second one. */
export const isPromotionOf = (own: FenceControl | undefined, from: string): boolean =>
  own?.state === 'ACTIVE' && own.mode === 'FORCED' && own.predecessor?.region === from;

/**
 * Promoting the region that is already active would move it to a new epoch and hold its own pending notices as if
 * another region had left them: a wrong `--to` during an incident. Refused.
 */
export function promoteRefusal(to: string, own: FenceControl | undefined, from: string): RegionRefused | undefined {
  if (own?.state === 'ACTIVE' && !isPromotionOf(own, from)) {
    return new RegionRefused('ALREADY_ACTIVE', `${to} is already active (epoch ${own.epoch}): nothing to promote`);
  }
  return undefined;
}

/**
 * `--from-epoch` below the highest epoch this replica has seen of the lost region (its heartbeat's, or its newest
 * notifications': successor-store.ts `lastSeenEpoch`): promoting above a figure that old could give the new region
 * the lost one's epoch, and then neither the keeper nor a send's claim tells the two apart. The preview shows it
 * (`lastSeenEpochs`); the runbook says to read it there.
 */
export function fromEpochBehind(
  request: { readonly from: string; readonly fromEpoch: number },
  lost: { readonly epoch: number; readonly at: number; readonly notificationId?: string },
): RegionRefused {
  const where =
    lost.notificationId === undefined
      ? `${request.from}'s heartbeat carried into this replica at ${new Date(lost.at).toISOString()}`
      : `${request.from}'s notification ${lost.notificationId}, created at ${new Date(lost.at).toISOString()}, carries in this replica`;
  return new RegionRefused(
    'FROM_EPOCH_BEHIND',
    `--from-epoch ${request.fromEpoch} is below epoch ${lost.epoch}, which ${where}: give --from-epoch ${lost.epoch} (or the higher epoch you know it reached)`,
  );
}

export function demoteRefusal(region: string, own: FenceControl | undefined): RegionRefused | undefined {
  return own === undefined ? new RegionRefused('NO_FENCE', `${region} has no fence: nothing to demote`) : undefined;
}

/** Reconciling reads the old region's records as final: only once it is fenced and quiet, under its successor. */
export function reconcileRefusal(
  from: string,
  to: string,
  old: FenceControl | undefined,
  active: FenceControl | undefined,
): RegionRefused | undefined {
  if (old?.state !== 'FENCED' || old.quiescentAt === undefined) {
    return new RegionRefused('NOT_DEMOTED', `${from} is not demoted and quiet: run ops demote --region ${from} first`);
  }
  if (active?.state !== 'ACTIVE' || active.predecessor?.region !== from) {
    return new RegionRefused('NOT_SUCCESSOR', `${to} is not the active successor of ${from}`);
  }
  return undefined;
}

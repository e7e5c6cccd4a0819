/**
 * The condition that makes a write its region's own (docs/regions.md "Ownership"): the item's epoch is the region's
 * current one. An item written before epochs existed carries none and belongs to the first epoch. Without a fence (a
 * stage with one region) there is no condition. The claim and every write made without a claim (the sweeper's, a
 * suppression) carry it, and a fenced region makes none; the holder's writes after a claim stay fenced on its attempt,
 * so a send that started before a demotion is still recorded.
 */
import { FIRST_EPOCH } from '../domain/fence.ts';
import type { FenceGate } from './fence-store.ts';

export interface OwnedCondition {
  /** Appended to a condition expression: empty, or ` AND (…)`. */
  readonly expression: string;
  /** Appended to a claim's SET: empty, or `, claimEpoch = :ownEpoch`. */
  readonly claimEpoch: string;
  readonly values: Record<string, number>;
}

const NONE: OwnedCondition = { expression: '', claimEpoch: '', values: {} };

export async function ownedCondition(
  fence: Pick<FenceGate, 'claimEpoch'> | undefined,
): Promise<OwnedCondition | 'fenced'> {
  if (fence === undefined) return NONE;
  const epoch = await fence.claimEpoch();
  if (epoch === undefined) return 'fenced';
  return {
    expression:
      epoch === FIRST_EPOCH ? ' AND (attribute_not_exists(epoch) OR epoch = :ownEpoch)' : ' AND epoch = :ownEpoch',
    claimEpoch: ', claimEpoch = :ownEpoch',
    values: { ':ownEpoch': epoch },
  };
}

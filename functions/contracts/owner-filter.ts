/**
 * The dispatch trigger's filter in a stage with two regions (docs/regions.md "Replicated stream records"): every
 * replica's stream carries every region's writes, so the trigger passes only a PENDING notification this region owns.
 * A passive region's dispatch is never invoked by the active region's writes: no cost, no claim. AWS documents no
 * marker on a replicated record; its advice is this: an attribute naming the region that made the change, filtered on.
 */
import { DISPATCH_FILTER_PATTERN } from './stream-filter.ts';

export const ownedDispatchFilterPattern = (region: string) =>
  ({
    eventName: DISPATCH_FILTER_PATTERN.eventName,
    dynamodb: { NewImage: { ...DISPATCH_FILTER_PATTERN.dynamodb.NewImage, owner: { S: [region] } } },
  }) as const;

/**
 * The sweeper's first step in a stage with two regions (docs/regions.md "The keeper"): the keeper's beat and check,
 * then whether this region may sweep at all — a fenced region's run does the keeper's work only.
 */
import type { LambdaClient } from '@aws-sdk/client-lambda';
import { documentClient } from '../commons/dynamodb-client.ts';
import { count, logger, traced } from '../commons/powertools.ts';
import { otherControlReader, type RegionFence } from '../commons/region-fence.ts';
import { heartbeatStale } from '../domain/fence.ts';
import { DynamoHeartbeat } from '../stores/heartbeat.ts';
import { keep } from './keeper.ts';

// Loaded when a demoted region stops its intake, the one call the sweeper makes to Lambda: the client is some 70 KB
// that every run's cold start would otherwise load and almost never use.
let lambda: LambdaClient | undefined;

/** Runs the keeper; true when this region is active and so sweeps. */
export async function keepRegion(fence: RegionFence, tableName: string): Promise<boolean> {
  const heartbeat = new DynamoHeartbeat(documentClient, tableName);
  const outcome = await keep({
    region: fence.region,
    fence: fence.store,
    otherControl: otherControlReader(fence),
    stopIntake: async () => {
      if (fence.ingestMappingId === undefined) return;
      const { LambdaClient, UpdateEventSourceMappingCommand } = await import('@aws-sdk/client-lambda');
      lambda ??= traced(new LambdaClient({}));
      await lambda.send(new UpdateEventSourceMappingCommand({ UUID: fence.ingestMappingId, Enabled: false }));
    },
    heartbeat: (epoch) => heartbeat.beat(fence.region, Date.now(), epoch),
    now: Date.now,
  });
  if (outcome === 'SELF_DEMOTED') {
    count('SelfDemoted');
    logger.error('this region saw the other active at a higher epoch: it fenced itself and stopped its intake');
  } else if (outcome === 'BOTH_ACTIVE') {
    count('RegionsBothActive');
    logger.error('both regions are active; this one is newer, the other fences itself when it can see this one');
  }
  if (fence.other !== undefined) await watchPeer(heartbeat, fence.other.region);
  return (await fence.store.control(true))?.state === 'ACTIVE';
}

/**
 * Whether the other region's heartbeat still reaches this replica (`PeerHeartbeatStale`, 1 or 0 every run): stale, the
 * other region is down or its replication is — the first signal of the failover runbook. A read that fails publishes
 * nothing, and the alarm treats missing minutes as breaching: a keeper that cannot look pages too.
 */
async function watchPeer(heartbeat: DynamoHeartbeat, other: string): Promise<void> {
  try {
    const at = (await heartbeat.read(other))?.at;
    const stale = heartbeatStale(at, Date.now());
    count('PeerHeartbeatStale', stale ? 1 : 0);
    if (stale) logger.warn("the other region's heartbeat has not reached this replica", { other, lastBeatAt: at });
  } catch (error) {
    logger.warn("could not read the other region's heartbeat", { other, error: (error as Error).name });
  }
}

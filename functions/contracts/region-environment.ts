/**
 * What a function of a stage in two regions is told about its region (docs/regions.md): its regional fence table and
 * the other region's, and the ingest mapping the keeper disables. A stage in one region sets none of them, and its
 * functions run unfenced, as before. The stack builds it (lib/regional.ts); the functions read it at cold start
 * (functions/commons/region-fence.ts).
 */
import { type EnvironmentOf, type EnvSpec, int, optionalText } from './environment-keys.ts';

export const REGION_ENVIRONMENT = {
  /** This region's fence table (never replicated). Set: the stage runs in two regions and every send is fenced. */
  FENCE_TABLE_NAME: optionalText('nonEmpty'),
  /** The fence's shards (`FENCE#<n>`), sized from the peak: the send reads one, consistently. */
  FENCE_SHARDS: int(1, 100, 4),
  /** The other region and its fence table: the keeper reads its CONTROL there. */
  OTHER_REGION: optionalText('nonEmpty'),
  OTHER_FENCE_TABLE_NAME: optionalText('nonEmpty'),
  /** The ingest mapping the keeper disables when this region fences itself (the sweeper only). */
  INGEST_MAPPING_ID: optionalText('nonEmpty'),
  /** `failoverClockSkewSeconds`: how far ahead of a failover's cut a producer's clock may run (ingest). */
  FAILOVER_CLOCK_SKEW_SECONDS: int(0, 600, 60),
  /** The other region's replica of the table (the global table's name, the same there): ingest's look-up (ingest). */
  OTHER_TABLE_NAME: optionalText('nonEmpty'),
  /** How long ingest waits for the other region's answer, per request, before it holds the event instead (ingest). */
  PEER_LOOKUP_TIMEOUT_MS: int(100, 5_000, 1_000),
} as const satisfies EnvSpec;

export type RegionEnvironment = EnvironmentOf<typeof REGION_ENVIRONMENT>;

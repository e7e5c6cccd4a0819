/**
 * A function's view of its region in a stage with two regions (docs/regions.md "The fence", "The keeper"): its own
 * fence table, read by every claim and before every send; for the keeper, the other region's fence (read across
 * regions, one attempt, two seconds) and its own ingest mapping, disabled when this region fences itself. Undefined in
 * a stage in one region (no FENCE_TABLE_NAME): the functions run unfenced, as they always have.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { REGION_ENVIRONMENT } from '../contracts/region-environment.ts';
import type { FenceControl } from '../domain/fence.ts';
import { DynamoFenceStore } from '../stores/fence-store.ts';
import { ConfigError, parseEnvironment } from './config.ts';
import { documentClient } from './dynamodb-client.ts';
import { traced } from './powertools.ts';

type Env = Readonly<Record<string, string | undefined>>;

export interface RegionFence {
  /** This region's name (Lambda's AWS_REGION): the `owner` of every item written here. */
  readonly region: string;
  readonly store: DynamoFenceStore;
  /** How far ahead of a failover's cut a producer's clock may run, in ms. */
  readonly clockMarginMs: number;
  /**
   * The other region's name and fence table, when the stack named them (the keeper's, ingest's); for ingest also the
   * other region's replica of the table, where it looks up events read again.
   */
  readonly other:
    | { readonly region: string; readonly fenceTable: string; readonly tableName: string | undefined }
    | undefined;
  /** How long ingest's look-up in the other region waits for an answer, per request, in ms. */
  readonly lookupTimeoutMs: number;
  /** The ingest mapping this region's keeper disables (the sweeper's). */
  readonly ingestMappingId: string | undefined;
}

export function regionFenceOf(env: Env = process.env): RegionFence | undefined {
  const c = parseEnvironment(REGION_ENVIRONMENT, env);
  if (c.FENCE_TABLE_NAME === undefined) return undefined;
  const region = env.AWS_REGION;
  if (region === undefined || region === '') throw new ConfigError('configuration error: AWS_REGION is not set');
  if ((c.OTHER_REGION === undefined) !== (c.OTHER_FENCE_TABLE_NAME === undefined)) {
    throw new ConfigError('configuration error: OTHER_REGION and OTHER_FENCE_TABLE_NAME go together');
  }
  // A look-up in its own region would answer "absent" for every event it has not taken: new, and sent.
  if (c.OTHER_REGION === region) throw new ConfigError(`configuration error: OTHER_REGION is this region, ${region}`);
  if (c.OTHER_TABLE_NAME !== undefined && c.OTHER_REGION === undefined) {
    throw new ConfigError('configuration error: OTHER_TABLE_NAME needs OTHER_REGION and OTHER_FENCE_TABLE_NAME');
  }
  return {
    region,
    store: new DynamoFenceStore(documentClient, c.FENCE_TABLE_NAME, c.FENCE_SHARDS),
    clockMarginMs: c.FAILOVER_CLOCK_SKEW_SECONDS * 1000,
    other:
      c.OTHER_REGION === undefined || c.OTHER_FENCE_TABLE_NAME === undefined
        ? undefined
        : { region: c.OTHER_REGION, fenceTable: c.OTHER_FENCE_TABLE_NAME, tableName: c.OTHER_TABLE_NAME },
    ingestMappingId: c.INGEST_MAPPING_ID,
    lookupTimeoutMs: c.PEER_LOOKUP_TIMEOUT_MS,
  };
}

/**
 * The other region's CONTROL, read in that region: one attempt with a short timeout, so a region that cannot be
 * reached costs the keeper two seconds, never its run (the keeper treats a failed read as silence).
 */
export function otherControlReader(fence: RegionFence): () => Promise<FenceControl | undefined> {
  const other = fence.other;
  if (other === undefined) return async () => undefined;
  const client = DynamoDBDocumentClient.from(
    traced(
      new DynamoDBClient({
        region: other.region,
        maxAttempts: 1,
        // Without throwOnRequestTimeout the SDK only logs a request that outlives requestTimeout, and waits on.
        requestHandler: { requestTimeout: 2_000, throwOnRequestTimeout: true, connectionTimeout: 1_000 },
      }),
    ),
  );
  const store = new DynamoFenceStore(client, other.fenceTable, 1);
  return () => store.control(true);
}

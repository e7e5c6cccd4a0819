/**
 * What the operator function of a stage in two regions is told, beside its own environment (environment.ts
 * OPERATOR_ENVIRONMENT), to run the region commands (docs/regions.md "Runbook"): its fence and the other region's
 * (REGION_ENVIRONMENT), its ingest mapping (promote enables it, demote disables it), the sweep placement its successors
 * take, the timeouts demote waits out, and the failover settings. A stage in one region sets none of them: the
 * operator API then has no region commands. The stack builds it (lib/regional-operator.ts).
 */
import { DEFAULT_SWEEP_PLACEMENT, MAX_SWEEP_SHARDS } from '../domain/sweep-index.ts';
import { type EnvironmentOf, type EnvSpec, int, optionalText } from './environment-keys.ts';
import { REGION_ENVIRONMENT } from './region-environment.ts';

export const REGION_OPERATOR_ENVIRONMENT = {
  ...REGION_ENVIRONMENT,
  /** The sweep index's shards and first due time: a successor is placed as ingest places a notification. */
  SWEEP_SHARDS: int(1, MAX_SWEEP_SHARDS, DEFAULT_SWEEP_PLACEMENT.sweepShards),
  PENDING_THRESHOLD_SECONDS: int(1, 86_400, DEFAULT_SWEEP_PLACEMENT.pendingThresholdMs / 1000),
  /** The ingest and dispatch functions' timeouts: demote waits them out before it records quiescence. */
  INGEST_TIMEOUT_SECONDS: int(1, 900, 120),
  DISPATCH_TIMEOUT_SECONDS: int(1, 900, 60),
  /** `failoverSecondCopy`: the channels given a second copy at a failover (EMAIL or none). */
  FAILOVER_SECOND_COPY: optionalText({ pattern: /^(EMAIL)?$/, must: 'EMAIL, or empty' }),
  /** `failoverLookupMinutes`: how long ingest looks events up in the reconciled old region. */
  FAILOVER_LOOKUP_MINUTES: int(1, 10_080, 60),
  /** `deliveryPolicy`, as dispatch has it: reconcile resolves an original still SENDING as the sweeper would. */
  CHANNEL_POLICIES: optionalText(),
} as const satisfies EnvSpec;

export type RegionOperatorEnvironment = EnvironmentOf<typeof REGION_OPERATOR_ENVIRONMENT>;

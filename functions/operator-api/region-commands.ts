/**
 * The region commands as a deployed region's operator function runs them (functions/operator/region-routes.ts), from
 * what the stack told it (functions/contracts/region-operator-environment.ts): its own region — fence, replica, ingest
 * mapping — and the other region's fence and replica, reached by a DynamoDB client in that region. A failover needs
 * nothing of the other region: promote writes only here, and the preview asks the other region once, briefly, and
 * shows it unreachable if it does not answer. Undefined in a stage in one region (no FENCE_TABLE_NAME).
 */
import { DynamoDBClient, type DynamoDBClientConfig } from '@aws-sdk/client-dynamodb';
import { LambdaClient } from '@aws-sdk/client-lambda';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { ConfigError, channelPoliciesOf, parseEnvironment } from '../commons/config.ts';
import { traced } from '../commons/powertools.ts';
import { REGION_OPERATOR_ENVIRONMENT } from '../contracts/region-operator-environment.ts';
import { CHANNELS } from '../domain/channels.ts';
import type { OldRegionLook } from '../domain/held.ts';
import type { Clock, RegionSide } from '../operator/promote.ts';
import type { RegionCommands } from '../operator/region-routes.ts';
import type { AuditLog } from '../stores/audit-log.ts';
import { CONTROL_CACHE_MS, DynamoFenceStore } from '../stores/fence-store.ts';
import { DynamoSuccessorStore } from '../stores/successor-store.ts';
import { lambdaIntake } from './lambda-intake.ts';

type Env = Readonly<Record<string, string | undefined>>;

/** API Gateway answers after 29 s: a call waits this long at most, and otherwise answers when to run it again. */
export const OPERATOR_WAIT_UP_TO_MS = 15_000;

const real = { now: Date.now, sleep: (ms: number) => new Promise<void>((r) => setTimeout(r, ms)) };

export interface RegionCommandDeps {
  readonly doc: DynamoDBDocumentClient;
  readonly tableName: string;
  readonly audit: AuditLog;
  readonly clock?: Clock;
  /**
   * The other region's client, from the options it is built with (default: a DynamoDB client in that region), and
   * its replica's name (default: the same global table): a test stands a second local table in for the other region.
   */
  readonly peer?: {
    readonly doc: (options: DynamoDBClientConfig) => DynamoDBDocumentClient;
    readonly tableName: string;
  };
}

export function regionCommandsOf(deps: RegionCommandDeps, env: Env = process.env): RegionCommands | undefined {
  const c = parseEnvironment(REGION_OPERATOR_ENVIRONMENT, env);
  if (c.FENCE_TABLE_NAME === undefined) return undefined;
  const region = env.AWS_REGION;
  const { OTHER_REGION: peer, OTHER_FENCE_TABLE_NAME: peerFence, INGEST_MAPPING_ID: mapping } = c;
  if (region === undefined || peer === undefined || peerFence === undefined || mapping === undefined) {
    throw new ConfigError(
      'configuration error: the region commands need AWS_REGION, OTHER_REGION, OTHER_FENCE_TABLE_NAME and INGEST_MAPPING_ID',
    );
  }
  const clock = deps.clock ?? real;
  let lambda: LambdaClient | undefined;
  const own: RegionSide = {
    region,
    fence: new DynamoFenceStore(deps.doc, c.FENCE_TABLE_NAME, c.FENCE_SHARDS, () => clock.now()),
    store: new DynamoSuccessorStore(deps.doc, deps.tableName, c.SWEEP_SHARDS, c.PENDING_THRESHOLD_SECONDS * 1000),
    intake: lambdaIntake(() => (lambda ??= traced(new LambdaClient({}))), region, mapping),
  };
  // The other region: its fence and its replica of the global table (reconcile reads and settles its records there).
  const peerDoc =
    deps.peer?.doc ??
    ((options: DynamoDBClientConfig) =>
      DynamoDBDocumentClient.from(traced(new DynamoDBClient({ region: peer, ...options })), {
        marshallOptions: { removeUndefinedValues: true },
      }));
  const peerSide = (options: DynamoDBClientConfig): RegionSide => {
    const doc = peerDoc(options);
    return {
      region: peer,
      fence: new DynamoFenceStore(doc, peerFence, c.FENCE_SHARDS, () => clock.now()),
      store: new DynamoSuccessorStore(
        doc,
        deps.peer?.tableName ?? deps.tableName,
        c.SWEEP_SHARDS,
        c.PENDING_THRESHOLD_SECONDS * 1000,
      ),
      // Never switched from here: each region's operator switches its own mapping.
      intake: {
        enable: async () => undefined,
        disable: async () => undefined,
      },
    };
  };
  const glance = peerSide({ maxAttempts: 1, requestHandler: { requestTimeout: 2_000, connectionTimeout: 1_000 } });
  const other = peerSide({ requestHandler: { requestTimeout: 5_000, connectionTimeout: 2_000 } });
  return {
    scope: { sides: [own, other], acting: region },
    glance: [own, glance],
    audit: deps.audit,
    clock,
    settings: {
      ingestTimeoutMs: c.INGEST_TIMEOUT_SECONDS * 1000,
      dispatchTimeoutMs: c.DISPATCH_TIMEOUT_SECONDS * 1000,
      settleAfterMs: c.INGEST_TIMEOUT_SECONDS * 1000 + CONTROL_CACHE_MS,
      lookupMs: c.FAILOVER_LOOKUP_MINUTES * 60_000,
      placement: { sweepShards: c.SWEEP_SHARDS, pendingThresholdMs: c.PENDING_THRESHOLD_SECONDS * 1000 },
      // The settings allow only email a second copy (the environment's pattern); read as the channels it names.
      secondCopy: CHANNELS.filter((channel) => (c.FAILOVER_SECOND_COPY ?? '').split(',').includes(channel)),
      policies: channelPoliciesOf(c.CHANNEL_POLICIES),
      waitUpToMs: OPERATOR_WAIT_UP_TO_MS,
    },
  };
}

/**
 * The old region as `ops release-held` and `settle-held` find it (functions/domain/held.ts oldRegionRefusal): the
 * other region's fence through the preview's brief client (one attempt, 2 s), and whether this region's predecessor is
 * marked reconciled. No answer — or an error — is "does not answer": that is when an operator decides.
 */
export function oldRegionLookOf(
  commands: Pick<RegionCommands, 'glance'> & { readonly scope: Pick<RegionCommands['scope'], 'acting'> },
): () => Promise<OldRegionLook> {
  const acting = commands.scope.acting;
  const own = commands.glance.find((s) => s.region === acting);
  const other = commands.glance.find((s) => s.region !== acting);
  return async () => {
    const region = other?.region ?? '';
    const [mine, theirs] = await Promise.all([
      own?.fence.control(true),
      other?.fence.control(true).then(
        (control) => ({ control }),
        () => undefined,
      ),
    ]);
    if (theirs === undefined) return { region, answers: false };
    return {
      region,
      answers: true,
      state: theirs.control?.state,
      quiescent: theirs.control?.state === 'FENCED' && theirs.control.quiescentAt !== undefined,
      reconciled: mine?.predecessor?.region === region && mine.predecessor.reconciledAt !== undefined,
    };
  };
}

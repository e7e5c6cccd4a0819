/**
 * `ops promote` and `ops demote` as use cases (docs/regions.md "Promotion and demotion, step by step"). The operator
 * decides; each step after the decision is here, idempotent, so an interrupted run is run again.
 *
 *   failover (the old region cannot be reached): a new epoch above every one seen; the new region's fence ACTIVE
 *     (FORCED, the cut, the predecessor not reconciled); a successor for every unfinished item of an older epoch in
 *     its replica — held when the old region may have sent it since, unknown when it was in flight, never resent
 *     blindly; then its intake.
 *   demote: the region's intake stopped, its fence FENCED (CONTROL, then every shard: from the last one no send
 *     starts there), and quiescence — once every invocation that could have started before has timed out, nothing
 *     in that region writes pipeline state again.
 */
import type { Channel } from '../domain/channels.ts';
import { buildSuccessor, failoverSuccessor } from '../domain/failover.ts';
import { epochOf, type FenceControl, nextEpoch } from '../domain/fence.ts';
import type { DynamoFenceStore } from '../stores/fence-store.ts';
import type { DynamoSuccessorStore, OwnedNotification } from '../stores/successor-store.ts';
import { demoteRefusal, isPromotionOf, promoteRefusal } from './region-refusal.ts';

/** One region as promotion and reconciliation reach it: its fence, its replica, its ingest mapping. */
export interface RegionSide {
  readonly region: string;
  readonly fence: Pick<DynamoFenceStore, 'control' | 'activate' | 'fence' | 'note'>;
  readonly store: DynamoSuccessorStore;
  /** The region's ingest mapping: enabled when it is active. */
  readonly intake: { enable(): Promise<void>; disable(): Promise<void> };
}

export interface Clock {
  now(): number;
  sleep(ms: number): Promise<void>;
}

export interface FailoverRequest {
  readonly by: string;
  readonly reason: string;
  readonly from: string;
  /** The old region's epoch as last known (its fence cannot be read): the new one is above it. */
  readonly fromEpoch: number;
  /** No producer wrote to the old cluster after this (default: now). */
  readonly cutAt?: number;
  readonly secondCopy: readonly Channel[];
  readonly placement: { readonly sweepShards: number; readonly pendingThresholdMs: number };
}

export interface PromotionReport {
  readonly region: string;
  readonly epoch: number;
  readonly startedAt: number;
  readonly activeAt: number;
  readonly held: number;
  readonly unknown: number;
  readonly secondCopies: number;
  /** Successors a previous run of this promotion already wrote. */
  readonly alreadyThere: number;
}

export async function promoteFailover(
  to: RegionSide,
  request: FailoverRequest,
  clock: Clock,
): Promise<PromotionReport> {
  const startedAt = clock.now();
  const own = await to.fence.control(true);
  const refusal = promoteRefusal(to.region, own, request.from);
  if (refusal !== undefined) throw refusal;
  const inherited: OwnedNotification[] = [];
  for await (const item of to.store.unfinished()) inherited.push(item);
  // Idempotent: a promotion already written is run again at its own epoch.
  const done = own !== undefined && isPromotionOf(own, request.from);
  const epoch = done
    ? own.epoch
    : nextEpoch(own?.epoch, own?.predecessor?.epoch, request.fromEpoch, ...inherited.map(epochOf));
  const next: FenceControl = done
    ? own
    : {
        region: to.region,
        state: 'ACTIVE',
        epoch,
        since: startedAt,
        by: request.by,
        reason: request.reason,
        mode: 'FORCED',
        cutAt: request.cutAt ?? startedAt,
        predecessor: { region: request.from, epoch: request.fromEpoch },
      };
  await to.fence.activate(next, own);
  const activeAt = clock.now();
  const counts = { held: 0, unknown: 0, secondCopies: 0, alreadyThere: 0 };
  for (const item of inherited) {
    if (epochOf(item) >= epoch) continue;
    const start = failoverSuccessor(item, request.secondCopy);
    if (start === undefined) continue;
    const successor = buildSuccessor(item, start, { owner: to.region, epoch }, clock.now(), request.placement);
    if (!(await to.store.create(successor))) {
      counts.alreadyThere++;
      continue;
    }
    if (start.secondCopy === true) counts.secondCopies++;
    else if (start.status === 'UNKNOWN') counts.unknown++;
    else counts.held++;
  }
  await to.intake.enable();
  return { region: to.region, epoch, startedAt, activeAt, ...counts };
}

export interface DemoteRequest {
  readonly by: string;
  readonly reason: string;
  /** The ingest function's timeout and dispatch's: no invocation outlives them. */
  readonly ingestTimeoutMs: number;
  readonly dispatchTimeoutMs: number;
}

export interface DemotionReport {
  readonly region: string;
  readonly epoch: number;
  readonly mappingsDisabledAt: number;
  /** From this instant no send starts in the region. */
  readonly fencedAt: number;
  /** From this instant nothing in the region writes pipeline state. */
  readonly quiescentAt: number;
  /** It had fenced itself, or was demoted already. */
  readonly wasFenced: boolean;
}

/** Beyond the timeouts, a margin for the clock of the Lambda service and ours. */
const QUIESCENCE_MARGIN_MS = 5_000;

export async function demote(side: RegionSide, request: DemoteRequest, clock: Clock): Promise<DemotionReport> {
  const own = await side.fence.control(true);
  const refusal = demoteRefusal(side.region, own);
  if (refusal !== undefined || own === undefined) throw refusal ?? new Error('no fence');
  await side.intake.disable();
  const mappingsDisabledAt = clock.now();
  const fencedAt =
    own.state === 'FENCED' && own.fencedAt !== undefined
      ? own.fencedAt
      : await side.fence.fence(
          {
            ...own,
            state: 'FENCED',
            since: clock.now(),
            by: request.by,
            reason: request.reason,
            mode: own.state === 'FENCED' ? own.mode : 'CLEAN',
            mappingsDisabledAt,
            fencedAt: clock.now(),
          },
          own,
        );
  const quiet =
    Math.max(mappingsDisabledAt + request.ingestTimeoutMs, fencedAt + request.dispatchTimeoutMs) + QUIESCENCE_MARGIN_MS;
  if (quiet > clock.now()) await clock.sleep(quiet - clock.now());
  const quiescentAt = clock.now();
  await side.fence.note({ quiescentAt }, own.epoch);
  return {
    region: side.region,
    epoch: own.epoch,
    mappingsDisabledAt,
    fencedAt,
    quiescentAt,
    wasFenced: own.state === 'FENCED',
  };
}

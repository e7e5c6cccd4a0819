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
  /**
   * The region's ingest mapping: enabled when it is active. A deployed stage's answers what it switched — or that it
   * could not, and what to do by hand — and never throws for it: the fence has moved by then, and the report says so.
   */
  readonly intake: { enable(): Promise<IntakeReport | undefined>; disable(): Promise<IntakeReport | undefined> };
}

/** What switching a region's ingest mapping did (functions/operator-api/lambda-intake.ts). */
export interface IntakeReport {
  /** The mapping's UUID, as the stack named it. */
  readonly mapping: string;
  readonly enabled: boolean;
  /** Switched: the mapping's state as Lambda answered it (Enabling, Disabling: AWS takes up to 90 s). */
  readonly state?: string;
  /** Not switched: why, and the command that does it by hand. */
  readonly failed?: { readonly error: string; readonly doByHand: string };
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
  /** The region's ingest mapping switched on (a deployed stage), or why not. */
  readonly intake?: IntakeReport;
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
  const intake = await to.intake.enable();
  return { region: to.region, epoch, startedAt, activeAt, ...counts, ...(intake === undefined ? {} : { intake }) };
}

export interface DemoteRequest {
  readonly by: string;
  readonly reason: string;
  /** The ingest function's timeout and dispatch's: no invocation outlives them. */
  readonly ingestTimeoutMs: number;
  readonly dispatchTimeoutMs: number;
  /**
   * The longest this call may wait for quiescence (default: as long as it takes). A longer wait answers `quietFrom`
   * without `quiescentAt`: the same command run again from then records it (the operator API answers within 29 s).
   */
  readonly waitUpToMs?: number;
}

export interface DemotionReport {
  readonly region: string;
  readonly epoch: number;
  readonly mappingsDisabledAt: number;
  /** From this instant no send starts in the region. */
  readonly fencedAt: number;
  /** From this instant no invocation that could have started before the fence is still running. */
  readonly quietFrom: number;
  /** Recorded on the fence: from this instant nothing in the region writes pipeline state. Absent: run again. */
  readonly quiescentAt?: number;
  /** It had fenced itself, or was demoted already. */
  readonly wasFenced: boolean;
  /** The region's ingest mapping switched off (a deployed stage), or why not. */
  readonly intake?: IntakeReport;
}

/** Beyond the timeouts, a margin for the clock of the Lambda service and ours. */
const QUIESCENCE_MARGIN_MS = 5_000;

export async function demote(side: RegionSide, request: DemoteRequest, clock: Clock): Promise<DemotionReport> {
  const own = await side.fence.control(true);
  const refusal = demoteRefusal(side.region, own);
  if (refusal !== undefined || own === undefined) throw refusal ?? new Error('no fence');
  // A mapping left on in a fenced region writes nothing (its ingest is fenced): a failure to switch it is reported,
  // and never stops the kill switch.
  const intake = await side.intake.disable();
  const fenced = own.state === 'FENCED';
  // Run again (to record quiescence, or after an interruption): the instants the first run recorded stand.
  const mappingsDisabledAt = (fenced ? own.mappingsDisabledAt : undefined) ?? clock.now();
  if (fenced && own.mappingsDisabledAt === undefined) await side.fence.note({ mappingsDisabledAt }, own.epoch);
  const fencedAt =
    fenced && own.fencedAt !== undefined
      ? own.fencedAt
      : await side.fence.fence(
          {
            ...own,
            state: 'FENCED',
            since: clock.now(),
            by: request.by,
            reason: request.reason,
            mode: fenced ? own.mode : 'CLEAN',
            mappingsDisabledAt,
            fencedAt: clock.now(),
          },
          own,
        );
  const quietFrom =
    Math.max(mappingsDisabledAt + request.ingestTimeoutMs, fencedAt + request.dispatchTimeoutMs) + QUIESCENCE_MARGIN_MS;
  const report = {
    region: side.region,
    epoch: own.epoch,
    mappingsDisabledAt,
    fencedAt,
    quietFrom,
    wasFenced: fenced,
    ...(intake === undefined ? {} : { intake }),
  };
  if (fenced && own.quiescentAt !== undefined) return { ...report, quiescentAt: own.quiescentAt };
  const wait = quietFrom - clock.now();
  if (wait > (request.waitUpToMs ?? Number.POSITIVE_INFINITY)) return report;
  if (wait > 0) await clock.sleep(wait);
  const quiescentAt = clock.now();
  await side.fence.note({ quiescentAt }, own.epoch);
  return { ...report, quiescentAt };
}

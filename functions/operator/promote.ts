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
import { type FenceControl, nextEpoch } from '../domain/fence.ts';
import type { DynamoFenceStore } from '../stores/fence-store.ts';
import type { DynamoSuccessorStore } from '../stores/successor-store.ts';
import { demoteRefusal, fromEpochBehind, isPromotionOf, promoteRefusal } from './region-refusal.ts';
import { type PassIds, successorPass } from './successor-pass.ts';

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
  /** The longest a run goes on with the successor pass (the operator API: within 29 s); the next run goes on. */
  readonly budgetMs?: number;
}

export interface PromotionReport {
  readonly region: string;
  readonly epoch: number;
  readonly startedAt: number;
  readonly activeAt: number;
  /** This run's successors: held, unknown, second copies, and those a previous run had written already. */
  readonly held: number;
  readonly unknown: number;
  readonly secondCopies: number;
  readonly alreadyThere: number;
  /** Items of the old region at or above the promoted epoch, left as they are: the runbook says what to do. */
  readonly aheadOfEpoch: number;
  /** Items a later epoch's successor already carries on: not taken over again. */
  readonly carriedOn: number;
  /** The notification ids behind each count of this run, the first 500 of each; `idsTruncated` when one was cut. */
  readonly ids: Readonly<PassIds>;
  readonly idsTruncated?: true;
  /** When every unfinished item has its successor; absent: the pass is not done, run the same command again. */
  readonly successorsDoneAt?: number;
  /** The region's ingest mapping switched on (a deployed stage), or why not. */
  readonly intake?: IntakeReport;
}

/**
 * A failover: the fence first — a new epoch above every one this replica has seen, fixed without listing the backlog
 * —, then the intake, then the successor pass, in pages, until `budgetMs` after the start (successor-pass.ts). A run
 * that stops before the pass is done says so (no `successorsDoneAt`); the same command run again goes on from there.
 */
export async function promoteFailover(
  to: RegionSide,
  request: FailoverRequest,
  clock: Clock,
): Promise<PromotionReport> {
  const startedAt = clock.now();
  const own = await to.fence.control(true);
  const refusal = promoteRefusal(to.region, own, request.from);
  if (refusal !== undefined) throw refusal;
  // Idempotent: a promotion already written is run again at its own epoch, and its pass goes on.
  const control = own !== undefined && isPromotionOf(own, request.from) ? own : await promoted(to, own, request, clock);
  const activeAt = clock.now();
  const intake = await to.intake.enable();
  const { counts, ids, idsTruncated, pass } = await successorPass(
    to,
    control,
    {
      from: request.from,
      secondCopy: request.secondCopy,
      placement: request.placement,
      ...(request.budgetMs === undefined ? {} : { until: startedAt + request.budgetMs }),
    },
    clock,
  );
  return {
    region: to.region,
    epoch: control.epoch,
    startedAt,
    activeAt,
    ...counts,
    ids,
    ...(idsTruncated === undefined ? {} : { idsTruncated }),
    ...(pass.doneAt === undefined ? {} : { successorsDoneAt: pass.doneAt }),
    ...(intake === undefined ? {} : { intake }),
  };
}

/**
 * The fence moved ACTIVE at an epoch above every one this replica has seen: its own fence's, the predecessor it
 * names, `--from-epoch`, its own heartbeat's, and the lost region's last seen — its heartbeat's or its newest
 * notifications' (`lastSeenEpoch`).
 * A `--from-epoch` below the lost region's is refused: the operator read an old figure, and the lost region may be
 * further on than they think.
 */
async function promoted(
  to: RegionSide,
  own: FenceControl | undefined,
  request: FailoverRequest,
  clock: Clock,
): Promise<FenceControl> {
  const [lost, self] = await Promise.all([
    to.store.lastSeenEpoch(request.from, clock.now()),
    to.store.heartbeatEpoch(to.region),
  ]);
  if (lost !== undefined && request.fromEpoch < lost.epoch) throw fromEpochBehind(request, lost);
  const epoch = nextEpoch(own?.epoch, own?.predecessor?.epoch, request.fromEpoch, lost?.epoch, self?.epoch);
  const now = clock.now();
  const next: FenceControl = {
    region: to.region,
    state: 'ACTIVE',
    epoch,
    since: now,
    by: request.by,
    reason: request.reason,
    mode: 'FORCED',
    cutAt: request.cutAt ?? now,
    predecessor: { region: request.from, epoch: request.fromEpoch },
    successorPass: { partition: 0 },
  };
  await to.fence.activate(next, own);
  // Its heartbeat at the new epoch at once, not at the keeper's next minute: should this region be lost soon, the
  // other replica has its epoch, and a promotion from it is refused a lower --from-epoch.
  await to.store.beat(to.region, now, epoch);
  return next;
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
  // An ingest started before the fence (the mapping answers Disabling, and polls until Disabled) writes until its
  // timeout: counted from the later of the two instants, not from the mapping's switch alone.
  const quietFrom =
    Math.max(Math.max(mappingsDisabledAt, fencedAt) + request.ingestTimeoutMs, fencedAt + request.dispatchTimeoutMs) +
    QUIESCENCE_MARGIN_MS;
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

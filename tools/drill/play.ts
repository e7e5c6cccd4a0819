/**
 * Plays one drill schedule (docs/regions.md "The drill") on a simulated clock, one tick a second: producers publish to
 * the active region's cluster; MSK Replicator and the table's replication carry writes across with their lags; each
 * region that runs ingests from its own cluster and dispatches what its own stream passes its trigger's filter, with the
 * real use cases; the keeper runs where it can see the other region. The scenario strikes at its instant, the drill
 * plays the operator (operator.ts) — promote, and when the old region answers, demote and reconcile; or a planned
 * switchover; and for a failback, a switchover back once the topic flows back — and then runs until nothing is in
 * flight. What the providers accepted and what the tables hold after it are the verdict's (verdict.ts).
 */

import type { DynamoDBRecord } from 'aws-lambda';
import { ownedDispatchFilterPattern } from '../../functions/contracts/owner-filter.ts';
import { DISPATCH_FILTER_PATTERN, matchesFilter } from '../../functions/contracts/stream-filter.ts';
import { dispatchNotification } from '../../functions/dispatch/dispatch-notification.ts';
import { dispatchable } from '../../functions/dispatch/stream-record.ts';
import { ingestBatch } from '../../functions/ingest/ingest-batch.ts';
import type { regions } from '../../functions/operator/index.ts';
import { keep } from '../../functions/sweeper/keeper.ts';
import { Cluster, Replicator } from './kafka.ts';
import { demote, type Promoted, promote, reconcile, switchover } from './operator.ts';
import { DISPATCH_TIMEOUT_MS, type Drilled, PRIMARY, RECOVERY, Region, RegionLost } from './region.ts';
import { ReplicaState, ReplicationLink } from './replication.ts';
import { type FailureName, type Schedule, T0, TICK_MS } from './schedule.ts';
import { type RegionTables, scanTable } from './tables.ts';

export interface Played {
  readonly schedule: Schedule;
  /** The active region's table after convergence, and the other's. */
  readonly items: Record<string, unknown>[];
  readonly oldItems: Record<string, unknown>[];
  readonly accepted: Region['accepted'];
  readonly promotion?: regions.PromotionReport;
  readonly reconciliation?: regions.ReconcileReport;
  readonly promotedAt?: number;
  /** When the original region was active again (failback). */
  readonly failedBackAt?: number;
  /** Unfinished notices of an older epoch a promotion left without a successor. */
  readonly unresolvedAtPromotion: number;
  /** Events only a destroyed cluster ever held (neither replicated nor taken before it went). */
  readonly onlyInDestroyedCluster: ReadonlySet<string>;
  readonly selfDemotions: number;
  readonly foreignWrites: number;
  readonly converged: boolean;
  readonly errors: string[];
}

/** Ticks after the last operator step in which nothing may remain in flight. */
const SETTLE_TICKS = 60;
/** How often the keeper runs (every minute in a deployed stage; more often here, so schedules stay short). */
const KEEPER_MS = 10_000;
/** The longest the clock jumps when nothing moves: the scenario's instants fall inside it. */
const IDLE_JUMP_MS = 5_000;
/** The simulated time a schedule may take (a failback runs two demotions and two reconciliations). */
const MAX_TICKS = 1_200;

class Clock {
  t = T0;
  now = () => this.t;
  sleep = async (ms: number) => {
    this.t += Math.max(0, ms);
  };
}

export async function play(
  tables: readonly [RegionTables, RegionTables],
  schedule: Schedule,
  drilled: Drilled,
): Promise<Played> {
  const clock = new Clock();
  const wallStart = performance.now();
  const [a, b] = await Promise.all([
    Region.create(PRIMARY, tables[0], clock, drilled),
    Region.create(RECOVERY, tables[1], clock, drilled),
  ]);
  const state = new ReplicaState();
  const links = [
    new ReplicationLink(a, b, state, schedule.dbLagMs),
    new ReplicationLink(b, a, state, schedule.dbLagMs),
  ];
  const clusters: Record<string, Cluster> = { [PRIMARY]: new Cluster(PRIMARY), [RECOVERY]: new Cluster(RECOVERY) };
  const primaryCluster = clusters[PRIMARY] as Cluster;
  const recoveryCluster = clusters[RECOVERY] as Cluster;
  const replicator = new Replicator(primaryCluster, recoveryCluster, schedule.kafkaLagMs, schedule.offsetSyncMs);
  /** Recovery → primary, created at failback only (docs/regions.md "Failback", step 2). */
  let reverse: Replicator | undefined;
  const errors: string[] = [];
  let producerTarget = primaryCluster;
  let produced = 0;
  let failed = false;
  let promotion: regions.PromotionReport | undefined;
  let promotedAt: number | undefined;
  let healedAt: number | undefined;
  let reconciliation: regions.ReconcileReport | undefined;
  let reconciledAt: number | undefined;
  let failedBackAt: number | undefined;
  let active = a;
  let unresolvedAtPromotion = 0;
  let selfDemotions = 0;
  let dieAfterSend = false;
  const cut = (on: boolean) => {
    for (const l of links) l.partitioned = on;
    replicator.partitioned = on;
  };
  a.onDeath = () => {
    cut(true);
    if (schedule.scenario === 'cluster-destroyed') primaryCluster.destroyed = true;
  };
  const publish = (now: number) => {
    for (; produced < schedule.events.length && (schedule.events[produced]?.at ?? Infinity) <= now; produced++) {
      const e = schedule.events[produced];
      if (e !== undefined) producerTarget.produce(e.eventId, e.value, now);
    }
  };
  const promoted = (p: Promoted) => {
    unresolvedAtPromotion += p.unresolved;
    promotion ??= p.report;
  };
  /** The planned switchover, from the active region to the other; producers move once the new one is promoted. */
  const switchTo = async (to: Region, toCluster: Cluster) => {
    const from = active;
    const done = await switchover(
      from,
      to,
      drilled,
      clock,
      () => publish(clock.now()),
      () => drain(a, b, links, clock.now()),
    );
    producerTarget = toCluster;
    active = to;
    promoted(done.promoted);
    reconciliation ??= done.reconciliation;
  };
  b.predecessorInboxes = (ids) => a.inboxes().findInboxes(ids);

  try {
    let keeperAt = T0;
    let settleChecks = 0;
    while (clock.t < T0 + MAX_TICKS * TICK_MS) {
      const now = clock.now();
      // Each region's stream is read first — its writes since the last tick stamped — then the replication applies
      // what is due: a local write is always stamped before a replicated one is compared with it.
      let activity = 0;
      for (const region of [a, b]) activity += await readStream(region, links, now);
      for (const l of links) await l.deliver(now).catch((e: unknown) => errors.push(`replication: ${String(e)}`));
      if (!failed && now >= schedule.failAt) {
        failed = true;
        if (schedule.failure === undefined) {
          // A planned switchover: no failure, the operator moves the active region while traffic flows.
          promotedAt = now;
          await switchTo(b, recoveryCluster);
          healedAt = reconciledAt = clock.now();
        } else dieAfterSend = strike(a, schedule, schedule.failure, cut);
      }
      if (failed && promotedAt === undefined && now >= schedule.failAt + schedule.promoteAfterMs) {
        producerTarget = recoveryCluster; // the routing controls flipped first (the runbook's step 3)
        promotedAt = now;
        // A region lost at an instant it never reached (it was idle): lost now, as the operator saw it.
        if (schedule.failure !== 'forced-while-old-runs') a.die();
        promoted(await promote(b, a, 1, drilled, clock));
        active = b;
      }
      if (promotedAt !== undefined && healedAt === undefined && now >= promotedAt + schedule.healAfterMs) {
        healedAt = now;
        a.alive = true;
        a.sendFate = () => 'accept';
        a.writesBeforeDeath = undefined;
        dieAfterSend = false;
        cut(false);
      }
      if (healedAt !== undefined && reconciliation === undefined && now >= healedAt + KEEPER_MS) {
        await demote(a, clock);
        // Replication catches up before the operator reconciles (the runbook checks ReplicationLatency first).
        await drain(a, b, links, clock.now());
        reconciliation = await reconcile(a, b, clock);
        reconciledAt = clock.now();
        if (schedule.scenario === 'failback')
          reverse = new Replicator(recoveryCluster, primaryCluster, schedule.kafkaLagMs, schedule.offsetSyncMs);
      }
      if (
        reverse !== undefined &&
        failedBackAt === undefined &&
        now >= (reconciledAt ?? now) + schedule.failbackAfterMs &&
        reverse.nextDue() === Number.POSITIVE_INFINITY
      ) {
        // Failback: a switchover back, once the old region is demoted, reconciled, and the topic flows back.
        await switchTo(a, primaryCluster);
        failedBackAt = clock.now();
      }
      publish(now);
      replicator.tick(now, !b.intakeEnabled);
      reverse?.tick(now, !a.intakeEnabled);
      for (const region of [a, b]) {
        activity += await ingest(region, clusters[region.name] as Cluster, schedule, errors);
      }
      for (const region of [a, b]) {
        const records = backlog.get(region) ?? [];
        backlog.set(region, []);
        if (await dispatch(region, records, drilled, clock, errors, dieAfterSend && region === a)) dieAfterSend = false;
      }
      if (now >= keeperAt) {
        keeperAt = now + KEEPER_MS;
        selfDemotions += await keepers(a, b, !(links[0]?.partitioned ?? false), clock);
      }
      const operatorDone = reconciliation !== undefined && (reverse === undefined || failedBackAt !== undefined);
      if (operatorDone && activity === 0 && (await settled(active, links))) break;
      if (operatorDone && ++settleChecks > SETTLE_TICKS) break;
      // Nothing moved and nothing is due: on to the next instant something is.
      const next =
        activity > 0
          ? now + TICK_MS
          : Math.min(
              now + IDLE_JUMP_MS,
              schedule.events[produced]?.at ?? Infinity,
              failed ? Infinity : schedule.failAt,
              failed && promotedAt === undefined ? schedule.failAt + schedule.promoteAfterMs : Infinity,
              promotedAt !== undefined && healedAt === undefined ? promotedAt + schedule.healAfterMs : Infinity,
              healedAt !== undefined && reconciliation === undefined
                ? Math.min(keeperAt, healedAt + KEEPER_MS)
                : Infinity,
              reverse !== undefined && failedBackAt === undefined
                ? Math.max(now + TICK_MS, (reconciledAt ?? now) + schedule.failbackAfterMs)
                : Infinity,
              ...links.map((l) => l.nextDue()),
              replicator.nextDue(),
              reverse?.nextDue() ?? Infinity,
            );
      // Never back: a demotion's wait for quiescence moved the clock on within this tick.
      clock.t = Math.max(clock.t, now + TICK_MS, Math.ceil(next / TICK_MS) * TICK_MS);
    }
    await drain(a, b, links, clock.now());
    if (process.env.DRILL_DEBUG)
      process.stderr.write(
        `ticks ${Math.round((clock.now() - T0) / TICK_MS)} wall ${Math.round(performance.now() - wallStart)} ms\n`,
      );
    const other = active === a ? b : a;
    const items = await scanTable(active.endpoint, active.table);
    const oldItems = await scanTable(other.endpoint, other.table);
    const converged =
      reconciliation !== undefined &&
      (reverse === undefined || failedBackAt !== undefined) &&
      (await settled(active, links));
    return {
      schedule,
      items,
      oldItems,
      accepted: [...a.accepted, ...b.accepted],
      ...(promotion === undefined ? {} : { promotion }),
      ...(reconciliation === undefined ? {} : { reconciliation }),
      ...(promotedAt === undefined ? {} : { promotedAt }),
      ...(failedBackAt === undefined ? {} : { failedBackAt }),
      unresolvedAtPromotion,
      onlyInDestroyedCluster: new Set(
        primaryCluster.destroyed
          ? primaryCluster.records.filter((r) => !replicator.replicated(r.offset)).map((r) => r.eventId)
          : [],
      ),
      selfDemotions,
      foreignWrites: state.foreignWrites.length,
      converged,
      errors,
    };
  } finally {
    backlog.delete(a);
    backlog.delete(b);
    a.drop();
    b.drop();
  }
}

/** Every write either region made, applied on the other side: replication caught up. */
async function drain(a: Region, b: Region, links: readonly ReplicationLink[], now: number): Promise<void> {
  for (const region of [a, b]) await readStream(region, links, now);
  for (const l of links) await l.deliver(Number.POSITIVE_INFINITY);
}

/** Records a region's dispatch trigger has yet to see (read with the replication's, at the end of a tick). */
const backlog = new Map<Region, DynamoDBRecord[]>();

/** One read of a region's stream, for its dispatch trigger and its replication alike. */
async function readStream(region: Region, links: readonly ReplicationLink[], now: number): Promise<number> {
  if (!region.alive) return 0;
  const records = await region.dispatchReader.poll();
  for (const l of links) if (l.from === region) l.read(now, records);
  backlog.set(region, [...(backlog.get(region) ?? []), ...records]);
  return records.length;
}

/** The keeper in each region that runs, seeing the other region's fence only while the link between them is up. */
async function keepers(a: Region, b: Region, linkUp: boolean, clock: Clock): Promise<number> {
  let selfDemoted = 0;
  for (const [own, other] of [
    [a, b],
    [b, a],
  ] as const) {
    if (!own.alive) continue;
    const reachable = other.alive && linkUp;
    const outcome = await keep({
      region: own.name,
      fence: own.fenceStore,
      otherControl: async () => (reachable ? other.fenceStore.control(true) : undefined),
      stopIntake: async () => {
        own.intakeEnabled = false;
      },
      now: clock.now,
    }).catch(() => 'NOTHING');
    if (outcome === 'SELF_DEMOTED') selfDemoted++;
  }
  return selfDemoted;
}

/** Nothing in flight: no write on its way between the regions, and no notification of the active region unfinished. */
async function settled(active: Region, links: readonly ReplicationLink[]): Promise<boolean> {
  if (links.some((l) => l.pending > 0)) return false;
  const items = await scanTable(active.endpoint, active.table);
  return !items.some((i) => i.kind === 'NOTIFICATION' && (i.status === 'PENDING' || i.status === 'SENDING'));
}

/** The scenario's strike at its instant; true when the region is to die right after its next accepted send. */
function strike(a: Region, schedule: Schedule, failure: FailureName, cut: (on: boolean) => void): boolean {
  switch (failure) {
    case 'lost-mid-batch':
      a.writesBeforeDeath = schedule.writesBeforeDeath;
      return false;
    case 'lost-mid-send': {
      a.sendFate = () => (schedule.acceptedBeforeDeath ? 'acceptThenDie' : 'dieBeforeAnswer');
      return false;
    }
    case 'lost-after-accept':
      return true;
    case 'forced-while-old-runs':
      cut(true);
      return false;
  }
}

async function ingest(region: Region, cluster: Cluster, schedule: Schedule, errors: string[]): Promise<number> {
  if (!region.alive || !region.intakeEnabled) return 0;
  const { records, event } = cluster.batch(schedule.ingestBatch);
  if (records.length === 0) return 0;
  try {
    const summary = await ingestBatch(event, region.ingestDeps());
    if (summary.failure === undefined) cluster.committed += records.length;
  } catch (error) {
    if (!(error instanceof RegionLost)) errors.push(`ingest ${region.name}: ${String(error)}`);
  }
  return records.length;
}

/** The region's dispatch trigger: its stream's records that pass its filter, each through the real use case. */
async function dispatch(
  region: Region,
  records: readonly DynamoDBRecord[],
  drilled: Drilled,
  clock: Clock,
  errors: string[],
  dieAfterSend: boolean,
) {
  if (!region.alive) return false;
  const pattern = drilled.plant === 'no-fence' ? DISPATCH_FILTER_PATTERN : ownedDispatchFilterPattern(region.name);
  const deps = region.dispatchDeps();
  for (const record of records) {
    if (!region.alive) return false;
    if (!matchesFilter(pattern, record)) continue;
    const target = dispatchable(record);
    if (target === undefined) continue;
    try {
      const result = await dispatchNotification(target, deps, {
        finishBy: clock.now() + DISPATCH_TIMEOUT_MS,
        maxWaitMs: 5_000,
      });
      if (dieAfterSend && result.kind === 'sent') {
        region.die();
        return true;
      }
    } catch (error) {
      if (!(error instanceof RegionLost) && region.alive) errors.push(`dispatch ${region.name}: ${String(error)}`);
    }
  }
  return false;
}

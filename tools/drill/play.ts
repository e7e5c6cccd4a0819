/**
 * Plays one drill schedule (docs/regions.md "The drill") on a simulated clock, one tick a second: producers publish to
 * the active region's cluster; MSK Replicator and the table's replication carry writes across with their lags; each
 * region that runs ingests from its own cluster and dispatches what its own stream passes its trigger's filter, with the
 * real use cases; the keeper runs where it can see the other region. The scenario strikes at its instant and the
 * drill plays the operator (timeline.ts) — promote, and when the old region answers, demote and reconcile; or a
 * planned switchover; and for a failback, a switchover back once the topic flows back — and then runs until nothing
 * is in flight. What the providers accepted and what the tables hold after it are the verdict's (verdict.ts). The same
 * seed plays the same schedule; ingest writes a batch's events concurrently, so the order of their stream records —
 * and the replication lag each draws — may differ from one run to the next.
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
import { DISPATCH_TIMEOUT_MS, type Drilled, PRIMARY, RECOVERY, Region, RegionLost } from './region.ts';
import { ReplicaState, ReplicationLink } from './replication.ts';
import { type Schedule, T0, TICK_MS } from './schedule.ts';
import { type RegionTables, scanTable } from './tables.ts';
import { KEEPER_MS, Timeline } from './timeline.ts';

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
  /** Records copied from the other cluster that a region read and did not take (the `__mskmr` rule): quarantined. */
  readonly replicatedNotTaken: number;
  readonly foreignWrites: number;
  readonly converged: boolean;
  readonly errors: string[];
}

/** Ticks after the last operator step in which nothing may remain in flight. */
const SETTLE_TICKS = 60;
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
  const primary = new Cluster(PRIMARY);
  const recovery = new Cluster(RECOVERY);
  const replicator = new Replicator(primary, recovery, schedule.kafkaLagMs, schedule.offsetSyncMs);
  const errors: string[] = [];
  let produced = 0;
  let selfDemotions = 0;
  const taken = { replicatedNotTaken: 0 };
  const cut = (on: boolean) => {
    for (const l of links) l.partitioned = on;
    replicator.partitioned = on;
  };
  a.onDeath = () => {
    cut(true);
    if (schedule.scenario === 'cluster-destroyed') primary.destroyed = true;
  };
  /** What producers published up to now, to the cluster they point at. */
  const publish = (now: number) => {
    for (; produced < schedule.events.length && (schedule.events[produced]?.at ?? Infinity) <= now; produced++) {
      const e = schedule.events[produced];
      if (e !== undefined) timeline.producerTarget.produce(e.eventId, e.value, now);
    }
  };
  const timeline: Timeline = new Timeline(
    {
      a,
      b,
      primary,
      recovery,
      cut,
      publish,
      drain: () => drain(a, b, links, clock.now()),
    },
    schedule,
    drilled,
    clock,
  );
  /**
   * Every event published, every record copied to where it goes, and the active region's cluster read to its end: a
   * schedule whose operator steps are done may not end while records are still on their way to the region that takes
   * them (a switchover's last records reach the new cluster after its promotion).
   */
  const topicDrained = () => {
    const cluster = timeline.active === a ? primary : recovery;
    return (
      produced === schedule.events.length &&
      replicator.nextDue() === Number.POSITIVE_INFINITY &&
      (timeline.reverse?.nextDue() ?? Number.POSITIVE_INFINITY) === Number.POSITIVE_INFINITY &&
      (cluster.destroyed || cluster.committed >= cluster.records.length)
    );
  };
  b.predecessorInboxes = (ids) => a.inboxes().findTaken(ids);

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
      await timeline.step(now);
      publish(now);
      replicator.tick(now, !b.intakeEnabled);
      timeline.reverse?.tick(now, !a.intakeEnabled);
      activity += await ingest(a, primary, schedule, errors, taken);
      activity += await ingest(b, recovery, schedule, errors, taken);
      for (const region of [a, b]) {
        const records = backlog.get(region) ?? [];
        backlog.set(region, []);
        const dieAfterSend = timeline.dieAfterSend && region === a;
        if (await dispatch(region, records, drilled, clock, errors, dieAfterSend)) timeline.dieAfterSend = false;
      }
      if (now >= keeperAt) {
        keeperAt = now + KEEPER_MS;
        selfDemotions += await keepers(a, b, !(links[0]?.partitioned ?? false), clock);
      }
      if (timeline.done && activity === 0 && topicDrained() && (await settled(timeline.active, links))) break;
      if (timeline.done && ++settleChecks > SETTLE_TICKS) break;
      // Nothing moved and nothing is due: on to the next instant something is.
      const next =
        activity > 0
          ? now + TICK_MS
          : Math.min(
              now + IDLE_JUMP_MS,
              schedule.events[produced]?.at ?? Infinity,
              timeline.nextDue(now, keeperAt),
              ...links.map((l) => l.nextDue()),
              replicator.nextDue(),
            );
      // Never back: a demotion's wait for quiescence moved the clock on within this tick.
      clock.t = Math.max(clock.t, now + TICK_MS, Math.ceil(next / TICK_MS) * TICK_MS);
    }
    await drain(a, b, links, clock.now());
    if (process.env.DRILL_DEBUG)
      process.stderr.write(
        `ticks ${Math.round((clock.now() - T0) / TICK_MS)} wall ${Math.round(performance.now() - wallStart)} ms\n`,
      );
    const { active, promotion, reconciliation, promotedAt, failedBackAt } = timeline;
    const other = active === a ? b : a;
    const items = await scanTable(active.endpoint, active.table);
    const oldItems = await scanTable(other.endpoint, other.table);
    return {
      schedule,
      items,
      oldItems,
      accepted: [...a.accepted, ...b.accepted],
      ...(promotion === undefined ? {} : { promotion }),
      ...(reconciliation === undefined ? {} : { reconciliation }),
      ...(promotedAt === undefined ? {} : { promotedAt }),
      ...(failedBackAt === undefined ? {} : { failedBackAt }),
      unresolvedAtPromotion: timeline.unresolvedAtPromotion,
      onlyInDestroyedCluster: new Set(
        primary.destroyed ? primary.records.filter((r) => !replicator.replicated(r.offset)).map((r) => r.eventId) : [],
      ),
      selfDemotions,
      replicatedNotTaken: taken.replicatedNotTaken,
      foreignWrites: state.foreignWrites.length,
      converged: timeline.done && topicDrained() && (await settled(active, links)),
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

async function ingest(
  region: Region,
  cluster: Cluster,
  schedule: Schedule,
  errors: string[],
  taken: { replicatedNotTaken: number },
): Promise<number> {
  if (!region.alive || !region.intakeEnabled) return 0;
  const { records, event } = cluster.batch(schedule.ingestBatch);
  if (records.length === 0) return 0;
  try {
    const summary = await ingestBatch(event, region.ingestDeps());
    if (summary.failure === undefined) cluster.committed += records.length;
    for (const r of summary.results) {
      if (r.kind === 'quarantined' && r.rejection.reason === 'REPLICATED_NOT_TAKEN') taken.replicatedNotTaken++;
    }
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

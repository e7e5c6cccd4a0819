/**
 * A schedule's timeline (docs/regions.md "The drill"): the scenario's strike at its instant, and the operator's steps
 * as the runbook orders them — a failover's promotion, the old region back, its demotion and reconciliation; or a
 * planned switchover; and for a failback, the topic replicated back and a switchover to the original region. play.ts
 * asks it each tick what is due, and when the next step is.
 */
import type { regions } from '../../functions/operator/index.ts';
import { type Cluster, Replicator } from './kafka.ts';
import { demote, type Promoted, promote, reconcile, switchover } from './operator.ts';
import type { Drilled, Region } from './region.ts';
import { type FailureName, type Schedule, TICK_MS } from './schedule.ts';

/** How often the keeper runs (every minute in a deployed stage; more often here, so schedules stay short). */
export const KEEPER_MS = 10_000;

/** What the timeline acts on: the two regions, their clusters, the links between them. */
export interface World {
  readonly a: Region;
  readonly b: Region;
  readonly primary: Cluster;
  readonly recovery: Cluster;
  /** Replication between the regions (both tables and topic) stopped or resumed. */
  cut(on: boolean): void;
  /** What producers published up to now, written to the timeline's `producerTarget`. */
  publish(now: number): void;
  /** Every write either region made, applied on the other side. */
  drain(): Promise<void>;
}

export class Timeline {
  failed = false;
  promotedAt: number | undefined;
  healedAt: number | undefined;
  reconciledAt: number | undefined;
  failedBackAt: number | undefined;
  promotion: regions.PromotionReport | undefined;
  reconciliation: regions.ReconcileReport | undefined;
  /**
   * Recovery → primary, for a failback: running from the moment the old region is back, while its fence may still say
   * ACTIVE, so its ingest reads records replicated back before the keeper fences it — the `__mskmr` rule must keep it
   * from taking them (docs/regions.md "Events read again").
   */
  reverse: Replicator | undefined;
  unresolvedAtPromotion = 0;
  /** The old region dies right after its next accepted send (lost-after-accept). */
  dieAfterSend = false;
  active: Region;
  producerTarget: Cluster;

  constructor(
    private readonly world: World,
    private readonly schedule: Schedule,
    private readonly drilled: Drilled,
    private readonly clock: regions.Clock,
  ) {
    this.active = world.a;
    this.producerTarget = world.primary;
  }

  /** Every operator step is done: what remains is for the pipelines to settle. */
  get done(): boolean {
    return this.reconciliation !== undefined && (this.reverse === undefined || this.failedBackAt !== undefined);
  }

  /** The scenario's strike and the operator's steps due at this instant, in the runbook's order. */
  async step(now: number): Promise<void> {
    const { a, b, primary, recovery } = this.world;
    const s = this.schedule;
    if (!this.failed && now >= s.failAt) {
      this.failed = true;
      if (s.failure === undefined) {
        // A planned switchover: no failure, the operator moves the active region while traffic flows.
        this.promotedAt = now;
        await this.switchTo(b, recovery);
        this.healedAt = this.reconciledAt = this.clock.now();
      } else this.dieAfterSend = strike(a, s, s.failure, this.world.cut);
    }
    if (this.failed && this.promotedAt === undefined && now >= s.failAt + s.promoteAfterMs) {
      this.producerTarget = recovery; // the routing controls flipped first (the runbook's step 3)
      this.promotedAt = now;
      // A region lost at an instant it never reached (it was idle): lost now, as the operator saw it.
      if (s.failure !== 'forced-while-old-runs') a.die();
      this.promoted(await promote(b, a, 1, this.drilled, this.clock));
      this.active = b;
    }
    if (this.promotedAt !== undefined && this.healedAt === undefined && now >= this.promotedAt + s.healAfterMs) {
      this.healedAt = now;
      a.alive = true;
      a.sendFate = () => 'accept';
      a.writesBeforeDeath = undefined;
      this.dieAfterSend = false;
      this.world.cut(false);
      if (s.scenario === 'failback') this.reverse = new Replicator(recovery, primary, s.kafkaLagMs, s.offsetSyncMs);
    }
    if (this.healedAt !== undefined && this.reconciliation === undefined && now >= this.healedAt + KEEPER_MS) {
      await demote(a, this.clock);
      // Replication catches up before the operator reconciles (the runbook checks ReplicationLatency first).
      await this.world.drain();
      this.reconciliation = await reconcile(a, b, this.clock);
      this.reconciledAt = this.clock.now();
    }
    if (
      this.reverse !== undefined &&
      this.reconciliation !== undefined &&
      this.failedBackAt === undefined &&
      now >= (this.reconciledAt ?? now) + s.failbackAfterMs &&
      this.reverse.nextDue() === Number.POSITIVE_INFINITY
    ) {
      // Failback: a switchover back, once the old region is demoted, reconciled, and the topic flows back.
      await this.switchTo(a, primary);
      this.failedBackAt = this.clock.now();
    }
  }

  /** The next instant a step is due, or the topic replicated back has a record to deliver. */
  nextDue(now: number, keeperAt: number): number {
    return Math.min(this.nextStep(now, keeperAt), this.reverse?.nextDue() ?? Number.POSITIVE_INFINITY);
  }

  private nextStep(now: number, keeperAt: number): number {
    const s = this.schedule;
    if (!this.failed) return s.failAt;
    if (this.promotedAt === undefined) return s.failAt + s.promoteAfterMs;
    if (this.healedAt === undefined) return this.promotedAt + s.healAfterMs;
    if (this.reconciliation === undefined) return Math.min(keeperAt, this.healedAt + KEEPER_MS);
    if (this.reverse !== undefined && this.failedBackAt === undefined)
      return Math.max(now + TICK_MS, (this.reconciledAt ?? now) + s.failbackAfterMs);
    return Number.POSITIVE_INFINITY;
  }

  private promoted(p: Promoted): void {
    this.unresolvedAtPromotion += p.unresolved;
    this.promotion ??= p.report;
  }

  /** The planned switchover, from the active region to the other; producers move once the new one is promoted. */
  private async switchTo(to: Region, toCluster: Cluster): Promise<void> {
    const done = await switchover(
      this.active,
      to,
      this.drilled,
      this.clock,
      () => this.world.publish(this.clock.now()),
      () => this.world.drain(),
    );
    this.producerTarget = toCluster;
    this.active = to;
    this.promoted(done.promoted);
    this.reconciliation ??= done.reconciliation;
  }
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

/**
 * The drill's verdict (docs/regions.md "The drill", "The verdict"): every notice of every event the producers published
 * in exactly one outcome, no second accepted send of one (eventId, channel) on an at-most-once channel across both
 * regions' providers (a successor counts as its original), no send while its region's fence said FENCED, no write by a
 * region to an item another region owns; RPO as notices held or unknown at the promotion, RTO from the promotion to
 * the recovery region's first accepted send (for a switchover, from its demotion's start). A failover's promotion must
 * leave no unfinished notice of an older epoch without a successor. Notices of events that only a destroyed cluster
 * ever held are `unrecoverable`, counted apart (allowed in `cluster-destroyed` only). Every count is also given per
 * scenario.
 */
import type { Played } from './play.ts';
import { RECOVERY } from './region.ts';

export const OUTCOMES = [
  'sent',
  'sentLate',
  'held',
  'unknown',
  'expired',
  'failed',
  'suppressed',
  'refused',
  'unrecoverable',
  'lost',
] as const;
export type Outcome = (typeof OUTCOMES)[number];

/** What a schedule's verdict and the whole drill's count alike. */
interface Counted {
  readonly pass: boolean;
  readonly duplicates: { readonly atMostOnce: number };
  readonly accounted: Record<Outcome, number>;
  readonly fence: {
    readonly sendsWhileFenced: number;
    readonly writesToForeignItems: number;
    readonly selfDemotions: number;
    /** Records replicated from the other cluster that a region read and did not take (quarantined, never sent). */
    readonly replicatedNotTaken: number;
  };
  /** Unfinished notices of an older epoch a promotion left without a successor (no decision, no hold): must be 0. */
  readonly unresolvedAtPromotion: number;
}

export interface ScheduleVerdict extends Counted {
  readonly seed: number;
  readonly scenario: string;
  readonly rpo: { readonly heldOrUnknownAtPromotion: number };
  readonly rto: { readonly promotionToFirstSendMs: number | null };
  readonly converged: boolean;
  /** Why it failed, named by invariant. */
  readonly broken: string[];
  readonly errors: string[];
}

type Item = Record<string, unknown>;

export function judgeSchedule(played: Played): ScheduleVerdict {
  const accounted = Object.fromEntries(OUTCOMES.map((o) => [o, 0])) as Record<Outcome, number>;
  let duplicates = 0;
  const byEvent = new Map<string, Item[]>();
  for (const item of played.items) {
    if (item.kind !== 'NOTIFICATION') continue;
    const list = byEvent.get(String(item.eventId)) ?? [];
    list.push(item);
    byEvent.set(String(item.eventId), list);
  }
  for (const event of played.schedule.events) {
    for (const channel of event.channels) {
      const sends = played.accepted.filter((s) => s.eventId === event.eventId && s.channel === channel);
      if (sends.filter((s) => !s.secondCopy).length > 1) duplicates++;
      const items = (byEvent.get(event.eventId) ?? []).filter((i) => i.channel === channel);
      const outcome = outcomeOf(sends, items);
      accounted[outcome === 'lost' && played.onlyInDestroyedCluster.has(event.eventId) ? 'unrecoverable' : outcome]++;
    }
  }
  const firstSend = played.accepted
    .filter((s) => s.region === RECOVERY && played.promotedAt !== undefined && s.at >= played.promotedAt)
    .reduce((min, s) => Math.min(min, s.at), Number.POSITIVE_INFINITY);
  const sendsWhileFenced = played.accepted.filter((s) => s.whileFenced).length;
  const broken = [
    ...(duplicates > 0 ? [`duplicates.atMostOnce = ${duplicates}`] : []),
    ...(accounted.lost > 0 ? [`accounted.lost = ${accounted.lost}`] : []),
    ...(accounted.unrecoverable > 0 && played.schedule.scenario !== 'cluster-destroyed'
      ? [`accounted.unrecoverable = ${accounted.unrecoverable}`]
      : []),
    ...(played.unresolvedAtPromotion > 0 ? [`unresolvedAtPromotion = ${played.unresolvedAtPromotion}`] : []),
    ...(sendsWhileFenced > 0 ? [`fence.sendsWhileFenced = ${sendsWhileFenced}`] : []),
    ...(played.foreignWrites > 0 ? [`fence.writesToForeignItems = ${played.foreignWrites}`] : []),
    ...(played.converged ? [] : ['the schedule did not converge']),
    ...(played.errors.length > 0 ? [`${played.errors.length} errors`] : []),
  ];
  return {
    seed: played.schedule.seed,
    scenario: played.schedule.scenario,
    pass: broken.length === 0,
    duplicates: { atMostOnce: duplicates },
    accounted,
    fence: {
      sendsWhileFenced,
      writesToForeignItems: played.foreignWrites,
      selfDemotions: played.selfDemotions,
      replicatedNotTaken: played.replicatedNotTaken,
    },
    unresolvedAtPromotion: played.unresolvedAtPromotion,
    rpo: { heldOrUnknownAtPromotion: (played.promotion?.held ?? 0) + (played.promotion?.unknown ?? 0) },
    rto: {
      promotionToFirstSendMs:
        Number.isFinite(firstSend) && played.promotedAt !== undefined ? firstSend - played.promotedAt : null,
    },
    converged: played.converged,
    broken,
    errors: played.errors.slice(0, 5),
  };
}

/** One notice's outcome: sent if a provider accepted it, else what its items (original and successors) say. */
function outcomeOf(sends: Played['accepted'], items: Item[]): Outcome {
  if (sends.length > 0) return sends.some((s) => s.late) ? 'sentLate' : 'sent';
  const statuses = items.map((i) => String(i.status)).filter((s) => s !== 'HANDED_OVER');
  if (statuses.includes('PENDING') || statuses.includes('SENDING')) return 'lost';
  if (statuses.includes('UNKNOWN')) return 'unknown';
  if (statuses.includes('FAILOVER_HELD')) return 'held';
  if (statuses.includes('EXPIRED')) return 'expired';
  if (statuses.includes('SUPERSEDED') || statuses.includes('THROTTLED')) return 'failed';
  const failed = items.find((i) => i.status === 'FAILED');
  if (failed !== undefined) return failed.lastError === 'EXPIRED' ? 'expired' : 'failed';
  if (statuses.includes('SUPPRESSED')) return 'suppressed';
  if (statuses.includes('REFUSED')) return 'refused';
  return 'lost';
}

/** The totals of a set of schedules: the whole run, or one scenario's. */
export interface Totals extends Counted {
  readonly schedules: number;
  readonly passed: number;
  readonly rpo: { readonly heldOrUnknownAtPromotion: number; readonly maxPerSchedule: number };
  readonly rto: { readonly p50: number | null; readonly p99: number | null; readonly max: number | null };
}

export interface DrillVerdict extends Totals {
  readonly byScenario: Record<string, Totals>;
  readonly failures: { seed: number; scenario: string; broken: string[]; errors: string[] }[];
}

export function judgeDrill(verdicts: readonly ScheduleVerdict[]): DrillVerdict {
  const scenarios = [...new Set(verdicts.map((v) => v.scenario))].sort();
  const failures = verdicts
    .filter((v) => !v.pass)
    .map((v) => ({ seed: v.seed, scenario: v.scenario, broken: v.broken, errors: v.errors }));
  return {
    ...totals(verdicts),
    byScenario: Object.fromEntries(scenarios.map((s) => [s, totals(verdicts.filter((v) => v.scenario === s))])),
    failures: failures.slice(0, 20),
  };
}

function totals(verdicts: readonly ScheduleVerdict[]): Totals {
  const sum = (f: (v: ScheduleVerdict) => number) => verdicts.reduce((n, v) => n + f(v), 0);
  const accounted = Object.fromEntries(OUTCOMES.map((o) => [o, sum((v) => v.accounted[o])])) as Record<Outcome, number>;
  const rtos = verdicts
    .map((v) => v.rto.promotionToFirstSendMs)
    .filter((x): x is number => x !== null)
    .sort((a, b) => a - b);
  const q = (p: number) =>
    rtos.length === 0 ? null : (rtos[Math.min(rtos.length - 1, Math.floor(p * rtos.length))] ?? null);
  const passed = verdicts.filter((v) => v.pass).length;
  return {
    pass: passed === verdicts.length && verdicts.length > 0,
    schedules: verdicts.length,
    passed,
    duplicates: { atMostOnce: sum((v) => v.duplicates.atMostOnce) },
    accounted,
    fence: {
      sendsWhileFenced: sum((v) => v.fence.sendsWhileFenced),
      writesToForeignItems: sum((v) => v.fence.writesToForeignItems),
      selfDemotions: sum((v) => v.fence.selfDemotions),
      replicatedNotTaken: sum((v) => v.fence.replicatedNotTaken),
    },
    unresolvedAtPromotion: sum((v) => v.unresolvedAtPromotion),
    rpo: {
      heldOrUnknownAtPromotion: sum((v) => v.rpo.heldOrUnknownAtPromotion),
      maxPerSchedule: verdicts.reduce((m, v) => Math.max(m, v.rpo.heldOrUnknownAtPromotion), 0),
    },
    rto: { p50: q(0.5), p99: q(0.99), max: rtos.at(-1) ?? null },
  };
}

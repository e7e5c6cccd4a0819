/**
 * The region commands — promote, demote, reconcile — as every surface runs them (docs/regions.md "Runbook"): the
 * command line on two local endpoints, and the operator function of a deployed stage's region behind the operator API
 * (region-routes.ts). One request shape, one preview — both fences as they are, what is unfinished in each replica, and
 * the refusal the confirm would give, by the same rule —, one confirm, audited with the verified caller (regions.ts
 * `audited`). The work is promote.ts and reconcile.ts.
 *
 * Where it acts: promote in the region promoted, demote in the region demoted, reconcile in the active region (it
 * reads, and settles, the old one's records there). A deployed region's operator function acts only for its own
 * region (`acting`); asked for the other's, it refuses and names where to ask.
 */
import * as z from 'zod/mini';
import type { Channel } from '../domain/channels.ts';
import type { ChannelPolicies } from '../domain/delivery-policy.ts';
import type { FenceControl } from '../domain/fence.ts';
import type { VerifiedIdentity } from '../domain/identity.ts';
import type { AuditLog } from '../stores/audit-log.ts';
import type { SeenEpoch } from '../stores/successor-store.ts';
import type { Clock, RegionSide } from './promote.ts';
import { demote, promoteFailover } from './promote.ts';
import { reconcile } from './reconcile.ts';
import { demoteRefusal, fromEpochBehind, promoteRefusal, RegionRefused, reconcileRefusal } from './region-refusal.ts';
import { audited } from './regions.ts';

export const REGION_COMMANDS = ['promote', 'demote', 'reconcile'] as const;
export type RegionCommand = (typeof REGION_COMMANDS)[number];

const region = z.string().check(z.regex(/^[a-z]{2}(-[a-z]+)+-\d$/, 'must be an AWS region name, e.g. ap-northeast-3'));

/** Each command's request, as the command line sends it and the operator API checks it. */
export const REGION_REQUEST_SCHEMAS = {
  /** Only a failover is built: the old region is said to be unreachable, and its last epoch given. */
  promote: z.object({
    to: region,
    oldRegionUnreachable: z.literal(true, 'only a failover is built yet: say oldRegionUnreachable: true'),
    fromEpoch: z.number().check(z.int(), z.gte(0)),
    cutAt: z.optional(z.iso.datetime()),
  }),
  demote: z.object({ region }),
  reconcile: z.object({ from: region }),
} as const;

export type RegionRequest = {
  [C in RegionCommand]: z.infer<(typeof REGION_REQUEST_SCHEMAS)[C]>;
};

export const isRegionCommand = (name: string | undefined): name is RegionCommand =>
  (REGION_COMMANDS as readonly string[]).includes(name ?? '');

/** The request as its command takes it, or the words that say what is wrong with it. */
export function parseRegionRequest<C extends RegionCommand>(
  command: C,
  body: unknown,
): { ok: true; request: RegionRequest[C] } | { ok: false; problem: string } {
  const parsed = (REGION_REQUEST_SCHEMAS[command] as z.ZodMiniType).safeParse(body);
  if (parsed.success) return { ok: true, request: parsed.data as RegionRequest[C] };
  const problem = parsed.error.issues
    .map((i) => `${i.path.length === 0 ? 'the request' : i.path.join('.')}: ${i.message}`)
    .join('; ');
  return { ok: false, problem };
}

/** What the commands are set up with: the stage's timeouts, placement and failover settings. */
export interface RegionCommandSettings {
  /** The ingest function's timeout and dispatch's: no invocation outlives them. */
  readonly ingestTimeoutMs: number;
  readonly dispatchTimeoutMs: number;
  /** Reconcile waits this long after marking the predecessor (ingest's timeout and the fence's cache). */
  readonly settleAfterMs: number;
  readonly lookupMs: number;
  readonly placement: { readonly sweepShards: number; readonly pendingThresholdMs: number };
  readonly secondCopy: readonly Channel[];
  readonly policies: ChannelPolicies;
  /** The longest one call waits (the operator API: within API Gateway's 29 s); longer, it answers when to run again. */
  readonly waitUpToMs?: number;
}

/** The stage's two regions as the command reaches them, and the one whose operator runs it (undefined: either). */
export interface RegionCommandScope {
  readonly sides: readonly RegionSide[];
  readonly acting?: string;
}

/** The region a command names: promote's `to`, demote's `region`, reconcile's `from`. */
export const namedRegion = (request: RegionRequest[RegionCommand]): string =>
  'to' in request ? request.to : 'region' in request ? request.region : request.from;

/** The region a command acts in. */
export function actingRegion(
  command: RegionCommand,
  request: RegionRequest[RegionCommand],
  sides: readonly RegionSide[],
) {
  const named = namedRegion(request);
  return command === 'reconcile' ? (sides.find((s) => s.region !== named)?.region ?? '') : named;
}

/** The region a command names, refused when it is neither of the stage's, or not this operator's to act in. */
export function scopeProblem(
  command: RegionCommand,
  request: RegionRequest[RegionCommand],
  scope: RegionCommandScope,
): string | undefined {
  const named = namedRegion(request);
  const regions = scope.sides.map((s) => s.region);
  if (!regions.includes(named)) return `${named} is not a region of this stage: name one of ${regions.join(', ')}`;
  const acts = actingRegion(command, request, scope.sides);
  if (scope.acting !== undefined && acts !== scope.acting) {
    return `${command} acts in ${acts}: ask the operator API of ${acts}'s stack, not ${scope.acting}'s`;
  }
  return undefined;
}

export interface RegionPreview {
  /** Both fences as they are (or `unreachable`), and what is unfinished in each replica. */
  readonly plan: Record<string, unknown>;
  /** The refusal the confirm would give, where the fences it needs answered. */
  readonly refusal?: RegionRefused;
}

/** Counted up to this many (by DynamoDB, Select COUNT), then said as "at least": a preview answers in seconds. */
const COUNT_UP_TO = 100_000;

/**
 * What the command would do, and the refusal the confirm would give: reads only. The plan: both fences as they are,
 * how many entries each replica's sweep index lists as unfinished, and the highest epoch each replica has seen of
 * each region — its heartbeat's or its newest notifications' (`lastSeenEpochs`: where the on-call reads a lost
 * region's epoch for `--from-epoch`).
 */
export async function regionPreview(
  command: RegionCommand,
  request: RegionRequest[RegionCommand],
  sides: readonly RegionSide[],
  now = Date.now(),
): Promise<RegionPreview> {
  // A region that does not answer is shown so, not a failure of the preview: a failover is for a region lost.
  const orUnreachable = async <T>(read: () => Promise<T>) =>
    read().catch((error: Error) => ({ unreachable: `${error.name}: ${error.message}` }));
  const perSide = <T>(read: (s: RegionSide) => Promise<T>) =>
    Promise.all(sides.map(async (s) => [s.region, await orUnreachable(() => read(s))] as const));
  const [fences, unfinished, heartbeats] = await Promise.all([
    perSide((s) => s.fence.control(true)),
    perSide(async (s) => {
      const { count, atLeast } = await s.store.countUnfinished(COUNT_UP_TO);
      return atLeast ? `${count} or more` : count;
    }),
    perSide(async (s) =>
      Object.fromEntries(
        await Promise.all(
          sides.map(async (r) => [r.region, (await lastSeen(command, request, s, r.region, now)) ?? null]),
        ),
      ),
    ),
  ]);
  const plan = {
    fences: Object.fromEntries(fences),
    unfinished: Object.fromEntries(unfinished),
    lastSeenEpochs: Object.fromEntries(heartbeats),
  };
  const fenceOf = (r: string) => {
    const read = fences.find(([name]) => name === r)?.[1];
    return read !== undefined && 'unreachable' in read ? 'unreachable' : read;
  };
  const other = (r: string) => sides.find((s) => s.region !== r)?.region ?? '';
  const refusal = refusalOf(command, request, fenceOf, other) ?? epochRefusal(command, request, heartbeats, other);
  return refusal === undefined ? { plan } : { plan, refusal };
}

/**
 * The epoch a replica has seen of a region: its heartbeat's; for the region a promotion fails over from, in the
 * promoted region's replica, its newest notifications' too — what the confirm reads (promote.ts), and only there:
 * that look reads a few entries of every sweep partition.
 */
function lastSeen(
  command: RegionCommand,
  request: RegionRequest[RegionCommand],
  replica: RegionSide,
  region: string,
  now: number,
) {
  const to = command === 'promote' ? (request as RegionRequest['promote']).to : undefined;
  return replica.region === to && region !== to
    ? replica.store.lastSeenEpoch(region, now)
    : replica.store.heartbeatEpoch(region);
}

/** Promote's `--from-epoch` below the lost region's last seen epoch, as the promoted region's replica holds it. */
function epochRefusal(
  command: RegionCommand,
  request: RegionRequest[RegionCommand],
  heartbeats: readonly (readonly [string, unknown])[],
  other: (region: string) => string,
): RegionRefused | undefined {
  if (command !== 'promote') return undefined;
  const q = request as RegionRequest['promote'];
  const from = other(q.to);
  const seen = heartbeats.find(([r]) => r === q.to)?.[1] as Record<string, SeenEpoch | null>;
  const lost = seen?.[from];
  return lost != null && q.fromEpoch < lost.epoch ? fromEpochBehind({ from, fromEpoch: q.fromEpoch }, lost) : undefined;
}

function refusalOf(
  command: RegionCommand,
  request: RegionRequest[RegionCommand],
  fenceOf: (region: string) => FenceControl | undefined | 'unreachable',
  other: (region: string) => string,
): RegionRefused | undefined {
  const named = namedRegion(request);
  const own = fenceOf(named);
  // A fence that did not answer cannot be judged here; the confirm reads it again and refuses then if it must.
  if (own === 'unreachable') return undefined;
  if (command === 'promote') return promoteRefusal(named, own, other(named));
  if (command === 'demote') return demoteRefusal(named, own);
  const active = fenceOf(other(named));
  return active === 'unreachable' ? undefined : reconcileRefusal(named, other(named), own, active);
}

export interface RegionConfirm {
  readonly by: VerifiedIdentity;
  readonly reason: string;
  /** What the command was about to do, as its preview showed it: the audit record keeps it. */
  readonly plan: Record<string, unknown>;
  readonly audit: AuditLog;
  readonly clock: Clock;
  readonly settings: RegionCommandSettings;
}

/**
 * The confirmed command, audited: its record before, its outcome (done, refused or failed) after. A refusal is thrown
 * as RegionRefused (audited REFUSED); the report is answered.
 */
export function regionConfirm(
  command: RegionCommand,
  request: RegionRequest[RegionCommand],
  sides: readonly RegionSide[],
  c: RegionConfirm,
): Promise<object> {
  const side = (r: string) => sides.find((s) => s.region === r) as RegionSide;
  const other = (r: string) => sides.find((s) => s.region !== r) as RegionSide;
  const by = c.by.principal;
  const s = c.settings;
  const waitUpTo = s.waitUpToMs === undefined ? {} : { waitUpToMs: s.waitUpToMs };
  const step = <T extends object>(
    action: 'PROMOTE' | 'DEMOTE' | 'RECONCILE',
    target: string,
    perform: () => Promise<T>,
  ) => audited(c.audit, c.clock.now, { action, by: c.by, reason: c.reason, target, plan: c.plan, perform });
  if (command === 'promote') {
    const q = request as RegionRequest['promote'];
    const failover = {
      by,
      reason: c.reason,
      from: other(q.to).region,
      fromEpoch: q.fromEpoch,
      ...(q.cutAt === undefined ? {} : { cutAt: Date.parse(q.cutAt) }),
      secondCopy: s.secondCopy,
      placement: s.placement,
      ...(s.waitUpToMs === undefined ? {} : { budgetMs: s.waitUpToMs }),
    };
    return step('PROMOTE', q.to, () => promoteFailover(side(q.to), failover, c.clock));
  }
  if (command === 'demote') {
    const q = request as RegionRequest['demote'];
    const timeouts = { ingestTimeoutMs: s.ingestTimeoutMs, dispatchTimeoutMs: s.dispatchTimeoutMs };
    return step('DEMOTE', q.region, () =>
      demote(side(q.region), { by, reason: c.reason, ...timeouts, ...waitUpTo }, c.clock),
    );
  }
  const q = request as RegionRequest['reconcile'];
  const settle = {
    by,
    reason: c.reason,
    policies: s.policies,
    secondCopy: s.secondCopy,
    placement: s.placement,
    lookupMs: s.lookupMs,
    settleAfterMs: s.settleAfterMs,
    ...waitUpTo,
  };
  return step('RECONCILE', q.from, () => reconcile(side(q.from), other(q.from), settle, c.clock));
}

/**
 * A report that says the command is not finished yet: when to run it again (demote's quiescence, reconcile's settle,
 * promote's successor pass — at once: the fence has moved, and the next run goes on where this one stopped).
 */
export function runAgainAt(report: object): number | undefined {
  const r = report as { quietFrom?: number; quiescentAt?: number; settlesAt?: number };
  const p = report as { activeAt?: number; successorsDoneAt?: number };
  if (p.activeAt !== undefined) return p.successorsDoneAt === undefined ? p.activeAt : undefined;
  if (r.settlesAt !== undefined) return r.settlesAt;
  if (r.quietFrom !== undefined && r.quiescentAt === undefined) return r.quietFrom;
  return undefined;
}

export { RegionRefused };

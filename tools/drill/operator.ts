/**
 * The drill's operator (docs/regions.md "Runbook"): the real `ops promote`, `demote` and `reconcile` use cases against
 * the two local regions, as the runbook orders them — a failover's promotion; a planned switchover (demote the old
 * region, let it drain, promote the other, reconcile at once: the old region answers); a failback is a switchover back.
 * Two planted faults live here, in the promotion: `no-successors` (the old region's unfinished notices left without a
 * decision) and `takeover-in-place` (the new region writes its decision onto the old region's items).
 */
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { DEFAULT_CHANNEL_POLICIES } from '../../functions/domain/delivery-policy.ts';
import { isUnfinished } from '../../functions/domain/failover.ts';
import { epochOf } from '../../functions/domain/fence.ts';
import type { NotificationStatus } from '../../functions/domain/state-machine.ts';
import { DEFAULT_SWEEP_PLACEMENT } from '../../functions/domain/sweep-index.ts';
import { regions } from '../../functions/operator/index.ts';
import { CONTROL_CACHE_MS } from '../../functions/stores/fence-store.ts';
import type { OwnedNotification } from '../../functions/stores/successor-store.ts';
import { DISPATCH_TIMEOUT_MS, type Drilled, INGEST_TIMEOUT_MS, type Region } from './region.ts';
import { scanTable } from './tables.ts';

type Clock = regions.Clock;

const DEMOTE = {
  by: 'drill',
  reason: 'drill demotion',
  ingestTimeoutMs: INGEST_TIMEOUT_MS,
  dispatchTimeoutMs: DISPATCH_TIMEOUT_MS,
};

const RECONCILE = {
  by: 'drill',
  reason: 'drill reconcile',
  policies: DEFAULT_CHANNEL_POLICIES,
  secondCopy: [],
  placement: DEFAULT_SWEEP_PLACEMENT,
  lookupMs: 3_600_000,
  settleAfterMs: INGEST_TIMEOUT_MS + CONTROL_CACHE_MS,
};

export interface Promoted {
  readonly report: regions.PromotionReport;
  /** Unfinished notices of an older epoch the promotion left in the new replica with no successor: must be 0. */
  readonly unresolved: number;
}

/** `ops promote --to <to> --old-region-unreachable --from-epoch <n>`: the promotion every drill scenario uses. */
export async function promote(to: Region, from: Region, fromEpoch: number, drilled: Drilled, clock: Clock) {
  const side = to.side();
  const listed: OwnedNotification[] = [];
  if (drilled.plant === 'no-successors' || drilled.plant === 'takeover-in-place') {
    for await (const item of side.store.unfinished()) listed.push(item);
    // The planted promotion sees nothing to decide.
    const blind = Object.assign(Object.create(side.store), {
      unfinished: async function* () {},
      unfinishedPage: async () => ({ items: [] }),
    });
    Object.assign(side, { store: blind });
  }
  const report = await regions.promoteFailover(
    side,
    {
      by: 'drill',
      reason: 'drill promotion',
      from: from.name,
      fromEpoch,
      secondCopy: [],
      placement: DEFAULT_SWEEP_PLACEMENT,
    },
    clock,
  );
  if (drilled.plant === 'takeover-in-place') {
    for (const item of listed) {
      if (epochOf(item) >= report.epoch) continue;
      const status: NotificationStatus = 'PENDING';
      await to.doc.send(
        new PutCommand({ TableName: to.table, Item: { ...item, owner: to.name, epoch: report.epoch, status } }),
      );
    }
  }
  return { report, unresolved: await unresolvedAfter(to, report.epoch) } satisfies Promoted;
}

/** What a failover's promotion must leave behind: no unfinished notice of an older epoch without its successor. */
async function unresolvedAfter(to: Region, epoch: number): Promise<number> {
  const notices = (await scanTable(to.endpoint, to.table)).filter((i) => i.kind === 'NOTIFICATION');
  const superseded = new Set(notices.map((i) => `${String(i.pk)}|${String(i.supersedes)}`));
  return notices.filter(
    (i) =>
      isUnfinished(i.status as NotificationStatus) &&
      epochOf(i) < epoch &&
      !superseded.has(`${String(i.pk)}|${String(i.sk)}`),
  ).length;
}

export const demote = (region: Region, clock: Clock) => regions.demote(region.side(), DEMOTE, clock);

/** A run stopped by the drill between a release's two writes (the Lambda's timeout, a throttle). */
class Interrupted extends Error {}

/**
 * `ops reconcile` as an on-call runs it on a deployed stage: the first run stops between a release's two writes (the
 * original handed over in the old region, the successor not yet released: the Lambda killed at its timeout), and after
 * the 504 it is run again — twice at once, the first re-run still going when the second starts. Every notice must
 * still be sent once; the report is the two re-runs' counts added up (each counts only what its own writes did).
 */
export async function reconcile(from: Region, to: Region, clock: Clock): Promise<regions.ReconcileReport> {
  const side = to.side();
  const stopping = Object.assign(Object.create(Object.getPrototypeOf(side.store)), side.store, {
    move: async (...args: Parameters<typeof side.store.move>) => {
      if (args[1] === 'PENDING') throw new Interrupted('stopped between the two writes of a release');
      return side.store.move(...args);
    },
  });
  try {
    await regions.reconcile(from.side(), { ...side, store: stopping }, RECONCILE, clock);
  } catch (error) {
    if (!(error instanceof Interrupted)) throw error;
  }
  const [a, b] = await Promise.all([
    regions.reconcile(from.side(), to.side(), RECONCILE, clock),
    regions.reconcile(from.side(), to.side(), RECONCILE, clock),
  ]);
  const keys = Object.keys(a.ids) as (keyof typeof a.ids)[];
  const counts = {} as Record<(typeof keys)[number], number>;
  const ids = {} as Record<(typeof keys)[number], string[]>;
  for (const k of keys) {
    counts[k] = a[k] + b[k];
    ids[k] = [...a.ids[k], ...b.ids[k]];
  }
  return { ...a, ...counts, ids };
}

/**
 * A planned switchover as the tools do it today (the transfer of a switchover is not built): the old region demoted —
 * intake stopped, fenced, quiet —, what producers published meanwhile still written to its cluster (`published`), its
 * table's writes replicated (`drained`), producers moved, the other region promoted, and reconciled at once.
 */
export async function switchover(
  from: Region,
  to: Region,
  drilled: Drilled,
  clock: Clock,
  published: () => void,
  drained: () => Promise<void>,
): Promise<{ promoted: Promoted; reconciliation: regions.ReconcileReport }> {
  const demotion = await demote(from, clock);
  published();
  await drained();
  to.predecessorInboxes = (ids) => from.inboxes().findTaken(ids);
  const promoted = await promote(to, from, demotion.epoch, drilled, clock);
  return { promoted, reconciliation: await reconcile(from, to, clock) };
}

/** What the end-to-end run found: where each notification's time went, by channel and class, and the human summary. */

import { classOf } from '../../functions/domain/catalogue.ts';
import type { Channel } from '../../functions/domain/channels.ts';
import { parseNotificationId } from '../../functions/domain/keys.ts';
import type { readTable } from '../local/pipeline.ts';
import type { Trace } from './e2e-trace.ts';

export const PHASES = ['ingest', 'stream', 'dispatchQueue', 'claim', 'pacingWait', 'audience', 'provider'] as const;
type Phase = (typeof PHASES)[number];
/** The warm-up events' id prefix: not measured. */
export const WARM_UP = 'warm-up';

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? 0;
export function spread(values: number[]) {
  const s = [...values].sort((a, b) => a - b);
  return { count: s.length, p50: percentile(s, 50), p99: percentile(s, 99), max: s[s.length - 1] ?? 0 };
}
export const round2 = (n: number) => Math.round(n * 100) / 100;

interface Row {
  readonly id: string;
  readonly channel: Channel;
  readonly noticeClass: string;
  readonly total: number;
  readonly phases: Record<Phase, number>;
}

/** Every SENT notification whose every step was seen, with its phases; and how many were not. */
export function tracedRows(
  notifications: Awaited<ReturnType<typeof readTable>>['notifications'],
  traces: ReadonlyMap<string, Trace>,
  delivered: ReadonlyMap<string, number>,
  accepted: ReadonlyMap<string, number>,
): { rows: Row[]; untraced: number } {
  const rows: Row[] = [];
  let untraced = 0;
  for (const n of notifications) {
    const id = String(n.notificationId);
    const ref = parseNotificationId(id);
    if (ref?.eventId.startsWith(`${WARM_UP}-`)) continue;
    const t = traces.get(id);
    const deliveredAt = ref === undefined ? undefined : delivered.get(ref.eventId);
    const acceptedAt = t?.messageId === undefined ? undefined : accepted.get(t.messageId);
    const steps = [t?.committedAt, t?.handedAt, t?.claimAt, t?.askedAt, t?.grantedAt, t?.sendAt];
    if (n.status !== 'SENT' || t === undefined || deliveredAt === undefined || acceptedAt === undefined) untraced++;
    else if (steps.some((step) => step === undefined)) untraced++;
    else {
      const [committed, handed, claim, asked, granted, send] = steps as number[];
      rows.push({
        id,
        channel: n.channel as Channel, // read from the pipeline's own table, which holds only channels it wrote
        noticeClass: classOf(String(n.template)),
        total: acceptedAt - deliveredAt,
        phases: {
          ingest: (committed as number) - deliveredAt,
          stream: (handed as number) - (committed as number),
          dispatchQueue: (claim as number) - (handed as number),
          claim: (asked as number) - (claim as number),
          pacingWait: (granted as number) - (asked as number),
          audience: (send as number) - (granted as number),
          provider: acceptedAt - (send as number),
        },
      });
    }
  }
  return { rows, untraced };
}

/** The spread of the total and of each phase, by channel and class. */
export function byChannelAndClass(rows: readonly Row[], traces: ReadonlyMap<string, Trace>) {
  const groups = new Map<string, Row[]>();
  for (const r of rows) {
    const key = `${r.channel} ${r.noticeClass}`;
    groups.set(key, [...(groups.get(key) ?? []), r]);
  }
  const breakdown = (of: readonly Row[]) => ({
    totalMs: spread(of.map((r) => r.total)),
    phasesMs: Object.fromEntries(PHASES.map((p) => [p, spread(of.map((r) => r.phases[p]))])) as Record<
      Phase,
      ReturnType<typeof spread>
    >,
    deferredBeforeSent: of.filter((r) => (traces.get(r.id)?.claims ?? 1) > 1).length,
  });
  return Object.fromEntries(
    [...groups.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([k, of]) => [k, breakdown(of)]),
  );
}

/**
 * Under a backlog: how fast the normal emails drained against the quota, and why a critical notice waited in the
 * stream — the notifications committed before it and handed to dispatch only after it was committed (ahead of it in
 * the shard), and how long the quota needs for them.
 */
/** The backlog figure is the drain of the channel the bench paces at SES's rate; a new channel states whether it is. */
const PACED_BY_SES_RATE: Readonly<Record<Channel, boolean>> = { EMAIL: true, PUSH: false, SMS: false };

export function backlogFigures(
  rows: readonly Row[],
  traces: ReadonlyMap<string, Trace>,
  delivered: ReadonlyMap<string, number>,
  sesRate: number,
) {
  const normalAccepts = rows
    .filter((r) => r.noticeClass === 'normal' && PACED_BY_SES_RATE[r.channel])
    .map((r) => r.total + (delivered.get(parseNotificationId(r.id)?.eventId ?? '') ?? 0))
    .sort((a, b) => a - b);
  const drainSeconds =
    normalAccepts.length > 1 ? ((normalAccepts.at(-1) as number) - (normalAccepts[0] as number)) / 1000 : 0;
  const ahead = rows
    .filter((r) => r.noticeClass === 'critical')
    .map((c) => {
      const committed = traces.get(c.id)?.committedAt as number;
      return rows.filter((o) => {
        const u = traces.get(o.id) as Trace;
        return o !== c && (u.committedAt as number) < committed && (u.handedAt as number) > committed;
      }).length;
    });
  return {
    criticalBehindInStream: {
      notifications: spread(ahead),
      atQuotaMs: spread(ahead.map((n) => Math.round((n * 1000) / sesRate))),
    },
    drain: {
      normalEmailsSent: normalAccepts.length,
      seconds: round2(drainSeconds),
      perSecond: drainSeconds > 0 ? round2((normalAccepts.length - 1) / drainSeconds) : 0,
      ofQuota: drainSeconds > 0 ? round2((normalAccepts.length - 1) / drainSeconds / sesRate) : 0,
    },
  };
}

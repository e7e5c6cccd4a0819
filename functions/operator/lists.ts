/**
 * The operator's lists of what needs a hand: quarantined records, refused notifications, suppressed addresses and the
 * audit of earlier actions — newest first, each with what an operator acts on (an id to replay, an event to repair,
 * a hash to lift).
 */

import type { SuppressionItem } from '../domain/audience.ts';
import type { Channel } from '../domain/channels.ts';
import { type KafkaSource, quarantineId } from '../domain/keys.ts';
import type { ProducerTrace } from '../domain/notification.ts';
import type { ListedAuditRecord } from '../stores/audit-log.ts';
import type { IncidentWindow } from '../stores/quarantine-store.ts';
import type { OperatorPorts } from './ports.ts';

/** What an operator asks for: since when (default: the last day) and of which reason. */
export interface IncidentLookup {
  readonly sinceIso?: string;
  readonly reason?: string;
}

const DAY_MS = 86_400_000;

/** The look-up as the incident index reads it: from `sinceIso` (or a day ago) to now. */
function windowOf(ports: Pick<OperatorPorts, 'now'>, lookup: IncidentLookup): IncidentWindow {
  const now = ports.now();
  return {
    sinceIso: lookup.sinceIso ?? new Date(now - DAY_MS).toISOString(),
    untilIso: new Date(now).toISOString(),
    ...(lookup.reason === undefined ? {} : { reason: lookup.reason }),
  };
}

/** How many of the listed items fall under each value of `by`, most first: an incident's shape at a glance. */
export function countBy<T>(
  items: readonly T[],
  by: (item: T) => string,
): { readonly value: string; readonly count: number }[] {
  const counts = new Map<string, number>();
  for (const item of items) counts.set(by(item), (counts.get(by(item)) ?? 0) + 1);
  return [...counts]
    .map(([value, count]) => ({ value, count }))
    .sort((a, b) => b.count - a.count || a.value.localeCompare(b.value));
}

/** The producer a quarantined record names, as one line: its topic, its key and its headers when it had them. */
export const producerText = (q: Pick<QuarantineView, 'source' | 'producer'>): string =>
  [
    q.source.topic,
    ...(q.producer?.key === undefined ? [] : [`key=${q.producer.key}`]),
    ...Object.entries(q.producer?.headers ?? {}).map(([n, v]) => `${n}=${v}`),
  ].join(' ');

export interface QuarantineView {
  /** What replay-quarantine takes: <topic>#<partition>#<offset>. */
  readonly id: string;
  readonly reason: string;
  readonly detail: string;
  readonly eventId: string | null;
  readonly receivedAt: string;
  readonly source: KafkaSource;
  readonly rawTruncated: boolean;
  readonly replayedAt: string | null;
  /** The record's key and headers, when it had them: who produced it. */
  readonly producer: ProducerTrace | null;
}

export async function listQuarantine(
  ports: Pick<OperatorPorts, 'quarantine' | 'now'>,
  lookup: IncidentLookup = {},
): Promise<QuarantineView[]> {
  return (await ports.quarantine.list(windowOf(ports, lookup)))
    .map((q) => ({
      id: quarantineId(q.source),
      reason: String(q.reason),
      detail: String(q.detail ?? ''),
      eventId: q.eventId ?? null,
      receivedAt: String(q.receivedAt),
      source: q.source,
      rawTruncated: q.rawTruncated === true,
      replayedAt: q.replayedAt ?? null,
      producer: q.producer ?? null,
    }))
    .sort((a, b) => b.receivedAt.localeCompare(a.receivedAt) || a.source.offset - b.source.offset);
}

export interface RefusedView {
  readonly notificationId: string;
  readonly eventId: string;
  readonly channel: Channel;
  readonly reason: string;
  readonly detail: string;
  readonly createdAt: string;
}

/** Every REFUSED notification (docs/event.md "A refused channel"), with the rule it broke, never the value. */
export async function listRefused(
  ports: Pick<OperatorPorts, 'events' | 'now'>,
  lookup: IncidentLookup = {},
): Promise<RefusedView[]> {
  return (await ports.events.listRefused(windowOf(ports, lookup)))
    .map((n) => ({
      notificationId: String(n.notificationId),
      eventId: String(n.eventId),
      channel: n.channel as Channel,
      reason: String(n.refusedReason ?? ''),
      detail: String(n.refusedDetail ?? ''),
      createdAt: String(n.createdAt),
    }))
    .sort((a, b) => b.createdAt.localeCompare(a.createdAt) || a.notificationId.localeCompare(b.notificationId));
}

/** A suppression as an operator sees it: keyed by the address's hash (no address is stored). */
export interface SuppressionView extends Omit<SuppressionItem, 'pk' | 'sk'> {
  readonly addressHash: string;
}

/** The suppressions of a channel: the active ones, or with `all` the lifted ones too. */
export async function listSuppressions(
  ports: Pick<OperatorPorts, 'audience'>,
  channel: Channel,
  all: boolean,
): Promise<SuppressionView[]> {
  return (await ports.audience.list(channel))
    .filter((i) => all || i.state === 'ACTIVE')
    .map(({ pk: _pk, sk, ...rest }) => ({ addressHash: sk, ...rest }));
}

/** Every audited operator action since `sinceIso`, newest first, each with its outcome. */
export const listAudit = (ports: Pick<OperatorPorts, 'audit'>, sinceIso?: string): Promise<ListedAuditRecord[]> =>
  ports.audit.list(sinceIso);

/**
 * What the local run reports from its table: counts of every kind, and bounded lists of what a reader looks at — each
 * notification's outcome, the quarantined records, the preferences and suppressions. One paged scan folds
 * everything, so a run of any size reads its table once and holds at most `listLimit` entries per list: a 50 MB
 * events file's summary takes the memory of a small one's.
 */
import { messageIdOf } from '../../functions/domain/message-id.ts';
import { scanPages } from './dynamodb-local.ts';

export interface Outcome {
  notificationId: string;
  status: string;
  /** What the provider reported after accepting it (DELIVERED, BOUNCED, FAILED …); null when nothing was reported. */
  deliveryStatus: string | null;
  /**
   * Why it was not sent (SUPPRESSED: BOUNCED / COMPLAINED / OPTED_OUT / …; REFUSED: the reason and the rule), the
   * failure's reason, or — sent but not delivered — the carrier's or platform's answer.
   */
  reason: string | null;
}

/** Why the moment stopped it, and when (docs/dispatch.md "The right moment"); undefined for any other status. */
function momentReason(n: Record<string, unknown>): string | undefined {
  switch (n.status) {
    case 'HELD':
      return `QUIET_HOURS: waiting until ${String(n.heldUntil)} (${String(n.heldZone)})`;
    case 'EXPIRED':
      return `VALIDITY_ENDED: valid until ${String(n.validUntil)}`;
    case 'SUPERSEDED':
      return `NEWER_NOTICE: ${String(n.supersededBy)}, occurred ${String(n.supersededByOccurredAt)}`;
    case 'THROTTLED':
      return `FLOOD_GUARD: ${String(n.throttledWindow)}`;
    default:
      return undefined;
  }
}

export function outcomeOf(n: Record<string, unknown>): Outcome {
  return {
    notificationId: String(n.notificationId),
    status: String(n.status),
    deliveryStatus: typeof n.deliveryStatus === 'string' ? n.deliveryStatus : null,
    reason:
      momentReason(n) ??
      (typeof n.suppressedReason === 'string'
        ? n.suppressedReason
        : typeof n.refusedReason === 'string'
          ? `${n.refusedReason}: ${String(n.refusedDetail ?? '')}`
          : n.status !== 'SENT' && typeof n.lastError === 'string'
            ? n.lastError
            : n.deliveryStatus === 'FAILED' && typeof n.deliveryResponse === 'string'
              ? n.deliveryResponse
              : null),
  };
}

/**
 * The `limit` first entries by `order` of everything added, in O(limit) memory: it sorts and cuts whenever it holds
 * twice the limit.
 */
export class BoundedList<T> {
  private items: T[] = [];
  /** Everything added, listed or not. */
  total = 0;
  constructor(
    private readonly limit: number,
    private readonly order: (a: T, b: T) => number,
  ) {}
  add(item: T): void {
    this.total++;
    this.items.push(item);
    if (this.items.length >= 2 * this.limit) this.cut();
  }
  list(): T[] {
    this.cut();
    return [...this.items];
  }
  /** Added but not in the list. */
  get notListed(): number {
    return this.total - Math.min(this.total, this.limit);
  }
  private cut() {
    this.items.sort(this.order);
    if (this.items.length > this.limit) this.items.length = this.limit;
  }
}

const byString = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

export interface QuarantineEntry {
  reason: unknown;
  detail: unknown;
  eventId: unknown;
  offset: number;
}

export interface TableSummary {
  inbox: number;
  byStatus: Record<string, number>;
  /** By id; when there are more than the limit, those that did not end SENT are the ones kept. */
  outcomes: Outcome[];
  outcomesNotListed: number;
  quarantine: QuarantineEntry[];
  quarantined: number;
  preferences: { eventId: string; occurredAt: string; applied: boolean }[];
  suppressions: {
    channel: string;
    addressHash: string;
    state: string;
    cause: string;
    since: string;
    notificationId: string;
  }[];
  /** providerMessageId → notificationId, for the message ids asked for (an SMS's send carries no id of ours). */
  notificationIdOfMessage: Map<string, string>;
}

export async function summarizeTable(
  endpoint: string,
  tableName: string,
  options: { listLimit: number; messageIds?: ReadonlySet<string> },
): Promise<TableSummary> {
  const { listLimit } = options;
  const byStatus: Record<string, number> = {};
  let inbox = 0;
  const outcomes = new BoundedList<Outcome>(
    listLimit,
    (a, b) => Number(a.status === 'SENT') - Number(b.status === 'SENT') || byString(a.notificationId, b.notificationId),
  );
  const quarantine = new BoundedList<QuarantineEntry>(listLimit, (a, b) => a.offset - b.offset);
  const preferences = new BoundedList<TableSummary['preferences'][number] & { offset: number }>(
    listLimit,
    (a, b) => a.offset - b.offset,
  );
  const suppressions = new BoundedList<TableSummary['suppressions'][number]>(listLimit, (a, b) =>
    byString(`${a.channel}${a.addressHash}`, `${b.channel}${b.addressHash}`),
  );
  const notificationIdOfMessage = new Map<string, string>();

  const fold = (i: Record<string, unknown>) => {
    switch (i.kind) {
      case 'NOTIFICATION': {
        byStatus[String(i.status)] = (byStatus[String(i.status)] ?? 0) + 1;
        outcomes.add(outcomeOf(i));
        const messageId = messageIdOf(i);
        if (typeof messageId === 'string' && options.messageIds?.has(messageId) === true) {
          notificationIdOfMessage.set(messageId, String(i.notificationId));
        }
        return;
      }
      case 'INBOX':
        inbox++;
        if (i.type === 'PreferencesUpdated') {
          preferences.add({
            eventId: String(i.eventId),
            occurredAt: String(i.occurredAt),
            applied: i.skipped !== 'STALE',
            offset: Number((i.source as { offset?: number } | undefined)?.offset ?? 0),
          });
        }
        return;
      case 'QUARANTINE':
        quarantine.add({
          reason: i.reason,
          detail: i.detail ?? null,
          eventId: i.eventId ?? null,
          offset: (i.source as { offset: number }).offset,
        });
        return;
      case 'SUPPRESSION':
        suppressions.add({
          channel: String(i.channel),
          addressHash: String(i.sk),
          state: String(i.state),
          cause: String(i.cause),
          since: String(i.since),
          notificationId: String(i.notificationId),
        });
        return;
    }
  };

  for await (const page of scanPages(endpoint, tableName)) for (const item of page) fold(item);
  return {
    inbox,
    byStatus,
    outcomes: outcomes.list().sort((a, b) => byString(a.notificationId, b.notificationId)),
    outcomesNotListed: outcomes.notListed,
    quarantine: quarantine.list(),
    quarantined: quarantine.total,
    preferences: preferences.list().map(({ offset: _, ...p }) => p),
    suppressions: suppressions.list(),
    notificationIdOfMessage,
  };
}

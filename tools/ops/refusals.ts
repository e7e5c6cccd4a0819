/**
 * Refused channels, for an operator (docs/event.md "A refused channel"): the notifications ingest wrote REFUSED because
 * their contact point had no reading its provider can send to, and their repair once the producer fixed it.
 *
 * - listRefused: every REFUSED notification, with its reason and the rule it broke (never the value), newest first;
 *   an erased one is not listed (it is never repaired).
 * - repairEvent: feeds the producer's corrected event through the ingest function — the same path a corrected resend
 *   on the topic takes — and reports what became of each refused channel. Ingest accepts it as a repair only when it
 *   is the same event apart from the refused channels' contact points; anything else is a conflict, quarantined as
 *   any other (nothing already sent is ever sent again: those channels are not touched). An erased notification is
 *   never repaired: refused before anything is fed.
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import type { Channel } from '../../functions/domain/channels.ts';
import { erasedRefusal, isErased } from '../../functions/domain/erasure.ts';
import { decodeRecordValue, isTransfer } from '../../functions/domain/event/decode.ts';
import { type KafkaSource, QUARANTINE_SK, quarantineId, quarantinePk } from '../../functions/domain/keys.ts';
import {
  eventIdOf,
  type IngestInvoker,
  inspectEvent,
  mskEventOf,
  OperatorError,
  scanWhere,
  type TableDeps,
} from './operations.ts';

type Item = Record<string, unknown>;

export interface RefusedView {
  readonly notificationId: string;
  readonly eventId: string;
  readonly channel: Channel;
  readonly reason: string;
  readonly detail: string;
  readonly createdAt: string;
}

/** A Scan with a filter: refused notifications are few (each one raised an alarm), and this is a tool, never a Lambda. */
export async function listRefused(
  deps: TableDeps,
  filter: { sinceIso?: string; reason?: string } = {},
): Promise<RefusedView[]> {
  // An erased one is left out: nothing can repair it (functions/domain/erasure.ts).
  const conditions = ['kind = :n', '#status = :refused', 'attribute_not_exists(erasedAt)'];
  const values: Item = { ':n': 'NOTIFICATION', ':refused': 'REFUSED' };
  if (filter.sinceIso !== undefined) {
    conditions.push('createdAt >= :since');
    values[':since'] = filter.sinceIso;
  }
  if (filter.reason !== undefined) {
    conditions.push('refusedReason = :reason');
    values[':reason'] = filter.reason;
  }
  const items = await scanWhere(deps, conditions, values, { '#status': 'status' });
  return items
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

/** Where a corrected event fed by an operator is read from: its own topic name, so a refusal of it is told apart. */
export const REPAIR_TOPIC = 'notifier.ops.repair';

export interface RepairResult {
  readonly eventId: string;
  /**
   * REPAIRED: every refused channel is PENDING now (dispatch sends it through the stream trigger, as any new
   * notification). STILL_REFUSED: the corrected event is this event, but a refused contact point still has no reading.
   * QUARANTINED: ingest refused the corrected event (another meaning than the event: a conflict; or bad input).
   */
  readonly outcome: 'REPAIRED' | 'STILL_REFUSED' | 'QUARANTINED';
  readonly channels: { readonly channel: Channel; readonly status: string; readonly reason: string | null }[];
  /** The quarantine item's id and reason, when the corrected event was quarantined. */
  readonly quarantine: { readonly id: string; readonly reason: string; readonly detail: string } | null;
}

export async function repairEvent(
  deps: TableDeps & { invokeIngest: IngestInvoker; now: () => number },
  eventId: string,
  corrected: string,
): Promise<RepairResult> {
  const named = eventIdOf(corrected);
  if (named !== eventId) {
    throw new OperatorError(`the corrected event's eventId is ${JSON.stringify(named)}, not "${eventId}"`, 'INVALID');
  }
  // The same decoder ingest uses: a file that is not a transfer event at all is the operator's mistake, said now.
  const decoded = decodeRecordValue(Buffer.from(corrected, 'utf8').toString('base64'), 1_048_576);
  if (!decoded.ok) {
    throw new OperatorError(
      `the corrected event is refused: ${decoded.rejection.reason} ${decoded.rejection.detail}`,
      'INVALID',
    );
  }
  if (!isTransfer(decoded)) throw new OperatorError('the corrected event is not a transfer event', 'INVALID');
  const before = await inspectEvent(deps, eventId);
  if (before.inbox === undefined) {
    throw new OperatorError(
      `no event ${eventId}: an event whose every channel was refused was quarantined; replay it with replay-quarantine <id> --value-file FILE`,
      'NOT_FOUND',
    );
  }
  const refusedItems = before.notifications.filter((n) => n.status === 'REFUSED');
  const erased = refusedItems.find(isErased);
  if (erased !== undefined) {
    throw new OperatorError(erasedRefusal(String(erased.notificationId), erased, 'repaired'), 'REFUSED');
  }
  const refused = refusedItems.map((n) => n.channel as Channel);
  if (refused.length === 0)
    throw new OperatorError(`no channel of ${eventId} is REFUSED: nothing to repair`, 'REFUSED');
  const source: KafkaSource = { topic: REPAIR_TOPIC, partition: 0, offset: deps.now() };
  await deps.invokeIngest(mskEventOf([{ source, value: Buffer.from(corrected, 'utf8') }]));
  const after = await inspectEvent(deps, eventId);
  const channels = refused.map((channel) => {
    const n = after.notifications.find((x) => x.channel === channel);
    return {
      channel,
      status: String(n?.status ?? 'MISSING'),
      reason: typeof n?.refusedReason === 'string' ? n.refusedReason : null,
    };
  });
  const q = (
    await deps.doc.send(
      new GetCommand({
        TableName: deps.tableName,
        Key: { pk: quarantinePk(source), sk: QUARANTINE_SK },
        ConsistentRead: true,
      }),
    )
  ).Item;
  const quarantine =
    q === undefined ? null : { id: quarantineId(source), reason: String(q.reason), detail: String(q.detail ?? '') };
  const outcome =
    quarantine !== null ? 'QUARANTINED' : channels.every((c) => c.status !== 'REFUSED') ? 'REPAIRED' : 'STILL_REFUSED';
  return { eventId, outcome, channels, quarantine };
}

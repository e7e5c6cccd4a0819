/**
 * Repairing refused channels (docs/event.md "A refused channel"): the producer's corrected event fed through the
 * ingest function — the same path a corrected resend on the topic takes. Ingest accepts it as a repair only when it
 * is the same event apart from the refused channels' contact points; anything else is a conflict, quarantined as any
 * other, and nothing already sent is sent again (those channels are not touched).
 *
 * Input: the eventId and the corrected event. Output: REPAIRED (every refused channel PENDING now), STILL_REFUSED (a
 * refused contact point still has no reading) or QUARANTINED (ingest refused the corrected event), per channel.
 * Steps: read the event; decide (the corrected value must be a transfer event of this eventId that the decoder
 * accepts; the event must exist and have a refused channel; an erased one is never repaired); audited — with the
 * contact points the corrected event supplies, which is why four eyes covers it by default —; invoke ingest at the
 * repair's own position; read the event and the quarantine item at that position.
 */
import type { Channel } from '../domain/channels.ts';
import { erasedRefusal, isErased } from '../domain/erasure.ts';
import type { BankingEvent } from '../domain/event/contract.ts';
import { decodeRecordValue, isTransfer } from '../domain/event/decode.ts';
import { type KafkaSource, quarantineId } from '../domain/keys.ts';
import { loadPhoneNumbers } from '../domain/phone-numbers.ts';
import { contactFor } from '../domain/routing.ts';
import type { EventView } from '../stores/event-store.ts';
import { type OperatorAction, ok, refused } from './action.ts';
import { replayEvent } from './msk-event.ts';
import { eventIdOf } from './review.ts';

/** Where a corrected event fed by an operator is read from: its own topic name, so a refusal of it is told apart. */
export const REPAIR_TOPIC = 'notifier.ops.repair';

export interface RepairRequest {
  readonly eventId: string;
  /** The producer's corrected event, as JSON. */
  readonly corrected: string;
}

export interface RepairPlan {
  /** The refused channels, each with the rule its contact point broke (before). */
  readonly refused: readonly { readonly channel: Channel; readonly reason: string; readonly detail: string }[];
  /** The contact points the corrected event supplies for them (after): what an approver checks. */
  readonly contactPoints: Partial<Record<Channel, string>>;
  readonly userId?: string;
}

/** The corrected event's contact point of each refused channel, as the operator supplied it. */
function suppliedContacts(recipient: BankingEvent['recipient'], channels: readonly Channel[]) {
  const supplied: Partial<Record<Channel, string>> = {};
  for (const channel of channels) {
    const contact = contactFor(recipient, channel);
    if (typeof contact === 'string') supplied[channel] = contact;
  }
  return supplied;
}

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

export const repair: OperatorAction<RepairRequest, EventView, RepairPlan, RepairResult> = {
  audit: 'REPAIR',
  target: (request) => request.eventId,
  // The corrected event carries contact points an operator supplied: what four eyes is for by default.
  kind: () => 'OPERATOR_CONTENT',
  customer: (plan) => plan.userId,
  // decide reads the corrected event as ingest does, and a phone number written otherwise than E.164 needs the rules
  // ingest loads on demand (domain/phone-numbers.ts): loaded here, in the step before the pure decision.
  read: async (ports, request) => {
    await loadPhoneNumbers();
    return ports.events.read(request.eventId);
  },

  decide(before, { eventId, corrected }) {
    const named = eventIdOf(corrected);
    if (named !== eventId) {
      return refused('INVALID', `the corrected event's eventId is ${JSON.stringify(named)}, not "${eventId}"`);
    }
    // The same decoder ingest uses: a file that is not a transfer event at all is the operator's mistake, said now.
    const decoded = decodeRecordValue(Buffer.from(corrected, 'utf8').toString('base64'), 1_048_576);
    if (!decoded.ok) {
      return refused(
        'INVALID',
        `the corrected event is refused: ${decoded.rejection.reason} ${decoded.rejection.detail}`,
      );
    }
    if (!isTransfer(decoded)) return refused('INVALID', 'the corrected event is not a transfer event');
    if (before.inbox === undefined) {
      return refused(
        'NOT_FOUND',
        `no event ${eventId}: an event whose every channel was refused was quarantined; replay it with replay-quarantine <id> --value-file FILE`,
      );
    }
    const refusedItems = before.notifications.filter((n) => n.status === 'REFUSED');
    const erased = refusedItems.find(isErased);
    if (erased !== undefined) {
      return refused('ERASED', erasedRefusal(String(erased.notificationId), erased, 'repaired'));
    }
    if (refusedItems.length === 0)
      return refused('NOTHING_TO_DO', `no channel of ${eventId} is REFUSED: nothing to repair`);
    const userId = before.notifications.find((n) => typeof n.userId === 'string')?.userId as string | undefined;
    return ok({
      refused: refusedItems.map((n) => ({
        channel: n.channel as Channel,
        reason: String(n.refusedReason ?? ''),
        detail: String(n.refusedDetail ?? ''),
      })),
      contactPoints: suppliedContacts(
        decoded.event.recipient,
        refusedItems.map((n) => n.channel as Channel),
      ),
      ...(userId === undefined ? {} : { userId }),
    });
  },

  shown: (plan) => ({ refused: plan.refused, suppliedContactPoints: plan.contactPoints }),

  async perform(ports, plan, { eventId, corrected }) {
    const refusedChannels = plan.refused.map((r) => r.channel);
    const source: KafkaSource = { topic: REPAIR_TOPIC, partition: 0, offset: ports.now() };
    await ports.invokeIngest(replayEvent([{ source, value: Buffer.from(corrected, 'utf8') }]));
    const after = await ports.events.read(eventId);
    const channels = refusedChannels.map((channel) => {
      const n = after.notifications.find((x) => x.channel === channel);
      return {
        channel,
        status: String(n?.status ?? 'MISSING'),
        reason: typeof n?.refusedReason === 'string' ? n.refusedReason : null,
      };
    });
    const q = await ports.quarantine.get(source);
    const quarantine =
      q === undefined ? null : { id: quarantineId(source), reason: String(q.reason), detail: String(q.detail ?? '') };
    const outcome =
      quarantine !== null
        ? 'QUARANTINED'
        : channels.every((c) => c.status !== 'REFUSED')
          ? 'REPAIRED'
          : 'STILL_REFUSED';
    return ok({ eventId, outcome, channels, quarantine });
  },

  done: (result) => ({ outcome: result.outcome, channels: result.channels }),
};

/**
 * The notices a failover held, in an operator's hands (docs/regions.md "Runbook", "What to tell customers of held
 * notices"). A successor waits — FAILOVER_HELD, or UNKNOWN because its original was in flight — for the old region's
 * record, which `ops reconcile` reads once that region answers. When it never will (its cluster destroyed, its table
 * gone), an operator lists them (`listHeld`) and decides each: `releaseHeld` sends it now, late — on an at-most-once
 * channel the preview says plainly the customer may get it twice —, `settleHeld` closes it without sending. Both are
 * audited actions (action.ts): previewed, a reason required, refused truthfully, each write conditional on what was
 * read, so a reconciliation deciding the same notice meanwhile makes the operator's write a refusal (CHANGED).
 */
import type { ApprovalKind } from '../domain/approval.ts';
import { CHANNELS, type Channel } from '../domain/channels.ts';
import { maskContact } from '../domain/contact-mask.ts';
import type { DeliveryPolicy } from '../domain/delivery-policy.ts';
import {
  customerMessageOf,
  isHeld,
  notHeldRefusal,
  type OldRegionLook,
  type OriginalSeen,
  oldRegionRefusal,
  oldRegionText,
  originalText,
  releaseRefusal,
  releaseRisk,
  type Settlement,
  settlementOf,
} from '../domain/held.ts';
import { messageIdOf } from '../domain/message-id.ts';
import type { NotificationStatus } from '../domain/state-machine.ts';
import type { HeldRead } from '../stores/held-store.ts';
import type { OwnedNotification } from '../stores/successor-store.ts';
import { type Actor, type OperatorAction, ok, refused } from './action.ts';
import type { OperatorPorts } from './ports.ts';

/** One held notice as an operator lists it: what it is, whose (the contact point masked), since when and why. */
export interface HeldView {
  readonly notificationId: string;
  readonly eventId: string;
  readonly channel: Channel;
  readonly status: NotificationStatus;
  readonly userId: string | null;
  readonly recipient: string;
  readonly since: string;
  readonly heldReason: string;
  readonly supersedes: string;
  readonly epoch: number | null;
}

export interface HeldListing {
  readonly held: HeldView[];
  /** Pass it back (`after`) for the next page; absent on the last. */
  readonly next?: string;
}

export const HELD_PAGE_SIZE = 50;

const viewOf = (n: OwnedNotification): HeldView => ({
  notificationId: n.notificationId,
  eventId: n.eventId,
  channel: n.channel,
  status: n.status,
  userId: typeof n.userId === 'string' ? n.userId : null,
  recipient: maskContact(n.channel, String(n.recipient ?? '')),
  since: n.createdAt,
  heldReason: n.heldReason ?? String(n.lastError ?? ''),
  supersedes: n.supersedes ?? '',
  epoch: typeof n.epoch === 'number' ? n.epoch : null,
});

/** One page of the held and unknown-in-flight notices of this region's replica, by their sweep key. */
export async function listHeld(
  ports: Pick<OperatorPorts, 'held'>,
  query: { readonly channel?: Channel; readonly after?: string; readonly limit?: number } = {},
): Promise<HeldListing> {
  const channels = query.channel === undefined ? CHANNELS : [query.channel];
  const page = await ports.held.page(channels, query.limit ?? HELD_PAGE_SIZE, query.after);
  const held = page.items.filter((n) => isHeld(n)).map(viewOf);
  return page.next === undefined ? { held } : { held, next: page.next };
}

export interface HeldRequest {
  readonly notificationId: string;
}

export interface SettleRequest extends HeldRequest {
  /** The proof the old region sent it (its provider's message id, an evidence object): settled as handed over. */
  readonly sentBefore?: string;
}

interface HeldState extends HeldRead {
  readonly policy: DeliveryPolicy | undefined;
  readonly oldRegion: OldRegionLook | undefined;
}

export interface ReleasePlan {
  readonly item: OwnedNotification;
  readonly original: OriginalSeen | undefined;
  readonly policy: DeliveryPolicy;
  readonly risk: string;
  readonly oldRegion: OldRegionLook | undefined;
}

export interface SettlePlan {
  readonly item: OwnedNotification;
  readonly original: OriginalSeen | undefined;
  readonly settlement: Settlement;
  readonly oldRegion: OldRegionLook | undefined;
}

export interface HeldOutcome {
  readonly notificationId: string;
  readonly fromStatus: NotificationStatus;
  readonly status: NotificationStatus;
}

async function readHeld(ports: OperatorPorts, request: HeldRequest): Promise<HeldState> {
  const [read, oldRegion] = await Promise.all([ports.held.read(request.notificationId), ports.oldRegion?.()]);
  return { ...read, policy: read.item === undefined ? undefined : ports.policies[read.item.channel], oldRegion };
}

const seen = (o: OwnedNotification | undefined): OriginalSeen | undefined =>
  o === undefined
    ? undefined
    : {
        status: o.status,
        ...(messageIdOf(o) === undefined ? {} : { providerMessageId: messageIdOf(o) }),
      };

/** Who decided, why and when, kept on the item as on a manual resend. */
const decisionOf = (decision: 'RELEASED' | 'SETTLED', actor: Actor, now: number) => ({
  heldDecision: { decision, by: actor.identity, reason: actor.reason, at: new Date(now).toISOString() },
});

const customerOf = (plan: { readonly item: OwnedNotification }) =>
  typeof plan.item.userId === 'string' ? plan.item.userId : undefined;

const changedMeanwhile = (id: string, verb: string) =>
  refused('CHANGED', `${id} changed while being ${verb} (a reconciliation or another operator decided it): look again`);

export const releaseHeld: OperatorAction<HeldRequest, HeldState, ReleasePlan, HeldOutcome> = {
  audit: 'RELEASE_HELD',
  target: (request) => request.notificationId,
  kind: (): ApprovalKind => 'RELEASE_HELD',
  customer: customerOf,
  read: readHeld,

  decide({ item, original, policy, oldRegion }, request) {
    const refusal =
      releaseRefusal(request.notificationId, item, seen(original)) ??
      oldRegionRefusal(request.notificationId, oldRegion);
    if (refusal !== undefined || item === undefined) return { ok: false, refusal: refusal ?? notFound(request) };
    const chosen = policy ?? 'AT_MOST_ONCE';
    return ok({
      item,
      original: seen(original),
      policy: chosen,
      risk: releaseRisk(item.channel, chosen, originalText(seen(original))),
      oldRegion,
    });
  },

  shown: (plan) => ({
    fromStatus: plan.item.status,
    heldReason: plan.item.heldReason ?? null,
    channel: plan.item.channel,
    deliveryPolicy: plan.policy,
    original: originalText(plan.original),
    risk: plan.risk,
    oldRegion: oldRegionText(plan.oldRegion),
  }),

  async perform(ports, plan, request, actor) {
    const now = ports.now();
    const moved = await ports.held.decide(
      plan.item,
      'PENDING',
      { late: true, ...decisionOf('RELEASED', actor, now) },
      now,
    );
    if (!moved) return changedMeanwhile(request.notificationId, 'released');
    return ok({ notificationId: request.notificationId, fromStatus: plan.item.status, status: 'PENDING' });
  },

  done: (outcome) => ({ fromStatus: outcome.fromStatus, status: outcome.status, late: true }),
};

export const settleHeld: OperatorAction<SettleRequest, HeldState, SettlePlan, HeldOutcome> = {
  audit: 'SETTLE_HELD',
  target: (request) => request.notificationId,
  kind: (): ApprovalKind => 'SETTLE_HELD',
  customer: customerOf,
  read: readHeld,

  decide({ item, original, oldRegion }, request) {
    const refusal = notHeldRefusal(request.notificationId, item) ?? oldRegionRefusal(request.notificationId, oldRegion);
    if (refusal !== undefined || item === undefined) return { ok: false, refusal: refusal ?? notFound(request) };
    if (request.sentBefore !== undefined && request.sentBefore.trim() === '') {
      return refused(
        'INVALID',
        'sentBefore names the proof of the send (a message id, an evidence object), or is left out',
      );
    }
    const settlement = settlementOf(item, seen(original), request.sentBefore);
    return ok({ item, original: seen(original), settlement, oldRegion });
  },

  shown: (plan) => ({
    fromStatus: plan.item.status,
    heldReason: plan.item.heldReason ?? null,
    to: plan.settlement.to,
    ...(plan.settlement.to === 'HANDED_OVER' ? { proof: plan.settlement.proof } : {}),
    original: originalText(plan.original),
    customer: customerMessageOf(plan.settlement),
    oldRegion: oldRegionText(plan.oldRegion),
  }),

  async perform(ports, plan, request, actor) {
    const now = ports.now();
    const s = plan.settlement;
    const fields =
      s.to === 'HANDED_OVER'
        ? { handedOverTo: plan.item.supersedes ?? '', settledProof: s.proof }
        : s.to === 'FAILED'
          ? { lastError: s.lastError }
          : {};
    const moved = await ports.held.decide(plan.item, s.to, { ...fields, ...decisionOf('SETTLED', actor, now) }, now);
    if (!moved) return changedMeanwhile(request.notificationId, 'settled');
    return ok({ notificationId: request.notificationId, fromStatus: plan.item.status, status: s.to });
  },

  done: (outcome) => ({ fromStatus: outcome.fromStatus, status: outcome.status }),
};

const notFound = (request: HeldRequest) => ({
  code: 'NOT_FOUND' as const,
  message: `no notification ${request.notificationId}`,
});

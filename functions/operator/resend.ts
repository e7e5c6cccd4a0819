/**
 * An operator's resend of a FAILED or UNKNOWN notification (docs/operations.md "The operator CLI"): back to PENDING
 * once, recorded on the item with who (verified), when and why. One conditional write on the item as it was read;
 * the rule that refuses it (domain/resend.ts) is asked by the preview and again here.
 */

import { type SuppressedReason, suppressedReason } from '../domain/audience.ts';
import type { Channel } from '../domain/channels.ts';
import { parseNotificationId } from '../domain/keys.ts';
import {
  acceptedMessageId,
  blockedRefusal,
  evidenceBatchOfItem,
  evidencePendingRefusal,
  resendRefusal,
} from '../domain/resend.ts';
import type { ResendTarget, StoredItem } from '../stores/event-store.ts';
import { type OperatorAction, ok, refused } from './action.ts';
import { suppressionOf } from './customer.ts';
import { evidencePendingOfSend } from './evidence-pending.ts';
import type { OperatorPorts } from './ports.ts';

export interface ResendRequest {
  readonly notificationId: string;
  /**
   * The provider's message id of the send the operator knows about and resends despite: required, and must match,
   * when the provider's acceptance is on the item. A second copy is then deliberate, never an accident.
   */
  readonly despiteAccepted?: string;
  /** The status and attempt the operator was shown: the resend is refused if the notification moved since. */
  readonly expected?: { readonly status: string; readonly attempt: number };
}

export interface ResendPlan {
  readonly item: ResendTarget;
  readonly status: string;
  readonly attempt: number;
  readonly lastError: string | undefined;
  /** The provider's message id when it is known to have accepted the notification: a resend is a second copy. */
  readonly accepted: string | undefined;
}

export interface ResendOutcome {
  readonly notificationId: string;
  readonly fromStatus: string;
  /** The notification after the resend. */
  readonly item: StoredItem;
}

/** What a resend decides on: the notification as it is, and the clock's reading — its validity is judged at it. */
export interface ResendState {
  readonly item: StoredItem | undefined;
  readonly now: number;
  /** What would stop it at the send now (its address's suppression, the customer's choice), as dispatch decides. */
  readonly blocked?: SuppressedReason;
  /** The SENT send's evidence batch while its intent is open (not written yet): the resend waits for it. */
  readonly evidencePending?: { readonly batch: string; readonly dueMs: number };
}

export const resend: OperatorAction<ResendRequest, ResendState, ResendPlan, ResendOutcome> = {
  audit: 'RESEND',
  target: (request) => request.notificationId,
  // A second copy of what the provider accepted is a kind of its own: a bank may want it approved.
  kind: (request) => (request.despiteAccepted === undefined ? 'RESEND' : 'SECOND_COPY'),
  customer: (plan) => (typeof plan.item.userId === 'string' ? plan.item.userId : undefined),

  async read(ports, request) {
    const ref = parseNotificationId(request.notificationId);
    if (ref === undefined) return { item: undefined, now: ports.now() };
    const view = await ports.events.read(ref.eventId);
    const item = view.notifications.find((n) => n.notificationId === request.notificationId);
    const blocked = item === undefined ? undefined : await blockedAtSend(ports, item);
    const evidencePending = item === undefined ? undefined : await evidencePendingOf(ports, item);
    return {
      item,
      now: ports.now(),
      ...(blocked === undefined ? {} : { blocked }),
      ...(evidencePending === undefined ? {} : { evidencePending }),
    };
  },

  decide({ item, now, blocked, evidencePending }, request) {
    const id = request.notificationId;
    if (parseNotificationId(id) === undefined) {
      return refused('INVALID', `"${id}" is not a notification id (<eventId>#EMAIL|PUSH|SMS)`);
    }
    if (item === undefined) return refused('NOT_FOUND', `no notification ${id}`);
    const rule =
      resendRefusal(id, item, request.despiteAccepted, now) ??
      evidencePendingRefusal(id, evidencePending) ??
      blockedRefusal(id, blocked);
    if (rule !== undefined) return { ok: false, refusal: rule };
    const { expected } = request;
    if (expected !== undefined && (expected.status !== item.status || expected.attempt !== item.attempt)) {
      return refused('CHANGED', `${id} changed since it was shown: look again`);
    }
    return ok({
      item: item as unknown as ResendTarget,
      status: String(item.status),
      attempt: Number(item.attempt),
      lastError: typeof item.lastError === 'string' ? item.lastError : undefined,
      accepted: acceptedMessageId(item),
    });
  },

  shown: (plan) => ({
    fromStatus: plan.status,
    attempt: plan.attempt,
    ...(plan.lastError === undefined ? {} : { lastError: plan.lastError }),
    ...(plan.accepted === undefined ? {} : { despiteAccepted: plan.accepted }),
  }),

  async perform(ports, plan, request, actor) {
    const written = await ports.events.resend(
      plan.item,
      { by: actor.identity, reason: actor.reason, accepted: plan.accepted },
      ports.now(),
    );
    if (written.result === 'lost' || written.item === undefined) {
      return refused('CHANGED', `${request.notificationId} changed while being resent: look again`);
    }
    return ok({ notificationId: request.notificationId, fromStatus: plan.status, item: written.item });
  },

  done: (outcome) => ({ fromStatus: outcome.fromStatus, status: outcome.item.status, attempt: outcome.item.attempt }),
};

/**
 * A SENT notification's evidence batch whose intent is still open: not written yet. Read on every preview and again
 * before the write; an intent is never opened again once closed, so one found closed here stays closed.
 */
async function evidencePendingOf(
  ports: Pick<OperatorPorts, 'evidenceLocator' | 'evidence' | 'now'>,
  item: StoredItem,
): Promise<{ batch: string; dueMs: number } | undefined> {
  const batch = evidenceBatchOfItem(item);
  if (batch === undefined) return undefined;
  const intent = (await ports.evidenceLocator.stateOf(batch)).intent;
  return intent === undefined ? evidencePendingOfSend(ports, item) : { batch, dueMs: intent.dueMs };
}

/** What would stop this notification at the send now: the same reads and rule dispatch applies. */
export async function blockedAtSend(
  ports: Pick<OperatorPorts, 'audience'>,
  item: StoredItem,
): Promise<SuppressedReason | undefined> {
  const userId = typeof item.userId === 'string' ? item.userId : undefined;
  const [suppression, prefs] = await Promise.all([
    suppressionOf(ports, item),
    userId === undefined ? undefined : ports.audience.preferences(userId),
  ]);
  return suppressedReason(
    { channel: item.channel as Channel, template: String(item.template ?? '') },
    suppression as Parameters<typeof suppressedReason>[1],
    prefs as Parameters<typeof suppressedReason>[2],
  );
}

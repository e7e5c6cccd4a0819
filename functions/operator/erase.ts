/**
 * Erasing one customer's personal data from the table (docs/evidence-and-privacy.md "Erasure policy"): each finished
 * notification loses its address, data and user id; each event whose notifications are all erased leaves the byUser
 * index; preferences that opt out of nothing are deleted, an opt-out is kept (honouring the objection needs it).
 * Nothing still to be sent is touched; evidence under retention is not touched. Erasure is final
 * (functions/domain/erasure.ts).
 *
 * Input: the user id. Output: the notifications erased, those kept (still to be sent — or moved while we looked:
 * erase again once sent) and what became of the preferences.
 * Steps: read the customer's events; decide, per notification, erase (finished) or keep (in flight); audited; one
 * conditional write per notification — only while it is finished and still this customer's, so a resend racing the
 * erasure keeps its address and is reported as kept —; the events left fully erased leave the index; the
 * preferences, conditionally.
 */
import { isErased } from '../domain/erasure.ts';
import { TERMINAL_STATUSES } from '../domain/state-machine.ts';
import type { PreferencesForgotten } from '../stores/audience-store.ts';
import type { EventView, StoredItem } from '../stores/event-store.ts';
import { type OperatorAction, ok } from './action.ts';

interface Planned {
  readonly notificationId: string;
  readonly status: string;
  readonly key: { readonly pk: string; readonly sk: string };
}

export interface ErasurePlan {
  readonly events: readonly {
    readonly eventId: string;
    readonly hasInbox: boolean;
    readonly erase: readonly Planned[];
    readonly keep: readonly Planned[];
  }[];
}

export interface ErasureResult {
  readonly userId: string;
  readonly erased: string[];
  /** Not erased: still to be sent (or moved while we looked); erase again once sent. */
  readonly kept: { notificationId: string; status: string }[];
  readonly preferences: PreferencesForgotten;
}

const planned = (n: StoredItem): Planned => ({
  notificationId: String(n.notificationId),
  status: String(n.status),
  key: { pk: String(n.pk), sk: String(n.sk) },
});

/** Pure: per event, the finished notifications to erase and those still to be sent; an earlier erasure's are done. */
export function erasurePlan(views: readonly EventView[]): ErasurePlan {
  return {
    events: views.map((view) => {
      const open = view.notifications.filter((n) => !isErased(n));
      const finished = (n: StoredItem) => (TERMINAL_STATUSES as readonly string[]).includes(String(n.status));
      return {
        eventId: view.eventId,
        hasInbox: view.inbox !== undefined,
        erase: open.filter(finished).map(planned),
        keep: open.filter((n) => !finished(n)).map(planned),
      };
    }),
  };
}

export const eraseCustomer: OperatorAction<{ readonly userId: string }, EventView[], ErasurePlan, ErasureResult> = {
  audit: 'ERASE',
  target: (r) => r.userId,
  kind: () => 'ERASE',
  customer: (_plan, r) => r.userId,

  async read(ports, { userId }) {
    const views: EventView[] = [];
    for (const eventId of await ports.events.eventIdsOfUser(userId)) views.push(await ports.events.read(eventId));
    return views;
  },

  decide: (views) => ok(erasurePlan(views)),

  shown: (plan) => ({
    erase: plan.events.flatMap((e) => e.erase.map((n) => n.notificationId)),
    keep: plan.events.flatMap((e) => e.keep.map((n) => n.notificationId)),
  }),

  async perform(ports, plan, { userId }) {
    const at = new Date(ports.now()).toISOString();
    const erased: string[] = [];
    const kept: ErasureResult['kept'] = [];
    for (const event of plan.events) {
      kept.push(...event.keep.map(({ notificationId, status }) => ({ notificationId, status })));
      let allErased = event.keep.length === 0;
      for (const n of event.erase) {
        if ((await ports.events.erase(n.key, userId, at)) === 'applied') erased.push(n.notificationId);
        else {
          allErased = false;
          kept.push({ notificationId: n.notificationId, status: n.status });
        }
      }
      // Out of the index only when nothing of the event is left to send: a kept one is found again by the next erasure.
      if (allErased && event.hasInbox) await ports.events.unlist(event.eventId, at);
    }
    return ok({ userId, erased, kept, preferences: await ports.audience.forgetPreferences(userId, at) });
  },

  done: (result) => ({ erased: result.erased, kept: result.kept, preferences: result.preferences }),
};

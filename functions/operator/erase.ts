/**
 * Erasing one customer's personal data from the table (docs/evidence-and-privacy.md "Erasure policy"): each finished
 * notification loses its address, data and user id; each event whose notifications are all erased leaves the byUser
 * index; preferences that opt out of nothing are deleted, an opt-out is kept (honouring the objection needs it).
 * Nothing still to be sent is touched; evidence under retention is not touched. A SENT notification whose evidence
 * batch is not written yet (its intent still open) waits: the rebuild needs its data (domain/erasure.ts
 * evidencePendingWait). Erasure is final (functions/domain/erasure.ts).
 *
 * Input: the user id. Output: the notifications erased, those kept (still to be sent, their evidence not yet written
 * — or moved while we looked: erase again once sent) and what became of the preferences.
 * Steps: read the customer's events and the intents of their SENT notifications' batches; decide, per notification, erase (finished) or keep (in flight); audited; one
 * conditional write per notification — only while it is finished and still this customer's, so a resend racing the
 * erasure keeps its address and is reported as kept —; the events left fully erased leave the index; the
 * preferences, conditionally.
 */
import { evidencePendingWait, isErased } from '../domain/erasure.ts';
import { evidenceBatchOfItem } from '../domain/resend.ts';
import { TERMINAL_STATUSES } from '../domain/state-machine.ts';
import type { PreferencesForgotten } from '../stores/audience-store.ts';
import type { EventView, StoredItem } from '../stores/event-store.ts';
import { type OperatorAction, ok } from './action.ts';
import { evidencePendingOfSend } from './evidence-pending.ts';

interface Planned {
  readonly notificationId: string;
  readonly status: string;
  readonly key: { readonly pk: string; readonly sk: string };
  /** Why a finished notification is kept for now (its evidence not yet written). */
  readonly waits?: string;
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
  /** Not erased: still to be sent, its evidence not yet written (`waits` says so), or moved while we looked. */
  readonly kept: { notificationId: string; status: string; waits?: string }[];
  readonly preferences: PreferencesForgotten;
}

const planned = (n: StoredItem): Planned => ({
  notificationId: String(n.notificationId),
  status: String(n.status),
  key: { pk: String(n.pk), sk: String(n.sk) },
});

/** The customer's events, and the batches of their SENT notifications still open (batch → its due time, epoch ms). */
export interface ErasureRead {
  readonly views: readonly EventView[];
  readonly openBatches: Readonly<Record<string, number>>;
}

/** The evidence batch a SENT notification names, if any. */
const batchOf = (n: StoredItem): string | undefined => evidenceBatchOfItem(n);

/**
 * Pure: per event, the finished notifications to erase and those still to be sent — or SENT with their evidence
 * batch still open, kept until it is written; an earlier erasure's are done.
 */
export function erasurePlan(
  views: readonly EventView[],
  openBatches: Readonly<Record<string, number>> = {},
): ErasurePlan {
  return {
    events: views.map((view) => {
      const open = view.notifications.filter((n) => !isErased(n));
      const finished = (n: StoredItem) => (TERMINAL_STATUSES as readonly string[]).includes(String(n.status));
      const waits = (n: StoredItem) => {
        const batch = batchOf(n);
        const due = batch === undefined ? undefined : openBatches[batch];
        return batch === undefined || due === undefined ? undefined : evidencePendingWait(batch, due);
      };
      return {
        eventId: view.eventId,
        hasInbox: view.inbox !== undefined,
        erase: open.filter((n) => finished(n) && waits(n) === undefined).map(planned),
        keep: open
          .filter((n) => !finished(n) || waits(n) !== undefined)
          .map((n) => {
            const why = waits(n);
            return why === undefined ? planned(n) : { ...planned(n), waits: why };
          }),
      };
    }),
  };
}

/** The notifications kept because their evidence is not yet written, and why: shown only when there are any. */
function waiting(plan: ErasurePlan): { waiting?: Record<string, string> } {
  const waits = plan.events.flatMap((e) =>
    e.keep.flatMap((n) => (n.waits === undefined ? [] : [[n.notificationId, n.waits]])),
  );
  return waits.length === 0 ? {} : { waiting: Object.fromEntries(waits) };
}

export const eraseCustomer: OperatorAction<{ readonly userId: string }, ErasureRead, ErasurePlan, ErasureResult> = {
  audit: 'ERASE',
  target: (r) => r.userId,
  kind: () => 'ERASE',
  customer: (_plan, r) => r.userId,

  async read(ports, { userId }) {
    const views: EventView[] = [];
    for (const eventId of await ports.events.eventIdsOfUser(userId)) views.push(await ports.events.read(eventId));
    const sent = views.flatMap((v) => v.notifications.filter((n) => batchOf(n) !== undefined));
    const openBatches: Record<string, number> = {};
    for (const batch of new Set(sent.map((n) => batchOf(n) as string))) {
      const intent = (await ports.evidenceLocator.stateOf(batch)).intent;
      if (intent !== undefined) openBatches[batch] = intent.dueMs;
    }
    // A record on its way through the spool: kept until the spool or the store holds it (the rebuild needs the data).
    for (const n of sent) {
      const pending = await evidencePendingOfSend(ports, n);
      if (pending !== undefined) openBatches[pending.batch] = pending.dueMs;
    }
    return { views, openBatches };
  },

  decide: (read) => ok(erasurePlan(read.views, read.openBatches)),

  shown: (plan) => ({
    erase: plan.events.flatMap((e) => e.erase.map((n) => n.notificationId)),
    keep: plan.events.flatMap((e) => e.keep.map((n) => n.notificationId)),
    ...waiting(plan),
  }),

  async perform(ports, plan, { userId }) {
    const at = new Date(ports.now()).toISOString();
    const erased: string[] = [];
    const kept: ErasureResult['kept'] = [];
    for (const event of plan.events) {
      kept.push(
        ...event.keep.map(({ notificationId, status, waits }) => ({
          notificationId,
          status,
          ...(waits === undefined ? {} : { waits }),
        })),
      );
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

/**
 * The attempt witness: which claim made each accepted send, and stale writes. `attempt` is dispatch's fencing token;
 * the witness watches the handlers' own store and sender to see it from outside.
 */

import { SendError } from '../../functions/dispatch/send-error.ts';
import { ProviderSender } from '../../functions/dispatch/senders.ts';
import type { NotificationItem } from '../../functions/domain/notification.ts';
import { DynamoNotificationStore } from '../../functions/stores/notification-store.ts';
import type { AcceptedSend } from '../local/providers.ts';
import { type Invocation, invocation } from './faults.ts';

/**
 * `attempt` is dispatch's fencing token. The witness ties each send the providers accepted to the attempt (claim) that
 * made it — by the message id the provider returned, or, for a send whose reply was lost, in order among that
 * address's sends that ended with an unknown outcome — and records every transition a holder got applied after a
 * newer claim of the same notification had already committed: a stale write, which fencing must make impossible.
 */
export interface AttemptWitness {
  readonly attemptByMessageId: Map<string, number>;
  /**
   * `<notificationId>@<attempt>` of every attempt whose acceptance reached the item (its SENT, or a lease extension
   * carrying the message id): no later attempt may send that notification again.
   */
  readonly recordedAcceptances: Set<string>;
  /** Sends started without the time to finish: before the invocation's end or inside the lease (sendsWithoutTime). */
  readonly sendsWithoutTime: string[];
  /**
   * `<notificationId>@<attempt>` of every attempt the provider answered with a message id: whether the answer came
   * after the holder's lease had ended (late), and the invocation it came to (did it die before recording it?).
   */
  readonly acceptances: Map<string, { readonly late: boolean; readonly invocation: Invocation | undefined }>;
  /** Per address: the attempts of sends that ended with an unknown outcome, in order. */
  readonly unknownCalls: Map<string, number[]>;
  /** Per notificationId: the highest attempt claimed so far. */
  readonly latestClaim: Map<string, number>;
  readonly staleWrites: string[];
}

export const newWitness = (): AttemptWitness => ({
  attemptByMessageId: new Map(),
  recordedAcceptances: new Set(),
  sendsWithoutTime: [],
  acceptances: new Map(),
  unknownCalls: new Map(),
  latestClaim: new Map(),
  staleWrites: [],
});

let watching = false;

/**
 * Wraps the handlers' own store and sender classes (one module instance per process) to feed the witness of the
 * world open now. A send is late when it could not finish before its invocation's Lambda timeout or its lease.
 */
export function watchAttempts(
  witnessOf: () => AttemptWitness,
  timing: { readonly sendTimeoutMs: number; readonly dispatchTimeoutMs: number },
): void {
  if (watching) return;
  watching = true;
  const store = DynamoNotificationStore.prototype;
  const claim = store.claim;
  store.claim = async function (this: DynamoNotificationStore, ...args: Parameters<typeof claim>) {
    const r = await claim.apply(this, args);
    if (r.kind === 'claimed') {
      const latest = witnessOf().latestClaim;
      latest.set(r.item.notificationId, Math.max(latest.get(r.item.notificationId) ?? 0, r.item.attempt));
    }
    return r;
  };
  const extendLease = store.extendLease;
  store.extendLease = async function (this: DynamoNotificationStore, ...args: Parameters<typeof extendLease>) {
    const result = await extendLease.apply(this, args);
    const [item, , , providerMessageId] = args;
    if (result === 'applied' && providerMessageId !== undefined) {
      witnessOf().recordedAcceptances.add(`${item.notificationId}@${item.attempt}`);
    }
    return result;
  };
  for (const name of ['markSent', 'markFailed', 'markUnknown', 'release'] as const) {
    const original = store[name] as (item: NotificationItem, ...rest: unknown[]) => Promise<'applied' | 'lost'>;
    (store as unknown as Record<string, unknown>)[name] = async function (
      this: DynamoNotificationStore,
      item: NotificationItem,
      ...rest: unknown[]
    ) {
      const witness = witnessOf();
      // A newer claim committed before this write was even sent: if it applies, it overwrote the newer holder.
      const newer = witness.latestClaim.get(item.notificationId) ?? 0;
      const result = await original.call(this, item, ...rest);
      if (result === 'applied' && name === 'markSent')
        witness.recordedAcceptances.add(`${item.notificationId}@${item.attempt}`);
      if (result === 'applied' && newer > item.attempt) {
        witness.staleWrites.push(`${item.notificationId}: ${name} of attempt ${item.attempt} after attempt ${newer}`);
      }
      return result;
    };
  }
  const send = ProviderSender.prototype.send;
  ProviderSender.prototype.send = async function (this: ProviderSender, ...args: Parameters<typeof send>) {
    const [n] = args;
    const witness = witnessOf();
    // A send must be able to finish: before the dispatch invocation's Lambda timeout, and inside the holder's lease.
    const startedAt = invocation.getStore()?.startedAt;
    const finishes = Date.now() + timing.sendTimeoutMs;
    if (
      (startedAt !== undefined && finishes > startedAt + timing.dispatchTimeoutMs) ||
      finishes > (n.leaseUntil ?? finishes)
    ) {
      witness.sendsWithoutTime.push(`${n.notificationId} attempt ${n.attempt}`);
    }
    try {
      const id = await send.apply(this, args);
      witness.attemptByMessageId.set(id, n.attempt);
      witness.acceptances.set(`${n.notificationId}@${n.attempt}`, {
        late: Date.now() > (n.leaseUntil ?? Number.POSITIVE_INFINITY),
        invocation: invocation.getStore(),
      });
      return id;
    } catch (error) {
      if (error instanceof SendError && error.failure === 'unknown') {
        witness.unknownCalls.set(n.recipient, [...(witness.unknownCalls.get(n.recipient) ?? []), n.attempt]);
      }
      throw error;
    }
  };
}

/** Each accepted send with the attempt that made it (undefined when the witness cannot tell). */
export function attributeSends(sends: AcceptedSend[], witness: AttemptWitness): (number | undefined)[] {
  const used = new Map<string, number>();
  return sends.map((s) => {
    const byId = witness.attemptByMessageId.get(s.messageId);
    if (byId !== undefined) return byId;
    const k = used.get(s.to) ?? 0;
    used.set(s.to, k + 1);
    return witness.unknownCalls.get(s.to)?.[k];
  });
}

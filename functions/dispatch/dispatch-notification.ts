/**
 * Use case: send one notification at most once per claim (DESIGN.md "Dispatch").
 *
 * Input: the key of a notification a stream record says is PENDING. Output: what happened — for logs and metrics.
 * Steps: wait out a retry's backoff → claim (PENDING → SENDING, attempt+1, lease) → render → send → mark by outcome:
 *   accepted → SENT; rejected → FAILED; transient → PENDING again (or FAILED when attempts are used up);
 *   unknown → UNKNOWN (AT_MOST_ONCE) or PENDING again (AT_LEAST_ONCE).
 * A redelivered record, or a racing invocation, finds the item no longer PENDING and does nothing.
 * Throws only when DynamoDB itself fails, so the stream retries the record; the claim makes that retry safe.
 */
import { randomUUID } from 'node:crypto';
import type { NotificationKey, NotificationStore } from '../commons/notification-store.ts';
import { backoffMs } from '../commons/retry.ts';
import type { Brand } from '../domain/brand.ts';
import type { ChannelPolicies, NotificationItem } from '../domain/notification.ts';
import { classifySendError } from '../domain/send-outcome.ts';
import { type Message, render } from '../domain/templates.ts';
import type { Sender } from './senders.ts';

export type DispatchResult =
  | { kind: 'skipped'; why: 'claimedElsewhere' }
  | { kind: 'sent'; item: NotificationItem; providerMessageId: string; fenced: boolean }
  | { kind: 'failed'; item: NotificationItem; reason: string }
  | { kind: 'retrying'; item: NotificationItem; reason: string }
  | { kind: 'unknown'; item: NotificationItem; reason: string; resend: boolean };

export interface DispatchDeps {
  readonly store: NotificationStore;
  readonly sender: Sender;
  readonly now: () => number;
  readonly sleep: (ms: number) => Promise<void>;
  readonly policies: ChannelPolicies;
  readonly leaseMs: number;
  readonly sendTimeoutMs: number;
  readonly maxSendAttempts: number;
  readonly retryBaseMs: number;
  /** The bank's identity every message carries. */
  readonly brand: Brand;
  /** Longest a dispatcher waits for a retry's backoff before claiming; the rest is left to a later record. */
  readonly maxWaitMs?: number;
}

export async function dispatchNotification(
  key: NotificationKey,
  retryAt: number | undefined,
  deps: DispatchDeps,
): Promise<DispatchResult> {
  if (retryAt !== undefined) {
    const wait = retryAt - deps.now();
    if (wait > 0) await deps.sleep(Math.min(wait, deps.maxWaitMs ?? 10_000));
  }

  const claimed = await deps.store.claim(key, randomUUID(), deps.now(), deps.leaseMs);
  if (claimed === undefined) return { kind: 'skipped', why: 'claimedElsewhere' };

  if (claimed.attempt > deps.maxSendAttempts) {
    return fail(claimed, 'RETRIES_EXHAUSTED', deps);
  }

  let message: Message;
  try {
    message = render(
      {
        template: claimed.template,
        locale: claimed.locale,
        channel: claimed.channel,
        data: claimed.data,
        occurredAt: claimed.occurredAt,
        timeZone: claimed.timeZone,
      },
      deps.brand,
    );
  } catch (error) {
    return fail(claimed, `RENDER_ERROR: ${(error as Error).message}`, deps);
  }

  let providerMessageId: string;
  try {
    providerMessageId = await deps.sender.send(claimed, message, AbortSignal.timeout(deps.sendTimeoutMs));
  } catch (error) {
    const failure = classifySendError(error);
    switch (failure.kind) {
      case 'rejected':
        return fail(claimed, failure.reason, deps);
      case 'transient':
        if (claimed.attempt >= deps.maxSendAttempts) return fail(claimed, `RETRIES_EXHAUSTED: ${failure.reason}`, deps);
        await deps.store.release(
          claimed,
          failure.reason,
          deps.now() + backoffMs(claimed.attempt, deps.retryBaseMs, deps.retryBaseMs * 32),
          deps.now(),
        );
        return { kind: 'retrying', item: claimed, reason: failure.reason };
      case 'unknown': {
        const resend = deps.policies[claimed.channel] === 'AT_LEAST_ONCE' && claimed.attempt < deps.maxSendAttempts;
        if (resend) await deps.store.release(claimed, `UNKNOWN_OUTCOME: ${failure.reason}`, deps.now(), deps.now());
        else await deps.store.markUnknown(claimed, failure.reason, deps.now());
        return { kind: 'unknown', item: claimed, reason: failure.reason, resend };
      }
    }
  }

  // `lost` means our lease expired and the sweeper already resolved the item: the send happened anyway. Reported
  // (and alarmed through its metric), never overwritten: attempt fences the stale holder out.
  const marked = await deps.store.markSent(claimed, providerMessageId, deps.now());
  return { kind: 'sent', item: claimed, providerMessageId, fenced: marked === 'lost' };
}

async function fail(item: NotificationItem, reason: string, deps: DispatchDeps): Promise<DispatchResult> {
  await deps.store.markFailed(item, reason, deps.now());
  return { kind: 'failed', item, reason };
}

/**
 * What a failed send means for the notification. The provider adapter (functions/dispatch/send-error.ts) decides the
 * class — what the provider may have done — from the provider's answer; this module decides only what each class
 * does to the item. Pure.
 *
 * - rejected: the provider refused this message (bad address, disabled endpoint, opted-out number). FAILED(reason).
 * - throttled: the provider answered "not now" (rate or quota). Nothing was sent: PENDING again with a retryAt that
 *   grows to minutes; never consumes the attempt budget, never ends FAILED (only EXPIRED past the maximum age).
 * - notSent: the request provably never reached the provider's send logic (connection refused, DNS, connect timeout,
 *   a signature rejected for clock skew). As throttled.
 * - unknown: the request was written and no answer came, or the provider failed after it may have accepted (500, 502,
 *   504, reset, timeout). UNKNOWN on an at-most-once channel; sent again on an at-least-once one (budgeted).
 * - accountBlocked: the account, not the message, is at fault (IAM, a paused or sandboxed account, a missing
 *   configuration set, KMS). Nothing is FAILED: the channel is held (circuit breaker) and the item waits.
 * - applicationBlocked: one push platform application refuses every endpoint under it (disabled: an expired APNs
 *   certificate). Nothing is FAILED: that application alone is held, the item waits; other applications and
 *   channels go on.
 */

import type { DeliveryPolicy } from './delivery-policy.ts';
import type { NotificationItem } from './notification.ts';

export const SEND_FAILURE_CLASSES = [
  'rejected',
  'throttled',
  'notSent',
  'unknown',
  'accountBlocked',
  'applicationBlocked',
] as const;
export type SendFailureClass = (typeof SEND_FAILURE_CLASSES)[number];

export type FailureAction =
  /** FAILED with the provider's reason. */
  | 'fail'
  /** PENDING with a growing retryAt; a deferral, not an attempt. */
  | 'defer'
  /** Hold the channel (circuit breaker), then defer. */
  | 'holdChannel'
  /** Hold the one platform application the endpoint belongs to, then defer. */
  | 'holdApplication'
  /** UNKNOWN, alarmed: a second copy must not be risked. */
  | 'markUnknown'
  /** PENDING again at once: the resend an at-least-once channel allows (it uses the attempt budget). */
  | 'resend';

export function actionFor(failure: SendFailureClass, policy: DeliveryPolicy, budgetLeft: boolean): FailureAction {
  switch (failure) {
    case 'rejected':
      return 'fail';
    case 'throttled':
    case 'notSent':
      return 'defer';
    case 'accountBlocked':
      return 'holdChannel';
    case 'applicationBlocked':
      return 'holdApplication';
    case 'unknown':
      return policy === 'AT_LEAST_ONCE' && budgetLeft ? 'resend' : 'markUnknown';
  }
}

/**
 * Attempts that count against MAX_SEND_ATTEMPTS: `attempt` is the fencing token and grows with every claim; claims
 * that ended in a deferral (throttled, not sent, rate-limited, channel held) are subtracted.
 */
export const attemptsUsed = (item: Pick<NotificationItem, 'attempt' | 'deferrals'>) =>
  item.attempt - (item.deferrals ?? 0);

/** Past its maximum age a notification is no longer worth sending: FAILED with reason EXPIRED. */
export const isExpired = (item: Pick<NotificationItem, 'createdAt'>, now: number, maxAgeMs: number) =>
  now - Date.parse(item.createdAt) > maxAgeMs;

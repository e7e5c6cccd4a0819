/**
 * Use case: send one notification at most once per claim (docs/dispatch.md).
 *
 * Input: the key (and retryAt) of a notification a stream record says is PENDING, and this record's time budget.
 * Output: what happened — for logs and metrics.
 * Steps:
 *   0. Suppressed address or opted-out channel (issue 16) → PENDING → SUPPRESSED, never claimed, never sent. Checked
 *      before the claim, so no DynamoDB call stands between a claim and its send.
 *   1. A retry not yet due: far → leave it, the sweeper wakes it at its retryAt (the sweep index is the delay queue);
 *      near → wait for it when the budget allows, else hand the record back (NotStartedError).
 *   2. Claim (PENDING and due → SENDING, attempt+1, lease). Lost: somebody else has it, nothing to do.
 *   3. Expired (older than the maximum age) → FAILED: EXPIRED. Budget spent → FAILED: RETRIES_EXHAUSTED.
 *   4. Render (a template error is this message's own → FAILED).
 *   5. Channel held by the circuit breaker → defer until the hold ends.
 *   6. A send token from the shared bucket (pacing), waiting only as long as the budget allows → else defer.
 *   7. Send, then mark by what the provider may have done (domain/send-outcome.ts):
 *      accepted → SENT; rejected → FAILED; throttled / not sent → deferred with a growing backoff;
 *      account blocked → hold the channel, deferred; unknown → UNKNOWN (at most once) or resent (at least once).
 * A deferral puts the item back to PENDING with a retryAt and does not use the attempt budget: throttling only slows
 * a notification down. Throws only when DynamoDB itself fails, so the stream retries the record; the claim makes that
 * retry safe.
 */
import { randomUUID } from 'node:crypto';
import type { Addressee, AudienceGate } from '../commons/audience-store.ts';
import type { NotificationKey, NotificationStore } from '../commons/notification-store.ts';
import { growingBackoffMs } from '../commons/retry.ts';
import type { SuppressedReason } from '../domain/audience.ts';
import type { Brand } from '../domain/brand.ts';
import type { Channel } from '../domain/channels.ts';
import type { ChannelPolicies, NotificationItem } from '../domain/notification.ts';
import { actionFor, attemptsUsed, isExpired } from '../domain/send-outcome.ts';
import { type Message, render } from '../domain/templates.ts';
import type { Breaker } from './channel-breaker.ts';
import type { Pacer } from './pacer.ts';
import { SendError } from './send-error.ts';
import type { Sender } from './senders.ts';

/** Why a claimed notification went back to PENDING without using its attempt budget. */
export type DeferReason = 'THROTTLED' | 'NOT_SENT' | 'RATE_LIMITED' | 'CHANNEL_HELD' | 'ACCOUNT_BLOCKED';

export type DispatchResult =
  | { kind: 'skipped'; why: 'taken' | 'notDue' }
  | { kind: 'suppressed'; key: NotificationKey; channel: Channel; reason: SuppressedReason }
  | { kind: 'sent'; item: NotificationItem; providerMessageId: string; fenced: boolean }
  | { kind: 'failed'; item: NotificationItem; reason: string }
  | { kind: 'expired'; item: NotificationItem }
  | { kind: 'deferred'; item: NotificationItem; reason: DeferReason; code?: string; retryAt: number }
  | { kind: 'unknown'; item: NotificationItem; reason: string; resend: boolean };

export interface DispatchDeps {
  readonly store: NotificationStore;
  readonly sender: Sender;
  readonly pacer: Pacer;
  readonly breaker: Breaker;
  readonly now: () => number;
  readonly sleep: (ms: number) => Promise<void>;
  readonly random?: () => number;
  readonly policies: ChannelPolicies;
  readonly leaseMs: number;
  readonly sendTimeoutMs: number;
  readonly maxSendAttempts: number;
  /** First step of the deferral backoff (doubles per deferral up to retryMaxMs). */
  readonly retryBaseMs: number;
  /** The bank's identity every message carries. */
  readonly brand: Brand;
  readonly retryMaxMs: number;
  /** A retry due within this is waited for here; a later one is the sweeper's. */
  readonly nearRetryMs: number;
  /** The sweeper's stuck threshold: how long after a near retry it steps in if no dispatcher took it. */
  readonly stuckAfterMs: number;
  readonly maxAgeMs: number;
  /** Suppressions and preferences (issue 16); without it every notification may be sent. */
  readonly audience?: AudienceGate;
}

/** This record's share of the invocation: when its send must have finished, and how long it may wait before that. */
export interface RecordBudget {
  readonly finishBy: number;
  readonly maxWaitMs: number;
}

/**
 * This record was not started: too little of the invocation is left to finish a send. The handler reports it as a
 * batch item failure, and the stream hands it over again (the claim makes that safe).
 */
export class NotStartedError extends Error {
  override name = 'NotStartedError';
}

export interface DispatchTarget {
  readonly key: NotificationKey;
  readonly retryAt: number | undefined;
  /** Who it goes to (from the stream image): needed for the audience check. */
  readonly addressee?: Addressee | undefined;
}

export async function dispatchNotification(
  target: DispatchTarget,
  deps: DispatchDeps,
  budget: RecordBudget,
): Promise<DispatchResult> {
  const { key, retryAt } = target;
  if (retryAt !== undefined) {
    const wait = retryAt - deps.now();
    if (wait > deps.nearRetryMs) return { kind: 'skipped', why: 'notDue' };
    if (wait > budget.maxWaitMs) throw new NotStartedError(`retry due in ${wait} ms, after this record's budget`);
    if (wait > 0) await deps.sleep(wait);
  }

  if (deps.audience !== undefined && target.addressee !== undefined) {
    const reason = await deps.audience.check(target.addressee);
    if (reason !== undefined) {
      const moved = await deps.store.markSuppressed(key, reason, deps.now());
      if (moved === 'lost') return { kind: 'skipped', why: 'taken' };
      return { kind: 'suppressed', key, channel: target.addressee.channel, reason };
    }
  }

  const claim = await deps.store.claim(key, randomUUID(), deps.now(), deps.leaseMs);
  if (claim.kind !== 'claimed') return { kind: 'skipped', why: claim.kind };
  const item = claim.item;

  if (isExpired(item, deps.now(), deps.maxAgeMs)) {
    await deps.store.markFailed(item, 'EXPIRED', deps.now());
    return { kind: 'expired', item };
  }
  if (attemptsUsed(item) > deps.maxSendAttempts) return fail(item, 'RETRIES_EXHAUSTED', deps);

  let message: Message;
  try {
    message = render(
      {
        template: item.template,
        locale: item.locale,
        channel: item.channel,
        data: item.data,
        occurredAt: item.occurredAt,
        timeZone: item.timeZone,
      },
      deps.brand,
    );
  } catch (error) {
    return fail(item, `RENDER_ERROR: ${(error as Error).message}`, deps);
  }

  const heldUntil = await deps.breaker.heldUntil(item.channel, deps.now());
  if (heldUntil !== undefined) {
    return defer(item, 'CHANNEL_HELD', undefined, heldUntil + spread(heldUntil - deps.now(), deps), deps);
  }

  const tokenBy = Math.min(deps.now() + budget.maxWaitMs, budget.finishBy - deps.sendTimeoutMs);
  if (!(await deps.pacer.acquire(item.channel, tokenBy))) {
    return defer(item, 'RATE_LIMITED', undefined, deps.now() + backoff(item, deps), deps);
  }

  let providerMessageId: string;
  try {
    providerMessageId = await deps.sender.send(item, message, AbortSignal.timeout(deps.sendTimeoutMs));
  } catch (error) {
    // A sender that broke its contract (not a SendError) may have sent: unknown, the safe reading.
    const failure =
      error instanceof SendError ? error : new SendError('unknown', (error as Error)?.name ?? 'Error', '');
    const budgetLeft = attemptsUsed(item) < deps.maxSendAttempts;
    switch (actionFor(failure.failure, deps.policies[item.channel], budgetLeft)) {
      case 'fail':
        return fail(item, failure.code, deps);
      case 'defer': {
        const reason = failure.failure === 'throttled' ? 'THROTTLED' : 'NOT_SENT';
        return defer(item, reason, failure.code, deps.now() + backoff(item, deps), deps);
      }
      case 'holdChannel': {
        const until = await deps.breaker.hold(item.channel, failure.code, deps.now());
        return defer(item, 'ACCOUNT_BLOCKED', failure.code, until + spread(until - deps.now(), deps), deps);
      }
      case 'markUnknown':
        await deps.store.markUnknown(item, `UNKNOWN_OUTCOME: ${failure.code}`, deps.now());
        return { kind: 'unknown', item, reason: failure.code, resend: false };
      case 'resend': {
        const now = deps.now();
        await deps.store.release(
          item,
          {
            reason: `UNKNOWN_OUTCOME: ${failure.code}`,
            retryAt: now,
            sweepAt: now + deps.stuckAfterMs,
            deferral: false,
          },
          now,
        );
        return { kind: 'unknown', item, reason: failure.code, resend: true };
      }
    }
  }

  // `lost` means our lease expired and the sweeper already resolved the item: the send happened anyway. Reported
  // (and alarmed through its metric), never overwritten: attempt fences the stale holder out.
  const marked = await deps.store.markSent(item, providerMessageId, deps.now());
  return { kind: 'sent', item, providerMessageId, fenced: marked === 'lost' };
}

async function fail(item: NotificationItem, reason: string, deps: DispatchDeps): Promise<DispatchResult> {
  await deps.store.markFailed(item, reason, deps.now());
  return { kind: 'failed', item, reason };
}

/**
 * Back to PENDING until retryAt, as a deferral (no budget used). A near retry is woken by the MODIFY this write
 * produces, so the sweeper looks only after its stuck threshold; a far one is the sweeper's to wake at retryAt.
 */
async function defer(
  item: NotificationItem,
  reason: DeferReason,
  code: string | undefined,
  retryAt: number,
  deps: DispatchDeps,
): Promise<DispatchResult> {
  const now = deps.now();
  const near = retryAt - now <= deps.nearRetryMs;
  await deps.store.release(
    item,
    {
      reason: code === undefined ? reason : `${reason}: ${code}`,
      retryAt,
      sweepAt: near ? retryAt + deps.stuckAfterMs : retryAt,
      deferral: true,
    },
    now,
  );
  return { kind: 'deferred', item, reason, ...(code === undefined ? {} : { code }), retryAt };
}

/** The wait after this notification's next deferral: grows with each one, to minutes. */
const backoff = (item: NotificationItem, deps: DispatchDeps) =>
  growingBackoffMs(item.deferrals ?? 0, deps.retryBaseMs, deps.retryMaxMs, deps.random);

/** Spreads the notifications waiting on a held channel (up to a quarter of the hold, 5 s at most) so they do not all return at once. */
const spread = (holdMs: number, deps: DispatchDeps) =>
  Math.floor((deps.random ?? Math.random)() * Math.min(5_000, Math.max(0, holdMs) / 4));

/**
 * Use case: send one notification at most once per claim (docs/dispatch.md).
 *
 * Input: the key (and retryAt) of a notification a stream record says is PENDING, and this record's time budget.
 * Output: what happened — for logs and metrics.
 * Steps:
 *   1. A retry not yet due: far → leave it, the sweeper wakes it at its retryAt (the sweep index is the delay queue);
 *      near → wait for it when the budget allows, else hand the record back (NotStartedError).
 *   2. Claim (PENDING and due → SENDING, attempt+1, lease). Lost: somebody else has it, nothing to do.
 *   3. Expired (older than the maximum age) → FAILED: EXPIRED. Budget spent → FAILED: RETRIES_EXHAUSTED. Past its
 *      type's validity → EXPIRED; outside its send window → HELD until it opens (moment-checks.ts).
 *   4. Render (a template error is this message's own → FAILED).
 *   5. Channel held (account-level) or the push endpoint's platform application held → defer until the hold ends.
 *   6. A send token from the shared bucket (pacing), waiting only as long as the budget and the lease allow → else
 *      defer.
 *   7. The audience check, last before the provider call: a suppressed address or an opted-out channel → SUPPRESSED,
 *      never sent (the token goes back); then the moment's last checks: SUPERSEDED, THROTTLED, EXPIRED, HELD.
 *   8. The deadline, checked immediately before the call whatever path the token came by: a send that could not
 *      finish before the function's timeout or inside the lease is not started → deferred at once.
 *   9. Send, then record what the provider may have done (domain/send-outcome.ts): accepted → SENT; rejected →
 *      FAILED; throttled / not sent → deferred with a growing backoff; account blocked → hold the channel, deferred;
 *      application blocked → hold that application, deferred; unknown → UNKNOWN (at most once) or resent (at least
 *      once).
 *  10. Accepted: the evidence of the send (the exact request, the message id, when) joins the invocation's batch,
 *      written once the invocation's records are done (record-evidence.ts); the SENT write names the batch and the
 *      record's SHA-256. Never a reason to send again, never in the send slot — but at an invocation of few records,
 *      which spools them and writes no intent, the record's spool put comes before the SENT write (one put), and the
 *      slot is free once it lands: the SENT write follows outside it (`Recording`).
 * Every write after the claim records a fact the provider (or our own check) established, so it is kept trying while
 * the record's time lasts (`record`): a DynamoDB failure after the provider accepted never turns a known send into an
 * unknown one, and one after a throttle never turns "not sent" into "maybe sent". Past the lease's end it first extends
 * the lease — with the message id when the provider accepted, so the acceptance is on the item even if the SENT write
 * never lands. A deferral puts the item back to PENDING with a retryAt and does not use the attempt budget. Throws only
 * when DynamoDB fails for the whole of the record's time, so the stream retries the record; the claim makes that safe.
 */

import { randomUUID } from 'node:crypto';
import { growingBackoffMs } from '../commons/retry.ts';
import type { SuppressedReason } from '../domain/audience.ts';
import type { Brand } from '../domain/brand.ts';
import { classOf } from '../domain/catalogue.ts';
import type { ChannelPolicies } from '../domain/delivery-policy.ts';
import { isErased } from '../domain/erasure.ts';
import type { NotificationItem } from '../domain/notification.ts';
import type { NoticeTiming } from '../domain/send-moment.ts';
import { actionFor, attemptsUsed, isExpired } from '../domain/send-outcome.ts';
import { deferredSweepAt } from '../domain/sweep-index.ts';
import { loadTemplates } from '../domain/template-sets.ts';
import { type Message, render } from '../domain/templates.ts';
import type { AudienceGate } from '../stores/audience-store.ts';
import type { MomentStore } from '../stores/moment-store.ts';
import type { NotificationKey, Transition } from '../stores/notification-store.ts';
import { applicationScope, type Breaker } from './channel-breaker.ts';
import type { DeferReason, DispatchResult, Recording } from './dispatch-result.ts';
import { Holder, type HolderDeps, type RecordBudget } from './holder.ts';
import { loadMomentRules, type MomentStop, momentFirst, momentLast, recordStop } from './moment-checks.ts';
import type { Pacer } from './pacer.ts';
import { type EvidenceDeps, PUT_FIRST_MS, sendProofOf, sentWriteOf } from './record-evidence.ts';
import { SendError } from './send-error.ts';
import type { Sender } from './senders.ts';

export type { AcceptanceRecord, DeferReason, DispatchResult, Recording } from './dispatch-result.ts';
export { LEASE_GUARD_MS, type RecordBudget } from './holder.ts';

/** What dispatching a notification needs: a holder's (holder.ts: the store, the clock, the lease) and the rest. */
export interface DispatchDeps extends HolderDeps {
  readonly sender: Sender;
  readonly pacer: Pacer;
  readonly breaker: Breaker;
  readonly policies: ChannelPolicies;
  readonly maxSendAttempts: number;
  /** First step of the deferral backoff (doubles per deferral up to retryMaxMs). */
  readonly retryBaseMs: number;
  /** The bank's identity every message carries. */
  readonly brand: Brand;
  readonly retryMaxMs: number;
  /** A retry due within this is waited for here; a later one is the sweeper's. */
  readonly nearRetryMs: number;
  /** The pending threshold (sweep-index.ts): how long after a near retry the sweeper steps in if no dispatcher took it. */
  readonly pendingThresholdMs: number;
  readonly maxAgeMs: number;
  /** Suppressions and preferences; without it every notification may be sent. */
  readonly audience?: AudienceGate;
  /** Where the evidence of every accepted send goes (docs/evidence-and-privacy.md). */
  readonly evidence?: EvidenceDeps;
  /** The right moment's series and flood-guard reads (without: neither checked), and its timing (moment-checks.ts). */
  readonly moment?: MomentStore;
  readonly timing?: NoticeTiming;
}

/** A claimed notification held with all of dispatch's dependencies. */
type Held = Holder<DispatchDeps>;

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
}

/** One notification, to what became of it: its SENT write awaited even when the slot was freed before it. */
export async function dispatchNotification(
  target: DispatchTarget,
  deps: DispatchDeps,
  budget: RecordBudget,
): Promise<DispatchResult> {
  const r = await startDispatch(target, deps, budget);
  return r.kind === 'recording' ? r.settled : r;
}

/** As dispatchNotification, up to the moment its send slot is free (`Recording` when that came before its SENT write). */
export async function startDispatch(
  target: DispatchTarget,
  deps: DispatchDeps,
  budget: RecordBudget,
): Promise<DispatchResult | Recording> {
  const { key, retryAt } = target;
  if (retryAt !== undefined) {
    const wait = retryAt - deps.now();
    if (wait > deps.nearRetryMs) return { kind: 'skipped', why: 'notDue' };
    if (wait > budget.maxWaitMs) throw new NotStartedError(`retry due in ${wait} ms, after this record's budget`);
    if (wait > 0) await deps.sleep(wait);
  }

  const claim = await deps.store.claim(key, randomUUID(), deps.now(), deps.leaseMs);
  if (claim.kind !== 'claimed') return { kind: 'skipped', why: claim.kind };
  const holder: Held = new Holder(claim.item, deps, budget);
  const item = claim.item;

  // Erasure is final: whatever put an erased notification back in flight, it is never sent (erasure.ts).
  if (isErased(item)) return fail(holder, 'ERASED');
  if (isExpired(item, deps.now(), deps.maxAgeMs)) {
    const t = await holder.record((now) => deps.store.markFailed(item, 'EXPIRED', now));
    return landed(t, { kind: 'expired', item });
  }
  if (attemptsUsed(item) > deps.maxSendAttempts) return fail(holder, 'RETRIES_EXHAUSTED');
  // Local time (Temporal) for a type with a send window, loaded once per environment like the templates below.
  await loadMomentRules(item, deps);
  const early = momentFirst(item, deps, deps.now());
  if (early !== undefined) return stopped(holder, early);

  // The type's templates, loaded once per environment (template-sets.ts); a failure to load is a deploy's fault,
  // thrown for the stream to retry — never this message's.
  await loadTemplates(item.template);
  let message: Message;
  try {
    message = render(
      {
        template: item.template,
        locale: item.locale,
        channel: item.channel,
        // A secret (a one-time code) is kept apart from the data until the notification ends (domain/secrets.ts).
        data: { ...item.data, ...item.secrets },
        occurredAt: item.occurredAt,
        timeZone: item.timeZone,
      },
      deps.brand,
    );
  } catch (error) {
    return fail(holder, `RENDER_ERROR: ${(error as Error).message}`);
  }

  const app = applicationScope(item.channel, item.recipient);
  let ready: DispatchResult | { kind: 'send'; message: Message };
  try {
    ready = await beforeSend(holder, app, budget, message);
  } catch (error) {
    // A breaker, token or audience read that failed (DynamoDB throttling, a 5xx …) sent nothing: the claim goes back
    // as a deferral, never left for the lease to turn into an unknown outcome.
    return defer(holder, 'NOT_SENT', (error as Error)?.name ?? 'Error', deps.now() + backoff(item, deps));
  }
  if (ready.kind !== 'send') return ready;
  message = ready.message;

  // The batch the record will join, once its intent is written (it went out beside the claim): never before it.
  const evidenceBatch = await deps.evidence?.batch.ready();
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
        return fail(holder, failure.reason);
      case 'defer': {
        const reason = failure.failure === 'throttled' ? 'THROTTLED' : 'NOT_SENT';
        return defer(holder, reason, failure.code, deps.now() + backoff(item, deps));
      }
      case 'holdChannel': {
        const until = await hold(item.channel, failure.code, holder);
        return defer(holder, 'ACCOUNT_BLOCKED', failure.code, afterHold(until, deps));
      }
      case 'holdApplication': {
        // An endpoint ARN that names no application cannot be held on its own: its channel is, as before.
        const until = await hold(app ?? item.channel, failure.code, holder);
        return defer(holder, 'APPLICATION_BLOCKED', failure.code, afterHold(until, deps));
      }
      case 'markUnknown': {
        const t = await holder.record((now) => deps.store.markUnknown(item, `UNKNOWN_OUTCOME: ${failure.code}`, now));
        return landed(t, { kind: 'unknown', item, reason: failure.code, resend: false });
      }
      case 'resend': {
        const t = await holder.record((now) =>
          deps.store.release(
            item,
            {
              reason: `UNKNOWN_OUTCOME: ${failure.code}`,
              retryAt: now,
              sweepAt: now + deps.pendingThresholdMs,
              deferral: false,
            },
            now,
          ),
        );
        return landed(t, { kind: 'unknown', item, reason: failure.code, resend: true });
      }
    }
  }

  return sent(holder, message, providerMessageId, evidenceBatch);
}

/**
 * Step 10, the provider accepted: SENT, with the evidence of the send. The record is built before the acceptance is
 * written, so the SENT write names its batch and its SHA-256 — an invocation that dies before its batch is written
 * leaves what the sweeper needs to rebuild and check it; after the outcome is recorded the record joins the
 * invocation's batch and the send slot is free. The evidence never holds a send back nor repeats it.
 */
async function sent(
  holder: Held,
  message: Message,
  providerMessageId: string,
  batch: string | undefined,
): Promise<DispatchResult | Recording> {
  const { deps, item } = holder;
  const acceptedAtMs = deps.now();
  const evidence = batch === undefined ? undefined : deps.evidence;
  const proof =
    evidence === undefined ? undefined : sendProofOf(evidence, item, message, providerMessageId, acceptedAtMs);
  // Where the record lands: the invocation's batch, or the spool's slice when the invocation holds few records.
  const at = proof === undefined || batch === undefined ? batch : (evidence?.batch.addressOf?.(proof, batch) ?? batch);
  // Few records: each spooled before its SENT write (record-evidence.ts putFirst), the lease kept past the put first.
  const putFirst = proof === undefined || at === undefined ? undefined : evidence?.batch.putFirst?.(proof, at);
  const write = proof === undefined || at === undefined ? undefined : sentWriteOf(item, proof, at, message);
  // The extension names the record as the SENT write would: a holder dead before the put leaves the sweeper its address.
  if (putFirst !== undefined) await holder.keepLeasePast(PUT_FIRST_MS, providerMessageId, write?.evidence);
  const spooled = putFirst !== undefined && (await putFirst);
  // Gzipped only now, and only when the record is not in the spool: a spooled send never needs its bytes on the item.
  const record = spooled ? undefined : write?.record?.();
  const recorded = holder.recordAcceptance(providerMessageId, write?.evidence, record).then((acceptance) => {
    const result = { kind: 'sent' as const, item, providerMessageId, fenced: acceptance === 'late', acceptance };
    if (proof === undefined || evidence === undefined || batch === undefined) return result;
    if (putFirst === undefined) evidence.batch.add(proof, at ?? batch);
    return { ...result, evidence: { batch: at ?? batch } };
  });
  if (!spooled) return recorded;
  // The record is kept: the slot is free. Marked handled now; the handler awaits it (and sees a throw) after the slot.
  recorded.catch(() => undefined);
  return { kind: 'recording', settled: recorded };
}

/**
 * Steps 5–8, between the claim and the provider call: the holds, the send token, the audience check and the deadline.
 * 'send' when the send may start now; otherwise what became of the notification.
 */
async function beforeSend(
  holder: Held,
  app: string | undefined,
  budget: RecordBudget,
  rendered: Message,
): Promise<DispatchResult | { kind: 'send'; message: Message }> {
  const { item, deps } = holder;
  const [channelHeld, appHeld] = await Promise.all([
    deps.breaker.heldUntil(item.channel, deps.now()),
    app === undefined ? undefined : deps.breaker.heldUntil(app, deps.now()),
  ]);
  if (channelHeld !== undefined) return defer(holder, 'CHANNEL_HELD', undefined, afterHold(channelHeld, deps));
  if (appHeld !== undefined) return defer(holder, 'APPLICATION_HELD', undefined, afterHold(appHeld, deps));

  // Already out of time (a slow claim or breaker read): no token is worth taking.
  if (deps.now() > holder.lastSendStart()) return defer(holder, 'NO_TIME_LEFT', undefined, deps.now());
  // A token only while a send taken with it could still finish: in the invocation and inside the lease.
  const tokenBy = Math.min(deps.now() + budget.maxWaitMs, holder.lastSendStart());
  const token = await deps.pacer.acquire(item.channel, tokenBy, classOf(item.template));
  if (!token) return defer(holder, 'RATE_LIMITED', undefined, deps.now() + backoff(item, deps));
  const giveTokenBack = () => deps.pacer.giveBack?.(item.channel, token);

  // The audience check is the last step before the provider call: an opt-out or a suppression written while this
  // record waited for its token (up to the pacing wait) still stops it.
  if (deps.audience !== undefined) {
    let reason: SuppressedReason | undefined;
    try {
      reason = await deps.audience.check({
        channel: item.channel,
        recipient: item.recipient,
        userId: item.userId,
        template: item.template,
      });
    } catch (error) {
      giveTokenBack();
      throw error;
    }
    if (reason !== undefined) {
      giveTokenBack();
      const moved = await holder.record((now) => deps.store.suppress(item, reason, now));
      if (moved === 'lost') return { kind: 'skipped', why: 'taken' };
      return {
        kind: 'suppressed',
        key: { pk: item.pk, sk: item.sk },
        notificationId: item.notificationId,
        channel: item.channel,
        reason,
      };
    }
  }

  const moment = await momentLast(item, rendered, deps).catch((error: unknown) => {
    giveTokenBack();
    throw error;
  });
  if ('stop' in moment) {
    giveTokenBack();
    return stopped(holder, moment.stop);
  }
  // Immediately before the call, whatever path the token came by (a pooled token skips the pacer's own wait): a slow
  // claim, breaker or audience read may have eaten the time. A send the function's timeout or the lease could cut
  // off would end UNKNOWN; not starting it costs one deferral.
  if (deps.now() > holder.lastSendStart()) {
    giveTokenBack();
    await moment.giveBack();
    return defer(holder, 'NO_TIME_LEFT', undefined, deps.now());
  }
  return { kind: 'send', message: moment.message };
}

/** The moment stopped the send: HELD, or ended unsent (moment-checks.ts), fenced on the claim. */
async function stopped(holder: Held, stop: MomentStop): Promise<DispatchResult> {
  const { transition, result } = await recordStop(holder.item, stop, holder.deps.store, (w) => holder.record(w));
  return landed(transition, result);
}

/** Holds a scope; when the breaker item cannot be written, this environment still holds it (until a backoff). */
async function hold(scope: string, code: string, holder: Held): Promise<number> {
  const { deps, item } = holder;
  return deps.breaker.hold(scope, code, deps.now()).catch(() => deps.now() + backoff(item, deps));
}

async function fail(holder: Held, reason: string): Promise<DispatchResult> {
  const { item } = holder;
  const t = await holder.record((now) => holder.deps.store.markFailed(item, reason, now));
  return landed(t, { kind: 'failed', item, reason });
}

/**
 * The outcome of a write fenced on the claim, reported only when it landed. `lost`: the sweeper resolved our expired
 * lease or another holder claimed since, and the item's state is theirs to report — counting ours as well would count
 * one notification twice (a FAILED or UNKNOWN alarm for a move that never happened).
 */
function landed(t: Transition, outcome: DispatchResult): DispatchResult {
  return t === 'applied' ? outcome : { kind: 'skipped', why: 'taken' };
}

/**
 * Back to PENDING until retryAt, as a deferral (no budget used). A near retry is woken by the MODIFY this write
 * produces, so the sweeper looks only after the pending threshold; a far one is the sweeper's to wake at retryAt.
 */
async function defer(
  holder: Held,
  reason: DeferReason,
  code: string | undefined,
  retryAt: number,
): Promise<DispatchResult> {
  const { item } = holder;
  const { deps } = holder;
  const t = await holder.record((now) =>
    deps.store.release(
      item,
      {
        reason: code === undefined ? reason : `${reason}: ${code}`,
        retryAt,
        sweepAt: deferredSweepAt(now, retryAt, deps.nearRetryMs, deps.pendingThresholdMs),
        deferral: true,
      },
      now,
    ),
  );
  return landed(t, { kind: 'deferred', item, reason, ...(code === undefined ? {} : { code }), retryAt });
}

/** The wait after this notification's next deferral: grows with each one, to minutes. */
const backoff = (item: NotificationItem, deps: DispatchDeps) =>
  growingBackoffMs(item.deferrals ?? 0, deps.retryBaseMs, deps.retryMaxMs, deps.random);

/** The end of a hold plus a spread (up to a quarter of the hold, 5 s at most), so the waiting do not all return at once. */
const afterHold = (until: number, deps: DispatchDeps) =>
  until + Math.floor((deps.random ?? Math.random)() * Math.min(5_000, Math.max(0, until - deps.now()) / 4));

/**
 * The claimed notification while one dispatch record holds it (dispatch-notification.ts): its lease, and the writes
 * that record what the provider (or our own check) established.
 */
import { backoffMs, isWorthRetrying } from '../commons/retry.ts';
import type { NotificationItem } from '../domain/notification.ts';
import type { NotificationStore, SentEvidence, Transition } from '../stores/notification-store.ts';
import type { AcceptanceRecord } from './dispatch-result.ts';

/** What a holder reads of dispatch's dependencies (dispatch-notification.ts DispatchDeps holds them all). */
export interface HolderDeps {
  readonly store: NotificationStore;
  readonly now: () => number;
  readonly sleep: (ms: number) => Promise<void>;
  readonly random?: () => number;
  readonly leaseMs: number;
  readonly sendTimeoutMs: number;
}

/** This record's share of the invocation: when its send must have finished, and how long it may wait before that. */
export interface RecordBudget {
  readonly finishBy: number;
  readonly maxWaitMs: number;
  /**
   * The last moment a write recording a provider's answer may still be tried (the invocation's end, less a little so
   * the function returns before its timeout). Default: finishBy.
   */
  readonly recordBy?: number;
}

/** Before the lease's end by at least this, a holder still writing extends it: the sweeper must never take a live holder over. */
export const LEASE_GUARD_MS = 2_000;
/** Writes that record a provider's answer: at most this many tries, backing off from 50 ms to 1 s, within recordBy. */
const RECORD_ATTEMPTS = 50;
const RECORD_BACKOFF_BASE_MS = 50;
const RECORD_BACKOFF_MAX_MS = 1_000;

/**
 * The claimed item while this record holds it: its lease, and the writes that record what happened. Each write is
 * retried on a DynamoDB failure a later try can get past (commons/retry.ts isWorthRetrying: throttling, a 5xx, a
 * timeout, a transaction conflict) with a growing, jittered backoff until the record's
 * recordBy; a condition failure is an answer (`lost`), never retried. A write that would run past the lease first
 * extends the lease, so the sweeper never resolves a holder that is still writing.
 */
export class Holder<D extends HolderDeps = HolderDeps> {
  private leaseUntil: number;
  /** Set once the provider accepted and the acceptance is on the item (SENDING with its message id). */
  private acceptanceOnItem = false;

  constructor(
    readonly item: NotificationItem,
    readonly deps: D,
    private readonly budget: RecordBudget,
  ) {
    this.leaseUntil = item.leaseUntil ?? Number.POSITIVE_INFINITY;
  }

  /** The last moment a send may start and still finish before the invocation's deadline and inside the lease. */
  lastSendStart(): number {
    return Math.min(this.budget.finishBy, this.leaseUntil - LEASE_GUARD_MS) - this.deps.sendTimeoutMs;
  }

  /**
   * One write of the outcome (given its own `now`, the same on every try: its lost-reply re-read compares it). A
   * write fenced on the claim (`holding`, the default) extends the lease first when it would run past its end.
   */
  async record(
    write: (now: number) => Promise<Transition>,
    options: { readonly providerMessageId?: string; readonly evidence?: SentEvidence; readonly holding?: boolean } = {},
  ): Promise<Transition> {
    const now = this.deps.now();
    const recordBy = this.budget.recordBy ?? this.budget.finishBy;
    for (let attempt = 1; ; attempt++) {
      try {
        if ((options.holding ?? true) && this.deps.now() + LEASE_GUARD_MS >= this.leaseUntil) {
          if ((await this.extend(options.providerMessageId, options.evidence)) === 'lost') return 'lost';
        }
        return await write(now);
      } catch (error) {
        if (!isWorthRetrying(error) || attempt >= RECORD_ATTEMPTS) throw error;
        const wait = backoffMs(attempt, RECORD_BACKOFF_BASE_MS, RECORD_BACKOFF_MAX_MS, this.deps.random);
        if (this.deps.now() + wait >= recordBy) throw error;
        await this.deps.sleep(wait);
      }
    }
  }

  /** The provider accepted: SENT, kept trying; if the sweeper resolved the lease first, the id goes on its UNKNOWN. */
  async recordAcceptance(
    providerMessageId: string,
    evidence?: SentEvidence,
    record?: Uint8Array,
  ): Promise<AcceptanceRecord> {
    const { item, deps } = this;
    let marked: Transition;
    try {
      marked = await this.record((now) => deps.store.markSent(item, providerMessageId, now, evidence, record), {
        providerMessageId,
        evidence,
      });
    } catch {
      // DynamoDB refused every write for the rest of this record's time. If an extension carried the message id the
      // acceptance is still on the item (the sweeper will mark it SENT); otherwise the lease's policy decides.
      return this.acceptanceOnItem ? 'recorded' : 'notRecorded';
    }
    if (marked === 'applied') return 'recorded';
    // Fenced out: the sweeper resolved our expired lease (and perhaps another holder claimed it since).
    await this.record((now) => deps.store.recordLateAcceptance(item, providerMessageId, now), {
      holding: false,
    }).catch(() => 'lost');
    return 'late';
  }

  /**
   * Before a write outside the item that must not outlive the lease (the spool put before SENT): the lease extended,
   * with the message id and the record's address and digest, when it would end within the guard of `ms` from now. A
   * refused extension is left to the SENT write's own (which tries again, or finds the sweeper resolved it).
   */
  async keepLeasePast(ms: number, providerMessageId: string, evidence?: SentEvidence): Promise<void> {
    if (this.deps.now() + LEASE_GUARD_MS + ms < this.leaseUntil) return;
    await this.extend(providerMessageId, evidence).catch(() => 'lost');
  }

  /**
   * The lease moved on; with the message id once the provider accepted, and with it the evidence the SENT write would
   * name: should the holder die before that write, the sweeper's SENT from the id names the record all the same.
   */
  private async extend(providerMessageId?: string, evidence?: SentEvidence): Promise<Transition> {
    const now = this.deps.now();
    const leaseUntil = now + this.deps.leaseMs;
    const t = await this.deps.store.extendLease(this.item, leaseUntil, now, providerMessageId, evidence);
    if (t === 'applied') {
      this.leaseUntil = leaseUntil;
      if (providerMessageId !== undefined) this.acceptanceOnItem = true;
    }
    return t;
  }
}

/**
 * One dispatch invocation's time, shared out among its records. A record may start only when its send can finish
 * before the function's own timeout (context.getRemainingTimeInMillis() minus a margin for the final write);
 * otherwise it is handed back unstarted. The time a record may spend waiting — for a near retry, for a send token —
 * is its fair share of what is left: (time left × sends in flight ÷ records still to finish) minus what a record
 * usually takes besides waiting (RECORD_WORK_MS: claim, send, mark), capped. So a saturated channel makes records
 * defer (cheap, acknowledged) long before the deadline would make them come back as batch item failures. A send
 * itself may still take its full timeout: the worst case without waits fits by construction (dispatch-timing.ts,
 * BATCH_FITS_TIMEOUT), and whatever does not fit is handed back, never cut off mid-send.
 *
 * The invocation's evidence batch is written after its last record (record-evidence.ts): the budget keeps a reserve
 * for it (`evidenceReserveMs`: the batch PUT's timeout plus the index write and the intent's delete), so no send starts,
 * and no outcome write runs, into the time the batch needs — the batch never races the timeout for its last moments.
 */
import { DISPATCH_TIMING, evidenceReserveOf } from '../contracts/dispatch-timing.ts';
import { NotStartedError, type RecordBudget } from './dispatch-notification.ts';

/** What one record takes besides waiting, in the usual case: two conditional writes and one provider call. */
export const RECORD_WORK_MS = 1_000;
/** Kept after the last write a record may still try, so the function returns (and reports) before its timeout. */
export const RETURN_SLACK_MS = 500;
/** The evidence batch's table writes after its PUT: the customers' index refs, then the intent's delete. */
export const EVIDENCE_TABLE_WRITES_MS = evidenceReserveOf({
  evidenceTimeoutMs: 0,
  writeAllowanceMs: DISPATCH_TIMING.writeAllowanceMs,
});

/** The time kept for an invocation's evidence batch: its PUT (EVIDENCE_TIMEOUT_MS), then its table writes. */
export const evidenceReserveMs = (putTimeoutMs: number) => putTimeoutMs + EVIDENCE_TABLE_WRITES_MS;

export class InvocationBudget {
  private left: number;

  constructor(
    /** Epoch ms by which every send of this invocation must have finished. */
    readonly deadline: number,
    private readonly options: {
      readonly concurrency: number;
      readonly sendTimeoutMs: number;
      readonly maxWaitMs: number;
      readonly records: number;
      /** The margin kept between `deadline` and the function's timeout for the writes that record an outcome. */
      readonly writeMarginMs?: number;
      /** Kept before `deadline` for the evidence batch (evidenceReserveMs): sends and their writes end before it. */
      readonly evidenceReserveMs?: number;
    },
  ) {
    this.left = options.records;
  }

  /** By when every send must have finished: the deadline less the evidence batch's reserve. */
  private get sendsEnd(): number {
    return this.deadline - (this.options.evidenceReserveMs ?? 0);
  }

  /**
   * After the last record: how long the evidence batch's PUT may take (at most `putTimeoutMs`), leaving its table
   * writes and the return their time before the function's timeout. At least the reserve unless a write overran.
   */
  evidencePutMs(now: number, putTimeoutMs: number): number {
    const end = this.deadline + (this.options.writeMarginMs ?? 0) - RETURN_SLACK_MS - EVIDENCE_TABLE_WRITES_MS;
    return Math.min(putTimeoutMs, end - now);
  }

  /** At the start of a record's turn: its budget, or NotStartedError when no send could finish in time. */
  start(now: number): RecordBudget {
    const remaining = this.sendsEnd - now;
    if (remaining < this.options.sendTimeoutMs) {
      throw new NotStartedError(`${remaining} ms left, a send may take ${this.options.sendTimeoutMs} ms`);
    }
    const share = Math.floor((remaining * this.options.concurrency) / Math.max(1, this.left)) - RECORD_WORK_MS;
    const margin = this.options.writeMarginMs ?? 0;
    return {
      finishBy: this.sendsEnd,
      maxWaitMs: Math.max(0, Math.min(share, this.options.maxWaitMs)),
      // A write recording a provider's answer may use the margin, up to a little before the timeout — and never the
      // evidence batch's reserve.
      recordBy: this.sendsEnd + Math.max(0, margin - Math.min(RETURN_SLACK_MS, margin / 2)),
    };
  }

  /** A record is finished (whatever its outcome): the others' shares grow. */
  done(): void {
    this.left = Math.max(0, this.left - 1);
  }
}

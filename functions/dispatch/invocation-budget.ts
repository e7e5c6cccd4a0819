/**
 * One dispatch invocation's time, shared out among its records. A record may start only when its send can finish
 * before the function's own timeout (context.getRemainingTimeInMillis() minus a margin for the final write);
 * otherwise it is handed back unstarted. The time a record may spend waiting — for a near retry, for a send token —
 * is its fair share of what is left: (time left × sends in flight ÷ records still to finish) minus what a record
 * usually takes besides waiting (RECORD_WORK_MS: claim, send, mark), capped. So a saturated channel makes records
 * defer (cheap, acknowledged) long before the deadline would make them come back as batch item failures. A send
 * itself may still take its full timeout: the worst case without waits fits by construction (dispatch-timing.ts,
 * BATCH_FITS_TIMEOUT), and whatever does not fit is handed back, never cut off mid-send.
 */
import { NotStartedError, type RecordBudget } from './dispatch-notification.ts';

/** What one record takes besides waiting, in the usual case: two conditional writes and one provider call. */
export const RECORD_WORK_MS = 1_000;
/** Kept after the last write a record may still try, so the function returns (and reports) before its timeout. */
export const RETURN_SLACK_MS = 500;

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
    },
  ) {
    this.left = options.records;
  }

  /** At the start of a record's turn: its budget, or NotStartedError when no send could finish in time. */
  start(now: number): RecordBudget {
    const remaining = this.deadline - now;
    if (remaining < this.options.sendTimeoutMs) {
      throw new NotStartedError(`${remaining} ms left, a send may take ${this.options.sendTimeoutMs} ms`);
    }
    const share = Math.floor((remaining * this.options.concurrency) / Math.max(1, this.left)) - RECORD_WORK_MS;
    const margin = this.options.writeMarginMs ?? 0;
    return {
      finishBy: this.deadline,
      maxWaitMs: Math.max(0, Math.min(share, this.options.maxWaitMs)),
      // A write recording a provider's answer may use the margin, up to a little before the timeout.
      recordBy: this.deadline + Math.max(0, margin - Math.min(RETURN_SLACK_MS, margin / 2)),
    };
  }

  /** A record is finished (whatever its outcome): the others' shares grow. */
  done(): void {
    this.left = Math.max(0, this.left - 1);
  }
}

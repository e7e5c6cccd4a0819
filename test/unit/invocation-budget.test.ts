/**
 * The dispatch invocation's time keeps a reserve for its evidence batch (functions/dispatch/invocation-budget.ts):
 * sends stop starting, and outcome writes stop running, early enough that the batch's PUT gets its whole timeout and
 * its table writes and the return still fit before the function's timeout. Driven by a fake clock (plain numbers).
 */
import { describe, expect, it } from 'vitest';
import { DISPATCH_TIMING, evidenceReserveOf, timingViolations } from '../../functions/contracts/dispatch-timing.ts';
import { NotStartedError } from '../../functions/dispatch/dispatch-notification.ts';
import {
  EVIDENCE_TABLE_WRITES_MS,
  evidenceReserveMs,
  InvocationBudget,
  RETURN_SLACK_MS,
} from '../../functions/dispatch/invocation-budget.ts';

const PUT_TIMEOUT_MS = 2_000;
const MARGIN_MS = 2_000;
/** A 60 s invocation started at 0: the handler's deadline is the timeout less the write margin. */
const TIMEOUT_AT = 60_000;
const budgetOf = (reserve: boolean) =>
  new InvocationBudget(TIMEOUT_AT - MARGIN_MS, {
    concurrency: 10,
    sendTimeoutMs: 5_000,
    maxWaitMs: 10_000,
    records: 100,
    writeMarginMs: MARGIN_MS,
    ...(reserve ? { evidenceReserveMs: evidenceReserveMs(PUT_TIMEOUT_MS) } : {}),
  });

describe('the invocation budget keeps the evidence batch its own time', () => {
  it('stops starting sends earlier by the reserve: the batch PUT, the index refs and the intent delete', () => {
    const reserve = evidenceReserveMs(PUT_TIMEOUT_MS);
    expect(reserve).toBe(PUT_TIMEOUT_MS + EVIDENCE_TABLE_WRITES_MS);
    const without = budgetOf(false);
    const kept = budgetOf(true);
    const lastStartWithout = TIMEOUT_AT - MARGIN_MS - 5_000;
    expect(without.start(lastStartWithout).finishBy).toBe(TIMEOUT_AT - MARGIN_MS);
    expect(() => kept.start(lastStartWithout)).toThrow(NotStartedError);
    expect(kept.start(lastStartWithout - reserve).finishBy).toBe(TIMEOUT_AT - MARGIN_MS - reserve);
  });

  it('lets no outcome write run into the reserve', () => {
    const reserve = evidenceReserveMs(PUT_TIMEOUT_MS);
    const { recordBy } = budgetOf(true).start(0);
    expect(recordBy).toBe(TIMEOUT_AT - reserve - RETURN_SLACK_MS);
  });

  it('gives the batch PUT its whole timeout even after the latest outcome write, and its table writes their time', () => {
    const budget = budgetOf(true);
    // The clock after the slowest record: its outcome write ran to the last moment it may.
    let now = budget.start(0).recordBy ?? Number.NaN;
    const put = budget.evidencePutMs(now, PUT_TIMEOUT_MS);
    expect(put).toBe(PUT_TIMEOUT_MS);
    now += put + EVIDENCE_TABLE_WRITES_MS;
    expect(TIMEOUT_AT - now).toBe(RETURN_SLACK_MS);
  });

  it('a PUT given less than its timeout only when an outcome write overran its own limit; none at all past the end', () => {
    const budget = budgetOf(true);
    const recordBy = budget.start(0).recordBy ?? Number.NaN;
    expect(budget.evidencePutMs(recordBy + 500, PUT_TIMEOUT_MS)).toBe(PUT_TIMEOUT_MS - 500);
    expect(budget.evidencePutMs(TIMEOUT_AT, PUT_TIMEOUT_MS)).toBeLessThanOrEqual(0);
  });

  it("the stack's timing keeps the reserve with the worst-case batch inside the timeout", () => {
    expect(evidenceReserveOf(DISPATCH_TIMING)).toBe(evidenceReserveMs(DISPATCH_TIMING.evidenceTimeoutMs));
    expect(timingViolations(DISPATCH_TIMING)).toEqual([]);
    expect(timingViolations({ ...DISPATCH_TIMING, evidenceTimeoutMs: 10_000 })).toEqual([
      expect.stringMatching(/^BATCH_FITS_TIMEOUT/),
    ]);
  });
});

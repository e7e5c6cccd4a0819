/**
 * The dispatch and sweeper time budget in one place: the CDK stack takes the function timeouts, the stream batch size
 * and the environment from here, and checks the values against each other at synth. Plain data and arithmetic, no
 * aws-cdk-lib: the runtime may import it, and the stack imports it (never the other way round).
 *
 * Why these values:
 * - A send may start only when it can finish before the function's own timeout (dispatch checks
 *   context.getRemainingTimeInMillis() per record); the margin covers the write that records the outcome.
 * - The invocation's evidence batch is written after its last send: its PUT's timeout and its two table writes (the
 *   index refs, the intent's delete) are kept apart from the sends' time (dispatch/invocation-budget.ts).
 * - With the worst case — every send taking the full send timeout — a batch still fits in the timeout, so records come
 *   back unstarted only when pacing or a slow DynamoDB ate the time, never as the normal case.
 * - The lease outlives everything a holder can still do after its claim (the rest of the invocation), so a live
 *   holder is never taken over; short enough that a crashed holder's item is resolved within minutes.
 * - The connect timeout is well under the send timeout: a connection that never opened is "not sent" (safe to retry),
 *   which an abort at the send timeout could not tell apart from "sent, no answer".
 */
import { DEFAULT_SWEEP_PLACEMENT } from '../domain/sweep-index.ts';

export interface DispatchTiming {
  readonly dispatchTimeoutSeconds: number;
  readonly batchSize: number;
  /** Sends in flight per dispatch invocation. */
  readonly concurrency: number;
  readonly sendTimeoutMs: number;
  readonly connectTimeoutMs: number;
  /** Kept free before the timeout for the write that records a send's outcome. */
  readonly deadlineMarginMs: number;
  /** Budget for the claim and the mark around one send (two conditional writes). */
  readonly writeAllowanceMs: number;
  /** The evidence batch PUT's timeout (EVIDENCE_TIMEOUT_MS), kept with its table writes after the last send. */
  readonly evidenceTimeoutMs: number;
  readonly leaseSeconds: number;
  readonly sweeperTimeoutSeconds: number;
  /** EventBridge's smallest rate: the sweeper is the delay queue's clock. */
  readonly sweeperIntervalSeconds: number;
  /** The pending threshold: a PENDING notification not dispatched after this long is re-driven by the sweeper. */
  readonly pendingThresholdSeconds: number;
}

export function deriveDispatchTiming(overrides: Partial<DispatchTiming> = {}): DispatchTiming {
  const base = {
    dispatchTimeoutSeconds: 60,
    batchSize: 100,
    concurrency: 10,
    sendTimeoutMs: 5_000,
    connectTimeoutMs: 1_500,
    deadlineMarginMs: 2_000,
    writeAllowanceMs: 500,
    evidenceTimeoutMs: 2_000,
    sweeperTimeoutSeconds: 55,
    sweeperIntervalSeconds: 60,
    pendingThresholdSeconds: DEFAULT_SWEEP_PLACEMENT.pendingThresholdMs / 1000,
    ...overrides,
  };
  // Twice the timeout: whatever a holder still does after its claim ends with the invocation.
  return { leaseSeconds: overrides.leaseSeconds ?? base.dispatchTimeoutSeconds * 2, ...base };
}

export const DISPATCH_TIMING: DispatchTiming = deriveDispatchTiming();

/** The time the evidence batch keeps after the last send: its PUT, then the index refs and the intent's delete. */
export const evidenceReserveOf = (t: Pick<DispatchTiming, 'evidenceTimeoutMs' | 'writeAllowanceMs'>) =>
  t.evidenceTimeoutMs + 2 * t.writeAllowanceMs;

/** Each rule the timing must satisfy, named so a synth error says which one broke. */
export function timingViolations(t: DispatchTiming): string[] {
  const timeoutMs = t.dispatchTimeoutSeconds * 1000;
  const perSend = t.sendTimeoutMs + t.writeAllowanceMs;
  const sendsTimeMs = timeoutMs - t.deadlineMarginMs - evidenceReserveOf(t);
  const rules: [string, boolean, string][] = [
    [
      'SEND_FITS_TIMEOUT',
      perSend + t.deadlineMarginMs < timeoutMs,
      `one send (${perSend} ms) plus the margin (${t.deadlineMarginMs} ms) must fit in the dispatch timeout (${timeoutMs} ms)`,
    ],
    [
      'BATCH_FITS_TIMEOUT',
      Math.ceil(t.batchSize / t.concurrency) * perSend <= sendsTimeMs,
      `a batch of ${t.batchSize} at ${t.concurrency} in flight, every send taking ${perSend} ms, must fit in ${sendsTimeMs} ms (the timeout less the margin and the evidence batch's ${evidenceReserveOf(t)} ms)`,
    ],
    [
      'LEASE_OUTLIVES_INVOCATION',
      t.leaseSeconds * 1000 >= timeoutMs + t.sendTimeoutMs,
      `the lease (${t.leaseSeconds} s) must outlive the dispatch timeout plus one send timeout`,
    ],
    [
      'LEASE_EXCEEDS_TWO_SENDS',
      t.leaseSeconds * 1000 > 2 * t.sendTimeoutMs,
      `the lease (${t.leaseSeconds} s) must exceed twice the send timeout (${t.sendTimeoutMs} ms)`,
    ],
    [
      'CONNECT_BEFORE_SEND_TIMEOUT',
      t.connectTimeoutMs < t.sendTimeoutMs,
      `the connect timeout (${t.connectTimeoutMs} ms) must be shorter than the send timeout (${t.sendTimeoutMs} ms)`,
    ],
    [
      'SWEEPER_FITS_INTERVAL',
      t.sweeperTimeoutSeconds <= t.sweeperIntervalSeconds,
      `the sweeper timeout (${t.sweeperTimeoutSeconds} s) must not exceed its schedule (${t.sweeperIntervalSeconds} s): runs must not overlap`,
    ],
    [
      'PENDING_THRESHOLD_AFTER_INVOCATION',
      t.pendingThresholdSeconds >= t.dispatchTimeoutSeconds,
      `a PENDING notification may be re-driven (${t.pendingThresholdSeconds} s) only after a dispatch invocation could have handled it (${t.dispatchTimeoutSeconds} s)`,
    ],
    ['POSITIVE', Object.values(t).every((v) => Number.isFinite(v) && v > 0), 'every value must be positive'],
  ];
  return rules.filter(([, ok]) => !ok).map(([name, , detail]) => `${name}: ${detail}`);
}

/**
 * The rules a running dispatch function checks on its own environment (the others need the stack's whole picture),
 * each with the message that names the variables to fix.
 */
export const RUNTIME_TIMING_RULES = {
  LEASE_EXCEEDS_TWO_SENDS: 'LEASE_SECONDS must exceed twice SEND_TIMEOUT_MS',
  CONNECT_BEFORE_SEND_TIMEOUT: 'CONNECT_TIMEOUT_MS must be shorter than SEND_TIMEOUT_MS',
} as const;

export class DispatchTimingError extends Error {
  override name = 'DispatchTimingError';
}

export function assertDispatchTiming(t: DispatchTiming): DispatchTiming {
  const problems = timingViolations(t);
  if (problems.length > 0) throw new DispatchTimingError(`dispatch timing: ${problems.join('; ')}`);
  return t;
}

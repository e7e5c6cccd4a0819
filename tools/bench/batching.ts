/**
 * How many records one invocation holds, as a function of the arrival rate and the event source's batching — the
 * density every per-invocation cost divides by (an evidence object, an intent, a trace, Lambda's own log lines, a
 * metric flush). A local burst pushes hundreds of records at once and fills every batch; production at a million
 * notifications a month (0.4/s) hands each invocation about one. Pure: the batching is the stack's own
 * (lib/dispatch-triggers.ts, lib/delivery-feedback.ts, lib/ingest-source.ts).
 *
 * The model: one lane (a stream shard × the parallelization factor, a Kafka partition, a queue poller) gathers
 * records until its batch is full or its window ends. Arrivals are Poisson; a window that saw at least one record
 * invokes, so the records per invocation are E[N | N ≥ 1] = m / (1 − e^−m) for m = rate × window / lanes records
 * expected in a window, capped at the batch size. m → 0 gives 1 (each record its own invocation); a large m gives the
 * batch size.
 */
import {
  SES_EVENTS_BATCH_SIZE,
  SES_EVENTS_BATCH_WINDOW_SECONDS,
  URGENT_BATCH_SIZE,
} from '../../functions/contracts/stream-filter.ts';

/** One event source's batching. */
export interface Batching {
  readonly batchSize: number;
  /** The batching window; a source without one still waits for its next poll (a stream shard: about 0.25 s). */
  readonly windowSeconds: number;
  /** Lanes the rate is spread over (stream shards × parallelization factor, partitions, pollers). */
  readonly lanes: number;
}

/** DynamoDB Streams polls each shard about four times a second: the window of a mapping without one. */
export const STREAM_POLL_SECONDS = 0.25;
/** Concurrent batches per stream shard (the dispatch triggers' ParallelizationFactor). */
export const STREAM_PARALLELIZATION = 2;
/** Lambda starts an SQS event source with five pollers (Lambda developer guide, "Scaling" for SQS). */
export const SQS_STARTING_POLLERS = 5;

/** The stack's batching (the routine trigger's batch size is the settings' default, 100). */
export function stackBatching(streamShards: number, kafkaPartitions = 1) {
  return {
    ingest: { batchSize: 100, windowSeconds: 1, lanes: kafkaPartitions },
    dispatch: { batchSize: 100, windowSeconds: 1, lanes: streamShards * STREAM_PARALLELIZATION },
    urgent: {
      batchSize: URGENT_BATCH_SIZE,
      windowSeconds: STREAM_POLL_SECONDS,
      lanes: streamShards * STREAM_PARALLELIZATION,
    },
    feedback: {
      batchSize: SES_EVENTS_BATCH_SIZE,
      windowSeconds: SES_EVENTS_BATCH_WINDOW_SECONDS,
      lanes: SQS_STARTING_POLLERS,
    },
  } satisfies Record<string, Batching>;
}

/** Records per invocation at `ratePerSec` through `b` (at least 1, at most the batch size). */
export function recordsPerInvocation(ratePerSec: number, b: Batching): number {
  const m = (ratePerSec * b.windowSeconds) / Math.max(1, b.lanes);
  if (m <= 1e-9) return 1;
  const given = m < 1e-6 ? 1 + m / 2 : m / (1 - Math.exp(-m));
  return Math.min(b.batchSize, Math.max(1, given));
}

/**
 * Reports objects per report when a feedback invocation writes one object per distinct send batch among its reports
 * (the layout before reports were written one object per feedback invocation): `perInvocation` reports drawn from
 * the send batches of the feedback window, `K = sends in the window / records per dispatch invocation`; the expected
 * distinct batches is K(1 − (1 − 1/K)^n).
 */
export function reportsObjectsPerReportBySendBatch(
  reportsPerInvocation: number,
  sendsInWindow: number,
  sendsPerBatch: number,
): number {
  const k = Math.max(1, sendsInWindow / Math.max(1, sendsPerBatch));
  const distinct = k * (1 - (1 - 1 / k) ** reportsPerInvocation);
  return Math.min(1, distinct / Math.max(1, reportsPerInvocation));
}

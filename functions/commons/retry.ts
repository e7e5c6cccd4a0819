import { isServerError, isThrottlingError, isTransientError } from '@smithy/core/retry';
/** Bounded retry with full-jitter exponential backoff (AWS Architecture Blog, "Exponential Backoff and Jitter"). */
export interface RetryOptions {
  readonly attempts: number;
  readonly baseMs: number;
  readonly maxMs?: number;
  readonly isRetryable: (error: unknown) => boolean;
  readonly onRetry?: (error: unknown, attempt: number) => void;
  readonly sleep?: (ms: number) => Promise<void>;
  readonly random?: () => number;
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export function backoffMs(attempt: number, baseMs: number, maxMs: number, random: () => number = Math.random): number {
  return Math.floor(random() * Math.min(maxMs, baseMs * 2 ** attempt));
}

export async function withRetry<T>(operation: () => Promise<T>, options: RetryOptions): Promise<T> {
  const wait = options.sleep ?? sleep;
  for (let attempt = 1; ; attempt++) {
    try {
      return await operation();
    } catch (error) {
      if (attempt >= options.attempts || !options.isRetryable(error)) throw error;
      options.onRetry?.(error, attempt);
      await wait(backoffMs(attempt, options.baseMs, options.maxMs ?? 2_000, options.random));
    }
  }
}

/**
 * "Equal jitter" backoff for waits that must really grow (throttling, a held channel): half the ceiling plus a random
 * half, so the wait is never near zero and concurrent retries spread out. The ceiling doubles per step up to maxMs.
 */
export function growingBackoffMs(
  step: number,
  baseMs: number,
  maxMs: number,
  random: () => number = Math.random,
): number {
  const ceiling = Math.min(maxMs, baseMs * 2 ** Math.min(step, 30));
  return Math.floor(ceiling / 2 + (random() * ceiling) / 2);
}

/**
 * Failures of our own request that a later try can get past: what the SDK itself classes as throttling, transient
 * (a timeout, a broken connection, a 5xx it retries, marked retryable by the model) or a server error, once its own
 * retries are spent; a TransactionConflictException (another transaction held the item; ingest/inbox-store.ts treats
 * it as transient too, the SDK does not retry it); and a request that got no answer with a Node error code. Anything
 * else — a request it will never accept, credentials it does not know (UnrecognizedClientException), access denied, a
 * bug — is thrown at once.
 */
export function isWorthRetrying(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const e = error as Parameters<typeof isTransientError>[0] & { code?: unknown };
  return (
    isThrottlingError(e) ||
    isTransientError(e) ||
    isServerError(e) ||
    e.name === 'TransactionConflictException' ||
    (e.$metadata?.httpStatusCode === undefined && typeof e.code === 'string')
  );
}

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
 * Failures of our own request that a later try can get past: what DynamoDB answered throttled or with a 5xx (the SDK's
 * own retries spent), or its model marks retryable, and a request that got no answer (timed out, its connection
 * broke: the SDK's retries leave $metadata on it, without a status). Anything else — a request it will never accept,
 * credentials it does not know (UnrecognizedClientException), access denied, a bug — is thrown at once.
 */
const THROTTLED = /^(ThrottlingException|ProvisionedThroughputExceededException|RequestLimitExceeded)$/;
export function isWorthRetrying(error: unknown): boolean {
  const e = (typeof error === 'object' && error !== null ? error : {}) as {
    name?: string;
    code?: unknown;
    $retryable?: unknown;
    $metadata?: { httpStatusCode?: number };
  };
  const status = e.$metadata?.httpStatusCode;
  if (status === undefined)
    return e.name === 'TimeoutError' || typeof e.code === 'string' || THROTTLED.test(e.name ?? '');
  return status >= 500 || status === 429 || e.$retryable !== undefined || THROTTLED.test(e.name ?? '');
}

import { describe, expect, it } from 'vitest';
import { isWorthRetrying } from '../../functions/commons/retry.ts';

/** An error as the SDK raises it for DynamoDB's answer, once its own retries are spent. */
const answered = (name: string, httpStatusCode: number, over: object = {}) =>
  Object.assign(new Error(name), { name, $fault: httpStatusCode >= 500 ? 'server' : 'client' }, over, {
    $metadata: { httpStatusCode, attempts: 3 },
  });

describe('isWorthRetrying: what a later try can get past', () => {
  it.each([
    ['throttled', answered('ThrottlingException', 400)],
    ['over its provisioned throughput', answered('ProvisionedThroughputExceededException', 400)],
    ['over the account limit', answered('RequestLimitExceeded', 400)],
    ['a 500', answered('InternalServerError', 500)],
    ['a 503', answered('ServiceUnavailable', 503)],
    ['marked retryable by its model', answered('ReplicatedWriteConflictException', 400, { $retryable: {} })],
    [
      'a timeout after the SDK retries (no status)',
      Object.assign(new Error('t'), { name: 'TimeoutError', $metadata: { attempts: 3 } }),
    ],
    ['a broken connection', Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' })],
    ['another transaction on the item (the SDK does not retry it)', answered('TransactionConflictException', 400)],
    ['a transaction still in progress', answered('TransactionInProgressException', 400)],
    ['a request timeout answered with a 400', answered('RequestTimeout', 400)],
    ['a request timeout answered with a 408', answered('RequestTimeoutException', 408)],
    ['a 429', answered('TooManyRequestsException', 429)],
    ['a 501', answered('NotImplemented', 501)],
  ])('%s: yes', (_what, error) => {
    expect(isWorthRetrying(error)).toBe(true);
  });

  it.each([
    ['credentials it does not know', answered('UnrecognizedClientException', 400)],
    ['access denied', answered('AccessDeniedException', 400)],
    ['a refused request', answered('ValidationException', 400)],
    ['no such table', answered('ResourceNotFoundException', 400)],
    ['an item collection full', answered('ItemCollectionSizeLimitExceededException', 400)],
    ['a bug', new TypeError('x is undefined')],
    ['not an error', undefined],
  ])('%s: no', (_what, error) => {
    expect(isWorthRetrying(error)).toBe(false);
  });
});

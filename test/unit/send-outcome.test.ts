import { describe, expect, it } from 'vitest';
import { classifySendError } from '../../functions/domain/send-outcome.ts';

const sdkError = (name: string, status?: number, extra: object = {}) =>
  Object.assign(new Error(name), {
    name,
    ...(status === undefined ? {} : { $metadata: { httpStatusCode: status } }),
    ...extra,
  });

describe('send outcome classification', () => {
  it.each([
    ['MessageRejected', 400],
    ['MailFromDomainNotVerifiedException', 400],
    ['InvalidParameterValue', 400],
    ['InvalidParameterException', 400],
    ['EndpointDisabledException', 400],
    ['PlatformApplicationDisabledException', 400],
    ['AuthorizationErrorException', 403],
    ['NotFoundException', 404],
  ])('%s is a definite rejection', (name, status) => {
    expect(classifySendError(sdkError(name, status))).toEqual({ kind: 'rejected', reason: name });
  });

  it.each([
    ['Throttling', 400],
    ['ThrottledException', 429],
    ['InternalErrorException', 500],
    ['ServiceUnavailable', 503],
  ])('%s is transient', (name, status) => {
    expect(classifySendError(sdkError(name, status)).kind).toBe('transient');
  });

  it('connection refused or a DNS failure: nothing was sent, transient', () => {
    expect(classifySendError(sdkError('Error', undefined, { code: 'ECONNREFUSED' })).kind).toBe('transient');
    expect(classifySendError(sdkError('Error', undefined, { code: 'ENOTFOUND' })).kind).toBe('transient');
    const connect = sdkError('TimeoutError');
    connect.message = 'the request socket did not establish a connection with the server within 1000 ms';
    expect(classifySendError(connect).kind).toBe('transient');
  });

  it('a timeout, reset or abort after the request left is unknown', () => {
    expect(classifySendError(sdkError('TimeoutError')).kind).toBe('unknown');
    expect(classifySendError(sdkError('Error', undefined, { code: 'ECONNRESET' })).kind).toBe('unknown');
    expect(classifySendError(sdkError('AbortError')).kind).toBe('unknown');
    expect(classifySendError('weird').kind).toBe('unknown');
  });
});

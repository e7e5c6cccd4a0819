/**
 * Classifies what a provider call's failure means for the notification. Pure: it looks only at the error the SDK
 * threw (its name, HTTP status, and the Node.js error code when no response came back).
 *
 * - rejected: the provider answered and refused (bad address, disabled endpoint, opted out, unverified sender).
 *   Retrying cannot help: FAILED with the reason.
 * - transient: the provider answered "not now" (throttling, 5xx), or the request never left (connection refused,
 *   DNS failure, connect timeout). Nothing was sent: safe to try again.
 * - unknown: the request left and no answer came back (timeout, reset, abort). It may have been delivered: the
 *   channel's delivery policy decides.
 */
export type SendFailure =
  | { kind: 'rejected'; reason: string }
  | { kind: 'transient'; reason: string }
  | { kind: 'unknown'; reason: string };

const THROTTLING = new Set([
  'Throttling',
  'ThrottlingException',
  'ThrottledException',
  'TooManyRequestsException',
  'KMSThrottlingException',
  'RequestThrottled',
]);

/** Errors raised before a single byte of the request reached the provider. */
const NOT_SENT_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ENETUNREACH',
  'EHOSTUNREACH',
  'ECONNABORTED',
]);

interface SdkErrorLike {
  name?: string;
  code?: string;
  message?: string;
  $metadata?: { httpStatusCode?: number };
}

export function classifySendError(error: unknown): SendFailure {
  const e = (typeof error === 'object' && error !== null ? error : {}) as SdkErrorLike;
  const name = e.name ?? 'Error';
  const status = e.$metadata?.httpStatusCode;
  if (status !== undefined) {
    if (status === 429 || THROTTLING.has(name)) return { kind: 'transient', reason: name };
    if (status >= 500) return { kind: 'transient', reason: name };
    // Any other answer in 4xx is the provider refusing this message: MessageRejected, InvalidParameter,
    // EndpointDisabled, MailFromDomainNotVerified, opted-out numbers (InvalidParameter), AuthorizationError …
    if (status >= 400) return { kind: 'rejected', reason: name };
  }
  if (THROTTLING.has(name)) return { kind: 'transient', reason: name };
  if (e.code !== undefined && NOT_SENT_CODES.has(e.code)) return { kind: 'transient', reason: e.code };
  // The SDK's connect timeout fires before the socket connected: the request never left.
  if (name === 'TimeoutError' && /did not establish a connection/.test(e.message ?? '')) {
    return { kind: 'transient', reason: 'ConnectTimeout' };
  }
  return { kind: 'unknown', reason: e.code ?? name };
}

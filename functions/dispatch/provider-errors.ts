/**
 * How a failed SES SendEmail / SNS Publish is classed (send-error.ts): by what the provider may have done with the
 * message (functions/domain/send-outcome.ts says what each class does to the notification). A module of its own,
 * loaded with the sender at cold start.
 *
 * The SDK (v3, query protocol) puts the wire error code in `Code` and its own class name in `name` (SNS `Throttled`
 * arrives as ThrottledException, `ParameterValueInvalid` as InvalidParameterValueException); codes the model does not
 * list (SES `Throttling`, `AccessDenied`, `RequestExpired`, `InternalFailure` …) arrive with `name` = the code. Both
 * spellings are matched. A failure with no HTTP answer carries the Node.js socket code instead.
 */
import { isForeignEndpoint, SENT_TO_ENDPOINT } from '../domain/push-endpoint.ts';
import type { SendFailureClass } from '../domain/send-outcome.ts';
import { SendError, type SendTarget } from './send-error.ts';

/**
 * throttled — the provider said "not now", nothing was sent.
 * SES: "If you attempt to send an email … after reaching your daily sending quota … or your maximum sending rate …
 * Amazon SES drops the message … the API produces a ThrottlingException … Daily message quota exceeded / Maximum
 * sending rate exceeded … wait for an interval of up to 10 minutes, and then retry"
 * (https://docs.aws.amazon.com/ses/latest/dg/manage-sending-quotas-errors.html; on the query API the code is
 * `Throttling`, https://aws.amazon.com/blogs/messaging-and-targeting/how-to-handle-a-throttling-maximum-sending-rate-exceeded-error/).
 * SNS Publish: `Throttled` (HTTP 429, "the rate at which requests have been submitted … exceeds your quota") and
 * KMSThrottling (https://docs.aws.amazon.com/sns/latest/api/API_Publish.html). Any service: ThrottlingException.
 * Not a 503: SES and SNS document their quotas as 400 Throttling and 429 Throttled, and a 503 ServiceUnavailable is
 * only "the request has failed due to a temporary failure of the server"
 * (https://docs.aws.amazon.com/ses/latest/APIReference/CommonErrors.html) — nothing there says the message was not
 * taken first, so a 503 is an unknown outcome like every other 5xx (docs/dispatch.md "Four readings of AWS's
 * documentation"). A throttling code under a 5xx status is read by the status.
 */
const THROTTLED = new Set([
  'Throttling',
  'ThrottlingException',
  'Throttled',
  'ThrottledException',
  'KMSThrottling',
  'KMSThrottlingException',
  'TooManyRequestsException',
  'RequestThrottled',
]);

/**
 * accountBlocked — the account or its setup is at fault, not the message; a later retry is safe and nothing was sent.
 * SES SendEmail: AccountSendingPausedException ("email sending is disabled for your entire Amazon SES account"),
 * ConfigurationSetDoesNotExist, ConfigurationSetSendingPausedException, MailFromDomainNotVerifiedException
 * (https://docs.aws.amazon.com/ses/latest/APIReference/API_SendEmail.html); a MessageRejected whose message says an
 * identity is not verified — the sender, or in the sandbox the recipient ("If your account is still in the Amazon SES
 * sandbox, you also need to verify any email addresses which you plan on sending email to",
 * https://docs.aws.amazon.com/ses/latest/dg/verify-addresses-and-domains.html,
 * https://docs.aws.amazon.com/ses/latest/dg/troubleshoot-error-messages.html).
 * SNS Publish: AuthorizationError ("the user has been denied access to the requested resource") — except for a push
 * endpoint of another account or region, which our role may never publish to (the stack grants sns:Publish on this
 * account's and region's endpoints only): that refusal is the one message's, see FOREIGN_ENDPOINT below —
 * InvalidSecurity, KMSAccessDenied, KMSDisabled, KMSInvalidState, KMSNotFound, KMSOptInRequired
 * (https://docs.aws.amazon.com/sns/latest/api/API_Publish.html).
 * Any service: AccessDenied(Exception), NotAuthorized, InvalidClientTokenId, OptInRequired, IncompleteSignature,
 * ExpiredToken (https://docs.aws.amazon.com/ses/latest/APIReference/CommonErrors.html).
 */
const ACCOUNT_BLOCKED = new Set([
  'AccountSendingPausedException',
  'ConfigurationSetDoesNotExist',
  'ConfigurationSetDoesNotExistException',
  'ConfigurationSetSendingPausedException',
  'MailFromDomainNotVerifiedException',
  'ProductionAccessNotGranted',
  'ProductionAccessNotGrantedException',
  'AuthorizationError',
  'AuthorizationErrorException',
  'InvalidSecurity',
  'InvalidSecurityException',
  'KMSAccessDenied',
  'KMSAccessDeniedException',
  'KMSDisabled',
  'KMSDisabledException',
  'KMSInvalidState',
  'KMSInvalidStateException',
  'KMSNotFound',
  'KMSNotFoundException',
  'KMSOptInRequired',
  'AccessDenied',
  'AccessDeniedException',
  'NotAuthorized',
  'InvalidClientTokenId',
  'UnrecognizedClientException',
  'OptInRequired',
  'IncompleteSignature',
  'MissingAuthenticationToken',
  'ExpiredToken',
  'ExpiredTokenException',
]);
/** MessageRejected texts that blame the account's setup (unverified identity, sandbox, paused) and not the message. */
const ACCOUNT_LEVEL_REJECTION =
  /not verified|sandbox|sending (is )?(paused|suspended|disabled)|account .*(paused|suspended)/i;

/**
 * notSent — the request never reached the provider's send logic.
 * Clock skew: RequestExpired, "the date stamp on the request is more than 15 minutes in the future" or past
 * (https://docs.aws.amazon.com/ses/latest/APIReference/CommonErrors.html), and the SDK's other clock-skew codes. The
 * SDK corrects its clock offset from the error response's Date header on every error, retries or not (@aws-sdk/core
 * AwsSdkSigV4Signer.errorHandler sets config.systemClockOffset; maxAttempts 1 skips only the SDK's own retry), so the
 * state machine's next attempt is signed with the corrected clock.
 * Network: connection refused, DNS failures, unreachable networks, and the SDK's connect timeout ("the request socket
 * did not establish a connection", @smithy/node-http-handler): no byte of the request was written.
 */
const CLOCK_SKEW = new Set(['RequestExpired', 'RequestTimeTooSkewed', 'RequestInTheFuture']);
const SIGNATURE = new Set(['InvalidSignatureException', 'SignatureDoesNotMatch']);
const SKEW_TEXT = /expired|not yet current|skew|in the future/i;
/**
 * Failures that can only happen before a byte of the request left: the name never resolved (getaddrinfo), or the
 * connection was refused (a refusal answers the SYN; on an open socket a peer's reset is ECONNRESET instead).
 */
const NOT_SENT_SOCKET_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN']);
/**
 * "No route" is "not sent" only while connecting. On a reused keep-alive connection the request is written to an
 * established socket first, and the kernel can report EHOSTUNREACH / ENETUNREACH there afterwards (an ICMP
 * unreachable for a retransmission), when the provider may already have the request. Node says which call failed in
 * `error.syscall` ("The name of the system call that triggered the error",
 * https://nodejs.org/api/errors.html#class-systemerror); @smithy/node-http-handler passes Node's error through.
 * Without `syscall: 'connect'` the outcome is unknown (docs/dispatch.md "Four readings of AWS's documentation").
 */
const UNREACHABLE_SOCKET_CODES = new Set(['ENETUNREACH', 'EHOSTUNREACH']);

/**
 * applicationBlocked — one platform application refuses every endpoint under it, and nothing else.
 * SNS Publish: PlatformApplicationDisabled, "Exception error indicating platform application disabled"
 * (https://docs.aws.amazon.com/sns/latest/api/API_Publish.html) — an expired or revoked APNs certificate or FCM key
 * disables the application. Other applications (an Android app next to an iOS one) and the other channels are
 * untouched, so the hold is the application's (its ARN, from the endpoint's), never the PUSH channel's.
 */
const APPLICATION_BLOCKED = new Set(['PlatformApplicationDisabled', 'PlatformApplicationDisabledException']);
/** AuthorizationError on Publish, both spellings. */
const AUTHORIZATION_ERROR = new Set(['AuthorizationError', 'AuthorizationErrorException']);

/**
 * rejected — the provider answered and refused this message; retrying it cannot help.
 * SES: MessageRejected ("the action failed, and the message could not be sent", e.g. a suppressed or illegal address,
 * https://docs.aws.amazon.com/ses/latest/APIReference/API_SendEmail.html) and InvalidParameterValue.
 * SNS Publish: InvalidParameter / InvalidParameterValue (an invalid phone number or payload), EndpointDisabled
 * ("Exception error indicating endpoint disabled": the platform told SNS this device token is no longer valid), NotFound
 * (https://docs.aws.amazon.com/sns/latest/api/API_Publish.html), OptedOut ("You can't send SMS messages to phone
 * numbers that opt out", SNS OptedOutException). FOREIGN_ENDPOINT: AuthorizationError for a push endpoint of another
 * account or region — our role may publish only to this account's endpoints in this region, so that one address can
 * never be sent to, whatever we retry; the other endpoints are fine. Any other 4xx answer is the provider's definite
 * "no" to this request and is treated the same way (FAILED, alarmed, with the code as the reason).
 *
 * unknown — everything else: 500 InternalFailure/InternalError, 502, 503, 504 ("You should retry HTTPS requests that
 * receive 5xx errors", https://docs.aws.amazon.com/ses/latest/DeveloperGuide/api-error-codes.html — but a 5xx can come
 * after the provider accepted the message, so for us the outcome is unknown), and a connection that failed after the
 * request was written: ECONNRESET, EPIPE, "socket hang up", EHOSTUNREACH on an established socket, a request
 * timeout, our abort at the send timeout.
 */
const REJECTED = new Set([
  'MessageRejected',
  'InvalidParameter',
  'InvalidParameterException',
  'InvalidParameterValue',
  'InvalidParameterValueException',
  'ParameterValueInvalid',
  'EndpointDisabled',
  'EndpointDisabledException',
  'NotFound',
  'NotFoundException',
  'OptedOut',
  'OptedOutException',
  'ValidationError',
  'ValidationException',
]);

interface ProviderErrorLike {
  name?: string;
  Code?: string;
  code?: string;
  syscall?: string;
  message?: string;
  $metadata?: { httpStatusCode?: number };
}

export function classifyProviderError(error: unknown, target?: SendTarget): SendError {
  if (error instanceof SendError) return error;
  const e = (typeof error === 'object' && error !== null ? error : {}) as ProviderErrorLike;
  const status = e.$metadata?.httpStatusCode;
  const message = e.message ?? '';
  const code =
    e.name === 'TimeoutError' && e.code === undefined && /did not establish a connection/.test(message)
      ? 'ConnectTimeout'
      : codeOf(e, status);
  if (
    status !== undefined &&
    AUTHORIZATION_ERROR.has(code) &&
    target !== undefined &&
    SENT_TO_ENDPOINT[target.channel] &&
    isForeignEndpoint(target.recipient, target.origin ?? {}) === true
  ) {
    return new SendError('rejected', code, `rejected: ${code} for an endpoint of another account or region`, {
      cause: error,
      reason: `FOREIGN_ENDPOINT: ${code}`,
    });
  }
  const cls = classOf(codeOf(e, status), status, e, message);
  return new SendError(cls, code, `${cls}: ${code}`, { cause: error });
}

/** The provider's code when it answered; the socket's code when it did not; else the error's name. */
function codeOf(e: ProviderErrorLike, status: number | undefined): string {
  if (e.Code !== undefined) return e.Code;
  if (status === undefined && e.code !== undefined) return e.code;
  if (e.name === 'Unknown' && status !== undefined) return `HTTP${status}`;
  return e.name !== undefined && e.name !== 'Error' ? e.name : 'Error';
}

function classOf(code: string, status: number | undefined, e: ProviderErrorLike, message: string): SendFailureClass {
  if (status !== undefined && status >= 200 && status < 600) {
    if (status >= 500) return 'unknown';
    if (THROTTLED.has(code) || status === 429) return 'throttled';
    if (CLOCK_SKEW.has(code)) return 'notSent';
    if (SIGNATURE.has(code)) return SKEW_TEXT.test(message) ? 'notSent' : 'accountBlocked';
    if (APPLICATION_BLOCKED.has(code)) return 'applicationBlocked';
    if (ACCOUNT_BLOCKED.has(code)) return 'accountBlocked';
    if (code === 'MessageRejected' && ACCOUNT_LEVEL_REJECTION.test(message)) return 'accountBlocked';
    if (REJECTED.has(code)) return 'rejected';
    // 401/403 with a code we do not list is still an authorization answer: the account or its credentials, never
    // this message's content (https://docs.aws.amazon.com/ses/latest/APIReference/CommonErrors.html lists every
    // 403 as an access, signature or token problem).
    if (status === 401 || status === 403) return 'accountBlocked';
    if (status >= 400 && status < 500) return 'rejected';
    return 'unknown';
  }
  if (THROTTLED.has(code)) return 'throttled';
  if (e.code !== undefined && NOT_SENT_SOCKET_CODES.has(e.code)) return 'notSent';
  if (e.code !== undefined && UNREACHABLE_SOCKET_CODES.has(e.code) && e.syscall === 'connect') return 'notSent';
  if (e.name === 'TimeoutError' && /did not establish a connection/.test(message)) return 'notSent';
  return 'unknown';
}

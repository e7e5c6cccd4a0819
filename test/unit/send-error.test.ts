/**
 * Every provider answer we class, through the real SDK clients and the real adapter (ProviderSender) against a local
 * HTTP endpoint that answers as SES / SNS do: the SDK's own error naming (wire Code vs class name) is part of what is
 * tested. Socket-level failures (refused, reset after the request was written, no answer) likewise.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SESClient } from '@aws-sdk/client-ses';
import { SNSClient } from '@aws-sdk/client-sns';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { classifyProviderError } from '../../functions/dispatch/provider-errors.ts';
import { SendError } from '../../functions/dispatch/send-error.ts';
import { ProviderSender } from '../../functions/dispatch/senders.ts';
import { buildNotification, type NotificationItem } from '../../functions/domain/notification.ts';
import { SEND_FAILURE_CLASSES, type SendFailureClass } from '../../functions/domain/send-outcome.ts';
import { loadAllTemplates } from '../../functions/domain/template-sets.ts';
import { render } from '../../functions/domain/templates.ts';
import { EXAMPLE_BRAND } from '../../tools/local/example-brand.ts';
import { decodeTransfer, PUSH_ARN, transferEvent } from '../support/events.ts';

// Every notice type's templates (dispatch loads a type when it first renders one: template-sets.ts).
await loadAllTemplates();

type Answer = (req: IncomingMessage, res: ServerResponse) => void;
let answer: Answer = () => undefined;
let server: Server;
let url = '';

const xmlError =
  (status: number, code: string, message = `${code} message`): Answer =>
  (_req, res) => {
    res.writeHead(status, { 'content-type': 'text/xml' });
    res.end(
      `<ErrorResponse><Error><Type>Sender</Type><Code>${code}</Code><Message>${message}</Message></Error><RequestId>r-1</RequestId></ErrorResponse>`,
    );
  };

beforeAll(async () => {
  server = createServer((req, res) => {
    req.on('data', () => undefined);
    req.on('end', () => answer(req, res));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => {
  server.closeAllConnections();
  server.close();
});

const event = (() => {
  const d = decodeTransfer(transferEvent());
  return d.event;
})();
const item = (channel: 'EMAIL' | 'PUSH' | 'SMS'): NotificationItem =>
  buildNotification(
    event,
    channel,
    channel === 'EMAIL' ? 'hanako@example.com' : channel === 'PUSH' ? PUSH_ARN : '+819012345678',
    Date.now(),
    { retentionDays: 35 },
  );

function sender(endpoint = url, connectTimeoutMs = 1_000) {
  const config = {
    endpoint,
    region: 'us-east-1',
    maxAttempts: 1,
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    requestHandler: { connectionTimeout: connectTimeoutMs },
  };
  return new ProviderSender(new SESClient(config), new SNSClient(config), { senderEmail: 'n@example.com' });
}

/**
 * Sends one notification on `channel` and returns the SendError the adapter threw. The send's abort is far past any
 * answer (the first, the SDK's warm-up, took 200 ms on a loaded machine): only the abort's own test gives a short one.
 */
async function failureOf(channel: 'EMAIL' | 'PUSH' | 'SMS', s = sender(), timeoutMs = 30_000): Promise<SendError> {
  const n = item(channel);
  const message = render({ template: n.template, locale: n.locale, channel: n.channel, data: n.data }, EXAMPLE_BRAND);
  try {
    await s.send(n, message, AbortSignal.timeout(timeoutMs));
  } catch (error) {
    expect(error).toBeInstanceOf(SendError);
    return error as SendError;
  }
  throw new Error('the send succeeded');
}

const SES_CASES: [number, string, string | undefined, SendFailureClass][] = [
  // Sending quotas: https://docs.aws.amazon.com/ses/latest/dg/manage-sending-quotas-errors.html
  [400, 'Throttling', 'Maximum sending rate exceeded.', 'throttled'],
  [400, 'Throttling', 'Daily message quota exceeded.', 'throttled'],
  [400, 'ThrottlingException', undefined, 'throttled'],
  // A 503 says nothing about whether SES took the message first: like every 5xx, unknown (docs/dispatch.md).
  [503, 'ServiceUnavailable', undefined, 'unknown'],
  // SendEmail's own errors: https://docs.aws.amazon.com/ses/latest/APIReference/API_SendEmail.html
  [400, 'MessageRejected', 'Illegal address', 'rejected'],
  [400, 'MessageRejected', 'Address blacklisted.', 'rejected'],
  [400, 'InvalidParameterValue', "Missing final '@domain'", 'rejected'],
  [
    400,
    'MessageRejected',
    'Email address is not verified. The following identities failed the check in region US-EAST-1: hanako@example.com',
    'accountBlocked',
  ],
  [400, 'AccountSendingPausedException', 'Sending is paused for this account.', 'accountBlocked'],
  [400, 'ConfigurationSetDoesNotExist', undefined, 'accountBlocked'],
  [400, 'ConfigurationSetSendingPausedException', undefined, 'accountBlocked'],
  [400, 'MailFromDomainNotVerifiedException', undefined, 'accountBlocked'],
  // Common errors: https://docs.aws.amazon.com/ses/latest/APIReference/CommonErrors.html
  [403, 'AccessDenied', undefined, 'accountBlocked'],
  [400, 'AccessDeniedException', undefined, 'accountBlocked'],
  [403, 'InvalidClientTokenId', undefined, 'accountBlocked'],
  [403, 'OptInRequired', undefined, 'accountBlocked'],
  [400, 'RequestExpired', 'Request has expired.', 'notSent'],
  [403, 'SignatureDoesNotMatch', 'Signature expired: 20261130T091500Z is now earlier than 20261130T092500Z', 'notSent'],
  [403, 'SignatureDoesNotMatch', 'The request signature we calculated does not match', 'accountBlocked'],
  // A 401/403 with a code not listed anywhere is still about access, never about this message.
  [403, 'SomeFutureAccessCode', undefined, 'accountBlocked'],
  [401, 'Unauthorized', undefined, 'accountBlocked'],
  [500, 'InternalFailure', undefined, 'unknown'],
  [502, 'BadGateway', undefined, 'unknown'],
  [504, 'GatewayTimeout', undefined, 'unknown'],
];

const SNS_CASES: [number, string, 'PUSH' | 'SMS', SendFailureClass][] = [
  // Publish's errors: https://docs.aws.amazon.com/sns/latest/api/API_Publish.html
  [429, 'Throttled', 'SMS', 'throttled'],
  [400, 'KMSThrottling', 'PUSH', 'throttled'],
  [400, 'InvalidParameter', 'SMS', 'rejected'],
  [400, 'ParameterValueInvalid', 'SMS', 'rejected'],
  [400, 'EndpointDisabled', 'PUSH', 'rejected'],
  [404, 'NotFound', 'PUSH', 'rejected'],
  [400, 'OptedOut', 'SMS', 'rejected'],
  [403, 'AuthorizationError', 'SMS', 'accountBlocked'],
  [403, 'InvalidSecurity', 'PUSH', 'accountBlocked'],
  [400, 'KMSAccessDenied', 'PUSH', 'accountBlocked'],
  [400, 'KMSDisabled', 'PUSH', 'accountBlocked'],
  [400, 'KMSInvalidState', 'PUSH', 'accountBlocked'],
  [400, 'KMSNotFound', 'PUSH', 'accountBlocked'],
  [403, 'KMSOptInRequired', 'PUSH', 'accountBlocked'],
  // One platform application (an expired APNs certificate): held on its own, not the channel.
  [400, 'PlatformApplicationDisabled', 'PUSH', 'applicationBlocked'],
  [503, 'ServiceUnavailable', 'SMS', 'unknown'],
  [400, 'RequestExpired', 'SMS', 'notSent'],
  [500, 'InternalError', 'SMS', 'unknown'],
];

describe('SES SendEmail answers, through the SDK and the adapter', () => {
  it.each(SES_CASES)('HTTP %i %s (%s) → %s', async (status, code, message, expected) => {
    answer = xmlError(status, code, message);
    const e = await failureOf('EMAIL');
    expect(e.failure).toBe(expected);
    expect(e.code).toBe(code);
  });
});

describe('SNS Publish answers, through the SDK and the adapter', () => {
  it.each(SNS_CASES)('HTTP %i %s on %s → %s', async (status, code, channel, expected) => {
    answer = xmlError(status, code);
    const e = await failureOf(channel);
    expect(e.failure).toBe(expected);
    expect(e.code).toBe(code);
  });
});

describe("an AuthorizationError is the one endpoint's when it is another account's or region's", () => {
  /** Our sender, publishing from the account and region of PUSH_ARN (ap-northeast-1, 123456789012). */
  const ours = (origin: { account?: string; region?: string }) => {
    const config = {
      endpoint: url,
      region: 'ap-northeast-1',
      maxAttempts: 1,
      credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    };
    return new ProviderSender(new SESClient(config), new SNSClient(config), { senderEmail: 'n@example.com', origin });
  };
  const pushTo = async (s: ProviderSender, arn: string) => {
    const n = { ...item('PUSH'), recipient: arn };
    const message = render({ template: n.template, locale: n.locale, channel: 'PUSH', data: n.data }, EXAMPLE_BRAND);
    try {
      await s.send(n, message, AbortSignal.timeout(2_000));
    } catch (error) {
      return error as SendError;
    }
    throw new Error('the send succeeded');
  };
  const foreignAccount = PUSH_ARN.replace(':123456789012:', ':999988887777:');
  const foreignRegion = PUSH_ARN.replace(':ap-northeast-1:', ':eu-west-1:');

  it("another account's endpoint: rejected (FAILED with FOREIGN_ENDPOINT), not the account's fault", async () => {
    answer = xmlError(
      403,
      'AuthorizationError',
      `not authorized to perform: SNS:Publish on resource: ${foreignAccount}`,
    );
    const e = await pushTo(ours({ account: '123456789012', region: 'ap-northeast-1' }), foreignAccount);
    expect(e).toMatchObject({
      failure: 'rejected',
      code: 'AuthorizationError',
      reason: 'FOREIGN_ENDPOINT: AuthorizationError',
    });
  });

  it("another region's endpoint: rejected, even when our account is not configured", async () => {
    answer = xmlError(403, 'AuthorizationError');
    const e = await pushTo(ours({ region: 'ap-northeast-1' }), foreignRegion);
    expect(e).toMatchObject({ failure: 'rejected', reason: 'FOREIGN_ENDPOINT: AuthorizationError' });
  });

  it('our own endpoint refused: the account (IAM drift) — the channel is held, as before', async () => {
    answer = xmlError(403, 'AuthorizationError');
    const e = await pushTo(ours({ account: '123456789012', region: 'ap-northeast-1' }), PUSH_ARN);
    expect(e).toMatchObject({ failure: 'accountBlocked', reason: 'AuthorizationError' });
  });

  it("without our account known, another account's endpoint stays the cautious reading (account-level)", async () => {
    answer = xmlError(403, 'AuthorizationError');
    const e = await pushTo(ours({ region: 'ap-northeast-1' }), foreignAccount);
    expect(e.failure).toBe('accountBlocked');
  });
});

describe('failures below HTTP', () => {
  it('a 504 from a proxy with no AWS error body: unknown', async () => {
    answer = (_req, res) => {
      res.writeHead(504, { 'content-type': 'text/html' });
      res.end('<html>gateway timeout</html>');
    };
    const e = await failureOf('EMAIL');
    expect(e).toMatchObject({ failure: 'unknown', code: 'HTTP504' });
  });

  it('the connection reset after the request was written (ECONNRESET, "socket hang up"): unknown', async () => {
    answer = (req) => req.socket.destroy();
    const e = await failureOf('SMS');
    expect(e).toMatchObject({ failure: 'unknown', code: 'ECONNRESET' });
  });

  it('no answer before the send timeout (our abort): unknown', async () => {
    answer = () => undefined;
    const e = await failureOf('EMAIL', sender(), 300);
    expect(e).toMatchObject({ failure: 'unknown', code: 'AbortError' });
  });

  it('connection refused: nothing was sent', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', () => r()));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const e = await failureOf('EMAIL', sender(`http://127.0.0.1:${port}`));
    expect(e).toMatchObject({ failure: 'notSent', code: 'ECONNREFUSED' });
  });

  it('a success without a message id: unknown, never "sent"', async () => {
    answer = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/xml' });
      res.end('<SendEmailResponse><SendEmailResult></SendEmailResult></SendEmailResponse>');
    };
    const e = await failureOf('EMAIL');
    expect(e).toMatchObject({ failure: 'unknown', code: 'NoMessageId' });
  });

  it.each([
    // As @smithy/node-http-handler raises them.
    [
      {
        name: 'TimeoutError',
        message:
          'the request socket did not establish a connection with the server within the configured timeout of 1500 ms.',
      },
      'notSent',
      'ConnectTimeout',
    ],
    [
      Object.assign(new Error('getaddrinfo ENOTFOUND email.us-east-1.amazonaws.com'), { code: 'ENOTFOUND' }),
      'notSent',
      'ENOTFOUND',
    ],
    [Object.assign(new Error('getaddrinfo EAI_AGAIN'), { code: 'EAI_AGAIN' }), 'notSent', 'EAI_AGAIN'],
    // "No route" while connecting: nothing left. On an established (reused) socket, after the request was written:
    // unknown. Node names the failed call in `syscall`.
    [
      Object.assign(new Error('connect ENETUNREACH'), { code: 'ENETUNREACH', syscall: 'connect' }),
      'notSent',
      'ENETUNREACH',
    ],
    [
      Object.assign(new Error('connect EHOSTUNREACH'), { code: 'EHOSTUNREACH', syscall: 'connect' }),
      'notSent',
      'EHOSTUNREACH',
    ],
    [
      Object.assign(new Error('read EHOSTUNREACH'), { code: 'EHOSTUNREACH', syscall: 'read' }),
      'unknown',
      'EHOSTUNREACH',
    ],
    [Object.assign(new Error('EHOSTUNREACH'), { code: 'EHOSTUNREACH' }), 'unknown', 'EHOSTUNREACH'],
    [
      Object.assign(new Error('write ENETUNREACH'), { code: 'ENETUNREACH', syscall: 'write' }),
      'unknown',
      'ENETUNREACH',
    ],
    [Object.assign(new Error('write EPIPE'), { name: 'TimeoutError', code: 'EPIPE' }), 'unknown', 'EPIPE'],
    [Object.assign(new Error('socket hang up'), { name: 'TimeoutError', code: 'ECONNRESET' }), 'unknown', 'ECONNRESET'],
    [
      Object.assign(new Error('request timed out'), { name: 'TimeoutError', code: 'ETIMEDOUT' }),
      'unknown',
      'ETIMEDOUT',
    ],
    ['not even an Error', 'unknown', 'Error'],
  ] as const)('%o → %s', (error, expected, code) => {
    expect(classifyProviderError(error)).toMatchObject({ failure: expected, code });
  });
});

it('every class is produced by some provider answer above', () => {
  const seen = new Set([...SES_CASES.map((c) => c[3]), ...SNS_CASES.map((c) => c[3])]);
  expect([...seen].sort()).toEqual([...SEND_FAILURE_CLASSES].sort());
});

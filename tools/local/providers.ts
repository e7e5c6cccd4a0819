/**
 * Local provider endpoints, reached by the unmodified handlers through AWS_ENDPOINT_URL_SES / AWS_ENDPOINT_URL_SNS.
 *
 * - SES: the aws-ses-v2-local emulator (with its web viewer) behind a small witness proxy. The proxy records every
 *   SendEmail the emulator accepted, with the notificationId from the message tags the emulator itself drops.
 * - SNS: a small endpoint that speaks the SNS query protocol for Publish and records each call, and writes the
 *   delivery status log entry SNS would for each accepted SMS and push (sns-delivery-status.ts).
 *
 * Both keep a ledger of accepted sends: the independent witness the local run and the chaos suite report from.
 * A `fault` hook lets a test decide, per call, to reject, throttle, fail the account, or accept and then fail.
 * An optional account quota (`quota`) throttles beyond R sends per second, with the error each service answers:
 * SES `Throttling` "Maximum sending rate exceeded." (HTTP 400), SNS `Throttled` (HTTP 429); SNS keeps SMS and push
 * quotas apart, as its SMS and Publish quotas are.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import sesModule from 'aws-ses-v2-local';
import type { Channel, SnsChannel } from '../../functions/domain/channels.ts';
import { SENT_TO_ENDPOINT } from '../../functions/domain/push-endpoint.ts';
import { freePort } from './dynamodb-local.ts';
import { simulatorFeedback } from './ses-simulator.ts';
import { deliveryStatusLog } from './sns-delivery-status.ts';

export interface AcceptedSend {
  readonly messageId: string;
  readonly notificationId: string | undefined;
  readonly channel: Channel;
  readonly to: string;
  /** EMAIL: the Source SES received ("Display Name" <address>, the name RFC 2047-encoded when not ASCII). */
  readonly from?: string;
  readonly subject?: string;
  readonly text: string;
  readonly html?: string;
  readonly at: number;
}

/**
 * ok: accept. reject: refuse this message. throttle: "not now". accountPaused: refuse the account (SES
 * AccountSendingPausedException, SNS AuthorizationError). clockSkew: RequestExpired (the signature's date is off).
 * acceptThenHang: accept (ledger) and never answer. acceptThen500: accept (ledger), then answer 500 InternalFailure.
 * acceptThenReset: accept (ledger), then reset the connection. hang: never answer, nothing accepted. slow: accept,
 * then answer only after `whileSlow` has run (a test advances the clock past the lease and runs the sweeper there).
 * applicationDisabled (push): the endpoint's platform application is disabled (SNS PlatformApplicationDisabled).
 */
export type Fault =
  | 'ok'
  | 'reject'
  | 'throttle'
  | 'accountPaused'
  | 'clockSkew'
  | 'acceptThenHang'
  | 'acceptThen500'
  | 'acceptThenReset'
  | 'hang'
  | 'slow'
  | 'applicationDisabled';
export type FaultHook = (channel: Channel, to: string) => Fault;

/**
 * An account's send quota as the providers enforce it: a bucket of `rate` tokens refilled continuously at `rate`
 * per second (one second of burst). On real time, so the chaos suite's fake clock does not refill it.
 */
export class SendQuota {
  private tokens: number;
  private at = performance.now();
  constructor(readonly rate: number) {
    this.tokens = rate;
  }
  take(): boolean {
    const now = performance.now();
    this.tokens = Math.min(this.rate, this.tokens + ((now - this.at) * this.rate) / 1000);
    this.at = now;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}

export interface ProviderEndpoint {
  readonly url: string;
  readonly sends: AcceptedSend[];
  fault: FaultHook;
  /** Account quotas per channel this endpoint serves; none: unlimited. */
  quota: Partial<Record<Channel, SendQuota>>;
  /** Sends answered with throttling because a quota was exceeded, per channel. */
  readonly throttled: Partial<Record<Channel, number>>;
  whileSlow?: () => Promise<void>;
  /**
   * SNS only: the account the sender's role belongs to. A push endpoint of another account is then refused as the
   * stack's IAM policy refuses it (403 AuthorizationError for that ARN); undefined: every account is accepted.
   */
  account?: string;
  stop(): Promise<void>;
}

/** What SNS answers a publish it rejects: an SMS's number is an invalid parameter, a push's endpoint is disabled. */
const REJECTION_CODE: Readonly<Record<SnsChannel, string>> = { SMS: 'InvalidParameter', PUSH: 'EndpointDisabled' };

const readBody = (req: IncomingMessage) =>
  new Promise<string>((resolve, reject) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => resolve(body));
    req.on('error', reject);
  });

const xmlEscape = (s: string) => s.replace(/[<>&'"]/g, (c) => `&#${c.charCodeAt(0)};`);

function queryError(res: ServerResponse, status: number, code: string, message: string, type = 'Sender') {
  res.writeHead(status, { 'content-type': 'text/xml' });
  res.end(
    `<ErrorResponse><Error><Type>${type}</Type><Code>${code}</Code><Message>${xmlEscape(message)}</Message></Error><RequestId>${randomUUID()}</RequestId></ErrorResponse>`,
  );
}

/** Takes a token from the channel's quota; true (and counted) when the quota is exceeded. */
function overQuota(endpoint: ProviderEndpoint, channel: Channel): boolean {
  const quota = endpoint.quota[channel];
  if (quota === undefined || quota.take()) return false;
  endpoint.throttled[channel] = (endpoint.throttled[channel] ?? 0) + 1;
  return true;
}

async function listen(server: Server, port?: number): Promise<string> {
  const chosen = port ?? (await freePort());
  // Node closes an idle keep-alive connection after 5 s; a client that picks that socket as it closes gets a reset
  // after writing its request, which dispatch must take as "maybe sent" (UNKNOWN). A local run's dispatch is idle
  // for longer than that between pumps: keep idle connections for the length of any run instead.
  server.keepAliveTimeout = 3_600_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(chosen, '127.0.0.1', () => resolve());
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const close = (server: Server) =>
  new Promise<void>((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });

/** aws-ses-v2-local is CommonJS with a default export: unwrap it whichever way the loader presents it. */
const sesEmulator = ((sesModule as unknown as { default?: unknown }).default ?? sesModule) as (config: {
  host: string;
  port: number;
}) => Promise<Server>;

/** What to do with a request whose fault says it must never be answered: hold it until the server stops. */
const hanging = new Set<ServerResponse>();

export interface SnsEndpoint extends ProviderEndpoint {
  /**
   * The delivery status log entries SNS would write for the accepted SMS and push (sns-delivery-status.ts), waiting
   * for the local run to hand them to the feedback function as CloudWatch Logs subscriptions would.
   */
  readonly deliveryLogs: { logGroup: string; message: string }[];
}

export async function startSnsEndpoint(port?: number): Promise<SnsEndpoint> {
  const sends: AcceptedSend[] = [];
  const endpoint: SnsEndpoint = {
    url: '',
    sends,
    deliveryLogs: [],
    fault: () => 'ok',
    quota: {},
    throttled: {},
    stop: async () => close(server),
  };
  const server = createServer(async (req, res) => {
    const form = new URLSearchParams(await readBody(req));
    if (form.get('Action') !== 'Publish') return queryError(res, 400, 'InvalidAction', 'only Publish is emulated');
    const phone = form.get('PhoneNumber');
    const target = form.get('TargetArn') ?? form.get('TopicArn');
    const channel: SnsChannel = phone ? 'SMS' : 'PUSH';
    const to = phone ?? target ?? '';
    const foreign =
      endpoint.account !== undefined && SENT_TO_ENDPOINT[channel] && to.split(':')[4] !== endpoint.account;
    if (foreign) {
      return queryError(res, 403, 'AuthorizationError', `not authorized to perform: SNS:Publish on resource: ${to}`);
    }
    const fault = endpoint.fault(channel, to);
    if (fault === 'hang') return void hanging.add(res);
    if (fault === 'reject') return queryError(res, 400, REJECTION_CODE[channel], 'rejected');
    if (fault === 'applicationDisabled') {
      return queryError(res, 400, 'PlatformApplicationDisabled', 'Platform application is disabled.');
    }
    if (fault === 'accountPaused') return queryError(res, 403, 'AuthorizationError', 'not authorized to publish');
    if (fault === 'clockSkew') return queryError(res, 400, 'RequestExpired', 'Request has expired.');
    if (fault === 'throttle' || overQuota(endpoint, channel))
      return queryError(res, 429, 'Throttled', 'Rate exceeded.');
    const raw = form.get('Message') ?? '';
    let text = raw;
    let subject: string | undefined;
    let notificationId: string | undefined;
    if (form.get('MessageStructure') === 'json') {
      const payload = JSON.parse(raw) as Record<string, string>;
      const apns = JSON.parse(payload.APNS ?? '{}');
      subject = apns.aps?.alert?.title;
      text = apns.aps?.alert?.body ?? payload.default ?? '';
      notificationId = apns.notificationId;
    }
    const messageId = randomUUID();
    const at = Date.now();
    sends.push({ messageId, notificationId, channel, to, ...(subject ? { subject } : {}), text, at });
    endpoint.deliveryLogs.push(deliveryStatusLog({ messageId, channel, to, at }));
    if (fault === 'acceptThenHang') return void hanging.add(res);
    if (fault === 'acceptThen500') return queryError(res, 500, 'InternalError', 'internal error', 'Receiver');
    if (fault === 'acceptThenReset') return void res.socket?.destroy();
    if (fault === 'slow') await endpoint.whileSlow?.();
    res.writeHead(200, { 'content-type': 'text/xml' });
    res.end(
      `<PublishResponse xmlns="http://sns.amazonaws.com/doc/2010-03-31/"><PublishResult><MessageId>${messageId}</MessageId></PublishResult><ResponseMetadata><RequestId>${randomUUID()}</RequestId></ResponseMetadata></PublishResponse>`,
    );
  });
  const url = await listen(server, port);
  return Object.assign(endpoint, { url });
}

export interface SesEndpoint extends ProviderEndpoint {
  /** The emulator's own web viewer, where every accepted email can be read. */
  readonly viewerUrl: string;
  /**
   * Feedback events SES would publish for the accepted emails to mailbox-simulator addresses (ses-simulator.ts),
   * waiting for the local run to hand them to the feedback function.
   */
  readonly feedback: Record<string, unknown>[];
}

export async function startSesEndpoint(port?: number, viewerPort?: number): Promise<SesEndpoint> {
  const emulatorPort = viewerPort ?? (await freePort());
  const emulator = await sesEmulator({ host: '127.0.0.1', port: emulatorPort });
  const viewerUrl = `http://127.0.0.1:${emulatorPort}`;
  const sends: AcceptedSend[] = [];
  const endpoint: SesEndpoint = {
    url: '',
    viewerUrl,
    sends,
    feedback: [],
    fault: () => 'ok',
    quota: {},
    throttled: {},
    stop: async () => undefined,
  };
  const server = createServer(async (req, res) => {
    const body = await readBody(req);
    const form = new URLSearchParams(body);
    const to = form.get('Destination.ToAddresses.member.1') ?? '';
    const sending = form.get('Action') === 'SendEmail';
    const fault = sending ? endpoint.fault('EMAIL', to) : 'ok';
    if (fault === 'hang') return void hanging.add(res);
    // A per-message refusal ("Email address is not verified" would be the account's sandbox, not this message).
    if (fault === 'reject') return queryError(res, 400, 'MessageRejected', 'Illegal address');
    if (fault === 'accountPaused') {
      return queryError(res, 400, 'AccountSendingPausedException', 'Sending is paused for this account.');
    }
    if (fault === 'clockSkew') return queryError(res, 400, 'RequestExpired', 'Request has expired.');
    if (fault === 'throttle' || (sending && overQuota(endpoint, 'EMAIL'))) {
      return queryError(res, 400, 'Throttling', 'Maximum sending rate exceeded.');
    }
    const answer = await fetch(`${viewerUrl}${req.url ?? '/'}`, {
      method: req.method ?? 'POST',
      // Forward the SDK's own headers (the emulator insists on an Authorization header), not the hop's.
      headers: Object.fromEntries(
        Object.entries(req.headers).filter(
          (e): e is [string, string] =>
            typeof e[1] === 'string' && !['host', 'content-length', 'connection'].includes(e[0]),
        ),
      ),
      body,
    });
    const text = await answer.text();
    const messageId = /<MessageId>([^<]+)<\/MessageId>/.exec(text)?.[1];
    if (answer.ok && messageId !== undefined) {
      let notificationId: string | undefined;
      const tags: Record<string, string> = {};
      for (let i = 1; form.has(`Tags.member.${i}.Name`); i++) {
        tags[form.get(`Tags.member.${i}.Name`) ?? ''] = form.get(`Tags.member.${i}.Value`) ?? '';
        if (form.get(`Tags.member.${i}.Name`) === 'notificationId') {
          notificationId = Buffer.from(form.get(`Tags.member.${i}.Value`) ?? '', 'base64url').toString('utf8');
        }
      }
      endpoint.feedback.push(
        ...simulatorFeedback({
          messageId,
          to,
          source: form.get('Source') ?? '',
          tags,
          configurationSet: form.get('ConfigurationSetName') ?? undefined,
          at: Date.now(),
        }),
      );
      const html = form.get('Message.Body.Html.Data') ?? undefined;
      sends.push({
        messageId,
        notificationId,
        channel: 'EMAIL',
        to,
        from: form.get('Source') ?? '',
        subject: form.get('Message.Subject.Data') ?? '',
        text: form.get('Message.Body.Text.Data') ?? '',
        ...(html === undefined ? {} : { html }),
        at: Date.now(),
      });
    }
    if (fault === 'acceptThenHang') return void hanging.add(res);
    if (fault === 'acceptThen500') return queryError(res, 500, 'InternalFailure', 'internal failure', 'Receiver');
    if (fault === 'acceptThenReset') return void res.socket?.destroy();
    if (fault === 'slow') await endpoint.whileSlow?.();
    res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'text/xml' });
    res.end(text);
  });
  const url = await listen(server, port);
  return Object.assign(endpoint, {
    url,
    stop: async () => {
      await close(server);
      emulator.closeAllConnections?.();
      await new Promise<void>((resolve) => emulator.close(() => resolve()));
    },
  });
}

/**
 * Local provider endpoints, reached by the unmodified handlers through AWS_ENDPOINT_URL_SES / AWS_ENDPOINT_URL_SNS.
 *
 * - SES: the aws-ses-v2-local emulator (with its web viewer) behind a small witness proxy. The proxy records every
 *   SendEmail the emulator accepted, with the notificationId from the message tags the emulator itself drops.
 * - SNS: a small endpoint that speaks the SNS query protocol for Publish and records each call.
 *
 * Both keep a ledger of accepted sends: the independent witness the local run and the chaos suite report from.
 * A `fault` hook lets a test decide, per call, to reject, throttle, or accept and then never answer.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import sesModule from 'aws-ses-v2-local';
import type { Channel } from '../functions/domain/channels.ts';
import { freePort } from './dynamodb-local.ts';

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
 * ok: accept. reject / throttle: a definite refusal. acceptThenHang: accept (ledger) and never answer.
 * hang: never answer, nothing accepted. slow: accept, then answer only after `whileSlow` has run (a test advances the
 * clock past the lease and runs the sweeper there).
 */
export type Fault = 'ok' | 'reject' | 'throttle' | 'acceptThenHang' | 'hang' | 'slow';
export type FaultHook = (channel: Channel, to: string) => Fault;

export interface ProviderEndpoint {
  readonly url: string;
  readonly sends: AcceptedSend[];
  fault: FaultHook;
  whileSlow?: () => Promise<void>;
  stop(): Promise<void>;
}

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

function queryError(res: ServerResponse, status: number, code: string, message: string) {
  res.writeHead(status, { 'content-type': 'text/xml' });
  res.end(
    `<ErrorResponse><Error><Type>Sender</Type><Code>${code}</Code><Message>${xmlEscape(message)}</Message></Error><RequestId>${randomUUID()}</RequestId></ErrorResponse>`,
  );
}

async function listen(server: Server, port?: number): Promise<string> {
  const chosen = port ?? (await freePort());
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

export async function startSnsEndpoint(port?: number): Promise<ProviderEndpoint> {
  const sends: AcceptedSend[] = [];
  const endpoint: ProviderEndpoint = {
    url: '',
    sends,
    fault: () => 'ok',
    stop: async () => close(server),
  };
  const server = createServer(async (req, res) => {
    const form = new URLSearchParams(await readBody(req));
    if (form.get('Action') !== 'Publish') return queryError(res, 400, 'InvalidAction', 'only Publish is emulated');
    const phone = form.get('PhoneNumber');
    const target = form.get('TargetArn') ?? form.get('TopicArn');
    const channel: Channel = phone ? 'SMS' : 'PUSH';
    const to = phone ?? target ?? '';
    const fault = endpoint.fault(channel, to);
    if (fault === 'hang') return void hanging.add(res);
    if (fault === 'reject')
      return queryError(res, 400, channel === 'SMS' ? 'InvalidParameter' : 'EndpointDisabled', 'rejected');
    if (fault === 'throttle') return queryError(res, 400, 'Throttling', 'Rate exceeded');
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
    sends.push({ messageId, notificationId, channel, to, ...(subject ? { subject } : {}), text, at: Date.now() });
    if (fault === 'acceptThenHang') return void hanging.add(res);
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
}

export async function startSesEndpoint(port?: number, viewerPort?: number): Promise<SesEndpoint> {
  const emulatorPort = viewerPort ?? (await freePort());
  const emulator = await sesEmulator({ host: '127.0.0.1', port: emulatorPort });
  const viewerUrl = `http://127.0.0.1:${emulatorPort}`;
  const sends: AcceptedSend[] = [];
  const endpoint: SesEndpoint = { url: '', viewerUrl, sends, fault: () => 'ok', stop: async () => undefined };
  const server = createServer(async (req, res) => {
    const body = await readBody(req);
    const form = new URLSearchParams(body);
    const to = form.get('Destination.ToAddresses.member.1') ?? '';
    const fault = form.get('Action') === 'SendEmail' ? endpoint.fault('EMAIL', to) : 'ok';
    if (fault === 'hang') return void hanging.add(res);
    if (fault === 'reject') return queryError(res, 400, 'MessageRejected', 'Email address is not verified.');
    if (fault === 'throttle') return queryError(res, 400, 'Throttling', 'Maximum sending rate exceeded.');
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
      for (let i = 1; form.has(`Tags.member.${i}.Name`); i++) {
        if (form.get(`Tags.member.${i}.Name`) === 'notificationId') {
          notificationId = Buffer.from(form.get(`Tags.member.${i}.Value`) ?? '', 'base64url').toString('utf8');
        }
      }
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

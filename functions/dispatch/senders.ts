/**
 * Provider adapters: SES SendEmail for EMAIL, SNS Publish for PUSH and SMS. Each checks that the provider answered
 * with a message id; the clients run with maxAttempts 1 (see dispatch/provider-clients.ts), and each call carries an
 * abort signal so a hung request ends within the send timeout. Every failure leaves as a SendError carrying its class
 * (send-error.ts): what the provider may have done with the message.
 */
import { type SESClient, SendEmailCommand } from '@aws-sdk/client-ses';
import { PublishCommand, type SNSClient } from '@aws-sdk/client-sns';
import { unknownChannel } from '../domain/channels.ts';
import { type ProviderRequest, smsRequest } from '../domain/evidence.ts';
import type { NotificationItem } from '../domain/notification.ts';
import type { PublishOrigin } from '../domain/push-endpoint.ts';
import { pushAttributes } from '../domain/send-moment.ts';
import type { Message, PushMessage } from '../domain/templates.ts';
import { classifyProviderError, SendError } from './send-error.ts';

export interface Sender {
  /** Resolves with the provider's message id once the provider accepted the message; rejects with a SendError. */
  send(notification: NotificationItem, message: Message, signal: AbortSignal): Promise<string>;
}

/** SES tag values allow only [A-Za-z0-9_-]: base64url is exactly that alphabet. */
export const tagValue = (s: string) => Buffer.from(s, 'utf8').toString('base64url');

export interface SenderConfig {
  readonly senderEmail: string;
  readonly configurationSet?: string | undefined;
  /** Our account and region: an AuthorizationError for a push endpoint outside them is that message's alone. */
  readonly origin?: PublishOrigin | undefined;
}

export class ProviderSender implements Sender {
  constructor(
    private readonly ses: SESClient,
    private readonly sns: SNSClient,
    private readonly config: SenderConfig,
  ) {}

  async send(notification: NotificationItem, message: Message, signal: AbortSignal): Promise<string> {
    let id: string | undefined;
    try {
      id = await this.sendBy(notification, message, signal);
    } catch (error) {
      throw classifyProviderError(error, {
        channel: notification.channel,
        recipient: notification.recipient,
        ...(this.config.origin === undefined ? {} : { origin: this.config.origin }),
      });
    }
    if (typeof id !== 'string' || id === '') {
      // A success without the id the provider always returns: a contract change or a proxy in the way. It may have
      // been accepted, so the outcome is unknown, never "sent".
      throw new SendError('unknown', 'NoMessageId', `${notification.channel} provider answered without a message id`);
    }
    return id;
  }

  /** The request a send of this notification makes: what the provider receives, and what the evidence records. */
  request(
    n: { readonly notificationId: string; readonly recipient: string; readonly template: string },
    message: Message,
  ): ProviderRequest {
    return providerRequest(n, message, this.config);
  }

  private async sendBy(n: NotificationItem, message: Message, abortSignal: AbortSignal) {
    const request = this.request(n, message);
    switch (request.channel) {
      case 'EMAIL':
        return (await this.ses.send(emailCommand(request), { abortSignal })).MessageId;
      case 'PUSH':
        return (await this.sns.send(pushCommand(request), { abortSignal })).MessageId;
      case 'SMS':
        return (await this.sns.send(smsCommand(request), { abortSignal })).MessageId;
      default:
        return unknownChannel(request);
    }
  }
}

/**
 * The provider request of a notification's message, as plain data. The commands below are built from it field by
 * field and nothing else, so the evidence (domain/evidence.ts) holds exactly what the provider received.
 */
export function providerRequest(
  n: { readonly notificationId: string; readonly recipient: string; readonly template: string },
  m: Message,
  config: Pick<SenderConfig, 'senderEmail' | 'configurationSet'>,
): ProviderRequest {
  switch (m.channel) {
    case 'EMAIL':
      return {
        channel: 'EMAIL',
        api: 'ses:SendEmail',
        source: mailbox(m.fromName, config.senderEmail),
        to: [n.recipient],
        subject: m.subject,
        text: m.text,
        html: m.html,
        charset: 'UTF-8',
        ...(config.configurationSet === undefined ? {} : { configurationSet: config.configurationSet }),
        tags: [
          { Name: 'notificationId', Value: tagValue(n.notificationId) },
          { Name: 'template', Value: n.template },
        ],
      };
    case 'PUSH': {
      const attributes = pushAttributes(n.recipient, m);
      return {
        channel: 'PUSH',
        api: 'sns:Publish',
        targetArn: n.recipient,
        messageStructure: 'json',
        payload: pushPayload(n, m),
        ...(Object.keys(attributes).length === 0 ? {} : { attributes }),
      };
    }
    case 'SMS':
      return smsRequest(n.recipient, m.text);
    default:
      return unknownChannel(m);
  }
}

type Request<C extends ProviderRequest['channel']> = Extract<ProviderRequest, { channel: C }>;

function emailCommand(r: Request<'EMAIL'>) {
  return new SendEmailCommand({
    Source: r.source,
    Destination: { ToAddresses: [...r.to] },
    Message: {
      Subject: { Data: r.subject, Charset: r.charset },
      Body: { Text: { Data: r.text, Charset: r.charset }, Html: { Data: r.html, Charset: r.charset } },
    },
    Tags: r.tags.map((t) => ({ ...t })),
    ...(r.configurationSet === undefined ? {} : { ConfigurationSetName: r.configurationSet }),
  });
}

const pushCommand = (r: Request<'PUSH'>) =>
  new PublishCommand({
    TargetArn: r.targetArn,
    MessageStructure: r.messageStructure,
    Message: r.payload,
    ...(r.attributes === undefined
      ? {}
      : {
          MessageAttributes: Object.fromEntries(
            Object.entries(r.attributes).map(([name, value]) => [name, { DataType: 'String', StringValue: value }]),
          ),
        }),
  });

const smsCommand = (r: Request<'SMS'>) =>
  new PublishCommand({
    PhoneNumber: r.phoneNumber,
    Message: r.text,
    MessageAttributes: { 'AWS.SNS.SMS.SMSType': { DataType: 'String', StringValue: r.smsType } },
  });

/**
 * `"Display Name" <address>` for SES's Source: the bank's name is what the inbox shows as the sender. A name outside
 * printable ASCII goes as RFC 2047 encoded-words, which SES requires for a non-ASCII "friendly from" name
 * (https://docs.aws.amazon.com/ses/latest/APIReference/API_SendEmail.html); each word stays within RFC 2047's 75
 * characters. IAM's ses:FromAddress condition sees the address alone.
 */
export function mailbox(name: string, address: string): string {
  if (/^[\x20-\x7E]*$/.test(name)) return `"${name.replace(/["\\]/g, '\\$&')}" <${address}>`;
  const words: string[] = [];
  let chunk = '';
  for (const ch of name) {
    // 45 bytes of UTF-8 → 60 base64 characters + "=?UTF-8?B?" and "?=": 72, under 75.
    if (Buffer.byteLength(chunk + ch) > 45) {
      words.push(chunk);
      chunk = '';
    }
    chunk += ch;
  }
  words.push(chunk);
  return `${words.map((w) => `=?UTF-8?B?${Buffer.from(w, 'utf8').toString('base64')}?=`).join(' ')} <${address}>`;
}

/**
 * MessageStructure json: one payload per platform; `default` for any platform not listed. A collapse id goes to FCM as
 * the message's `collapse_key`, beside `notification` and `data`, as SNS's platform-specific example places it
 * (https://docs.aws.amazon.com/sns/latest/dg/mobile-push-send-custommessage.html); APNs takes it as a message
 * attribute (send-moment.ts pushAttributes).
 */
export function pushPayload(n: Pick<NotificationItem, 'notificationId'>, m: PushMessage): string {
  const apns = JSON.stringify({
    aps: { alert: { title: m.title, body: m.body }, sound: 'default' },
    notificationId: n.notificationId,
  });
  return JSON.stringify({
    default: m.body,
    APNS: apns,
    APNS_SANDBOX: apns,
    GCM: JSON.stringify({
      notification: { title: m.title, body: m.body },
      data: { notificationId: n.notificationId },
      ...(m.collapseId === undefined ? {} : { collapse_key: m.collapseId }),
    }),
  });
}

/**
 * Provider adapters: SES SendEmail for EMAIL, SNS Publish for PUSH and SMS. Each checks that the provider answered
 * with a message id; the clients run with maxAttempts 1 (see dispatch/provider-clients.ts), and each call carries an
 * abort signal so a hung request ends within the send timeout. Every failure leaves as a SendError carrying its class
 * (send-error.ts): what the provider may have done with the message.
 */
import { type SESClient, SendEmailCommand } from '@aws-sdk/client-ses';
import { PublishCommand, type SNSClient } from '@aws-sdk/client-sns';
import { unknownChannel } from '../domain/channels.ts';
import type { ProviderRequest } from '../domain/evidence.ts';
import type { NotificationItem } from '../domain/notification.ts';
import type { PublishOrigin } from '../domain/push-endpoint.ts';
import type { Message } from '../domain/templates.ts';
import { classifyProviderError } from './provider-errors.ts';
import { providerRequest } from './provider-request.ts';
import { SendError, type SendTarget } from './send-error.ts';

export { mailbox, providerRequest, pushPayload, tagValue } from './provider-request.ts';

export interface Sender {
  /** Resolves with the provider's message id once the provider accepted the message; rejects with a SendError. */
  send(notification: NotificationItem, message: Message, signal: AbortSignal): Promise<string>;
}

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
      throw classified(error, {
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
 * The provider's error classed (provider-errors.ts). Loaded at cold start, not with the first failed send: a load that
 * failed then would turn a definite "not sent" (a throttle, a blocked account) into an unknown outcome — a final
 * UNKNOWN on an at-most-once channel — for about 3 KB of a bundle.
 */
function classified(error: unknown, target: SendTarget): SendError {
  return classifyProviderError(error, target);
}

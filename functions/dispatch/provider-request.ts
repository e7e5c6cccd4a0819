/**
 * The provider request of a notification's message, as plain data: what SES's SendEmail or SNS's Publish receives
 * (senders.ts builds the commands from it field by field and nothing else) and what the evidence records
 * (domain/evidence.ts). Pure, without the SDK: the sweeper rebuilds a lost batch's records with it
 * (functions/sweeper/recover-evidence.ts) without loading the SES and SNS clients.
 */
import { unknownChannel } from '../domain/channels.ts';
import { type ProviderRequest, smsRequest } from '../domain/evidence.ts';
import type { NotificationItem } from '../domain/notification.ts';
import { pushAttributes } from '../domain/send-moment.ts';
import type { Message, PushMessage } from '../domain/templates.ts';

export interface RequestConfig {
  readonly senderEmail: string;
  readonly configurationSet?: string | undefined;
}

/** SES tag values allow only [A-Za-z0-9_-]: base64url is exactly that alphabet. */
export const tagValue = (s: string) => Buffer.from(s, 'utf8').toString('base64url');

/**
 * The provider request of a notification's message, as plain data. The commands below are built from it field by
 * field and nothing else, so the evidence (domain/evidence.ts) holds exactly what the provider received.
 */
export function providerRequest(
  n: { readonly notificationId: string; readonly recipient: string; readonly template: string },
  m: Message,
  config: RequestConfig,
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

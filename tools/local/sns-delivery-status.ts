/**
 * SNS delivery status, locally: for every SMS and push the local SNS accepted, the log entry SNS writes when delivery
 * status logging is on (the stack turns it on: lib/delivery-feedback.ts), in the log group SNS writes it to, handed
 * to the feedback function in the CloudWatch Logs subscription's shape, as in AWS.
 *
 * What each destination answers is decided here, like the SES mailbox simulator's addresses (ses-simulator.ts):
 * - SMS to +14155550180: "Phone number is opted out" (the owner replied STOP) — a permanent failure;
 *   +14155550181: "Invalid phone number" — permanent; +14155550182: "Phone is currently unreachable/unavailable" —
 *   transient; any other number: "Message has been accepted by phone carrier".
 * - Push to an endpoint whose id starts with "unregistered": the platform's "Unregistered" (410) — permanent; any
 *   other endpoint: delivered to the platform (200).
 * Log formats: Amazon SNS Developer Guide, "Amazon SNS SMS delivery monitoring with Amazon CloudWatch metrics and logs"
 * and "Mobile app attributes" (their example logs), and the CloudWatch Logs subscription's payload (base64 of gzip).
 */
import { randomUUID } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { type SnsChannel, unknownChannel } from '../../functions/domain/channels.ts';
import { pushDeliveryLogGroups, smsDeliveryLogGroups } from '../../functions/domain/feedback.ts';

export const LOCAL_ACCOUNT = '123456789012';
export const LOCAL_REGION = 'us-east-1';

/** The local SMS simulator's numbers and what each answers (any other number: delivered). */
export const SMS_SIMULATOR: Readonly<Record<string, string>> = {
  '+14155550180': 'Phone number is opted out',
  '+14155550181': 'Invalid phone number',
  '+14155550182': 'Phone is currently unreachable/unavailable',
};
const SMS_DELIVERED = 'Message has been accepted by phone carrier';

export interface AcceptedSnsMessage {
  readonly messageId: string;
  readonly channel: SnsChannel;
  /** E.164 number or platform endpoint ARN. */
  readonly to: string;
  /** When SNS accepted it (epoch ms). */
  readonly at: number;
}

/** SNS's log timestamp: "2016-06-28 00:40:34.558", UTC. */
const snsTimestamp = (ms: number) => new Date(ms).toISOString().replace('T', ' ').replace('Z', '');

/** The platform and application of an endpoint ARN (…:endpoint/<platform>/<application>/<id>). */
function endpointParts(arn: string): { platform: string; application: string; id: string } {
  const [platform = 'GCM', application = 'app', id = ''] = arn.split(':endpoint/')[1]?.split('/') ?? [];
  return { platform, application, id };
}

/** The delivery status log entry SNS writes for one accepted message, and the log group it writes it to. */
export function deliveryStatusLog(m: AcceptedSnsMessage): { logGroup: string; message: string } {
  switch (m.channel) {
    case 'SMS':
      return smsDeliveryLog(m);
    case 'PUSH':
      return pushDeliveryLog(m);
    default:
      return unknownChannel(m.channel);
  }
}

function smsDeliveryLog(m: AcceptedSnsMessage): { logGroup: string; message: string } {
  const notification = { messageId: m.messageId, timestamp: snsTimestamp(m.at) };
  const failure = SMS_SIMULATOR[m.to];
  const [success, failed] = smsDeliveryLogGroups(LOCAL_REGION, LOCAL_ACCOUNT) as [string, string];
  return {
    logGroup: failure === undefined ? success : failed,
    message: JSON.stringify({
      notification,
      delivery: {
        ...(failure === undefined ? { phoneCarrier: 'Local Carrier', mnc: 270, mcc: 310 } : { mnc: 0, mcc: 0 }),
        destination: m.to,
        priceInUSD: 0.00645,
        smsType: 'Transactional',
        providerResponse: failure ?? SMS_DELIVERED,
        dwellTimeMs: 599,
        dwellTimeMsUntilDeviceAck: 1344,
      },
      status: failure === undefined ? 'SUCCESS' : 'FAILURE',
    }),
  };
}

function pushDeliveryLog(m: AcceptedSnsMessage): { logGroup: string; message: string } {
  const notification = { messageId: m.messageId, timestamp: snsTimestamp(m.at) };
  const { platform, application, id } = endpointParts(m.to);
  const [success, failed] = pushDeliveryLogGroups(LOCAL_REGION, LOCAL_ACCOUNT, platform, application) as [
    string,
    string,
  ];
  const unregistered = id.startsWith('unregistered');
  return {
    logGroup: unregistered ? failed : success,
    message: JSON.stringify({
      status: unregistered ? 'FAILURE' : 'SUCCESS',
      notification,
      delivery: {
        statusCode: unregistered ? 410 : 200,
        dwellTimeMs: 65,
        token: `local-token-${id}`,
        attempts: 1,
        providerResponse: unregistered
          ? '{"reason":"Unregistered"}'
          : `{"name":"projects/local/messages/${randomUUID()}"}`,
        destination: m.to,
      },
    }),
  };
}

/** Log entries per subscription event: CloudWatch Logs batches by size (about 1 MB); SNS entries are ~500 bytes. */
export const ENTRIES_PER_EVENT = 500;

/** Log messages grouped by log group and batched, as CloudWatch Logs subscriptions deliver them. */
export function subscriptionEvents(logs: readonly { logGroup: string; message: string }[]): Record<string, unknown>[] {
  const byGroup = new Map<string, string[]>();
  for (const l of logs) {
    const group = byGroup.get(l.logGroup);
    if (group === undefined) byGroup.set(l.logGroup, [l.message]);
    else group.push(l.message);
  }
  return [...byGroup].flatMap(([logGroup, messages]) =>
    Array.from({ length: Math.ceil(messages.length / ENTRIES_PER_EVENT) }, (_, i) =>
      logsSubscriptionEvent(logGroup, messages.slice(i * ENTRIES_PER_EVENT, (i + 1) * ENTRIES_PER_EVENT)),
    ),
  );
}

/** One CloudWatch Logs subscription event: { awslogs: { data: base64(gzip(JSON)) } }. */
export function logsSubscriptionEvent(logGroup: string, messages: readonly string[]): Record<string, unknown> {
  const data = {
    messageType: 'DATA_MESSAGE',
    owner: LOCAL_ACCOUNT,
    logGroup,
    logStream: randomUUID(),
    subscriptionFilters: ['notifier-local-delivery-status'],
    logEvents: messages.map((message, i) => ({ id: `${Date.now()}${i}`, timestamp: Date.now(), message })),
  };
  return { awslogs: { data: gzipSync(Buffer.from(JSON.stringify(data), 'utf8')).toString('base64') } };
}

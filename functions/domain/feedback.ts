/**
 * Delivery feedback: what a provider tells us after it accepted a message, turned into a `deliveryStatus`
 * for the notification and, when it says the address can never be reached, a suppression of the address.
 * - SES (EMAIL): delivered, bounced, complained about, rejected, delayed — `readFeedback` takes the EventBridge event
 *   SES publishes through a configuration set (source aws.ses, the SES event record as `detail`).
 * - SNS (SMS, PUSH): delivered or failed, with the carrier's or the platform's words — `readDeliveryStatusLog` takes
 *   one entry of SNS delivery status logging (the log groups sns/<region>/<account>/DirectPublishToPhoneNumber and
 *   sns/<region>/<account>/app/<platform>/<application>, each with a /Failure twin), which carries SNS's message id
 *   but no id of ours: the notification is found by that message id.
 * Feedback applies only to the send it describes (`deliveryVerdict`): a resend keeps its own feedback.
 *
 * Pure and total: each reader returns a Feedback or the reason it is not one of ours.
 *
 * Feedback is at-least-once and unordered (SES: "delivered on a best-effort basis, and they might be delivered out of
 * order"), so every status carries a rank: a status is recorded only over a lower rank, or over the same rank with
 * an older time. A late Delivery never overwrites a Bounce, a duplicate changes nothing, and every order of the same
 * events converges to the same item.
 */

import * as z from 'zod/mini';
import { type Channel, type SnsChannel, unknownChannel } from './channels.ts';
import { notificationIdOf, parseNotificationId } from './keys.ts';
import { messageIdOf, TAGGED } from './message-id.ts';

export const DELIVERY_STATUSES = ['DELAYED', 'DELIVERED', 'REJECTED', 'BOUNCED', 'FAILED', 'COMPLAINED'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/**
 * Higher wins. DELAYED is provisional (SES is still retrying); DELIVERED is final unless the recipient complains;
 * REJECTED and BOUNCED end the message (a transient bounce is sent only once SES gave up retrying), as FAILED does an
 * SMS or a push (SNS logs one final status per message); COMPLAINED is the last word about a delivered message.
 */
export const DELIVERY_RANK: Readonly<Record<DeliveryStatus, number>> = {
  DELAYED: 1,
  DELIVERED: 2,
  REJECTED: 3,
  BOUNCED: 3,
  FAILED: 3,
  COMPLAINED: 4,
};

/**
 * Why an address is suppressed: what the provider told us about it. BOUNCED and COMPLAINED come from SES;
 * UNDELIVERABLE is a phone number that cannot receive SMS or a device token the platform no longer knows;
 * CARRIER_OPT_OUT a phone number whose owner replied STOP (SNS will not deliver to it).
 */
export type SuppressionCause = 'BOUNCED' | 'COMPLAINED' | 'UNDELIVERABLE' | 'CARRIER_OPT_OUT';

/** The notification a feedback is about: named by SES's tag, or found by the message id (SNS). */
export interface FeedbackTarget {
  readonly notificationId: string;
  readonly eventId: string;
  readonly channel: Channel;
}

export interface Feedback {
  /** EMAIL: from the message's `notificationId` tag. SMS and PUSH: undefined, found by `messageId`. */
  readonly target?: FeedbackTarget;
  readonly channel: Channel;
  /** The provider's message id (the notification's providerMessageId when this is the send it records). */
  readonly messageId: string;
  readonly status: DeliveryStatus;
  readonly rank: number;
  /** When it happened, as the provider reports it (ISO 8601) and as epoch ms (the tie-break within a rank). */
  readonly at: string;
  readonly atMs: number;
  /** When the provider accepted the message it describes (epoch ms): which send of the notification it is about. */
  readonly sentAtMs: number;
  /** BOUNCED: Permanent | Transient | Undetermined, and SES's subtype (General, NoEmail, OnAccountSuppressionList …). */
  readonly bounceType?: string;
  readonly bounceSubType?: string;
  /** SMS and PUSH: the carrier's or the platform's answer, as SNS logged it (bounded; never the destination). */
  readonly providerResponse?: string;
  /** Set when the address must not be used again (a permanent bounce, a complaint, a dead number or device). */
  readonly suppress?: { readonly cause: SuppressionCause; readonly addresses: string[] };
}

/** Why an event was not recorded: not an error (acknowledged, counted), since retrying would not change it. */
export type FeedbackIgnored =
  | { reason: 'NOT_AN_SES_EVENT' | 'UNSUPPORTED_TYPE' | 'MALFORMED'; detail: string }
  | { reason: 'NOT_OURS' | 'NOT_A_DELIVERY_LOG'; detail: string };

/** EventBridge detail-type → the SES event type in the record (SES "Monitoring SES events using EventBridge"). */
export const FEEDBACK_DETAIL_TYPES = {
  'Email Delivered': 'Delivery',
  'Email Bounced': 'Bounce',
  'Email Complaint Received': 'Complaint',
  'Email Rejected': 'Reject',
  'Email Delivery Delayed': 'DeliveryDelay',
} as const;

/** The tag that names the notification (dispatch/senders.ts writes it, base64url: SES tag values allow [A-Za-z0-9_-]). */
export const NOTIFICATION_TAG = 'notificationId';

const recipients = z.array(z.object({ emailAddress: z.string() }));
const sesRecord = z.object({
  eventType: z.optional(z.string()),
  mail: z.object({
    messageId: z.string().check(z.minLength(1)),
    timestamp: z.string(),
    tags: z.optional(z.record(z.string(), z.array(z.string()))),
  }),
  delivery: z.optional(z.object({ timestamp: z.string() })),
  bounce: z.optional(
    z.object({
      bounceType: z.string(),
      bounceSubType: z.optional(z.string()),
      bouncedRecipients: recipients,
      timestamp: z.string(),
    }),
  ),
  complaint: z.optional(z.object({ complainedRecipients: recipients, timestamp: z.string() })),
  reject: z.optional(z.object({ reason: z.optional(z.string()) })),
  deliveryDelay: z.optional(z.object({ timestamp: z.string(), delayType: z.optional(z.string()) })),
});
const eventBridgeEvent = z.object({ source: z.string(), 'detail-type': z.string(), detail: z.unknown() });

export type ReadResult = { ok: true; feedback: Feedback } | { ok: false; ignored: FeedbackIgnored };

const ignore = (reason: FeedbackIgnored['reason'], detail: string): ReadResult => ({
  ok: false,
  ignored: { reason, detail },
});

/** The notificationId of a tag value: base64url of `<eventId>#<channel>`; undefined for anything else. */
export function notificationIdOfTag(value: string | undefined): { eventId: string; channel: Channel } | undefined {
  if (value === undefined || !/^[A-Za-z0-9_-]+$/.test(value)) return undefined;
  const id = Buffer.from(value, 'base64url').toString('utf8');
  const ref = parseNotificationId(id);
  // Only what SES sends carries the tag; an eventId of the event contract's alphabet (so nothing else smuggled in).
  return ref !== undefined && TAGGED[ref.channel] && /^[A-Za-z0-9._:-]{1,128}$/.test(ref.eventId) ? ref : undefined;
}

export function readFeedback(input: unknown): ReadResult {
  const envelope = eventBridgeEvent.safeParse(input);
  if (!envelope.success || envelope.data.source !== 'aws.ses') {
    return ignore('NOT_AN_SES_EVENT', 'not an EventBridge event from aws.ses');
  }
  const detailType = envelope.data['detail-type'];
  const expected = FEEDBACK_DETAIL_TYPES[detailType as keyof typeof FEEDBACK_DETAIL_TYPES];
  if (expected === undefined) return ignore('UNSUPPORTED_TYPE', `detail-type ${detailType.slice(0, 64)}`);
  const parsed = sesRecord.safeParse(envelope.data.detail);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return ignore('MALFORMED', `${issue?.message ?? 'invalid'} (at ${issue?.path.map(String).join('.') || '<root>'})`);
  }
  const r = parsed.data;
  const target = notificationIdOfTag(r.mail.tags?.[NOTIFICATION_TAG]?.[0]);
  // Mail this account sent through the configuration set without our tag (another sender, a console test).
  if (target === undefined) return ignore('NOT_OURS', 'no notificationId tag of ours');
  const sent = Date.parse(r.mail.timestamp);
  // Neither time readable: the epoch, so the event still ranks (DynamoDB refuses NaN, which would park it).
  const sentAtMs = Number.isFinite(sent) ? sent : 0;
  const base = {
    target: { notificationId: notificationIdOf(target.eventId, target.channel), ...target },
    channel: target.channel,
    messageId: r.mail.messageId,
    sentAtMs,
  };
  const at = (status: DeliveryStatus, timestamp: string) => {
    const ms = Date.parse(timestamp);
    const atMs = Number.isFinite(ms) ? ms : sentAtMs;
    return { status, rank: DELIVERY_RANK[status], at: new Date(atMs).toISOString(), atMs };
  };
  const missing = (field: string) => ignore('MALFORMED', `${expected} without ${field}`);
  switch (expected) {
    case 'Delivery':
      if (r.delivery === undefined) return missing('delivery');
      return { ok: true, feedback: { ...base, ...at('DELIVERED', r.delivery.timestamp) } };
    case 'DeliveryDelay':
      if (r.deliveryDelay === undefined) return missing('deliveryDelay');
      return { ok: true, feedback: { ...base, ...at('DELAYED', r.deliveryDelay.timestamp) } };
    case 'Reject':
      // A reject (virus) carries no time of its own: the send's time.
      return { ok: true, feedback: { ...base, ...at('REJECTED', r.mail.timestamp) } };
    case 'Bounce': {
      const b = r.bounce;
      if (b === undefined) return missing('bounce');
      const permanent = b.bounceType === 'Permanent';
      return {
        ok: true,
        feedback: {
          ...base,
          ...at('BOUNCED', b.timestamp),
          bounceType: b.bounceType,
          ...(b.bounceSubType === undefined ? {} : { bounceSubType: b.bounceSubType }),
          // A transient or undetermined bounce (mailbox full, message too large) says nothing lasting about the address.
          ...(permanent
            ? { suppress: { cause: 'BOUNCED' as const, addresses: b.bouncedRecipients.map((x) => x.emailAddress) } }
            : {}),
        },
      };
    }
    case 'Complaint': {
      const c = r.complaint;
      if (c === undefined) return missing('complaint');
      return {
        ok: true,
        feedback: {
          ...base,
          ...at('COMPLAINED', c.timestamp),
          suppress: { cause: 'COMPLAINED', addresses: c.complainedRecipients.map((x) => x.emailAddress) },
        },
      };
    }
  }
}

// ── SNS delivery status logs (SMS and PUSH) ──

/**
 * The log groups SNS writes delivery status to (Amazon SNS Developer Guide, "Amazon SNS SMS delivery monitoring with
 * Amazon CloudWatch metrics and logs" and "Mobile app attributes"), successes and failures (/Failure) alike.
 */
export const smsDeliveryLogGroups = (region: string, account: string) => [
  `sns/${region}/${account}/DirectPublishToPhoneNumber`,
  `sns/${region}/${account}/DirectPublishToPhoneNumber/Failure`,
];
export const pushDeliveryLogGroups = (region: string, account: string, platform: string, application: string) => [
  `sns/${region}/${account}/app/${platform}/${application}`,
  `sns/${region}/${account}/app/${platform}/${application}/Failure`,
];

/** The channel a delivery status log group is about, or undefined for any other log group. */
export function channelOfLogGroup(logGroup: string): SnsChannel | undefined {
  if (/^sns\/[a-z0-9-]+\/\d{12}\/DirectPublishToPhoneNumber(\/Failure)?$/.test(logGroup)) return 'SMS';
  if (/^sns\/[a-z0-9-]+\/\d{12}\/app\/[A-Z_]+\/[^/]+(\/Failure)?$/.test(logGroup)) return 'PUSH';
  return undefined;
}

/**
 * SMS failures that say the number itself cannot be used (SNS's documented failure reasons): an invalid or
 * unreachable-by-SMS number is UNDELIVERABLE; a number whose owner replied STOP is CARRIER_OPT_OUT. Anything else —
 * unreachable for now, blocked as spam, over the maximum price, an unknown error — says nothing lasting about the
 * number and suppresses nothing.
 */
const SMS_PERMANENT: readonly [RegExp, SuppressionCause][] = [
  [/opted out/i, 'CARRIER_OPT_OUT'],
  [/invalid phone number|phone has blocked sms|not a mobile|landline|is on a blocked list/i, 'UNDELIVERABLE'],
];
/**
 * Push failures that say the device token is gone for good (APNs 410 Unregistered and 400 BadDeviceToken; FCM
 * UNREGISTERED, NotRegistered, InvalidRegistration): SNS disables such an endpoint, and nothing sent to it arrives.
 */
const PUSH_PERMANENT = /unregistered|notregistered|invalidregistration|baddevicetoken|invalidtoken/i;

/** What a failed SNS delivery says about the address for good, if anything: a phone's carrier, an endpoint's platform. */
function permanentCause(channel: SnsChannel, providerResponse: string, statusCode: number | undefined) {
  switch (channel) {
    case 'SMS':
      return SMS_PERMANENT.find(([pattern]) => pattern.test(providerResponse))?.[1];
    case 'PUSH':
      return PUSH_PERMANENT.test(providerResponse) || statusCode === 410 ? 'UNDELIVERABLE' : undefined;
    default:
      return unknownChannel(channel);
  }
}

const PROVIDER_RESPONSE_MAX = 200;

const deliveryLog = z.object({
  status: z.string(),
  notification: z.object({ messageId: z.string().check(z.minLength(1)), timestamp: z.string() }),
  delivery: z.object({
    destination: z.optional(z.string()),
    providerResponse: z.optional(z.string()),
    statusCode: z.optional(z.number()),
  }),
});

/** SNS's log timestamps read "2016-06-28 00:40:34.558" (UTC, no zone); ISO 8601 is read too. */
function snsTime(text: string): number | undefined {
  const iso = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(\.\d+)?$/.test(text) ? `${text.replace(' ', 'T')}Z` : text;
  const ms = Date.parse(iso);
  return Number.isFinite(ms) ? ms : undefined;
}

/**
 * One SNS delivery status log entry (the JSON message of a CloudWatch Logs event) from `logGroup`, as a Feedback
 * without a target: it is found by its message id. SUCCESS is DELIVERED (for SMS: accepted by the carrier, for push:
 * accepted by the platform), FAILURE is FAILED with the provider's words; a permanent failure suppresses the number or
 * the endpoint. When the log says when it was delivered only by dwell time, that is added to the publish time.
 */
export function readDeliveryStatusLog(logGroup: string, message: string): ReadResult {
  const channel = channelOfLogGroup(logGroup);
  if (channel === undefined) return ignore('NOT_A_DELIVERY_LOG', `log group ${logGroup.slice(0, 128)}`);
  let json: unknown;
  try {
    json = JSON.parse(message);
  } catch {
    return ignore('MALFORMED', 'the log message is not JSON');
  }
  const parsed = deliveryLog.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return ignore('MALFORMED', `${issue?.message ?? 'invalid'} (at ${issue?.path.map(String).join('.') || '<root>'})`);
  }
  const r = parsed.data;
  const status: DeliveryStatus | undefined =
    r.status === 'SUCCESS' ? 'DELIVERED' : r.status === 'FAILURE' ? 'FAILED' : undefined;
  if (status === undefined) return ignore('UNSUPPORTED_TYPE', `status ${r.status.slice(0, 32)}`);
  const sentAtMs = snsTime(r.notification.timestamp) ?? 0;
  const dwell = (json as { delivery?: { dwellTimeMs?: unknown } }).delivery?.dwellTimeMs;
  const atMs = sentAtMs + (typeof dwell === 'number' && Number.isFinite(dwell) && dwell >= 0 ? dwell : 0);
  const providerResponse = (r.delivery.providerResponse ?? '').slice(0, PROVIDER_RESPONSE_MAX);
  const cause = status === 'FAILED' ? permanentCause(channel, providerResponse, r.delivery.statusCode) : undefined;
  const destination = r.delivery.destination;
  return {
    ok: true,
    feedback: {
      channel,
      messageId: r.notification.messageId,
      status,
      rank: DELIVERY_RANK[status],
      at: new Date(atMs).toISOString(),
      atMs,
      sentAtMs,
      ...(providerResponse === '' ? {} : { providerResponse }),
      ...(cause === undefined || destination === undefined || destination === ''
        ? {}
        : { suppress: { cause, addresses: [destination] } }),
    },
  };
}

// ── Which send a feedback is about ──

/** What the notification item holds that says which send a feedback may describe. */
export interface DeliveryState {
  /**
   * The send the item records (markSent); absent before it, after a resend, and when the outcome is unknown. An
   * email's in sesMessageId (message-id.ts), or in providerMessageId when written before.
   */
  readonly providerMessageId?: string;
  readonly sesMessageId?: string;
  /** The message the recorded deliveryStatus is about. */
  readonly deliveryMessageId?: string;
  readonly deliveryRank?: number;
  readonly deliveryAtMs?: number;
  /** An operator's resends (ops resend): when each was made, and the message id the earlier send had, if any. */
  readonly manualResends?: readonly { readonly at?: string; readonly providerMessageId?: string }[];
}

export type DeliveryVerdict =
  /** Record it. */
  | 'apply'
  /** About another send of the notification (an earlier one, before a resend): the item's feedback is the new send's. */
  | 'otherSend'
  /** The same or a lower rank, or older: a duplicate or a late, lesser event. */
  | 'notNewer';

/**
 * Whether a feedback is recorded on the notification (pure). Feedback applies only to the send it describes:
 * - the item records a send (its message id): only feedback about that message id applies, and it replaces
 *   whatever was recorded about another message, whatever its rank;
 * - the item records none (the outcome was unknown, or a resend is on its way): feedback about a message id an
 *   earlier send had, or about a message sent before the operator's latest resend, is about an earlier send;
 *   anything else is this send's (a SES delivery can follow a send whose reply was lost);
 * - then by rank: only a higher rank, or the same rank at a later time, replaces what is recorded.
 */
export function deliveryVerdict(
  item: DeliveryState,
  f: Pick<Feedback, 'messageId' | 'rank' | 'atMs' | 'sentAtMs'>,
): DeliveryVerdict {
  const recorded = messageIdOf(item);
  if (recorded !== undefined && recorded !== f.messageId) return 'otherSend';
  const resends = item.manualResends ?? [];
  if (recorded === undefined) {
    if (resends.some((r) => r.providerMessageId === f.messageId)) return 'otherSend';
    const lastResend = Math.max(...resends.map((r) => Date.parse(r.at ?? '')).filter(Number.isFinite));
    if (f.sentAtMs < lastResend) return 'otherSend';
  }
  if (recorded === f.messageId && item.deliveryMessageId !== undefined && item.deliveryMessageId !== f.messageId) {
    return 'apply';
  }
  if (item.deliveryRank === undefined) return 'apply';
  if (f.rank > item.deliveryRank) return 'apply';
  if (f.rank === item.deliveryRank && f.atMs > (item.deliveryAtMs ?? Number.NEGATIVE_INFINITY)) return 'apply';
  return 'notNewer';
}

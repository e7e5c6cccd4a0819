/**
 * Delivery feedback (issue 16): what SES tells us after it accepted an email — delivered, bounced, complained about,
 * rejected, delayed — turned into a `deliveryStatus` for the notification and, for a permanent bounce or a complaint,
 * a suppression of the address.
 *
 * Pure and total: `readFeedback` takes the EventBridge event SES publishes through a configuration set (source
 * aws.ses, the SES event record as `detail`) and returns a Feedback or the reason it is not one of ours.
 *
 * Feedback is at-least-once and unordered (SES: "delivered on a best-effort basis, and they might be delivered out of
 * order"), so every status carries a rank: a status is recorded only over a lower rank, or over the same rank with
 * an older time. A late Delivery never overwrites a Bounce, a duplicate changes nothing, and every order of the same
 * events converges to the same item.
 */
import * as z from 'zod/mini';
import type { Channel } from './channels.ts';

export const DELIVERY_STATUSES = ['DELAYED', 'DELIVERED', 'REJECTED', 'BOUNCED', 'COMPLAINED'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/**
 * Higher wins. DELAYED is provisional (SES is still retrying); DELIVERED is final unless the recipient complains;
 * REJECTED and BOUNCED end the message (a transient bounce is sent only once SES gave up retrying); COMPLAINED is the
 * last word about a delivered message.
 */
export const DELIVERY_RANK: Readonly<Record<DeliveryStatus, number>> = {
  DELAYED: 1,
  DELIVERED: 2,
  REJECTED: 3,
  BOUNCED: 3,
  COMPLAINED: 4,
};

/** Why an address is suppressed: what SES told us about it. */
export type SuppressionCause = 'BOUNCED' | 'COMPLAINED';

export interface Feedback {
  /** The notification, from the message's `notificationId` tag. */
  readonly notificationId: string;
  readonly eventId: string;
  readonly channel: Channel;
  /** SES's message id (the notification's providerMessageId). */
  readonly messageId: string;
  readonly status: DeliveryStatus;
  readonly rank: number;
  /** When it happened, as SES reports it (ISO 8601) and as epoch ms (the tie-break within a rank). */
  readonly at: string;
  readonly atMs: number;
  /** BOUNCED: Permanent | Transient | Undetermined, and SES's subtype (General, NoEmail, OnAccountSuppressionList …). */
  readonly bounceType?: string;
  readonly bounceSubType?: string;
  /** Set for a permanent bounce or a complaint: these addresses must not be mailed again. */
  readonly suppress?: { readonly cause: SuppressionCause; readonly addresses: string[] };
}

/** Why an event was not recorded: not an error (acknowledged, counted), since retrying would not change it. */
export type FeedbackIgnored =
  | { reason: 'NOT_AN_SES_EVENT' | 'UNSUPPORTED_TYPE' | 'MALFORMED'; detail: string }
  | { reason: 'NOT_OURS'; detail: string };

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
  const m = /^([A-Za-z0-9._:-]{1,128})#(EMAIL)$/.exec(id);
  return m === null ? undefined : { eventId: m[1] as string, channel: m[2] as Channel };
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
  const base = {
    notificationId: `${target.eventId}#${target.channel}`,
    eventId: target.eventId,
    channel: target.channel,
    messageId: r.mail.messageId,
  };
  const at = (status: DeliveryStatus, timestamp: string) => {
    const ms = Date.parse(timestamp);
    const fallback = Date.parse(r.mail.timestamp);
    // Neither time readable: the epoch, so the event still ranks (DynamoDB refuses NaN, which would park it).
    const atMs = Number.isFinite(ms) ? ms : Number.isFinite(fallback) ? fallback : 0;
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

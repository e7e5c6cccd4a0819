/**
 * The items of the one table (docs/table.md) and the notification state machine.
 *
 * The primary key of a notification, (EVENT#<eventId>, NOTIFICATION#<channel>), is the relational
 * UNIQUE(event_id, channel): one event fans out to one item per channel, and a second copy of the same
 * (event, channel) can never exist. Pure: callers pass the clock in.
 */
import { createHash } from 'node:crypto';
import type { SkipReason } from './admission.ts';
import { CHANNELS, type Channel } from './channels.ts';
import type { BankingEvent, EventType, Locale, Rejection, TransferData } from './event.ts';

export const NOTIFICATION_STATUSES = ['PENDING', 'SENDING', 'SENT', 'FAILED', 'UNKNOWN', 'SUPPRESSED'] as const;
export type NotificationStatus = (typeof NOTIFICATION_STATUSES)[number];
export const TERMINAL_STATUSES: readonly NotificationStatus[] = ['SENT', 'FAILED', 'UNKNOWN', 'SUPPRESSED'];

/** Legal transitions; the chaos suite checks every observed change against this table. */
export const TRANSITIONS: Readonly<Record<NotificationStatus, readonly NotificationStatus[]>> = {
  // PENDING → FAILED: the sweeper expires a notification past its maximum age without claiming it.
  // PENDING → SUPPRESSED: dispatch found the address suppressed or the channel opted out before claiming it.
  PENDING: ['SENDING', 'PENDING', 'FAILED', 'SUPPRESSED'],
  SENDING: ['SENT', 'FAILED', 'PENDING', 'UNKNOWN'],
  SENT: [],
  FAILED: [],
  UNKNOWN: [],
  SUPPRESSED: [],
};

/**
 * What happens when a send's outcome is unknown (the request left, the reply did not come back).
 * AT_MOST_ONCE: mark UNKNOWN and alarm; never risk a second copy. AT_LEAST_ONCE: send again.
 */
export const DELIVERY_POLICIES = ['AT_MOST_ONCE', 'AT_LEAST_ONCE'] as const;
export type DeliveryPolicy = (typeof DELIVERY_POLICIES)[number];
export type ChannelPolicies = Readonly<Record<Channel, DeliveryPolicy>>;
/** Every channel's default: never risk a second copy (a bank's safe choice). */
export const DEFAULT_CHANNEL_POLICIES: ChannelPolicies = {
  EMAIL: 'AT_MOST_ONCE',
  PUSH: 'AT_MOST_ONCE',
  SMS: 'AT_MOST_ONCE',
};

/** The CHANNEL_POLICIES environment value: "EMAIL=AT_MOST_ONCE,PUSH=AT_MOST_ONCE,SMS=AT_LEAST_ONCE". */
export const formatChannelPolicies = (policies: Partial<ChannelPolicies>): string =>
  Object.entries(policies)
    .map(([channel, policy]) => `${channel}=${policy}`)
    .join(',');

/** The inverse of formatChannelPolicies; channels not named keep the default. `malformed` names the first entry that is not <channel>=<policy>. */
export function parseChannelPolicies(text: string | undefined): ChannelPolicies | { malformed: string } {
  const policies: Record<Channel, DeliveryPolicy> = { ...DEFAULT_CHANNEL_POLICIES };
  for (const entry of (text ?? '').split(',').filter((e) => e.trim() !== '')) {
    const [channel, policy] = entry.split('=').map((s) => s.trim());
    if (!CHANNELS.includes(channel as Channel) || !DELIVERY_POLICIES.includes(policy as DeliveryPolicy)) {
      return { malformed: entry };
    }
    policies[channel as Channel] = policy as DeliveryPolicy;
  }
  return policies;
}

export const eventPk = (eventId: string) => `EVENT#${eventId}`;
export const INBOX_SK = 'INBOX';
export const notificationSk = (channel: Channel) => `NOTIFICATION#${channel}`;
export const notificationIdOf = (eventId: string, channel: Channel) => `${eventId}#${channel}`;
/** The notificationId of the item at (pk, sk): the inverse of eventPk and notificationSk. */
export const notificationIdOfKey = (pk: string, sk: string) =>
  `${pk.slice('EVENT#'.length)}#${sk.slice('NOTIFICATION#'.length)}`;
export const QUARANTINE_SK = 'RECORD';

/**
 * The sparse sweep index is the delay queue: only PENDING and SENDING notifications carry sweepKey/sweepAt, and
 * sweepAt is when the item is next due for attention — a new PENDING item at createdAt + the stuck threshold, a
 * deferred one at its retryAt, a SENDING one at its leaseUntil. The key is `<state>#<channel>#<shard>`: the channel
 * lets the sweeper pace re-drives per channel without one channel's backlog hiding another's; the 8 shards keep any
 * one partition from running hot.
 */
export const SWEEP_SHARDS = 8;
export type SweepState = 'PENDING' | 'SENDING';
export function sweepKey(state: SweepState, channel: Channel, notificationId: string): string {
  const shard = createHash('sha256').update(notificationId).digest().readUInt8(0) % SWEEP_SHARDS;
  return sweepPartition(state, channel, shard);
}
export const sweepPartition = (state: SweepState, channel: Channel, shard: number) => `${state}#${channel}#${shard}`;
/** How long a new notification may wait for its stream record before the sweeper re-drives it (default). */
export const DEFAULT_STUCK_AFTER_MS = 900_000;

export interface KafkaSource {
  readonly topic: string;
  readonly partition: number;
  readonly offset: number;
}

export interface InboxItem {
  pk: string;
  sk: typeof INBOX_SK;
  kind: 'INBOX';
  eventId: string;
  type: EventType | 'PreferencesUpdated';
  payloadHash: string;
  channels: Channel[];
  occurredAt: string;
  receivedAt: string;
  source: KafkaSource;
  expiresAt: number;
  /** Present when the event was recorded but deliberately not sent (e.g. TOO_OLD: older than the max event age). */
  skipped?: SkipReason;
}

export interface NotificationItem {
  pk: string;
  sk: string;
  kind: 'NOTIFICATION';
  notificationId: string;
  eventId: string;
  channel: Channel;
  /** The one address this channel sends to: email, endpoint ARN or E.164 number. */
  recipient: string;
  userId: string;
  locale: Locale;
  /** Template id + data, rendered at send time (README: "Why template + data"). */
  template: EventType;
  data: TransferData;
  /** The event's occurredAt as given, shown in the customer's time zone (absent on items written before it was kept). */
  occurredAt?: string;
  /** The recipient's IANA time zone, when the event named one; otherwise the brand's default for the locale. */
  timeZone?: string;
  status: NotificationStatus;
  /** The fencing token: +1 on every claim. */
  attempt: number;
  /** Claims that ended deferred (throttled, not sent, rate-limited, channel held): not counted against the budget. */
  deferrals?: number;
  /** While PENDING after a deferral: not to be claimed before this time (epoch ms). */
  retryAt?: number;
  createdAt: string;
  updatedAt: string;
  expiresAt: number;
  /** Sparse sweep index: present only while the item is PENDING or SENDING. */
  sweepKey?: string;
  sweepAt?: number;
  leaseUntil?: number;
  providerMessageId?: string;
  lastError?: string;
  /** SUPPRESSED: why it was not sent (BOUNCED, COMPLAINED, OPTED_OUT). */
  suppressedReason?: string;
  /**
   * What the provider told us after it accepted (issue 16, domain/feedback.ts), apart from `status`: a SENT
   * notification stays SENT. Its own time attributes, never updatedAt, which the state machine's re-reads compare.
   */
  deliveryStatus?: string;
  deliveryRank?: number;
  deliveryAt?: string;
  deliveryAtMs?: number;
  bounceType?: string;
  bounceSubType?: string;
}

export interface QuarantineItem {
  pk: string;
  sk: typeof QUARANTINE_SK;
  kind: 'QUARANTINE';
  reason: Rejection['reason'];
  detail: string;
  eventId?: string;
  /** The record value as received (base64), cut to a bound so a huge poison record cannot exceed the item limit. */
  raw: string;
  rawTruncated: boolean;
  receivedAt: string;
  source: KafkaSource;
  expiresAt: number;
}

export const quarantinePk = (s: KafkaSource) => `QUARANTINE#${s.topic}#${s.partition}#${s.offset}`;
export const RAW_LIMIT = 4096;

const epochSeconds = (ms: number) => Math.floor(ms / 1000);

export interface Retention {
  readonly retentionDays: number;
  /** When a new notification is first due for the sweeper, after createdAt (default DEFAULT_STUCK_AFTER_MS). */
  readonly stuckAfterMs?: number;
}

export function buildInbox(
  event: BankingEvent,
  hash: string,
  channels: Channel[],
  source: KafkaSource,
  now: number,
  retention: Retention,
  skipped?: SkipReason,
): InboxItem {
  const item: InboxItem = {
    pk: eventPk(event.eventId),
    sk: INBOX_SK,
    kind: 'INBOX',
    eventId: event.eventId,
    type: event.type,
    payloadHash: hash,
    channels,
    occurredAt: event.occurredAt,
    receivedAt: new Date(now).toISOString(),
    source,
    expiresAt: epochSeconds(now) + retention.retentionDays * 86_400,
  };
  if (skipped !== undefined) item.skipped = skipped;
  return item;
}

export function buildNotification(
  event: BankingEvent,
  channel: Channel,
  address: string,
  now: number,
  retention: Retention,
): NotificationItem {
  const notificationId = notificationIdOf(event.eventId, channel);
  const iso = new Date(now).toISOString();
  return {
    pk: eventPk(event.eventId),
    sk: notificationSk(channel),
    kind: 'NOTIFICATION',
    notificationId,
    eventId: event.eventId,
    channel,
    recipient: address,
    userId: event.recipient.userId,
    locale: event.recipient.locale,
    template: event.type,
    data: event.data,
    occurredAt: event.occurredAt,
    ...(event.recipient.timeZone === undefined ? {} : { timeZone: event.recipient.timeZone }),
    status: 'PENDING',
    attempt: 0,
    createdAt: iso,
    updatedAt: iso,
    expiresAt: epochSeconds(now) + retention.retentionDays * 86_400,
    sweepKey: sweepKey('PENDING', channel, notificationId),
    sweepAt: now + (retention.stuckAfterMs ?? DEFAULT_STUCK_AFTER_MS),
  };
}

export const DETAIL_LIMIT = 1024;

/**
 * The quarantine item of one record. Whatever the record held, every string here is well-formed and bounded, so
 * DynamoDB always accepts it: `raw` is the value as MSK delivered it (base64, so ASCII), `detail` is ours.
 */
export function buildQuarantine(
  rejection: Rejection,
  rawValue: unknown,
  source: KafkaSource,
  now: number,
  retention: Retention,
): QuarantineItem {
  const raw = typeof rawValue === 'string' ? rawValue.toWellFormed() : '';
  const item: QuarantineItem = {
    pk: quarantinePk(source),
    sk: QUARANTINE_SK,
    kind: 'QUARANTINE',
    reason: rejection.reason,
    detail: rejection.detail.toWellFormed().slice(0, DETAIL_LIMIT).toWellFormed(),
    raw: raw.slice(0, RAW_LIMIT).toWellFormed(),
    rawTruncated: raw.length > RAW_LIMIT,
    receivedAt: new Date(now).toISOString(),
    source,
    expiresAt: epochSeconds(now) + retention.retentionDays * 86_400,
  };
  if (rejection.eventId !== undefined) item.eventId = rejection.eventId;
  return item;
}

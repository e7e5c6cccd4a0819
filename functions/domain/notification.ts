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
import type { ChannelRefusal, ChannelRefusalReason } from './routing.ts';

export const NOTIFICATION_STATUSES = [
  'PENDING',
  'SENDING',
  'SENT',
  'FAILED',
  'UNKNOWN',
  'SUPPRESSED',
  'REFUSED',
] as const;
export type NotificationStatus = (typeof NOTIFICATION_STATUSES)[number];
export const TERMINAL_STATUSES: readonly NotificationStatus[] = ['SENT', 'FAILED', 'UNKNOWN', 'SUPPRESSED', 'REFUSED'];

/** Legal transitions; the chaos suite checks every observed change against this table. */
export const TRANSITIONS: Readonly<Record<NotificationStatus, readonly NotificationStatus[]>> = {
  // PENDING → FAILED: the sweeper expires a notification past its maximum age without claiming it.
  // PENDING → SUPPRESSED: a suppression written without a claim (the store's markSuppressed).
  PENDING: ['SENDING', 'PENDING', 'FAILED', 'SUPPRESSED'],
  // SENDING → SENDING: the holder extends its lease (with the provider's message id once it accepted).
  // SENDING → SUPPRESSED: the audience check, after the claim and the pacing wait, found the channel opted out.
  SENDING: ['SENT', 'FAILED', 'PENDING', 'UNKNOWN', 'SENDING', 'SUPPRESSED'],
  SENT: [],
  FAILED: [],
  UNKNOWN: [],
  SUPPRESSED: [],
  // Written REFUSED by ingest (its contact point has no sendable reading); nothing in the pipeline moves it. Only the
  // producer's corrected resend of the event repairs it: REFUSED → PENDING with the new contact point, conditionally
  // (functions/ingest/inbox-store.ts repairChannels, docs/event.md "A refused channel").
  REFUSED: ['PENDING'],
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
/** The byUser index's partition key on an inbox item (docs/table.md "The byUser index"). */
export const userKeyOf = (userId: string) => `USER#${userId}`;

/**
 * The sparse sweep index is the delay queue: only PENDING and SENDING notifications carry sweepKey/sweepAt, and
 * sweepAt is when the item is next due for attention — a new PENDING item at createdAt + the stuck threshold, a
 * deferred one at its retryAt, a SENDING one at its leaseUntil. The key is `<state>#<channel>#<shard>`: the channel
 * lets the sweeper pace re-drives per channel without one channel's backlog hiding another's; the shards keep any one
 * index partition under DynamoDB's 1,000 write units per second per key (issue 18).
 *
 * Each notification writes each of its keys twice: the PENDING key when created and when claimed (a put, then a
 * delete as sweepKey moves to SENDING), the SENDING key when claimed and when finished. With every notification on one
 * channel (the worst case), one key therefore takes 2 × N / shards writes per second at N notifications per second.
 * The shard count is sized from the stack's peak (sweepShardsFor) so that stays under SWEEP_KEY_WRITES_TARGET, half the
 * per-key ceiling: headroom for retries, deferrals and an uneven hash.
 */
/** The shard count when the stack names no peak: enough for 2,000 notifications per second. */
export const SWEEP_SHARDS = 8;
/** The most shards the sweeper visits per (state, channel): every run queries each of them once. */
export const MAX_SWEEP_SHARDS = 256;
/** Writes per second one sweep-index key may take at the stack's peak: half of DynamoDB's 1,000 per key. */
export const SWEEP_KEY_WRITES_TARGET = 500;
/** Sweep-index writes per notification on each of its keys (put + delete of PENDING#…, put + delete of SENDING#…). */
export const SWEEP_WRITES_PER_KEY_PER_NOTIFICATION = 2;

/** Shards per (state, channel) for a peak: a power of two (uniform over the hash byte), at least SWEEP_SHARDS. */
export function sweepShardsFor(peakNotificationsPerSecond: number): number {
  const needed = Math.ceil(
    (SWEEP_WRITES_PER_KEY_PER_NOTIFICATION * Math.max(0, peakNotificationsPerSecond)) / SWEEP_KEY_WRITES_TARGET,
  );
  let shards = SWEEP_SHARDS;
  while (shards < needed) shards *= 2;
  if (shards > MAX_SWEEP_SHARDS) {
    throw new RangeError(
      `${peakNotificationsPerSecond} notifications per second needs ${shards} sweep shards; at most ${MAX_SWEEP_SHARDS}`,
    );
  }
  return shards;
}

/** The highest peak the sweep index takes without a key above SWEEP_KEY_WRITES_TARGET. */
export const MAX_PEAK_NOTIFICATIONS_PER_SECOND =
  (MAX_SWEEP_SHARDS * SWEEP_KEY_WRITES_TARGET) / SWEEP_WRITES_PER_KEY_PER_NOTIFICATION;

/** The item holding the highest shard count any deploy wrote sweep keys with (functions/commons/sweep-shard-mark.ts). */
export const SWEEP_SHARD_MARK_KEY = { pk: 'SWEEP#SHARDS', sk: 'MARK' } as const;

export type SweepState = 'PENDING' | 'SENDING';
/**
 * The shard is the first byte of the notificationId's SHA-256 modulo the count. The shard count may change between
 * deploys: items keep the key they were written with, and the sweeper visits every shard any deploy used (the shard
 * mark, functions/commons/sweep-shard-mark.ts), so none is left behind.
 */
export function sweepKey(state: SweepState, channel: Channel, notificationId: string, shards = SWEEP_SHARDS): string {
  const shard = createHash('sha256').update(notificationId).digest().readUInt8(0) % shards;
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
  /** Channels written REFUSED (docs/event.md "A refused channel"); absent when none was. */
  refusedChannels?: Channel[];
  /** The event's meaning apart from the refused channels' contact points: recognises the producer's corrected resend. */
  repairHash?: string;
  /** payloadHashes of corrected resends that repaired a channel: a resend of one of them is a duplicate. */
  repairedHashes?: Set<string>;
  /** The customer (`USER#<userId>`): the sparse byUser index finds a customer's events without a scan. */
  userKey?: string;
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
  /** REFUSED: why its contact point cannot be sent to (INVALID_CONTACT, UNSENDABLE_ADDRESS, MISSING_CONTACT). */
  refusedReason?: ChannelRefusalReason;
  /** REFUSED: the field and the rule it breaks, never the value. */
  refusedDetail?: string;
  /** Set when a corrected resend repaired a REFUSED notification: when (the createdAt it had is firstCreatedAt). */
  repairedAt?: string;
  firstCreatedAt?: string;
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
  readonly stuckAfterMs?: number | undefined;
  /** Shards of the sweep index (default SWEEP_SHARDS): the stack's, from its peak. */
  readonly sweepShards?: number | undefined;
}

export function buildInbox(
  event: BankingEvent,
  hash: string,
  channels: Channel[],
  source: KafkaSource,
  now: number,
  retention: Retention,
  skipped?: SkipReason,
  refused?: { readonly channels: Channel[]; readonly repairHash: string },
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
    userKey: userKeyOf(event.recipient.userId),
  };
  if (skipped !== undefined) item.skipped = skipped;
  if (refused !== undefined && refused.channels.length > 0) {
    item.refusedChannels = refused.channels;
    item.repairHash = refused.repairHash;
  }
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
    sweepKey: sweepKey('PENDING', channel, notificationId, retention.sweepShards),
    sweepAt: now + (retention.stuckAfterMs ?? DEFAULT_STUCK_AFTER_MS),
  };
}

/**
 * A refused channel's notification: everything a send needs but the address, status REFUSED with the reason and the
 * rule. No sweep key (nothing is due), and the stream filter passes only PENDING: nothing ever sends it. The address
 * is not kept — the producer has it, and a value without a reading may not even be a string DynamoDB would store.
 */
export function buildRefusedNotification(
  event: BankingEvent,
  refusal: ChannelRefusal,
  now: number,
  retention: Retention,
): NotificationItem {
  const { sweepKey: _key, sweepAt: _at, ...item } = buildNotification(event, refusal.channel, '', now, retention);
  return {
    ...item,
    status: 'REFUSED',
    refusedReason: refusal.reason,
    refusedDetail: refusal.detail.toWellFormed().slice(0, DETAIL_LIMIT),
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

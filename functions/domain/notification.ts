/**
 * The items of the one table (docs/table.md) — inbox, notification, quarantine — and their builders. Their keys are
 * built in keys.ts, the statuses a notification moves through in state-machine.ts. Pure: callers pass the clock in.
 */
import type { SkipReason } from './admission.ts';
import { maskCardNumbers, maskCardNumbersInBytes } from './card-number.ts';
import { classOf, definitionOf, supersedeKeyOf } from './catalogue.ts';
import type { Channel } from './channels.ts';
import type { BankingEvent, EventData, EventType, Rejection } from './event/contract.ts';
import { compressedGlueRecord, recompressedGlueRecord } from './event/glue-frame.ts';
import {
  earlierSendSk,
  eventPk,
  INBOX_SK,
  incidentKeyOf,
  type KafkaSource,
  notificationIdOf,
  notificationSk,
  QUARANTINE_SK,
  quarantinePk,
  seriesPk,
  seriesSk,
  sweepKey,
  userKeyOf,
} from './keys.ts';
import type { Locale } from './locale.ts';
import { messageIdAttribute } from './message-id.ts';
import { readInstant } from './moment.ts';
import type { ChannelRefusal, ChannelRefusalReason } from './routing.ts';
import { maskSecretsInBytes, redactSecrets, secretsOf, withoutSecrets } from './secrets.ts';
import type { NotificationStatus } from './state-machine.ts';
import { DEFAULT_SWEEP_PLACEMENT, SWEEP_SHARDS, type SweepPlacement } from './sweep-index.ts';

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
  /** The event's data less its secret fields. */
  data: EventData;
  /** The secret fields (a one-time code) until the notification ends: every terminal write removes them (secrets.ts). */
  secrets?: EventData;
  /** Each secret's keyed MAC (secrets.ts macDigest), and the key's id: what the evidence keeps instead of the secret. */
  secretDigests?: EventData;
  secretKeyId?: string;
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
  /** The provider's message id of the send, a push's or an SMS's; an email's is in sesMessageId (message-id.ts). */
  providerMessageId?: string;
  /** An email's SES message id: outside the providerMessage index, which its reports never need (message-id.ts). */
  sesMessageId?: string;
  /**
   * SENT: the evidence batch its record joined (domain/evidence-batch.ts), the record's SHA-256 and its acceptedAt —
   * where the record is found, and what a rebuilt record must hash to (functions/sweeper/recover-evidence.ts); for a
   * push, the TTL and collapse id it was sent with (they depend on the moment of the send, which a rebuild cannot know).
   */
  evidence?: {
    readonly batch: string;
    readonly sha256: string;
    readonly acceptedAt: string;
    /** The attempt whose send it names (domain/attempt-evidence.ts); none on a reference of an earlier version. */
    readonly attempt?: number;
    readonly push?: { readonly ttlSeconds?: number; readonly collapseId?: string };
  };
  /**
   * SENT, for a message that carried a secret (which the SENT write forgets): its evidence record's exact redacted
   * bytes, gzipped — a rebuild cannot render it again (functions/sweeper/rebuild-evidence.ts). Erasure removes it.
   */
  evidenceRecord?: Uint8Array;
  lastError?: string;
  /** SUPPRESSED: why it was not sent (BOUNCED, COMPLAINED, OPTED_OUT). */
  suppressedReason?: string;
  /** REFUSED: why its contact point cannot be sent to (INVALID_CONTACT, UNSENDABLE_ADDRESS, MISSING_CONTACT). */
  refusedReason?: ChannelRefusalReason;
  /** REFUSED: the field and the rule it breaks, never the value. */
  refusedDetail?: string;
  /** REFUSED: the incident index (domain/keys.ts incidentKeyOf), removed when a repair moves it on. */
  incidentKey?: string;
  incidentAt?: string;
  /** Set when a corrected resend repaired a REFUSED notification: when (the createdAt it had is firstCreatedAt). */
  repairedAt?: string;
  firstCreatedAt?: string;
  /**
   * What the provider told us after it accepted (domain/feedback.ts), apart from `status`: a SENT
   * notification stays SENT. Its own time attributes, never updatedAt, which the state machine's re-reads compare.
   */
  deliveryStatus?: string;
  /** HELD: when its type's send window opens in `heldZone`, the customer's local time (ISO; epoch ms in sweepAt). */
  heldUntil?: string;
  heldZone?: string;
  /** Released from HELD by the sweeper (ISO): the maximum age counts from here (createdAt moves to it). */
  releasedAt?: string;
  /** EXPIRED: until when it was worth sending (occurredAt + its type's validity). */
  validUntil?: string;
  /** SUPERSEDED: the newer notice of its series that replaces it, and when that one occurred. */
  supersededBy?: string;
  supersededByOccurredAt?: string;
  /** THROTTLED: the flood guard's window it was refused in (`<limit> per <seconds> s, <from>–<until>`). */
  throttledWindow?: string;
  /** Set by an erasure (ops erase): address, data and user id are gone, and nothing sends it again (erasure.ts). */
  erasedAt?: string;
  deliveryRank?: number;
  deliveryAt?: string;
  deliveryAtMs?: number;
  bounceType?: string;
  bounceSubType?: string;
}

/**
 * A send an operator's resend took off its notification (keys.ts earlierSendSk): a push's or an SMS's provider message
 * id stays on the providerMessage index, so SNS's late report about it — a dead number — is recognised as ours,
 * recorded on that send's evidence and applied to the address; an email's is kept as sesMessageId like on its item (its
 * report carries the notification's tag). No personal data: ids only. Expires with the notification.
 */
export interface EarlierSendItem {
  pk: string;
  sk: string;
  kind: 'EARLIER_SEND';
  notificationId: string;
  eventId: string;
  channel: Channel;
  /** The message id, in the attribute its channel writes it in (message-id.ts messageIdAttribute). */
  providerMessageId?: string;
  sesMessageId?: string;
  /** When the resend took it off the item. */
  resentAt: string;
  /** The notification's own: absent when it has none. */
  expiresAt?: number;
}

export function buildEarlierSend(
  n: { readonly eventId: string; readonly channel: Channel; readonly expiresAt?: unknown },
  providerMessageId: string,
  now: number,
): EarlierSendItem {
  return {
    ...(typeof n.expiresAt === 'number' ? { expiresAt: n.expiresAt } : {}),
    pk: eventPk(n.eventId),
    sk: earlierSendSk(n.channel, providerMessageId),
    kind: 'EARLIER_SEND',
    notificationId: notificationIdOf(n.eventId, n.channel),
    eventId: n.eventId,
    channel: n.channel,
    [messageIdAttribute(n.channel)]: providerMessageId,
    resentAt: new Date(now).toISOString(),
  };
}

export interface QuarantineItem {
  pk: string;
  sk: typeof QUARANTINE_SK;
  kind: 'QUARANTINE';
  reason: Rejection['reason'];
  detail: string;
  eventId?: string;
  /** The customer the record names, when it could be read: an erasure finds their quarantined records. */
  userId?: string;
  /** The record value as received (base64), cut to a bound so a huge poison record cannot exceed the item limit. */
  raw: string;
  rawTruncated: boolean;
  receivedAt: string;
  source: KafkaSource;
  /** Who produced it, as the record says: its key and headers (bounded, card numbers masked), when it had them. */
  producer?: ProducerTrace;
  /** The incident index (domain/keys.ts incidentKeyOf): found by the day it was quarantined, never by a scan. */
  incidentKey: string;
  incidentAt: string;
  expiresAt: number;
}

/** What a record says of its producer: its key, and its headers (name → value as text). */
export interface ProducerTrace {
  readonly key?: string;
  readonly headers?: Readonly<Record<string, string>>;
}

export const RAW_LIMIT = 4096;
/** How much of a record's key, and of each of at most PRODUCER_HEADERS headers, a quarantine item keeps. */
export const PRODUCER_TEXT_LIMIT = 256;
export const PRODUCER_HEADERS = 16;

/** A producer trace bounded and masked like the rest of a quarantine item; undefined when it says nothing. */
export function boundedProducer(p: ProducerTrace | undefined): ProducerTrace | undefined {
  // Cut before masking (a huge key costs nothing), with room for a card number across the cut, then cut again.
  const text = (v: string) =>
    maskCardNumbers(v.slice(0, PRODUCER_TEXT_LIMIT + 32).toWellFormed())
      .text.slice(0, PRODUCER_TEXT_LIMIT)
      .toWellFormed();
  const key = p?.key === undefined ? undefined : text(p.key);
  const headers = Object.entries(p?.headers ?? {})
    .slice(0, PRODUCER_HEADERS)
    .map(([name, value]) => [text(name), text(value)] as const);
  if (key === undefined && headers.length === 0) return undefined;
  return {
    ...(key === undefined ? {} : { key }),
    ...(headers.length === 0 ? {} : { headers: Object.fromEntries(headers) }),
  };
}

const epochSeconds = (ms: number) => Math.floor(ms / 1000);

/** How long the items of an event are kept (their TTL): the stack's inboxRetentionDays. */
export interface Retention {
  readonly retentionDays: number;
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

/** The keyed MACs of an event's secrets (ingest computes them: functions/stores/secret-mac.ts). */
export interface SecretSeal {
  readonly keyId: string;
  readonly digests: Readonly<Record<string, string>>;
}

export function buildNotification(
  event: BankingEvent,
  channel: Channel,
  address: string,
  now: number,
  retention: Retention,
  /** Where its PENDING key goes (sweep-index.ts). */
  placement: SweepPlacement = DEFAULT_SWEEP_PLACEMENT,
  seal?: SecretSeal,
): NotificationItem {
  const notificationId = notificationIdOf(event.eventId, channel);
  const iso = new Date(now).toISOString();
  const secrets = secretsOf(event.type, event.data);
  const kept =
    Object.keys(secrets).length === 0
      ? {}
      : {
          secrets,
          ...(seal === undefined ? {} : { secretDigests: { ...seal.digests }, secretKeyId: seal.keyId }),
        };
  return {
    ...kept,
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
    data: withoutSecrets(event.type, event.data),
    occurredAt: event.occurredAt,
    ...(event.recipient.timeZone === undefined ? {} : { timeZone: event.recipient.timeZone }),
    status: 'PENDING',
    attempt: 0,
    createdAt: iso,
    updatedAt: iso,
    // The type's retention when its definition has one (catalogue.ts), otherwise the stack's.
    expiresAt: epochSeconds(now) + (definitionOf(event.type)?.retentionDays ?? retention.retentionDays) * 86_400,
    sweepKey: pendingSweepKey(event.type, channel, notificationId, placement.sweepShards),
    sweepAt: now + placement.pendingThresholdMs,
  };
}

/**
 * The sweep-index key of a PENDING notification of this type: its class (classOf, catalogue.ts) is part of it, so the
 * sweeper wakes critical notices before a backlog of others (docs/dispatch.md "The sweeper"). Every write that puts a
 * notification (back) to PENDING — ingest, a repair, a deferral, an expired lease released, an operator's resend —
 * takes its key from here. A type no longer in the catalogue is normal.
 */
export const pendingSweepKey = (type: string, channel: Channel, notificationId: string, shards?: number) =>
  sweepKey('PENDING', channel, notificationId, shards ?? SWEEP_SHARDS, classOf(type));

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
  // Nothing sends it: a secret it would carry is not kept (an expired code is never worth a repair).
  const {
    sweepKey: _key,
    sweepAt: _at,
    secrets: _secrets,
    ...item
  } = buildNotification(event, refusal.channel, '', now, retention);
  return {
    ...item,
    status: 'REFUSED',
    refusedReason: refusal.reason,
    refusedDetail: refusal.detail.toWellFormed().slice(0, DETAIL_LIMIT),
    // Found by the day it was refused, without reading the table (ops refused); a repair takes it out.
    incidentKey: incidentKeyOf('REFUSED', item.createdAt, item.pk),
    incidentAt: item.createdAt,
  };
}

export const DETAIL_LIMIT = 1024;

/**
 * One notice of a series (keys.ts seriesPk): written in its event's transaction, read by dispatch right before a send
 * of an older notice of the same series, which is then SUPERSEDED (docs/dispatch.md "The right moment"). Ids and a
 * time only; it expires with the event's inbox.
 */
export interface SeriesEntryItem {
  pk: string;
  sk: string;
  kind: 'NOTICE_SERIES';
  eventId: string;
  occurredAt: string;
  expiresAt: number;
}

/** The series entry of an event whose type supersedes, or undefined (no supersede key, or an unreadable occurredAt). */
export function buildSeriesEntry(event: BankingEvent, now: number, retention: Retention): SeriesEntryItem | undefined {
  const key = supersedeKeyOf(event.type);
  const occurredAtMs = readInstant(event.occurredAt)?.epochMs;
  if (key === undefined || occurredAtMs === undefined) return undefined;
  return {
    pk: seriesPk(
      event.type,
      event.recipient.userId,
      key.map((name) => event.data[name] ?? ''),
    ),
    // Never later than its arrival (send-moment.ts occurredMsOf): a producer's clock ahead does not make it the newest.
    sk: seriesSk(Math.min(occurredAtMs, now), event.eventId),
    kind: 'NOTICE_SERIES',
    eventId: event.eventId,
    occurredAt: event.occurredAt,
    expiresAt: epochSeconds(now) + retention.retentionDays * 86_400,
  };
}

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
  /** Secret values the record holds (secrets.ts secretsInRecordText): masked in the kept copy and the detail. */
  secrets: readonly string[] = [],
  /** Who produced the record (its key and headers, bounded and masked): the incident list's attribution. */
  producer?: ProducerTrace,
): QuarantineItem {
  const raw = typeof rawValue === 'string' ? keptValue(rawValue.toWellFormed(), secrets) : '';
  const item: QuarantineItem = {
    pk: quarantinePk(source),
    sk: QUARANTINE_SK,
    kind: 'QUARANTINE',
    reason: rejection.reason,
    detail: redactSecrets(maskCardNumbers(rejection.detail.toWellFormed()).text, secrets)
      .slice(0, DETAIL_LIMIT)
      .toWellFormed(),
    raw: raw.slice(0, RAW_LIMIT).toWellFormed(),
    rawTruncated: raw.length > RAW_LIMIT,
    receivedAt: new Date(now).toISOString(),
    source,
    incidentKey: incidentKeyOf('QUARANTINED', new Date(now).toISOString(), quarantinePk(source)),
    incidentAt: new Date(now).toISOString(),
    expiresAt: epochSeconds(now) + retention.retentionDays * 86_400,
  };
  if (rejection.eventId !== undefined) item.eventId = rejection.eventId;
  const traced = boundedProducer(producer);
  if (traced !== undefined) item.producer = traced;
  return item;
}

/**
 * The record as kept for its replay, with every card number and IBAN in it masked (card-number.ts): a quarantined
 * record must not store one either. Base64 (as MSK delivers it) is masked in its bytes, every length kept, so a JSON, Avro or
 * Protobuf record still reads — its card numbers masked; a zlib-compressed Glue record in its inflated payload,
 * compressed again; anything else as text.
 */
function keptValue(raw: string, secrets: readonly string[]): string {
  const bytes = Buffer.from(raw, 'base64');
  if (bytes.toString('base64') !== raw) return redactSecrets(maskCardNumbers(raw).text, secrets);
  const compressed = compressedGlueRecord(bytes, KEPT_INFLATE_LIMIT);
  const cards = maskCardNumbersInBytes(compressed?.payload ?? bytes);
  // A secret's bytes masked too, every length kept (secrets.ts): a replay of an expired code sends nothing anyway.
  const kept = maskSecretsInBytes(cards.bytes, secrets);
  if (!cards.masked && !cards.ibanMasked && !kept.masked) return raw;
  const masked = compressed === undefined ? kept.bytes : recompressedGlueRecord(compressed.header, kept.bytes);
  return Buffer.from(masked).toString('base64');
}
/** A compressed record is read this far for its card numbers: Kafka's default largest record, 1 MB. */
const KEPT_INFLATE_LIMIT = 1 << 20;

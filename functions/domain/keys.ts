/**
 * Every key and id of the one table (docs/table.md), built and parsed here and nowhere else. Each builder has its
 * inverse beside it, so a format is read the way it is written: a parser answers undefined for a string that is not
 * of its form, and the caller decides what that means (an operator's typo, an item of another kind).
 *
 * The primary key of a notification, (EVENT#<eventId>, NOTIFICATION#<channel>), is the relational
 * UNIQUE(event_id, channel): one event fans out to one item per channel, and a second copy of the same
 * (event, channel) can never exist. Its notificationId, `<eventId>#<channel>`, names the same pair in logs, tags and
 * the operator's commands.
 */
import { createHash } from 'node:crypto';
import type { NoticeClass } from './catalogue.ts';
import { CHANNELS, type Channel } from './channels.ts';
import { SWEEP_SHARDS } from './sweep-index.ts';

const EVENT_PREFIX = 'EVENT#';
const NOTIFICATION_PREFIX = 'NOTIFICATION#';
const QUARANTINE_PREFIX = 'QUARANTINE#';

const isChannel = (s: string): s is Channel => (CHANNELS as readonly string[]).includes(s);

// ── event, inbox, notification ──

export const eventPk = (eventId: string) => `${EVENT_PREFIX}${eventId}`;
/** The eventId of an EVENT#… partition key, or undefined for any other key. */
export const eventIdOfPk = (pk: string): string | undefined =>
  pk.startsWith(EVENT_PREFIX) ? pk.slice(EVENT_PREFIX.length) : undefined;
export const INBOX_SK = 'INBOX';
export const notificationSk = (channel: Channel) => `${NOTIFICATION_PREFIX}${channel}`;
/** Whether a sort key is a notification's (an event's partition also holds its inbox item). */
export const isNotificationSk = (sk: string) => sk.startsWith(NOTIFICATION_PREFIX);

/** A notification's primary key (the adapters' NotificationKey has this shape). */
interface NotificationKey {
  readonly pk: string;
  readonly sk: string;
}
export interface NotificationRef {
  readonly eventId: string;
  readonly channel: Channel;
}

export const notificationKey = (eventId: string, channel: Channel): NotificationKey => ({
  pk: eventPk(eventId),
  sk: notificationSk(channel),
});
/** The (eventId, channel) of a notification's primary key — a successor's too — or undefined when the key is not a notification's. */
export function notificationOfKey(key: NotificationKey): NotificationRef | undefined {
  const eventId = eventIdOfPk(key.pk);
  const channel = key.sk.slice(NOTIFICATION_PREFIX.length).replace(SUCCESSOR_SUFFIX, '');
  if (eventId === undefined || !isNotificationSk(key.sk) || !isChannel(channel)) return undefined;
  return { eventId, channel };
}

/**
 * A successor: the notification a promoted region writes about one the previous epoch's region owns, in the same
 * partition, `NOTIFICATION#<channel>#E<epoch>` (docs/regions.md "Ownership"). One key per (eventId, channel, epoch), so
 * every path that reaches it creates it once. Its notificationId is `<eventId>#<channel>#E<epoch>`.
 */
const SUCCESSOR_SUFFIX = /#E\d+$/;
export const successorSk = (channel: Channel, epoch: number) => `${notificationSk(channel)}#E${epoch}`;
export const successorIdOf = (eventId: string, channel: Channel, epoch: number) =>
  `${notificationIdOf(eventId, channel)}#E${epoch}`;

/**
 * An earlier send of a notification: the provider's message id of a send an operator's resend took off the item,
 * kept beside it in the event's partition so a late report about that message is still found by its id (SNS's logs
 * name nothing else). `SEND#<channel>#<messageId>`.
 */
const EARLIER_SEND_PREFIX = 'SEND#';
export const earlierSendSk = (channel: Channel, messageId: string) => `${EARLIER_SEND_PREFIX}${channel}#${messageId}`;
/** The notification an earlier send's key belongs to, or undefined when the key is not an earlier send's. */
export function notificationOfEarlierSendKey(key: NotificationKey): NotificationRef | undefined {
  const eventId = eventIdOfPk(key.pk);
  if (eventId === undefined || !key.sk.startsWith(EARLIER_SEND_PREFIX)) return undefined;
  const rest = key.sk.slice(EARLIER_SEND_PREFIX.length);
  const channel = rest.slice(0, rest.indexOf('#'));
  return isChannel(channel) ? { eventId, channel } : undefined;
}

export const notificationIdOf = (eventId: string, channel: Channel) => `${eventId}#${channel}`;
/** The notificationId of the item at (pk, sk): the inverse of eventPk and notificationSk. */
export const notificationIdOfKey = (pk: string, sk: string) =>
  `${pk.slice(EVENT_PREFIX.length)}#${sk.slice(NOTIFICATION_PREFIX.length)}`;
/** The (eventId, channel) a notificationId names — a successor's names its original's — or undefined when it names none. */
export function parseNotificationId(notificationId: string): NotificationRef | undefined {
  const id = notificationId.replace(SUCCESSOR_SUFFIX, '');
  const at = id.lastIndexOf('#');
  const channel = id.slice(at + 1);
  if (at <= 0 || !isChannel(channel)) return undefined;
  return { eventId: id.slice(0, at), channel };
}

/** The byUser index's partition key on a notice's inbox item (docs/table.md "The byUser index"). */
export const userKeyOf = (userId: string) => `USER#${userId}`;

// ── evidence gaps (docs/evidence-and-privacy.md) ──

/** The 16 partitions of evidence gaps: the first hex digit of the evidence key's SHA-256. */
export const EVIDENCE_GAP_SHARDS = [...'0123456789abcdef'];
export const evidenceGapPartition = (shard: string) => `EVIDENCE_GAP#${shard}`;
export const evidenceGapPk = (evidenceKey: string) =>
  evidenceGapPartition(createHash('sha256').update(evidenceKey).digest('hex').charAt(0));

// ── evidence batches and the customer's evidence index (docs/table.md) ──

/**
 * A dispatch invocation's evidence batch while its sends are under way: `EVIDENCE_BATCH#<hex>` (16 partitions, the
 * first hex digit of the batch name's SHA-256), sorted by when the sweeper may take it over (`<due, 13 digits>#<name>`)
 * so it reads only the overdue ones.
 */
export const EVIDENCE_BATCH_SHARDS = EVIDENCE_GAP_SHARDS;
export const evidenceBatchPartition = (shard: string) => `EVIDENCE_BATCH#${shard}`;
export const evidenceBatchPk = (name: string) =>
  evidenceBatchPartition(createHash('sha256').update(name).digest('hex').charAt(0));
export const evidenceBatchSk = (dueMs: number, name: string) => `${String(dueMs).padStart(13, '0')}#${name}`;
/** The due time and batch name of an intent's sort key, or undefined for any other. */
export function parseEvidenceBatchSk(sk: string): { dueMs: number; name: string } | undefined {
  const m = /^(\d{13})#(.+)$/.exec(sk);
  return m === null ? undefined : { dueMs: Number(m[1]), name: m[2] as string };
}
/**
 * A customer's evidence index: one item per (day of acceptance, batch), sk `<yyyy-mm-dd>#<batch name>`, holding that
 * batch's sends for the customer; so every write is a small item of its own, and a time range is a key condition.
 * (Items written before hold a month, sk `yyyy-mm`: read alike until they expire.)
 */
export const evidenceIndexPk = (userId: string) => `EVIDENCE_INDEX#${userId}`;
export const evidenceIndexSk = (day: string, batch: string) => `${day}#${batch}`;
/** An event's evidence index: one item per batch holding its sends (sk the batch name), kept as long as the evidence. */
export const evidenceEventPk = (eventId: string) => `EVIDENCE_EVENT#${eventId}`;
/**
 * The index's compact layout, in its own table (docs/table.md "The evidence index"): a customer's partition
 * `u#<userId>`, sk `<yyyy-mm-dd>#<eventId>`, holding the customer's sends of that event accepted that day, whatever
 * batches they are in (domain/evidence-batch.ts indexMark); an event's partition `e#<eventId>`, sk
 * `~<day, base 36><userId>` (`eventIndexSk`): the customer-day holding its sends. The table holds nothing else, so
 * one letter tells the two apart; what the key says is not repeated in the item.
 */
export const customerIndexPk = (userId: string) => `u#${userId}`;
export const customerIndexSk = (day: string, eventId: string) => `${day}#${eventId}`;
export const eventIndexPk = (eventId: string) => `e#${eventId}`;
const DAY_MS = 86_400_000;
/** The days four base-36 digits hold: 1970-01-01 to 6568-08-18. */
const EVENT_INDEX_DAYS = 36 ** 4;
/**
 * An event item's sort key: `~` and its customer item's day as four base-36 digits of days since 1970 (to the year
 * 6568), then the user id — 5 bytes before the id where `<yyyy-mm-dd>#` took 11, kept seven years once an event.
 * The layout before (`<yyyy-mm-dd>#<userId>`) is still read (`parseEventIndexSk`). A day the four digits cannot hold
 * (or no day at all) throws rather than write a key that reads back as another day or as none: the day is the
 * server's acceptance day, so this is a fault of the caller, never of a record.
 */
export function eventIndexSk(day: string, userId: string): string {
  const days = Date.parse(`${day}T00:00:00Z`) / DAY_MS;
  const real = Number.isInteger(days) && new Date(days * DAY_MS).toISOString().slice(0, 10) === day;
  if (!real || days < 0 || days >= EVENT_INDEX_DAYS)
    throw new RangeError(`an event index key needs a day from 1970-01-01 to 6568-08-18, not ${JSON.stringify(day)}`);
  return `~${days.toString(36).padStart(4, '0')}${userId}`;
}
/**
 * What an item of the index's table is, by its key (the compact items say no kind): a customer's sends
 * (`EVIDENCE_INDEX`) or an event's pointer (`EVIDENCE_EVENT`), the names the layouts before gave them: for a count
 * (tools/bench/cost-probe.ts).
 */
export function indexItemKind(pk: string): 'EVIDENCE_INDEX' | 'EVIDENCE_EVENT' | undefined {
  if (pk.startsWith('u#') || pk.startsWith('EVIDENCE_INDEX#')) return 'EVIDENCE_INDEX';
  if (pk.startsWith('e#') || pk.startsWith('EVIDENCE_EVENT#')) return 'EVIDENCE_EVENT';
  return undefined;
}

/** The customer-day an event item of the compact layout points to (either form), or undefined for any other. */
export function parseEventIndexSk(sk: string): { day: string; userId: string } | undefined {
  const short = /^~([0-9a-z]{4})(.+)$/s.exec(sk);
  if (short !== null) {
    const day = new Date(Number.parseInt(short[1] as string, 36) * DAY_MS).toISOString().slice(0, 10);
    return { day, userId: short[2] as string };
  }
  const m = /^(\d{4}-\d{2}-\d{2})#(.+)$/s.exec(sk);
  return m === null ? undefined : { day: m[1] as string, userId: m[2] as string };
}
/**
 * Where the reports on a send batch's sends are: one item per feedback batch holding any (sk its name), kept as long
 * as the evidence. A feedback invocation writes all its reports as one object, whatever send batches they are on.
 */
export const evidenceReportsPk = (sendBatch: string) => `EVIDENCE_REPORTS#${sendBatch}`;

// ── quarantine ──

/** Where a record sits in Kafka: the quarantine item's key, and what a replay reads back. */
export interface KafkaSource {
  readonly topic: string;
  readonly partition: number;
  readonly offset: number;
}
export const QUARANTINE_SK = 'RECORD';
/** The operator's name for a quarantined record: `<topic>#<partition>#<offset>`. */
export const quarantineId = (s: KafkaSource) => `${s.topic}#${s.partition}#${s.offset}`;
export const quarantinePk = (s: KafkaSource) => `${QUARANTINE_PREFIX}${quarantineId(s)}`;
/** The record a quarantine id or partition key names (the QUARANTINE# prefix may be given), or undefined. */
export function parseQuarantineId(id: string): KafkaSource | undefined {
  const m = /^(?:QUARANTINE#)?(.+)#(\d+)#(\d+)$/.exec(id);
  if (m === null) return undefined;
  return { topic: m[1] ?? '', partition: Number(m[2]), offset: Number(m[3]) };
}

// ── the incident index: quarantined records and refused channels by the day they happened ──

/** What the incident index holds: quarantined records and REFUSED notifications (docs/table.md "The incidents index"). */
export type IncidentKind = 'QUARANTINED' | 'REFUSED';
/**
 * Each day's items of a kind are spread over this many partition keys: a storm of one kind writes to 4 index
 * partitions, not 1 (DynamoDB's 1,000 writes a second per partition), and a look-up reads 4 keys a day.
 */
export const INCIDENT_SHARDS = 4;
/** The longest window a look-up reads: the table keeps nothing longer than its retention (35 days by default). */
export const INCIDENT_MAX_DAYS = 400;

/** The index key of an item of `kind` that happened at `atIso`, spread by its own partition key. */
export function incidentKeyOf(kind: IncidentKind, atIso: string, itemPk: string): string {
  let h = 0;
  for (let i = 0; i < itemPk.length; i++) h = (h * 31 + itemPk.charCodeAt(i)) >>> 0;
  return `${kind}#${atIso.slice(0, 10)}#${h % INCIDENT_SHARDS}`;
}

/** Every index key a look-up of `kind` from `sinceIso` to `untilIso` reads: each day's shards, oldest first. */
export function incidentKeysBetween(kind: IncidentKind, sinceIso: string, untilIso: string): string[] {
  const first = Date.parse(`${sinceIso.slice(0, 10)}T00:00:00Z`);
  const last = Date.parse(`${untilIso.slice(0, 10)}T00:00:00Z`);
  if (!(first <= last)) return [];
  if ((last - first) / DAY_MS >= INCIDENT_MAX_DAYS)
    throw new RangeError(`a window of at most ${INCIDENT_MAX_DAYS} days`);
  const keys: string[] = [];
  for (let day = first; day <= last; day += DAY_MS) {
    const date = new Date(day).toISOString().slice(0, 10);
    for (let shard = 0; shard < INCIDENT_SHARDS; shard++) keys.push(`${kind}#${date}#${shard}`);
  }
  return keys;
}

// ── audience: suppressions and preferences ──

/** The 16 partition keys of a channel's suppressions: the first hex digit of the address hash. */
export const SUPPRESSION_SHARDS = [...'0123456789abcdef'];
export const suppressionPk = (channel: Channel, hash: string) => `SUPPRESSION#${channel}#${hash.charAt(0)}`;
export const prefsPk = (userId: string) => `PREFS#${userId}`;
export const PREFS_SK = 'PREFS';

// ── operators' proposals (docs/operations.md "Four eyes") ──

/**
 * Every proposal in one partition, sorted by id: proposals come at people's pace (a few a day), far under a
 * partition's 1,000 writes a second, and the operator's list of pending ones is one Query.
 */
export const PROPOSALS_PK = 'PROPOSALS';
export const proposalSk = (id: string) => `PROPOSAL#${id}`;
/** A proposal's id: when (UTC, to the second), then a few random characters — sorts by time, short enough to type. */
export const proposalIdOf = (at: string, random: string) =>
  `p-${at.replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z')}-${random}`;

// ── send quota: rate windows and the breaker ──

/** Shard 0 keeps the unsharded key, so a channel under one shard's rate keeps its one key. */
export const rateKey = (channel: Channel, shard = 0) => (shard === 0 ? `RATE#${channel}` : `RATE#${channel}#${shard}`);
/** A breaker's scope: a channel (the account's fault) or one push platform application. */
export const applicationBreakerScope = (applicationArn: string) => `PUSH#${applicationArn}`;
export const breakerKey = (scope: string) => ({ pk: `BREAKER#${scope}`, sk: 'BREAKER' }) as const;

// ── the right moment: the newest notice of a series, the flood guard (functions/domain/send-moment.ts) ──

const digest = (parts: readonly string[]) => createHash('sha256').update(JSON.stringify(parts)).digest('hex');
/**
 * A series: the notices of one type for one customer and one supersede key (a low balance of one account), of which
 * only the newest is worth sending. Pseudonymous — a hash of the customer, the type and the key's values, nothing in
 * clear — so an erasure has nothing to remove here. Each notice is an item of the series, sorted by its occurredAt:
 * `<occurredAt epoch ms, 16 digits>#<eventId>`.
 */
export const seriesPk = (type: string, userId: string, keyValues: readonly string[]) =>
  `SERIES#${digest([type, userId, ...keyValues])}`;
const SERIES_MS_DIGITS = 16;
export const seriesSk = (occurredAtMs: number, eventId: string) =>
  `${String(Math.max(0, Math.floor(occurredAtMs))).padStart(SERIES_MS_DIGITS, '0')}#${eventId}`;
/**
 * The smallest sort key of a notice strictly newer than `occurredAtMs`: every eventId character ([A-Za-z0-9._:-])
 * sorts before `~`, so every item of that millisecond sorts before it and every later one after it.
 */
export const seriesNewerThan = (occurredAtMs: number) => `${seriesSk(occurredAtMs, '')}~`;
/** The collapse id a push of a series carries, so a device shows its newest only (≤ 64 bytes, as APNs requires). */
export const seriesCollapseId = (pk: string) => pk.slice('SERIES#'.length, 'SERIES#'.length + 32);

/** One customer's notices of one type on one channel, counted per fixed window: `FLOOD#<hash>`, sk the window start. */
export const floodKey = (userId: string, type: string, channel: Channel, windowStartMs: number) => ({
  pk: `FLOOD#${digest([userId, type, channel])}`,
  sk: String(windowStartMs),
});

// ── the sweep index ──

export type SweepState = 'PENDING' | 'SENDING';
/**
 * One partition of the sweep index. A PENDING partition is kept apart by class, so the sweeper can wake critical
 * notices first (functions/sweeper/sweep.ts); normal keeps the key every item had before classes existed, so items
 * already in a deployed table are found where they are. SENDING partitions carry no class: the sweeper resolves every
 * expired lease it finds and never rations them, so a class there would only add queries.
 */
export interface SweepPartition {
  readonly state: SweepState;
  readonly channel: Channel;
  /** PENDING only: ignored for SENDING, whose partitions carry no class. */
  readonly noticeClass: NoticeClass;
  readonly shard: number;
}
/**
 * A partition's key: `<state>#<channel>#<shard>`, or `PENDING#<channel>#<class>#<shard>` for a critical or bulk
 * PENDING one.
 */
export const sweepPartition = ({ state, channel, noticeClass, shard }: SweepPartition) =>
  state === 'PENDING' && noticeClass !== 'normal'
    ? `${state}#${channel}#${noticeClass}#${shard}`
    : `${state}#${channel}#${shard}`;
/** The shard a sweep partition names, or undefined when the key is not a sweep partition. */
export function shardOfSweepPartition(key: string): number | undefined {
  const m = /^(?:PENDING#[A-Z]+#(?:[a-z]+#)?|SENDING#[A-Z]+#)(\d+)$/.exec(key);
  return m === null ? undefined : Number(m[1]);
}
/**
 * The shard is the first byte of the notificationId's SHA-256 modulo the count. The shard count may change between
 * deploys: items keep the key they were written with, and the sweeper visits every shard any deploy used (the shard
 * mark, functions/stores/sweep-shard-mark.ts), so none is left behind. A PENDING key carries the notification's
 * class (classOf its type, catalogue.ts) so the sweeper can wake critical notices first; every writer of a PENDING
 * key passes it.
 */
export function sweepKey(
  state: SweepState,
  channel: Channel,
  notificationId: string,
  shards = SWEEP_SHARDS,
  noticeClass: NoticeClass = 'normal',
): string {
  const shard = createHash('sha256').update(notificationId).digest().readUInt8(0) % shards;
  return sweepPartition({ state, channel, noticeClass, shard });
}
/** The item holding the highest shard count any deploy wrote sweep keys with (functions/stores/sweep-shard-mark.ts). */
export const SWEEP_SHARD_MARK_KEY = { pk: 'SWEEP#SHARDS', sk: 'MARK' } as const;
/** The item holding where the sweeper's lease pass stopped in each partition it did not finish (stores/lease-cursors.ts). */
export const SWEEP_LEASE_CURSORS_KEY = { pk: 'SWEEP#LEASES', sk: 'CURSORS' } as const;

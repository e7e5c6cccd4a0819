/**
 * The PreferencesUpdated event (issue 16): a customer's whole opt-out set, published on the same topic as the
 * transfers and recorded through the same inbox (idempotent by eventId, quarantined when bad).
 *
 *   {"eventId", "type": "PreferencesUpdated", "occurredAt", "recipient": {"userId"}, "data": {"optOut": ["SMS", …]}}
 *
 * `optOut` is the whole set: an empty list opts back in to every channel. The newest occurredAt wins (ties: the
 * greater eventId), so an older update arriving late changes nothing. Pure.
 */
import { createHash } from 'node:crypto';
import * as z from 'zod/mini';
import { PREFS_SK, type PreferencesItem, prefsPk } from './audience.ts';
import { CHANNELS, type Channel } from './channels.ts';
import {
  type EventJson,
  PAYLOAD_HASH_VERSION,
  PREFERENCES_UPDATED,
  type Rejection,
  STRICT_TEXT,
  utcInstant,
} from './event.ts';
import { eventPk, INBOX_SK, type InboxItem, type KafkaSource, type Retention } from './notification.ts';

export interface PreferencesEvent {
  readonly eventId: string;
  readonly type: typeof PREFERENCES_UPDATED;
  readonly occurredAt: string;
  readonly userId: string;
  /** Sorted, in CHANNELS order. */
  readonly optOut: Channel[];
}

const schema = z.object({
  eventId: z.string(),
  type: z.literal(PREFERENCES_UPDATED),
  occurredAt: z.iso.datetime({ offset: true }),
  recipient: z.object({
    userId: z
      .string()
      .check(z.minLength(1), z.maxLength(128), z.regex(STRICT_TEXT, 'control, format or ill-formed characters')),
  }),
  data: z.object({
    optOut: z.array(z.enum(CHANNELS)).check(
      z.maxLength(CHANNELS.length),
      z.refine((list) => new Set(list).size === list.length, 'optOut must not repeat'),
    ),
  }),
});

export type DecodedPreferences =
  | { ok: true; preferences: PreferencesEvent; payloadHash: string; occurredAtMs: number }
  | { ok: false; rejection: Rejection };

export function validatePreferencesEvent({ raw, eventId }: EventJson): DecodedPreferences {
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const path = issue?.path.map(String).join('.') || '<root>';
    const reason = path.startsWith('data.optOut.') ? 'UNKNOWN_CHANNEL' : 'SCHEMA_VIOLATION';
    return { ok: false, rejection: { reason, detail: `${issue?.message ?? 'invalid'} (at ${path})`, eventId } };
  }
  const p = parsed.data;
  const instant = utcInstant(p.occurredAt);
  if (instant === undefined) {
    return {
      ok: false,
      rejection: { reason: 'SCHEMA_VIOLATION', detail: 'not a valid instant (at occurredAt)', eventId },
    };
  }
  const optOut = CHANNELS.filter((c) => p.data.optOut.includes(c));
  const preferences: PreferencesEvent = {
    eventId,
    type: PREFERENCES_UPDATED,
    occurredAt: p.occurredAt,
    userId: p.recipient.userId,
    optOut,
  };
  const meaning = [`notifier.preferences.${PAYLOAD_HASH_VERSION}`, eventId, instant.iso, p.recipient.userId, optOut];
  const payloadHash = `${PAYLOAD_HASH_VERSION}:${createHash('sha256').update(JSON.stringify(meaning)).digest('hex')}`;
  return { ok: true, preferences, payloadHash, occurredAtMs: instant.epochMs };
}

export function buildPreferences(p: PreferencesEvent, occurredAtMs: number, now: number): PreferencesItem {
  return {
    pk: prefsPk(p.userId),
    sk: PREFS_SK,
    kind: 'PREFS',
    userId: p.userId,
    optOut: p.optOut,
    occurredAtMs,
    occurredAt: p.occurredAt,
    eventId: p.eventId,
    updatedAt: new Date(now).toISOString(),
  };
}

/** The inbox item of a preferences event: like a transfer's, without channels; STALE when a newer one is in force. */
export function buildPreferencesInbox(
  p: PreferencesEvent,
  hash: string,
  source: KafkaSource,
  now: number,
  retention: Retention,
  stale = false,
): InboxItem {
  return {
    pk: eventPk(p.eventId),
    sk: INBOX_SK,
    kind: 'INBOX',
    eventId: p.eventId,
    type: p.type,
    payloadHash: hash,
    channels: [],
    occurredAt: p.occurredAt,
    receivedAt: new Date(now).toISOString(),
    source,
    expiresAt: Math.floor(now / 1000) + retention.retentionDays * 86_400,
    ...(stale ? { skipped: 'STALE' as const } : {}),
  };
}

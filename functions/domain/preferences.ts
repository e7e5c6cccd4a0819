/**
 * The PreferencesUpdated event: a customer's whole opt-out set, published on the same topic as the
 * transfers and recorded through the same inbox (idempotent by eventId, quarantined when bad). Here: the items it
 * writes.
 *
 *   {"eventId", "type": "PreferencesUpdated", "occurredAt", "recipient": {"userId"}, "data": {"optOut": ["SMS", …]}}
 *
 * `optOut` is the whole set: an empty list opts back in to every channel. The newest occurredAt wins (ties: the
 * greater eventId), so an older update arriving late changes nothing. Pure.
 */
import type { PreferencesItem } from './audience.ts';
import type { PreferencesEvent } from './event/contract.ts';
import { eventPk, INBOX_SK, type KafkaSource, PREFS_SK, prefsPk } from './keys.ts';
import type { InboxItem, Retention } from './notification.ts';

// Decoded and validated with every other event, by the one decoder (event/decode.ts decodeRecordValue).
export type { PreferencesEvent } from './event/contract.ts';

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

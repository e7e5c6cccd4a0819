/**
 * The one decoder of the event contract (docs/event.md): turns the bytes of one Kafka record value into a normalised
 * event — a transfer (`BankingEvent`) or a customer's channel preferences (`PreferencesEvent`, contract.ts) — with its
 * payloadHash (hash.ts), or a `Rejection` whose reason code is what an operator reads on the quarantine item. Ingest's
 * admission, the tools and the tests all read events through `decodeRecordValue`. It reads the spellings first
 * (spellings.ts), then checks the type's schema (schema.ts).
 *
 * Pure and total: no AWS, no clock, no I/O, and every branch returns — whatever the bytes, nothing here throws.
 * - A spelling with exactly one reading is accepted and normalised before the hash (and listed in `normalised`):
 *   language tags, contact points, channel names, amounts, currency codes, RFC 3339 date-times.
 * - A value with two readings or none is refused, at the smallest unit it touches: a bad contact point refuses its
 *   channel (`contactRefusals`, routed in routing.ts), a bad core value (eventId, type, occurredAt, userId, amount,
 *   currency, transferId) the event.
 * - A presentation hint (language, time zone) never refuses anything: it falls back to the default (`fallbacks`).
 * - Display text from third parties (counterpartyName, reason) is cleaned (display-text.ts), never a reason to reject.
 * - The hash covers the event's meaning, not its spelling (hash.ts).
 */
import type * as z from 'zod/mini';
import { maskCardNumbers } from '../card-number.ts';
import { type Definition, dataNamesOf, definitionOf, EVENT_TYPES } from '../catalogue.ts';
import { CHANNELS } from '../channels.ts';
import { cleanDisplayText, NAME_MAX_GRAPHEMES } from '../display-text.ts';
import { parseJson } from '../json.ts';
import { readInstant } from '../moment.ts';
import {
  type BankingEvent,
  type ContactRefusal,
  type DisplayField,
  type Fallback,
  PREFERENCES_UPDATED,
  type PreferencesEvent,
  type Rejection,
  type RejectionReason,
} from './contract.ts';
import { type HashInput, PAYLOAD_HASH_VERSION, payloadHash, versioned } from './hash.ts';
import { EVENT_ID_PATTERN, eventSchemaFor, preferencesSchema } from './schema.ts';
import { NONE, objectAt, readChannelList, readOccurredAt, readSpellings, withoutNullOptionals } from './spellings.ts';

export interface DecodedTransfer {
  readonly ok: true;
  readonly event: BankingEvent;
  readonly payloadHash: string;
  /** The event's instant, epoch milliseconds (for the max-age and future rules). */
  readonly occurredAtMs: number;
  /** Display-text fields that cleaning changed. */
  readonly sanitised: DisplayField[];
  /** Identifier and display-text fields in which a card number was masked (card-number.ts). */
  readonly masked: DisplayField[];
  /** Fields whose spelling had one reading and was normalised to it (`recipient.phoneNumber`, `data.amount` …). */
  readonly normalised: string[];
  /** Presentation hints that fell back to the default. */
  readonly fallbacks: Fallback[];
  /** Contact points without a sendable reading, each refusing its channel (when routed there). */
  readonly contactRefusals: ContactRefusal[];
  readonly hashInput: HashInput;
}

export interface DecodedPreferences {
  readonly ok: true;
  readonly preferences: PreferencesEvent;
  readonly payloadHash: string;
  readonly occurredAtMs: number;
  readonly normalised: string[];
}

export type Decoded = DecodedTransfer | DecodedPreferences | { ok: false; rejection: Rejection };

/** A decoded transfer (not a preferences event, not a rejection). */
export const isTransfer = (d: Decoded): d is DecodedTransfer => d.ok && 'event' in d;

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const utf8 = new TextDecoder('utf-8', { fatal: true });

const reject = (reason: RejectionReason, detail: string, eventId?: string): { ok: false; rejection: Rejection } => ({
  ok: false,
  rejection: eventId === undefined ? { reason, detail } : { reason, detail, eventId },
});

/**
 * The one decoder: a Kafka record value as MSK hands it to Lambda (base64) → a validated, normalised event of either
 * type with its payloadHash, or a rejection. `maxBytes` bounds the decoded size: larger values are rejected before
 * they are parsed.
 */
export function decodeRecordValue(base64Value: unknown, maxBytes: number): Decoded {
  const text = recordText(base64Value, maxBytes);
  if (typeof text !== 'string') return text;
  const json = parseJson(text);
  if (!json.ok) return reject('INVALID_JSON', json.detail);
  if (typeof json.value !== 'object' || json.value === null || Array.isArray(json.value)) {
    return reject('SCHEMA_VIOLATION', 'event must be a JSON object (at <root>)');
  }
  const raw = withoutNullOptionals(json.value as Record<string, unknown>);
  const eventId = typeof raw.eventId === 'string' && EVENT_ID_PATTERN.test(raw.eventId) ? raw.eventId : undefined;
  if (eventId === undefined) {
    return reject('INVALID_EVENT_ID', 'eventId must be 1-128 characters of [A-Za-z0-9._:-]');
  }
  return raw.type === PREFERENCES_UPDATED ? decodePreferences(raw, eventId) : decodeTransfer(raw, eventId);
}

function recordText(base64Value: unknown, maxBytes: number): string | { ok: false; rejection: Rejection } {
  if (base64Value === null || base64Value === undefined || base64Value === '') {
    return reject('NO_VALUE', 'record has no value (tombstone or empty)');
  }
  if (typeof base64Value !== 'string') return reject('INVALID_ENCODING', 'record value is not a base64 string');
  // 3 bytes per 4 base64 characters: reject oversized values before allocating them.
  if (Math.floor((base64Value.length * 3) / 4) > maxBytes + 2) {
    return reject('TOO_LARGE', `value exceeds ${maxBytes} bytes`);
  }
  if (!BASE64.test(base64Value)) return reject('INVALID_ENCODING', 'value is not valid base64');
  const bytes = Buffer.from(base64Value, 'base64');
  if (bytes.length > maxBytes) return reject('TOO_LARGE', `value is ${bytes.length} bytes, limit ${maxBytes}`);
  try {
    return utf8.decode(bytes);
  } catch {
    // Also catches UTF-8-encoded surrogates (ED A0 80): not valid UTF-8.
    return reject('INVALID_ENCODING', 'value is not valid UTF-8');
  }
}

/** The first issue of a failed zod parse as a rejection naming its path. */
function firstIssue(error: z.core.$ZodError, reasonOf: (path: string) => RejectionReason, eventId: string) {
  const issue = error.issues[0];
  const path = issue?.path.map(String).join('.') || '<root>';
  return reject(reasonOf(path), `${issue?.message ?? 'invalid'} (at ${path})`, eventId);
}

function decodeTransfer(given: Record<string, unknown>, eventId: string): Decoded {
  const def = typeof given.type === 'string' ? definitionOf(given.type) : undefined;
  const read = readSpellings(given, def);
  // An unknown type is refused by any type's schema at `type` (checked before data): the first is as good as any.
  const schema = eventSchemaFor(def === undefined ? (EVENT_TYPES[0] as string) : (given.type as string));
  if (schema === undefined || def === undefined) {
    const parsed = schema?.safeParse(read.raw);
    if (parsed !== undefined && !parsed.success)
      return firstIssue(parsed.error, (path) => reasonForPath(path, read.raw), eventId);
    return reject(given.type === undefined ? 'SCHEMA_VIOLATION' : 'UNKNOWN_TYPE', 'unknown type (at type)', eventId);
  }
  const parsed = schema.safeParse(read.raw);
  if (!parsed.success) return firstIssue(parsed.error, (path) => reasonForPath(path, read.raw, def), eventId);
  const p = parsed.data;
  const instant = readInstant(p.occurredAt);
  if (instant === undefined) return reject('SCHEMA_VIOLATION', 'not a valid instant (at occurredAt)', eventId);
  const sanitised: DisplayField[] = [];
  const masked: DisplayField[] = [];
  const fields = p.data as Record<string, string | undefined>;
  const data: Record<string, string> = {};
  for (const field of def.data) {
    for (const name of dataNamesOf(field)) {
      const value = fields[name];
      if (value === undefined) continue;
      if (field.kind === 'identifier') {
        // Shown as written: a card number in it is masked (card-number.ts), as in display text.
        const shown = maskCardNumbers(value);
        if (shown.masked) masked.push(name);
        data[name] = shown.text;
      } else if (field.kind === 'text') {
        const clean = cleanDisplayText(value, field.maxGraphemes ?? NAME_MAX_GRAPHEMES);
        if (clean.changed) sanitised.push(name);
        if (clean.masked) masked.push(name);
        if (clean.text !== '') data[name] = clean.text;
      } else data[name] = value;
    }
  }
  const r = p.recipient;
  const event: BankingEvent = {
    eventId: p.eventId,
    type: p.type,
    occurredAt: p.occurredAt,
    recipient: {
      userId: r.userId,
      locale: r.locale,
      ...(r.email === undefined ? {} : { email: r.email }),
      ...(r.pushEndpointArn === undefined ? {} : { pushEndpointArn: r.pushEndpointArn }),
      ...(r.phoneNumber === undefined ? {} : { phoneNumber: r.phoneNumber }),
      ...(r.timeZone === undefined ? {} : { timeZone: r.timeZone }),
    },
    data,
    ...(p.channels === undefined ? {} : { channels: p.channels }),
  };
  const hashInput: HashInput = {
    event,
    instant: instant.iso,
    refusedGiven: read.refusedGiven,
    ...(Object.keys(read.emptied).length === 0 ? {} : { emptied: read.emptied }),
  };
  return {
    ok: true,
    event,
    payloadHash: payloadHash(hashInput),
    occurredAtMs: instant.epochMs,
    sanitised,
    masked: masked.length === 0 ? NONE : masked,
    normalised: read.normalised,
    fallbacks: read.fallbacks,
    contactRefusals: read.contactRefusals,
    hashInput,
  };
}

function decodePreferences(given: Record<string, unknown>, eventId: string): DecodedPreferences | Decoded {
  const normalised: string[] = [];
  const raw = { ...given };
  readOccurredAt(raw, normalised);
  const data = objectAt(raw, 'data');
  if (data !== undefined) {
    const optOut = readChannelList(data.optOut);
    if (optOut !== data.optOut) {
      data.optOut = optOut;
      normalised.push('data.optOut');
    }
  }
  const parsed = preferencesSchema.safeParse(raw);
  if (!parsed.success) {
    return firstIssue(
      parsed.error,
      (path) => (path.startsWith('data.optOut.') ? 'UNKNOWN_CHANNEL' : 'SCHEMA_VIOLATION'),
      eventId,
    );
  }
  const p = parsed.data;
  const instant = readInstant(p.occurredAt);
  if (instant === undefined) return reject('SCHEMA_VIOLATION', 'not a valid instant (at occurredAt)', eventId);
  const optOut = CHANNELS.filter((c) => p.data.optOut.includes(c));
  const preferences: PreferencesEvent = {
    eventId,
    type: PREFERENCES_UPDATED,
    occurredAt: p.occurredAt,
    userId: p.recipient.userId,
    optOut,
  };
  const meaning = [`notifier.preferences.${PAYLOAD_HASH_VERSION}`, eventId, instant.iso, p.recipient.userId, optOut];
  return { ok: true, preferences, payloadHash: versioned(meaning), occurredAtMs: instant.epochMs, normalised };
}

function reasonForPath(path: string, raw: Record<string, unknown>, def?: Definition): RejectionReason {
  if (path === 'type') return raw.type === undefined ? 'SCHEMA_VIOLATION' : 'UNKNOWN_TYPE';
  if (path.startsWith('channels.')) return 'UNKNOWN_CHANNEL';
  const money = (def?.data ?? []).filter((f) => f.kind === 'money').flatMap(dataNamesOf);
  if (money.some((name) => path === `data.${name}`)) return 'INVALID_AMOUNT';
  return 'SCHEMA_VIOLATION';
}

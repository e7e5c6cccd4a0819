/**
 * The event contract (docs/event.md): turns the bytes of one Kafka record value into a normalised event — a transfer
 * (`BankingEvent`) or a customer's channel preferences (`PreferencesEvent`) — with its payloadHash, or a `Rejection`
 * whose reason code is what an operator reads on the quarantine item. `decodeRecordValue` is the one decoder: ingest's
 * admission, the tools and the tests all read events through it.
 *
 * Pure and total: no AWS, no clock, no I/O, and every branch returns — whatever the bytes, nothing here throws.
 * - A spelling with exactly one reading is accepted and normalised before the hash (and listed in `normalised`):
 *   language tags, contact points, channel names, amounts, currency codes, RFC 3339 date-times.
 * - A value with two readings or none is refused, at the smallest unit it touches: a bad contact point refuses its
 *   channel (`contactRefusals`, routed in routing.ts), a bad core value (eventId, type, occurredAt, userId, amount,
 *   currency, transferId) the event.
 * - A presentation hint (language, time zone) never refuses anything: it falls back to the default (`fallbacks`).
 * - Display text from third parties (counterpartyName, reason) is cleaned (display-text.ts), never a reason to reject.
 * - The hash covers the event's meaning, not its spelling (see payloadHash).
 */
// zod/mini: the same validation as zod, tree-shakable (≈14 KB in a bundle instead of ≈450 KB).
import * as z from 'zod/mini';
import { maskCardNumbers } from './card-number.ts';
import {
  type Definition,
  dataNamesOf,
  definitionOf,
  EVENT_TYPES,
  type FieldDefinition,
  patternOf,
} from './catalogue.ts';
import { CHANNELS, type Channel } from './channels.ts';
import { CONTACT_FIELD_OF, CONTACT_READERS, type ContactField, type ContactProblem } from './contact.ts';
import { cleanDisplayText, NAME_MAX_GRAPHEMES } from './display-text.ts';
import { parseJson } from './json.ts';
import { LOCALES, type Locale, negotiateLocale } from './locale.ts';
import { readInstant, readTimeZone } from './moment.ts';
import { checkAmount, minorUnit, normaliseAmount, normaliseCurrency } from './money.ts';
import { type HashInput, PAYLOAD_HASH_VERSION, payloadHash, versioned } from './payload-hash.ts';

/** The notice types: the folders of templates/ (catalogue.ts). */
export { EVENT_TYPES } from './catalogue.ts';
/** The customer's channel preferences: on the same topic, through the same inbox, never sent. */
export const PREFERENCES_UPDATED = 'PreferencesUpdated';
/** A notice type's name: one of EVENT_TYPES when admitted (an item may outlive its type's removal). */
export type EventType = string;

export { LOCALES, type Locale } from './locale.ts';

/** Reason codes on quarantine items. Stable strings: alarms and Logs Insights queries match on them. */
export const REJECTION_REASONS = [
  'NO_VALUE',
  'TOO_LARGE',
  'INVALID_ENCODING',
  /** A schema-registry record whose writer's schema cannot be had or read (docs/event.md "Avro and Protobuf"). */
  'UNKNOWN_SCHEMA',
  'INVALID_JSON',
  'SCHEMA_VIOLATION',
  'INVALID_EVENT_ID',
  'UNKNOWN_TYPE',
  'UNKNOWN_CHANNEL',
  'INVALID_CONTACT',
  /** A contact point with one reading that its provider cannot send to (a non-ASCII email local part: no SMTPUTF8). */
  'UNSENDABLE_ADDRESS',
  'INVALID_AMOUNT',
  'MISSING_CONTACT',
  'EVENT_ID_CONFLICT',
  /** Last resort: processing the record failed in a way no rule above foresaw (a bug), or DynamoDB refused its items. */
  'UNPROCESSABLE',
] as const;
export type RejectionReason = (typeof REJECTION_REASONS)[number];

export interface Rejection {
  readonly reason: RejectionReason;
  /** Names the failing path and rule, never the offending value (it may be an address or a phone number). */
  readonly detail: string;
  /** The eventId when one could be read, so an operator can correlate. */
  readonly eventId?: string;
}

/** A display-text field (kind `text` in its type's definition): cleaned, never a reason to reject. */
export type DisplayField = string;

/** A validated, normalised event: what is stored, hashed and sent. */
export interface BankingEvent {
  readonly eventId: string;
  readonly type: EventType;
  /** The producer's timestamp: its local time and offset as given, spelled as RFC 3339 writes it. */
  readonly occurredAt: string;
  readonly recipient: Recipient;
  readonly data: EventData;
  /** The channels the producer listed, upper case, each once; `[]` records the event and sends nothing. */
  readonly channels?: Channel[];
}
export interface Recipient {
  readonly userId: string;
  /** The negotiated locale (docs/event.md "Language and time zone"). */
  readonly locale: Locale;
  /** Contact points that have a reading, normalised; a refused one is absent here (see DecodedTransfer). */
  readonly email?: string;
  readonly pushEndpointArn?: string;
  readonly phoneNumber?: string;
  /** IANA time zone the runtime knows, as given; absent (or unknown to the runtime): the locale's default. */
  readonly timeZone?: string;
}
/**
 * The event's `data`, as its type's definition reads it (catalogue.ts): every field normalised to a string — money as
 * its decimal and its currency code, an instant in its RFC 3339 spelling, a number as its decimal. A text field is
 * absent when the producer gave none or it cleaned to nothing.
 */
export type EventData = Readonly<Record<string, string>>;
/** A transfer's data (TransferCompleted, TransferFailed, their definition.json): what tools and tests build. */
export type TransferData = {
  readonly transferId: string;
  readonly amount: string;
  readonly currency: string;
  readonly counterpartyName?: string;
  readonly reason?: string;
};

/** A contact point without a reading its provider can send to: its channel is refused, the event is not. */
export interface ContactRefusal {
  readonly channel: Channel;
  readonly field: ContactField;
  readonly reason: ContactProblem;
  /** The field and the rule, never the value. */
  readonly detail: string;
}

/** A presentation hint that fell back to the default: the notice is sent, shown in the default language or zone. */
export type Fallback = 'recipient.locale' | 'recipient.timeZone';

export const EVENT_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;
/**
 * Identifiers (userId, transferId) are strict: no controls (CR, LF, NUL, ESC …), format characters (bidi controls,
 * zero-width characters), line/paragraph separators, lone surrogates or noncharacters. Such an id is bad input, and a
 * string that is not well-formed UTF-16 must never reach DynamoDB, which refuses it.
 */
export const STRICT_TEXT = /^[^\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}\p{Noncharacter_Code_Point}]*$/u;

const strictText = (max: number) =>
  z.string().check(z.minLength(1), z.maxLength(max), z.regex(STRICT_TEXT, 'control, format or ill-formed characters'));

/** An RFC 3339 date-time with an offset (moment.ts readInstant: the spellings it reads, the instants it refuses). */
const dateTime = z
  .string()
  .check(
    z.refine((s) => readInstant(s) !== undefined, 'not an RFC 3339 date-time with an offset naming a real instant'),
  );

/**
 * What zod checks after the spellings were read (readSpellings): the structure, the strict identifiers, the money.
 * Contact points, the locale and the time zone arrive here already read — a refused contact point or an unknown zone
 * is no longer in the object — so their fields only say their type (docs/event.schema.json says the rest).
 */
const recipientSchema = z.object({
  userId: strictText(128),
  locale: z._default(z.enum(LOCALES), 'en'),
  email: z.optional(z.string()),
  pushEndpointArn: z.optional(z.string()),
  phoneNumber: z.optional(z.string()),
  timeZone: z.optional(z.string()),
});

const recipientAndChannels = {
  recipient: recipientSchema,
  // A set once read (readSpellings: upper case, each once); `[]`: record the event, send nothing.
  channels: z.optional(z.array(z.enum(CHANNELS)).check(z.maxLength(CHANNELS.length))),
};

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
/** A calendar date that exists (2026-02-29 does not). */
export const isCalendarDate = (s: string): boolean => {
  const m = DATE.exec(s);
  if (m === null) return false;
  const date = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  return date.toISOString().slice(0, 10) === s;
};
/** A non-negative decimal: at most 15 integer digits (exact in a double) and 6 fraction digits. */
export const DECIMAL_NUMBER = /^(0|[1-9]\d{0,14})(?:\.(\d{1,6}))?$/;

/** The zod schema of one field (or, for money, of its amount and currency) as the definition says. */
function fieldShape(field: FieldDefinition): Record<string, z.core.SomeType> {
  const need = <T extends z.core.SomeType>(schema: T) => (field.required ? schema : z.optional(schema));
  switch (field.kind) {
    case 'identifier': {
      const pattern = patternOf(field);
      const shaped = strictText(128);
      if (pattern === undefined) return { [field.name]: need(shaped) };
      return {
        [field.name]: need(
          shaped.check(z.regex(pattern, `does not match the pattern ${field.pattern} of its definition`)),
        ),
      };
    }
    case 'text':
      // Display text: any string. Cleaned after, never a reason to reject; `required` is checked before cleaning.
      return { [field.name]: z.optional(z.string()) };
    case 'money':
      return { [field.name]: need(z.string()), [field.currencyField as string]: need(z.string()) };
    case 'instant':
      return { [field.name]: need(dateTime) };
    case 'date':
      return { [field.name]: need(z.string().check(z.refine(isCalendarDate, 'not a calendar date YYYY-MM-DD'))) };
    case 'number':
      return {
        [field.name]: need(z.string().check(z.regex(DECIMAL_NUMBER, 'not a non-negative decimal (≤ 15 digits)'))),
      };
    case 'enum':
      return { [field.name]: need(z.enum(field.values as [string, ...string[]])) };
  }
}

/**
 * The data of a type: its fields in the definition's order, then each money field's currency and amount (ISO 4217, the
 * currency's minor-unit digits). For the transfers this is the schema the contract always had, field for field.
 */
function dataSchemaOf(def: Definition) {
  const money = def.data.filter((f) => f.kind === 'money');
  return z.object(Object.assign({}, ...def.data.map(fieldShape)) as Record<string, z.core.SomeType>).check(
    z.superRefine((data: Record<string, unknown>, ctx) => {
      for (const field of money) {
        const amount = data[field.name];
        const currency = data[field.currencyField as string];
        if (typeof amount !== 'string' || typeof currency !== 'string') continue;
        if (minorUnit(currency) === undefined) {
          ctx.issues.push({
            code: 'custom',
            path: [field.currencyField as string],
            message: 'not an ISO 4217 currency',
            input: currency,
          });
          return;
        }
        const check = checkAmount(amount, currency);
        if (!check.ok) ctx.issues.push({ code: 'custom', path: [field.name], message: check.problem, input: amount });
      }
    }),
  );
}

/** The event schema of one type: the envelope, its data, and its required display text (checked before cleaning). */
export function eventSchemaOf(type: string, def: Definition) {
  const requiredText = def.data.filter((f) => f.kind === 'text' && f.required).map((f) => f.name);
  return z
    .object({
      eventId: z.string().check(z.regex(EVENT_ID_PATTERN)),
      type: z.enum(EVENT_TYPES as [string, ...string[]]),
      occurredAt: dateTime,
      recipient: recipientAndChannels.recipient,
      data: dataSchemaOf(def),
      channels: recipientAndChannels.channels,
    })
    .check(
      z.superRefine((event, ctx) => {
        const data = event.data as Record<string, unknown>;
        for (const name of requiredText) {
          if (data[name] === undefined) {
            ctx.issues.push({
              code: 'custom',
              path: ['data', name],
              message: `${type} needs data.${name}`,
              input: event.data,
            });
          }
        }
      }),
    );
}

/** Built once per type at load: validating an event costs no schema construction. */
const EVENT_SCHEMAS = new Map(
  EVENT_TYPES.map((type) => [type, eventSchemaOf(type, definitionOf(type) as Definition)] as const),
);

/** A PreferencesUpdated event: the customer's whole opt-out set (docs/event.md "PreferencesUpdated"). */
export interface PreferencesEvent {
  readonly eventId: string;
  readonly type: typeof PREFERENCES_UPDATED;
  readonly occurredAt: string;
  readonly userId: string;
  /** Sorted, in CHANNELS order. */
  readonly optOut: Channel[];
}

export const preferencesSchema = z.object({
  eventId: z.string(),
  type: z.literal(PREFERENCES_UPDATED),
  occurredAt: dateTime,
  recipient: z.object({ userId: strictText(128) }),
  // A set once read (readChannelList): upper case, each once.
  data: z.object({ optOut: z.array(z.enum(CHANNELS)).check(z.maxLength(CHANNELS.length)) }),
});

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
  const schema = EVENT_SCHEMAS.get(def === undefined ? (EVENT_TYPES[0] as string) : (given.type as string));
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
  const hashInput: HashInput = { event, instant: instant.iso, refusedGiven: read.refusedGiven };
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

/**
 * Optional fields given as JSON null, read as absent. Many producers write null for an absent optional (Jackson's and
 * System.Text.Json's defaults): a `"counterpartyName": null` or `"phoneNumber": null` is not bad input, and refusing
 * it would drop the customer's notice. Absent and null hash alike (payloadHash writes null for both). Required fields
 * stay required: a null eventId, type or amount is still rejected.
 */
const NULLABLE_RECIPIENT = ['locale', 'email', 'pushEndpointArn', 'phoneNumber', 'timeZone'];
/** Of a type's data: its optional fields, and its display text (a required one null is then "needs data.<name>"). */
const nullableData = (def: Definition | undefined): string[] =>
  (def?.data ?? []).filter((f) => !f.required || f.kind === 'text').flatMap(dataNamesOf);
function withoutNullOptionals(raw: Record<string, unknown>): Record<string, unknown> {
  const copy: Record<string, unknown> = { ...raw };
  if (copy.channels === null) delete copy.channels;
  const def = typeof raw.type === 'string' ? definitionOf(raw.type) : undefined;
  const nullable = { recipient: NULLABLE_RECIPIENT, data: nullableData(def) };
  for (const [part, fields] of Object.entries(nullable)) {
    const value = copy[part];
    if (typeof value !== 'object' || value === null || Array.isArray(value)) continue;
    const inner: Record<string, unknown> = { ...(value as Record<string, unknown>) };
    for (const field of fields) if (inner[field] === null) delete inner[field];
    copy[part] = inner;
  }
  return copy;
}

const objectAt = (raw: Record<string, unknown>, key: string): Record<string, unknown> | undefined => {
  const value = raw[key];
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
};

interface Spellings {
  /** The event with every spelling read: what zod validates. */
  readonly raw: Record<string, unknown>;
  readonly normalised: string[];
  readonly fallbacks: Fallback[];
  readonly contactRefusals: ContactRefusal[];
  readonly refusedGiven: Partial<Record<ContactField, unknown>>;
}

/**
 * Reads every spelling with one reading to its canonical form (docs/event.md says which RFC each follows), in the
 * copy withoutNullOptionals made. A field it cannot read is left as given for zod to refuse — except a contact point,
 * which is taken out and refused for its own channel, and a presentation hint, which falls back.
 */
function readSpellings(raw: Record<string, unknown>, def: Definition | undefined): Spellings {
  const normalised: string[] = [];
  const fallbacks: Fallback[] = [];
  const contactRefusals: ContactRefusal[] = [];
  const refusedGiven: Partial<Record<ContactField, unknown>> = {};
  readOccurredAt(raw, normalised);
  const recipient = objectAt(raw, 'recipient');
  if (recipient !== undefined) {
    const locale = negotiateLocale(recipient.locale);
    if (locale.how === 'normalised') normalised.push('recipient.locale');
    if (locale.how === 'fallback') fallbacks.push('recipient.locale');
    recipient.locale = locale.locale;
    const zone = readTimeZone(recipient.timeZone);
    if (zone.how === 'normalised') normalised.push('recipient.timeZone');
    if (zone.how === 'fallback') fallbacks.push('recipient.timeZone');
    if (zone.zone === undefined) delete recipient.timeZone;
    else recipient.timeZone = zone.zone;
    for (const channel of CHANNELS) {
      const field = CONTACT_FIELD_OF[channel];
      const given = recipient[field];
      if (given === undefined) continue;
      const contact = CONTACT_READERS[field](given);
      if (contact.ok) {
        recipient[field] = contact.address;
        if (contact.normalised) normalised.push(`recipient.${field}`);
      } else {
        delete recipient[field];
        refusedGiven[field] = given;
        contactRefusals.push({
          channel,
          field,
          reason: contact.problem,
          detail: `${contact.rule} (at recipient.${field})`,
        });
      }
    }
  }
  const data = objectAt(raw, 'data');
  if (data !== undefined && def !== undefined) readDataSpellings(data, def, normalised);
  const channels = readChannelList(raw.channels);
  if (channels !== raw.channels) {
    raw.channels = channels;
    normalised.push('channels');
  }
  // Most events have nothing to report: the shared empties are all they keep (a batch holds its admissions).
  return {
    raw,
    normalised: normalised.length === 0 ? NONE : normalised,
    fallbacks: fallbacks.length === 0 ? NONE : fallbacks,
    contactRefusals: contactRefusals.length === 0 ? NONE : contactRefusals,
    refusedGiven: contactRefusals.length === 0 ? NOTHING_REFUSED : refusedGiven,
  };
}

/**
 * The spellings of `data` with one reading, by each field's kind: money as for the transfers' amount (spaces, a
 * leading +, leading zeros, a bare point) and its currency in any case; an instant as occurredAt; an enum value in
 * any case with surrounding spaces; a number given as a JSON number that is a non-negative safe integer (one reading:
 * its digits). Anything else is left for zod to refuse.
 */
function readDataSpellings(data: Record<string, unknown>, def: Definition, normalised: string[]): void {
  const set = (name: string, value: unknown) => {
    if (value === data[name]) return;
    data[name] = value;
    normalised.push(`data.${name}`);
  };
  for (const field of def.data) {
    const value = data[field.name];
    if (field.kind === 'money') {
      if (typeof value === 'string') set(field.name, normaliseAmount(value));
      const currency = data[field.currencyField as string];
      if (typeof currency === 'string') set(field.currencyField as string, normaliseCurrency(currency));
    } else if (field.kind === 'instant' && typeof value === 'string') {
      const instant = readInstant(value);
      if (instant !== undefined) set(field.name, instant.spelling);
    } else if (field.kind === 'enum' && typeof value === 'string') {
      const upper = value.trim().toUpperCase();
      if (field.values?.includes(upper)) set(field.name, upper);
    } else if (field.kind === 'number') {
      if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) set(field.name, String(value));
      else if (typeof value === 'string') set(field.name, value.trim());
    }
  }
}

/** Shared and frozen: never written to, so one instance serves every event. */
const NONE = Object.freeze([]) as never[];
const NOTHING_REFUSED: Partial<Record<ContactField, unknown>> = Object.freeze({});

function readOccurredAt(raw: Record<string, unknown>, normalised: string[]): void {
  if (typeof raw.occurredAt !== 'string') return;
  const instant = readInstant(raw.occurredAt);
  if (instant === undefined || instant.spelling === raw.occurredAt) return;
  raw.occurredAt = instant.spelling;
  normalised.push('occurredAt');
}

/**
 * A channel list of strings, read as the set it means: names in any case, surrounding spaces trimmed, a repeated name
 * once, in the order first given. The same array when nothing changed; anything that is not a list of names is
 * returned as it is, for the schema to refuse.
 */
function readChannelList(list: unknown): unknown {
  if (!Array.isArray(list)) return list;
  // As the contract writes it (known names, upper case, each once): nothing to read, nothing to allocate.
  if (list.length <= CHANNELS.length && list.every((c, i) => CHANNELS.includes(c) && list.indexOf(c) === i))
    return list;
  if (!list.every((c) => typeof c === 'string')) return list;
  const names = list.map((c: string) => {
    const name = c.trim();
    return /^[A-Za-z]+$/.test(name) ? name.toUpperCase() : c;
  });
  const set = [...new Set(names)];
  return set.length === list.length && set.every((c, i) => c === list[i]) ? list : set;
}

function reasonForPath(path: string, raw: Record<string, unknown>, def?: Definition): RejectionReason {
  if (path === 'type') return raw.type === undefined ? 'SCHEMA_VIOLATION' : 'UNKNOWN_TYPE';
  if (path.startsWith('channels.')) return 'UNKNOWN_CHANNEL';
  const money = (def?.data ?? []).filter((f) => f.kind === 'money').flatMap(dataNamesOf);
  if (money.some((name) => path === `data.${name}`)) return 'INVALID_AMOUNT';
  return 'SCHEMA_VIOLATION';
}

/**
 * The UTC instant of an RFC 3339 timestamp (moment.ts readInstant): "2026-11-30T18:15:00.1230+09:00" →
 * "2026-11-30T09:15:00.123Z". Undefined for a timestamp that names no real instant.
 */
export function utcInstant(text: string): { iso: string; epochMs: number } | undefined {
  const instant = readInstant(text);
  return instant === undefined ? undefined : { iso: instant.iso, epochMs: instant.epochMs };
}

export { type HashInput, PAYLOAD_HASH_VERSION, payloadHash, repairHash } from './payload-hash.ts';
export type { Channel };

/**
 * The event contract (docs/event.md): turns the bytes of one Kafka record value into either a normalised
 * `BankingEvent` with its payloadHash, or a `Rejection` whose reason code is what an operator reads on the quarantine
 * item.
 *
 * Pure and total: no AWS, no clock, no I/O, and every branch returns — whatever the bytes, nothing here throws.
 * - Identifiers and addresses are strict: a bad one rejects the event.
 * - Display text from third parties (counterpartyName, reason) is cleaned (display-text.ts), never a reason to reject.
 * - The hash covers the event's meaning, not its spelling (see payloadHash).
 */
import { createHash } from 'node:crypto';
// zod/mini: the same validation as zod, tree-shakable (≈14 KB in a bundle instead of ≈450 KB).
import * as z from 'zod/mini';
import { CHANNELS, type Channel } from './channels.ts';
import { cleanDisplayText, NAME_MAX_GRAPHEMES, REASON_MAX_GRAPHEMES } from './display-text.ts';
import { LOCALES, type Locale } from './locale.ts';
import { canonicalTimeZone } from './moment.ts';
import { canonicalAmount, checkAmount, minorUnit } from './money.ts';

export const EVENT_TYPES = ['TransferCompleted', 'TransferFailed'] as const;
/** The customer's channel preferences (issue 16): on the same topic, through the same inbox, never sent. */
export const PREFERENCES_UPDATED = 'PreferencesUpdated';
export type EventType = (typeof EVENT_TYPES)[number];

export { LOCALES, type Locale } from './locale.ts';

/** Reason codes on quarantine items. Stable strings: alarms and Logs Insights queries match on them. */
export const REJECTION_REASONS = [
  'NO_VALUE',
  'TOO_LARGE',
  'INVALID_ENCODING',
  'INVALID_JSON',
  'SCHEMA_VIOLATION',
  'INVALID_EVENT_ID',
  'UNKNOWN_TYPE',
  'UNKNOWN_CHANNEL',
  'INVALID_CONTACT',
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

/** The display-text fields: cleaned, never a reason to reject. */
export const DISPLAY_FIELDS = ['counterpartyName', 'reason'] as const;
export type DisplayField = (typeof DISPLAY_FIELDS)[number];

/** A validated, normalised event: what is stored, hashed and sent. */
export interface BankingEvent {
  readonly eventId: string;
  readonly type: EventType;
  /** The producer's timestamp as given (ISO 8601 with an offset); utcInstant() gives its instant. */
  readonly occurredAt: string;
  readonly recipient: Recipient;
  readonly data: TransferData;
  readonly channels?: Channel[];
}
export interface Recipient {
  readonly userId: string;
  readonly locale: Locale;
  readonly email?: string;
  readonly pushEndpointArn?: string;
  readonly phoneNumber?: string;
  /** IANA time zone the customer reads the transfer's moment in, as given (validated); absent: the locale's default. */
  readonly timeZone?: string;
}
export interface TransferData {
  readonly transferId: string;
  readonly amount: string;
  readonly currency: string;
  /** Cleaned display text; absent when the producer gave none or it cleaned to nothing. */
  readonly counterpartyName?: string;
  /** Cleaned display text; absent when it cleaned to nothing (a TransferFailed is then shown without a reason). */
  readonly reason?: string;
}

export const EVENT_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;
/**
 * Identifiers (userId, transferId) are strict: no controls (CR, LF, NUL, ESC …), format characters (bidi controls,
 * zero-width characters), line/paragraph separators, lone surrogates or noncharacters. Such an id is bad input, and a
 * string that is not well-formed UTF-16 must never reach DynamoDB, which refuses it.
 */
export const STRICT_TEXT = /^[^\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}\p{Noncharacter_Code_Point}]*$/u;
const E164 = /^\+[1-9]\d{6,14}$/;
const SNS_ENDPOINT_ARN =
  /^arn:aws(-[a-z]+)*:sns:[a-z]{2}(-[a-z]+)+-\d:\d{12}:endpoint\/[A-Z_]+\/[A-Za-z0-9._-]{1,256}\/[A-Za-z0-9-]{1,64}$/;

const strictText = (max: number) =>
  z.string().check(z.minLength(1), z.maxLength(max), z.regex(STRICT_TEXT, 'control, format or ill-formed characters'));

const recipientSchema = z.object({
  userId: strictText(128),
  locale: z._default(z.enum(LOCALES), 'en'),
  // zod's email pattern is ASCII-only: no control, format or ill-formed character can pass it.
  email: z.optional(z.email().check(z.maxLength(254))),
  pushEndpointArn: z.optional(
    z.string().check(z.maxLength(512), z.regex(SNS_ENDPOINT_ARN, 'not an SNS platform endpoint ARN')),
  ),
  phoneNumber: z.optional(z.string().check(z.regex(E164, 'not an E.164 phone number'))),
  // Not a contact point (nothing is sent to it), so a bad one is a SCHEMA_VIOLATION naming recipient.timeZone.
  timeZone: z.optional(
    z.string().check(z.refine((s) => canonicalTimeZone(s) !== undefined, 'not an IANA time zone name')),
  ),
});

const dataSchema = z
  .object({
    transferId: strictText(128),
    amount: z.string(),
    currency: z.string(),
    // Display text: any string. Cleaned below, never a reason to reject.
    counterpartyName: z.optional(z.string()),
    reason: z.optional(z.string()),
  })
  .check(
    z.superRefine((data, ctx) => {
      if (minorUnit(data.currency) === undefined) {
        ctx.issues.push({
          code: 'custom',
          path: ['currency'],
          message: 'not an ISO 4217 currency',
          input: data.currency,
        });
        return;
      }
      const amount = checkAmount(data.amount, data.currency);
      if (!amount.ok)
        ctx.issues.push({ code: 'custom', path: ['amount'], message: amount.problem, input: data.amount });
    }),
  );

const eventSchema = z
  .object({
    eventId: z.string().check(z.regex(EVENT_ID_PATTERN)),
    type: z.enum(EVENT_TYPES),
    occurredAt: z.iso.datetime({ offset: true }),
    recipient: recipientSchema,
    data: dataSchema,
    channels: z.optional(
      z.array(z.enum(CHANNELS)).check(
        z.minLength(1),
        z.maxLength(CHANNELS.length),
        z.refine((list) => new Set(list).size === list.length, 'channels must not repeat'),
      ),
    ),
  })
  .check(
    z.superRefine((event, ctx) => {
      if (event.type === 'TransferFailed' && event.data.reason === undefined) {
        ctx.issues.push({
          code: 'custom',
          path: ['data', 'reason'],
          message: 'TransferFailed needs data.reason',
          input: event.data,
        });
      }
    }),
  );

export type Decoded =
  | {
      ok: true;
      event: BankingEvent;
      payloadHash: string;
      /** The event's instant, epoch milliseconds (for the max-age rule). */
      occurredAtMs: number;
      /** Display-text fields that cleaning changed. */
      sanitised: DisplayField[];
    }
  | { ok: false; rejection: Rejection };

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const utf8 = new TextDecoder('utf-8', { fatal: true });

const reject = (reason: RejectionReason, detail: string, eventId?: string): { ok: false; rejection: Rejection } => ({
  ok: false,
  rejection: eventId === undefined ? { reason, detail } : { reason, detail, eventId },
});

/**
 * Decodes a Kafka record value as MSK hands it to Lambda (base64) into a validated event.
 * `maxBytes` bounds the decoded size: larger values are rejected before they are parsed.
 */
export function decodeRecordText(base64Value: unknown, maxBytes: number): string | { ok: false; rejection: Rejection } {
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
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    // Also catches UTF-8-encoded surrogates (ED A0 80): not valid UTF-8.
    return reject('INVALID_ENCODING', 'value is not valid UTF-8');
  }
  return text;
}

export function decodeRecordValue(base64Value: unknown, maxBytes: number): Decoded {
  const text = decodeRecordText(base64Value, maxBytes);
  return typeof text === 'string' ? parseEventJson(text) : text;
}

/** A JSON object with a valid eventId: what every event type has in common. */
export type EventJson = { ok: true; raw: Record<string, unknown>; eventId: string };

/** Parses the JSON text of one record and reads its eventId; the type's own schema comes after. */
export function readEventJson(text: string): EventJson | { ok: false; rejection: Rejection } {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    // A RangeError here means nesting deep enough to exhaust the stack: still just malformed input.
    return reject('INVALID_JSON', error instanceof RangeError ? 'JSON nested too deeply' : 'value is not valid JSON');
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    return reject('SCHEMA_VIOLATION', 'event must be a JSON object (at <root>)');
  }
  const raw = withoutNullOptionals(json as Record<string, unknown>);
  const eventId = typeof raw.eventId === 'string' && EVENT_ID_PATTERN.test(raw.eventId) ? raw.eventId : undefined;
  if (eventId === undefined) {
    return reject('INVALID_EVENT_ID', 'eventId must be 1-128 characters of [A-Za-z0-9._:-]');
  }
  return { ok: true, raw, eventId };
}

/** Parses, validates and normalises the JSON text of one event. */
export function parseEventJson(text: string): Decoded {
  const read = readEventJson(text);
  return read.ok ? validateTransferEvent(read) : read;
}

/** Validates and normalises a transfer event (TransferCompleted / TransferFailed). */
export function validateTransferEvent({ raw, eventId }: EventJson): Decoded {
  const parsed = eventSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const path = issue?.path.map(String).join('.') || '<root>';
    return reject(reasonForPath(path, raw), `${issue?.message ?? 'invalid'} (at ${path})`, eventId);
  }
  return normalise(parsed.data);
}

type ParsedEvent = z.infer<typeof eventSchema>;

function normalise(p: ParsedEvent): Decoded {
  const instant = utcInstant(p.occurredAt);
  if (instant === undefined) return reject('SCHEMA_VIOLATION', 'not a valid instant (at occurredAt)', p.eventId);
  const sanitised: DisplayField[] = [];
  const display = (field: DisplayField, value: string | undefined, max: number): string | undefined => {
    if (value === undefined) return undefined;
    const clean = cleanDisplayText(value, max);
    if (clean.changed) sanitised.push(field);
    return clean.text === '' ? undefined : clean.text;
  };
  const counterpartyName = display('counterpartyName', p.data.counterpartyName, NAME_MAX_GRAPHEMES);
  const reason = display('reason', p.data.reason, REASON_MAX_GRAPHEMES);
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
    data: {
      transferId: p.data.transferId,
      amount: p.data.amount,
      currency: p.data.currency,
      ...(counterpartyName === undefined ? {} : { counterpartyName }),
      ...(reason === undefined ? {} : { reason }),
    },
    ...(p.channels === undefined ? {} : { channels: p.channels }),
  };
  return { ok: true, event, payloadHash: payloadHash(event, instant.iso), occurredAtMs: instant.epochMs, sanitised };
}

/**
 * Optional fields given as JSON null, read as absent. Many producers write null for an absent optional (Jackson's and
 * System.Text.Json's defaults): a `"counterpartyName": null` or `"phoneNumber": null` is not bad input, and refusing
 * it would drop the customer's notice. Absent and null hash alike (payloadHash writes null for both). Required fields
 * stay required: a null eventId, type or amount is still rejected.
 */
const NULLABLE_OPTIONALS = {
  recipient: ['locale', 'email', 'pushEndpointArn', 'phoneNumber', 'timeZone'],
  data: ['counterpartyName', 'reason'],
} as const;
function withoutNullOptionals(raw: Record<string, unknown>): Record<string, unknown> {
  const copy: Record<string, unknown> = { ...raw };
  if (copy.channels === null) delete copy.channels;
  for (const [part, fields] of Object.entries(NULLABLE_OPTIONALS)) {
    const value = copy[part];
    if (typeof value !== 'object' || value === null || Array.isArray(value)) continue;
    const inner: Record<string, unknown> = { ...(value as Record<string, unknown>) };
    for (const field of fields) if (inner[field] === null) delete inner[field];
    copy[part] = inner;
  }
  return copy;
}

function reasonForPath(path: string, raw: Record<string, unknown>): RejectionReason {
  if (path === 'type') return raw.type === undefined ? 'SCHEMA_VIOLATION' : 'UNKNOWN_TYPE';
  if (path.startsWith('channels.')) return 'UNKNOWN_CHANNEL';
  if (path === 'recipient.email' || path === 'recipient.phoneNumber' || path === 'recipient.pushEndpointArn') {
    return 'INVALID_CONTACT';
  }
  if (path === 'data.amount' || path === 'data.currency') return 'INVALID_AMOUNT';
  return 'SCHEMA_VIOLATION';
}

const ISO_INSTANT = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:Z|([+-])(\d{2}):(\d{2}))$/;

/**
 * The UTC instant of an ISO 8601 timestamp with an offset, keeping every fraction digit given (trailing zeros
 * trimmed): "2026-11-30T18:15:00.1230+09:00" → "2026-11-30T09:15:00.123Z". Not through Date alone, which keeps
 * milliseconds only. Undefined for a timestamp that names no real instant.
 */
export function utcInstant(text: string): { iso: string; epochMs: number } | undefined {
  const m = ISO_INSTANT.exec(text);
  if (m === null) return undefined;
  const [, y, mo, d, h, mi, s, fraction = '', sign, oh = '0', om = '0'] = m;
  const [year, month, day] = [Number(y), Number(mo), Number(d)];
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined;
  if (Number(h) > 23 || Number(mi) > 59 || Number(s) > 59 || Number(oh) > 23 || Number(om) > 59) return undefined;
  const offsetMinutes = (sign === '-' ? -1 : 1) * (Number(oh) * 60 + Number(om));
  const wholeMs =
    daysFromCivil(year, month, day) * 86_400_000 +
    ((Number(h) * 60 + Number(mi) - offsetMinutes) * 60 + Number(s)) * 1000;
  const digits = fraction.replace(/0+$/, '');
  const iso = `${new Date(wholeMs).toISOString().slice(0, -5)}${digits ? `.${digits}` : ''}Z`;
  return { iso, epochMs: wholeMs + Number(fraction.slice(0, 3).padEnd(3, '0')) };
}

const isLeap = (y: number) => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
const daysInMonth = (y: number, m: number) => (m === 2 ? (isLeap(y) ? 29 : 28) : [4, 6, 9, 11].includes(m) ? 30 : 31);

/** Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant, "chrono-compatible low-level date algorithms"). */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146_097 + doe - 719_468;
}

/** Version of the payloadHash definition, stored as its prefix: a later definition must not be compared with it. */
export const PAYLOAD_HASH_VERSION = 'v2';

/**
 * sha-256 of the event's meaning, not its spelling (README "What the payloadHash covers"). The hashed text is the JSON
 * array, in this order: the definition's name, eventId, type, occurredAt as its UTC instant, userId, locale (after its
 * default), email, pushEndpointArn, phoneNumber, transferId, amount as a decimal (trailing fraction zeros dropped),
 * currency, counterpartyName and reason after cleaning (null when absent), channels sorted (null when not listed),
 * and — only when given — the recipient's timeZone in lower case (IANA names are case-insensitive; appended only when
 * present, so every hash stored before the field existed is unchanged).
 * Fields outside the contract, key order and whitespace are not part of it.
 */
export function payloadHash(event: BankingEvent, occurredAtUtc: string): string {
  const { recipient: r, data: d } = event;
  const meaning = [
    `notifier.event.${PAYLOAD_HASH_VERSION}`,
    event.eventId,
    event.type,
    occurredAtUtc,
    r.userId,
    r.locale,
    r.email ?? null,
    r.pushEndpointArn ?? null,
    r.phoneNumber ?? null,
    d.transferId,
    canonicalAmount(d.amount),
    d.currency,
    d.counterpartyName ?? null,
    d.reason ?? null,
    event.channels === undefined ? null : [...event.channels].sort(),
    ...(r.timeZone === undefined ? [] : [r.timeZone.toLowerCase()]),
  ];
  return `${PAYLOAD_HASH_VERSION}:${createHash('sha256').update(JSON.stringify(meaning)).digest('hex')}`;
}

export type { Channel };

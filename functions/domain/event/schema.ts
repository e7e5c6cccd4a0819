/**
 * The schema of the event contract (docs/event.md; docs/event.schema.json is generated from it by `npm run schema`):
 * what zod checks once the spellings were read (spellings.ts) — the structure, the strict identifiers, the money — one
 * schema per notice type, built from its definition (catalogue.ts), and the schema of a preferences event.
 */
// zod/mini: the same validation as zod, tree-shakable (≈14 KB in a bundle instead of ≈450 KB).
import * as z from 'zod/mini';
import { isCalendarDate } from '../calendar-date.ts';
import { type Definition, definitionOf, EVENT_TYPES, type FieldDefinition, patternOf } from '../catalogue.ts';
import { CHANNELS } from '../channels.ts';
import { LOCALES } from '../locale.ts';
import { readInstant } from '../moment.ts';
import { checkAmount, minorUnit } from '../money.ts';
import { PREFERENCES_UPDATED } from './contract.ts';

export const EVENT_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;
/**
 * Identifiers (userId, transferId) are strict: no controls (CR, LF, NUL, ESC …), format characters (bidi controls,
 * zero-width characters), line/paragraph separators, lone surrogates or noncharacters. Such an id is bad input, and a
 * string that is not well-formed UTF-16 must never reach DynamoDB, which refuses it.
 */
export const STRICT_TEXT = /^[^\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}\p{Noncharacter_Code_Point}]*$/u;

/**
 * A secret (a one-time code): ASCII letters, digits and hyphens only, so it is written alike in HTML, JSON and GSM-7
 * and the evidence's redaction finds every copy of it in a message (functions/domain/secrets.ts).
 */
export const SECRET_PATTERN = /^[A-Za-z0-9-]{1,64}$/;

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
    case 'secret': {
      const pattern = patternOf(field);
      const shaped = z.string().check(z.regex(SECRET_PATTERN, 'not 1–64 ASCII letters, digits or hyphens'));
      return {
        [field.name]: need(
          pattern === undefined
            ? shaped
            : shaped.check(z.regex(pattern, `does not match the pattern ${field.pattern} of its definition`)),
        ),
      };
    }
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

const built = new Map<string, ReturnType<typeof eventSchemaOf>>();

/**
 * The schema of a catalogue type (undefined for any other), built with the first event of its type and kept: after
 * that, validating an event costs no schema construction, and a cold start builds none (a container builds the types
 * it sees, not the whole catalogue).
 */
export function eventSchemaFor(type: string): ReturnType<typeof eventSchemaOf> | undefined {
  const known = built.get(type);
  if (known !== undefined) return known;
  const def = definitionOf(type);
  if (def === undefined) return undefined;
  const schema = eventSchemaOf(type, def);
  built.set(type, schema);
  return schema;
}

export const preferencesSchema = z.object({
  eventId: z.string(),
  type: z.literal(PREFERENCES_UPDATED),
  occurredAt: dateTime,
  recipient: z.object({ userId: strictText(128) }),
  // A set once read (readChannelList): upper case, each once.
  data: z.object({ optOut: z.array(z.enum(CHANNELS)).check(z.maxLength(CHANNELS.length)) }),
});

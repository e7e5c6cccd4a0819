/**
 * The catalogue of notice types, as data. Each type is a folder `templates/<Type>/` holding a `definition.json` and its
 * templates; `npm run templates` validates every definition with `definitionSchema` and writes them, with the compiled
 * templates, into catalogue.generated.ts, so the Lambda bundle carries them and never reads templates/ at run time.
 * They are validated again when this module loads (a cold start): a hand-edited generated module fails loudly there.
 *
 * From a definition follow: the validation and normalisation of `data` (event/schema.ts, event/spellings.ts), the payloadHash (its fields in the
 * definition's order), the JSON Schema of the contract (tools/scripts/schema.ts), the template compiler's placeholders
 * (tools/scripts/templates.ts), routing (the channels it allows), the class pacing serves it in, whether opt-outs
 * apply (audience.ts), its maximum event age and how long its notifications are kept. Pure.
 */
import * as z from 'zod/mini';
import { DEFINITIONS } from './catalogue.generated.ts';
import { CHANNELS, type Channel } from './channels.ts';

/** What a field of `data` holds, and so how it is validated, hashed and shown. */
export const FIELD_KINDS = [
  /** Strict identifier text (no controls, format characters …), ≤ 128: a reference, a card's last digits. */
  'identifier',
  /** Display text from third parties (a payee, a merchant, a device): cleaned, never a reason to reject. */
  'text',
  /** A decimal string with its currency in the field `currencyField`: shown digit for digit. */
  'money',
  /** An RFC 3339 date-time with an offset: shown in the customer's time zone. */
  'instant',
  /** A calendar date YYYY-MM-DD (a due date): shown as that day, whatever the time zone. */
  'date',
  /** A non-negative decimal string (a count, a percentage): shown by Intl in the customer's language. */
  'number',
  /** One of `values` (upper case); any case and surrounding spaces read. Templates branch with {{#field=VALUE}}. */
  'enum',
  /**
   * A secret the customer must see and nobody else keep (a one-time code): 1–64 ASCII letters, digits or hyphens, so
   * it reads the same in HTML, JSON and GSM-7. Sent, then removed from the table; never in the evidence, the logs,
   * exports or quarantine copies (docs/evidence-and-privacy.md "Secrets").
   */
  'secret',
] as const;
export type FieldKind = (typeof FIELD_KINDS)[number];

/** Pacing serves critical before normal before bulk (docs/design-choices.md "Critical first"). */
export const NOTICE_CLASSES = ['critical', 'normal', 'bulk'] as const;
export type NoticeClass = (typeof NOTICE_CLASSES)[number];

/** Names every template has besides the type's fields (functions/domain/message-view.ts): a field may not take one. */
export const RESERVED_NAMES = [
  'bank',
  'when',
  'supportUrl',
  'supportPhone',
  'supportPhoneHref',
  'legal',
  'logoUrl',
  'logoWidth',
  'logoHeight',
  'brandColor',
] as const;

const FIELD_NAME = /^[a-z][A-Za-z0-9]{0,39}$/;
/** A local wall-clock time `HH:MM`, 00:00–23:59. */
const CLOCK_TIME = /^(?:[01][0-9]|2[0-3]):[0-5][0-9]$/;
const ENUM_VALUE = /^[A-Z][A-Z0-9_]{0,39}$/;
const TYPE_NAME = /^[A-Z][A-Za-z0-9]{0,63}$/;

const fieldSchema = z.strictObject({
  name: z.string().check(z.regex(FIELD_NAME, 'must be a camelCase name of letters and digits, at most 40')),
  kind: z.enum(FIELD_KINDS),
  required: z._default(z.boolean(), false),
  /** money: the field of `data` that holds its ISO 4217 currency code (validated and hashed with it). */
  currencyField: z.optional(z.string().check(z.regex(FIELD_NAME, 'must be a camelCase name'))),
  /** text: the most grapheme clusters kept (cut with "…"); default 140. */
  maxGraphemes: z.optional(z.int().check(z.gte(1), z.lte(500))),
  /**
   * identifier or secret: an ECMAScript regular expression (Unicode mode) the whole value must match — the shape a
   * value must have (four digits for a card's last four, six for a code). The compiler refuses one a crafted value
   * could make backtrack (ReDoS).
   */
  pattern: z.optional(z.string().check(z.minLength(1), z.maxLength(200))),
  /** enum: the values it may take. */
  values: z.optional(z.array(z.string().check(z.regex(ENUM_VALUE, 'must be UPPER_SNAKE_CASE'))).check(z.minLength(1))),
  /** What the field means, for the JSON Schema and the reader of the folder. */
  description: z.optional(z.string()),
});
export type FieldDefinition = z.infer<typeof fieldSchema>;

/** The kinds a supersede key may name: values with one spelling once read (never cleaned text, money or a secret). */
const KEY_KINDS: readonly FieldKind[] = ['identifier', 'enum', 'date', 'number'];

/** When a type's notices may reach the customer: a window of local wall-clock time, `from` up to `until`. */
const sendWindowSchema = z.strictObject({
  from: z.string().check(z.regex(CLOCK_TIME, 'must be a local time HH:MM, 00:00–23:59')),
  until: z.string().check(z.regex(CLOCK_TIME, 'must be a local time HH:MM, 00:00–23:59')),
});
export type SendWindow = z.infer<typeof sendWindowSchema>;

/** At most `limit` notices of the type per customer and channel in any fixed window of `windowSeconds`. */
const floodGuardSchema = z.strictObject({
  limit: z.int().check(z.gte(1), z.lte(1_000)),
  windowSeconds: z.int().check(z.gte(60), z.lte(604_800)),
});
export type FloodGuard = z.infer<typeof floodGuardSchema>;
/** A non-critical type without its own floodGuard: ten per hour per customer and channel. */
export const DEFAULT_FLOOD_GUARD: FloodGuard = { limit: 10, windowSeconds: 3_600 };
export const definitionSchema = z
  .strictObject({
    /**
     * What the notice tells the customer: the JSON Schema's description. Required of definition.json (the compiler);
     * left out of the catalogue the functions load (catalogue.generated.ts DESCRIPTIONS keeps it).
     */
    description: z.optional(z.string().check(z.minLength(1))),
    class: z.enum(NOTICE_CLASSES),
    /** false: the customer's channel opt-outs do not silence it (hard stops — bounces, STOP, disabled endpoints — do). */
    optOutsApply: z.boolean(),
    /** The channels it may be sent on; the producer's `channels` may only narrow them. */
    channels: z.array(z.enum(CHANNELS)).check(z.minLength(1), z.maxLength(CHANNELS.length)),
    /** Older events are recorded but not sent; absent: the stack's MAX_EVENT_AGE_SECONDS. */
    maxEventAgeSeconds: z.optional(z.int().check(z.gte(1), z.lte(31_536_000))),
    /** How long its notifications are kept (TTL); absent: the stack's retention. */
    retentionDays: z.optional(z.int().check(z.gte(1), z.lte(3_650))),
    /** How long after occurredAt a notice is worth sending; checked before every provider call. Absent: no limit. */
    validForSeconds: z.optional(z.int().check(z.gte(10), z.lte(31_536_000))),
    /** A newer notice (by occurredAt) for the same customer and these fields' values replaces an older one unsent. */
    supersede: z.optional(
      z.strictObject({
        key: z.array(z.string().check(z.regex(FIELD_NAME, 'must be a field name'))).check(z.maxLength(5)),
      }),
    ),
    /** Quiet hours: outside this window of the customer's local time a notice is HELD until it opens. Not critical. */
    sendWindow: z.optional(sendWindowSchema),
    /** How many notices of the type one customer gets per channel and window; absent: DEFAULT_FLOOD_GUARD. Not critical. */
    floodGuard: z.optional(floodGuardSchema),
    /** The fields of `data`, in the order the payloadHash covers them. */
    data: z.array(fieldSchema).check(z.minLength(1), z.maxLength(40)),
  })
  .check(
    z.superRefine((def, ctx) => {
      const issue = (path: (string | number)[], message: string) =>
        ctx.issues.push({ code: 'custom', path, message, input: def });
      const names = def.data.map((f) => f.name);
      const currencyFields = def.data.flatMap((f) => (f.currencyField === undefined ? [] : [f.currencyField]));
      const taken = new Set<string>();
      def.data.forEach((field, i) => {
        // Money fields may share one currency field (a balance and its threshold); any other name is one field's.
        for (const name of [field.name, ...currencyFields]) {
          if ((RESERVED_NAMES as readonly string[]).includes(name))
            issue(['data', i, 'name'], `${name} is a name every template has`);
        }
        if (taken.has(field.name)) issue(['data', i, 'name'], `${field.name} is named twice`);
        // A name every object has (constructor, toString …) would read the prototype's member for an absent field.
        for (const name of [field.name, ...(field.currencyField === undefined ? [] : [field.currencyField])])
          if (name in Object.prototype) issue(['data', i, 'name'], `${name} is a name every JavaScript object has`);
        taken.add(field.name);
        if ((field.kind === 'money') !== (field.currencyField !== undefined))
          issue(['data', i, 'currencyField'], 'a money field, and only a money field, names its currencyField');
        if ((field.kind === 'enum') !== (field.values !== undefined))
          issue(['data', i, 'values'], 'an enum field, and only an enum field, lists its values');
        if (field.kind !== 'text' && field.maxGraphemes !== undefined)
          issue(['data', i, 'maxGraphemes'], 'only a text field has maxGraphemes');
        if (field.pattern !== undefined && field.kind !== 'identifier' && field.kind !== 'secret')
          issue(
            ['data', i, 'pattern'],
            'only an identifier or a secret field has a pattern (display text is never refused)',
          );
        const problem = field.pattern === undefined ? undefined : regexProblem(field.pattern);
        if (problem !== undefined) issue(['data', i, 'pattern'], `not a regular expression: ${problem}`);
        if (field.values !== undefined && new Set(field.values).size !== field.values.length)
          issue(['data', i, 'values'], 'a value is listed twice');
      });
      if (currencyFields.some((c) => names.includes(c)))
        issue(['data'], 'a currencyField is its money field’s own: it is not listed as a field');
      if (new Set(def.channels).size !== def.channels.length) issue(['channels'], 'a channel is listed twice');
      timingProblems(def, issue);
    }),
  );

export type Definition = z.infer<typeof definitionSchema>;

/**
 * The rules of the right moment: a critical notice is never held nor limited (a sign-in alert at 3 a.m. is the point),
 * a window has two different ends, and a supersede key names required fields with one spelling.
 */
function timingProblems(
  def: {
    readonly class: NoticeClass;
    readonly sendWindow?: SendWindow | undefined;
    readonly floodGuard?: FloodGuard | undefined;
    readonly supersede?: { readonly key: readonly string[] } | undefined;
    readonly data: readonly FieldDefinition[];
  },
  issue: (path: (string | number)[], message: string) => void,
): void {
  if (def.class === 'critical' && def.sendWindow !== undefined)
    issue(['sendWindow'], 'a critical notice is never held: it has no send window');
  if (def.class === 'critical' && def.floodGuard !== undefined)
    issue(['floodGuard'], 'a critical notice is never limited: it has no flood guard');
  if (def.sendWindow !== undefined && def.sendWindow.from === def.sendWindow.until)
    issue(['sendWindow'], 'from and until are the same time: an empty or a whole day, two readings');
  for (const [i, name] of (def.supersede?.key ?? []).entries()) {
    const field = def.data.find((f) => f.name === name);
    if (field === undefined) issue(['supersede', 'key', i], `${name} is not a field of the type`);
    else if (!field.required || !KEY_KINDS.includes(field.kind))
      issue(['supersede', 'key', i], `${name} must be a required ${KEY_KINDS.join(', ')} field`);
  }
  if (new Set(def.supersede?.key ?? []).size !== (def.supersede?.key ?? []).length)
    issue(['supersede', 'key'], 'a field is named twice');
}

/** A pattern as the whole value must match it: anchored around the definition's text, in Unicode mode. */
export const wholeValuePattern = (pattern: string) => `^(?:${pattern})$`;

/** The field's pattern, compiled; undefined when it has none. */
export const patternOf = (field: FieldDefinition): RegExp | undefined =>
  field.pattern === undefined ? undefined : new RegExp(wholeValuePattern(field.pattern), 'u');

function regexProblem(pattern: string): string | undefined {
  try {
    // A regular expression of its own first: `[0-9]{4})|(?:.*` is one only once wrapped, where it closes the anchoring
    // group and matches any value.
    new RegExp(pattern, 'u');
    new RegExp(wholeValuePattern(pattern), 'u');
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

/** A definition that does not validate: at build (the compiler names the file) or at a cold start (the type). */
export class DefinitionError extends Error {
  override name = 'DefinitionError';
}

/** The problems of one definition as "<path> <message>", or none. */
export function definitionProblems(input: unknown): string[] {
  const parsed = definitionSchema.safeParse(input);
  if (parsed.success) return [];
  return parsed.error.issues.map((i) => {
    const at = i.path.map(String).join('.') || '<root>';
    return i.code === 'unrecognized_keys' ? `${at}: unknown key(s) ${i.keys.join(', ')}` : `${at}: ${i.message}`;
  });
}

/** PascalCase, and not the preferences event's name (the decoder reads that one before any type). */
export const isTypeName = (name: string) => TYPE_NAME.test(name) && name !== 'PreferencesUpdated';

/** Validates the definitions (the generated module's, or the compiler's) into the catalogue. */
export function readCatalogue(raw: Readonly<Record<string, unknown>>): ReadonlyMap<string, Definition> {
  const catalogue = new Map<string, Definition>();
  for (const [type, input] of Object.entries(raw)) {
    if (!isTypeName(type))
      throw new DefinitionError(`${type}: a type's name is PascalCase letters and digits, and not PreferencesUpdated`);
    const parsed = definitionSchema.safeParse(input);
    if (!parsed.success) throw new DefinitionError(`${type}: ${definitionProblems(input).join('; ')}`);
    catalogue.set(type, parsed.data);
  }
  return catalogue;
}

export const CATALOGUE: ReadonlyMap<string, Definition> = readCatalogue(DEFINITIONS);

/** Every notice type, in the catalogue's (alphabetical) order. */
export const EVENT_TYPES: readonly string[] = [...CATALOGUE.keys()];

export const definitionOf = (type: string): Definition | undefined => CATALOGUE.get(type);

/** The class a notification is paced in; a type no longer in the catalogue (an old item) is normal. */
export const classOf = (type: string): NoticeClass => CATALOGUE.get(type)?.class ?? 'normal';

/** The critical types: what the urgent dispatch trigger takes (functions/contracts/stream-filter.ts). */
export const CRITICAL_TYPES: readonly string[] = EVENT_TYPES.filter((type) => classOf(type) === 'critical');

/** The channels a type may use (none for a type not in the catalogue). */
export const allowedChannels = (type: string): readonly Channel[] => CATALOGUE.get(type)?.channels ?? [];

/** Whether the customer's opt-outs apply to a type; a type no longer in the catalogue: they do. */
export const optOutsApply = (type: string): boolean => CATALOGUE.get(type)?.optOutsApply ?? true;

/** The names of `data` a field fills: its own, and a money field's currency. */
export const dataNamesOf = (field: FieldDefinition): string[] =>
  field.currencyField === undefined ? [field.name] : [field.name, field.currencyField];

/** The placeholders a type's data gives its templates: each field's name, and `<field>=<VALUE>` for an enum. */
export function dataPlaceholders(def: Definition): string[] {
  return def.data.flatMap((f) => [f.name, ...(f.values ?? []).map((v) => `${f.name}=${v}`)]);
}

/** The secret fields: sent, never kept (docs/evidence-and-privacy.md "Secrets"). */
export const secretFieldsOf = (type: string): string[] =>
  (CATALOGUE.get(type)?.data ?? []).filter((f) => f.kind === 'secret').map((f) => f.name);

/** How long after occurredAt a notice of the type is worth sending (ms), or undefined when its definition says nothing. */
export const validityMsOf = (type: string): number | undefined => {
  const seconds = CATALOGUE.get(type)?.validForSeconds;
  return seconds === undefined ? undefined : seconds * 1000;
};

/** The type's quiet-hours window; a critical type (or one not in the catalogue) has none. */
export const sendWindowOf = (type: string): SendWindow | undefined => CATALOGUE.get(type)?.sendWindow;

/** The type's flood guard: its own, the default for a non-critical type, none for a critical one. */
export const floodGuardOf = (type: string): FloodGuard | undefined => {
  const def = CATALOGUE.get(type);
  if (def === undefined || def.class === 'critical') return undefined;
  return def.floodGuard ?? DEFAULT_FLOOD_GUARD;
};

/** The fields whose values, with the customer, name what a newer notice of the type replaces; undefined: none. */
export const supersedeKeyOf = (type: string): readonly string[] | undefined => CATALOGUE.get(type)?.supersede?.key;

/** The text fields: what an SMS or a push may shorten to fit. */
export const textFields = (def: Definition): string[] => def.data.filter((f) => f.kind === 'text').map((f) => f.name);

/**
 * `npm run schema`: writes docs/event.schema.json, the event contract as JSON Schema (draft 2020-12), and one file per
 * notice type, docs/schemas/<Type>.schema.json, generated from the zod schemas ingest validates with
 * (functions/domain/event/schema.ts eventSchemaOf, built from each type's templates/<Type>/definition.json, and
 * PreferencesUpdated) by zod 4's toJSONSchema. Ingest reads spellings before zod sees the event (docs/event.md "Spellings"), so the fields whose
 * spellings it reads are described here as producers may write them (a pattern where JSON Schema can say it, a
 * description otherwise), as are the refinements JSON Schema cannot say (the amount's digits per currency, the IANA
 * zone, TransferFailed's reason). test/unit/event-schema.test.ts fails when the file is not what this script writes.
 */
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import * as z from 'zod/mini';
import { DESCRIPTIONS } from '../../functions/domain/catalogue.generated.ts';
import {
  type Definition,
  definitionOf,
  EVENT_TYPES,
  type FieldDefinition,
  wholeValuePattern,
} from '../../functions/domain/catalogue.ts';
import { eventSchemaOf, preferencesSchema, SECRET_PATTERN } from '../../functions/domain/event/schema.ts';
import { DEFAULT_LOCALE, LOCALES } from '../../functions/domain/locale.ts';
import { parseCommandLine, runCommand } from '../local/cli.ts';

export const SCHEMA_FILE = fileURLToPath(new URL('../../docs/event.schema.json', import.meta.url));
/** One JSON Schema per notice type: what a producer of that type validates against (and Avro/Protobuf derive from). */
export const TYPE_SCHEMA_DIR = fileURLToPath(new URL('../../docs/schemas', import.meta.url));

type Node = Record<string, unknown> & { properties?: Record<string, Node> };

/** RFC 3339 date-time and the spellings of it ingest reads (functions/domain/moment.ts readInstant). */
const DATE_TIME = '^\\d{4}-\\d{2}-\\d{2}[Tt ]\\d{2}:\\d{2}(?::\\d{2}(?:[.,]\\d+)?)?(?:[Zz]|[+-]\\d{2}:?\\d{2})$';
/** A channel name in any case, surrounding spaces allowed. */
const CHANNEL_NAME = '^\\s*(?:[Ee][Mm][Aa][Ii][Ll]|[Pp][Uu][Ss][Hh]|[Ss][Mm][Ss])\\s*$';
const channelSet = (description: string) => ({
  type: ['array', 'null'],
  description,
  items: { type: 'string', pattern: CHANNEL_NAME },
});
const nullable = (node: Node) => Object.assign(node, { type: [node.type, 'null'] });

/** A pattern that matches `word` in any case (JSON Schema patterns have no flags). */
const anyCase = (word: string) =>
  [...word].map((c) => (/[A-Za-z]/.test(c) ? `[${c.toUpperCase()}${c.toLowerCase()}]` : c)).join('');

const MONEY_AMOUNT = {
  description:
    "A decimal string, never a number; at most as many fraction digits as the currency's ISO 4217 minor unit (USD 2, JPY 0), at most 15 integer digits once leading zeros are dropped. Surrounding spaces, a leading + and leading zeros are read.",
  pattern: '^\\s*\\+?(?:\\d+(?:\\.\\d*)?|\\.\\d+)\\s*$',
};

/** Each field of `data` as producers may write it, by its kind (functions/domain/event/spellings.ts readDataSpellings). */
function describeData(def: Definition, data: Record<string, Node>): void {
  const describe = (name: string, field: FieldDefinition, node: Node) => {
    data[name] = field.required && field.kind !== 'text' ? node : nullable(node);
  };
  for (const field of def.data) {
    const what = field.description === undefined ? '' : `${field.description} `;
    switch (field.kind) {
      case 'identifier':
        describe(field.name, field, {
          ...data[field.name],
          description: `${what}Identifier text: no control, format or ill-formed characters${field.pattern === undefined ? '' : `; the whole value matches ${field.pattern}`}.`,
        });
        break;
      case 'text':
        describe(field.name, field, {
          type: 'string',
          description: `${what}Display text: any string; control and format characters are cleaned, never rejected${field.required ? ' (required)' : ''}.`,
        });
        break;
      case 'money':
        describe(field.name, field, {
          type: 'string',
          description: `${what}${MONEY_AMOUNT.description}`,
          pattern: MONEY_AMOUNT.pattern,
        });
        describe(field.currencyField as string, field, {
          type: 'string',
          description: `The currency of ${field.name}: an ISO 4217 code with a minor unit, in any case.`,
          pattern: '^\\s*[A-Za-z]{3}\\s*$',
        });
        break;
      case 'instant':
        describe(field.name, field, {
          type: 'string',
          description: `${what}RFC 3339 with an offset, as occurredAt.`,
          pattern: DATE_TIME,
        });
        break;
      case 'date':
        describe(field.name, field, {
          type: 'string',
          description: `${what}A calendar date YYYY-MM-DD.`,
          pattern: '^\\d{4}-\\d{2}-\\d{2}$',
        });
        break;
      case 'number':
        describe(field.name, field, {
          type: ['string', 'integer'],
          description: `${what}A non-negative decimal string (at most 15 integer and 6 fraction digits), or a non-negative JSON integer.`,
          pattern: '^\\s*(?:0|[1-9]\\d{0,14})(?:\\.\\d{1,6})?\\s*$',
          minimum: 0,
        });
        break;
      case 'enum':
        describe(field.name, field, {
          type: 'string',
          description: `${what}One of ${field.values?.join(', ')}, in any case.`,
          pattern: `^\\s*(?:${(field.values ?? []).map(anyCase).join('|')})\\s*$`,
        });
        break;
      case 'secret':
        describe(field.name, field, {
          type: 'string',
          description: `${what}A secret (a one-time code): sent to the customer, never kept. 1–64 ASCII letters, digits or hyphens.`,
          pattern: field.pattern === undefined ? SECRET_PATTERN.source : wholeValuePattern(field.pattern),
        });
        break;
    }
  }
}

/** A type's definition with what it and its fields mean (the functions' catalogue leaves that out). */
function describedDefinition(type: string): Definition {
  const def = definitionOf(type);
  const described = DESCRIPTIONS[type];
  if (def === undefined || described === undefined) throw new Error(`unknown type ${type}`);
  return {
    ...def,
    description: described.type,
    data: def.data.map((field) => {
      const description = described.fields[field.name];
      return description === undefined ? field : { ...field, description };
    }),
  };
}

/** The JSON Schema of one notice type's events (draft 2020-12, without $schema). */
export function typeJsonSchema(type: string): Node {
  const def = describedDefinition(type);
  const generated = z.toJSONSchema(eventSchemaOf(type, def), { io: 'input', unrepresentable: 'any' }) as Node;
  const { $schema: _, ...schema } = generated;
  const props = schema.properties as Record<string, Node>;
  const recipient = props.recipient?.properties as Record<string, Node>;
  const describe = (node: Node | undefined, description: string, extra: Record<string, unknown> = {}) => {
    if (node !== undefined) Object.assign(node, { description, ...extra });
  };
  schema.description = `${type}: ${def.description} Class ${def.class}; ${def.optOutsApply ? "the customer's opt-outs apply" : "sent whatever the customer's opt-outs (hard stops still apply)"}; channels ${def.channels.join(', ')}.`;
  props.type = { type: 'string', const: type };
  describe(
    props.eventId,
    'The producer\'s business id: the unit of "the same" with the channel. Never a Kafka offset.',
  );
  describe(
    props.occurredAt,
    'When it happened: RFC 3339 with Z or an offset (t/z in either case, a space for T, +hhmm, zero seconds left out also read). A leap second (:60) only in the last minute of a UTC month.',
    { pattern: DATE_TIME },
  );
  props.channels = channelSet(
    `Restricts the fan-out to some of ${def.channels.join(', ')}: channel names, any case, a repeat counted once; [] records the event and sends nothing. A listed channel without a sendable contact point is refused on its own.`,
  );
  describe(recipient.userId, 'No control, format or ill-formed characters.');
  recipient.locale = {
    type: ['string', 'null'],
    description: `A BCP 47 language tag (en-US, ja_JP, JA …), negotiated by RFC 4647 lookup to ${new Intl.ListFormat('en', { type: 'disjunction' }).format(LOCALES)}; any other language, or none, is shown in ${DEFAULT_LOCALE} (counted, never refused).`,
  };
  const contact = 'A contact point that has no reading its provider can send to refuses this channel only.';
  describe(
    recipient.email,
    `Enables EMAIL: an RFC 5322 address; an internationalised domain is sent in Punycode; the local part must be ASCII (SES has no SMTPUTF8). ${contact}`,
  );
  describe(recipient.pushEndpointArn, `An SNS platform endpoint ARN: enables PUSH. ${contact}`);
  describe(
    recipient.phoneNumber,
    `E.164, as E.123 writes it (+81 90-1234-5678) or with the international prefix 00 / 011: enables SMS. A number without a country code is refused, never guessed. ${contact}`,
  );
  describe(
    recipient.timeZone,
    "An IANA time zone name (e.g. America/New_York); absent, or unknown to the runtime: the locale's default.",
  );
  for (const field of ['email', 'pushEndpointArn', 'phoneNumber', 'timeZone'] as const)
    nullable(recipient[field] as Node);
  const data = props.data as Node & { required?: string[] };
  describeData(def, data.properties as Record<string, Node>);
  // Required display text is checked before cleaning: zod says so in a refinement JSON Schema cannot carry.
  const requiredText = def.data.filter((f) => f.kind === 'text' && f.required).map((f) => f.name);
  if (requiredText.length > 0) data.required = [...(data.required ?? []), ...requiredText];
  return schema;
}

export function eventJsonSchema(): Record<string, unknown> {
  const describe = (node: Node | undefined, description: string, extra: Record<string, unknown> = {}) => {
    if (node !== undefined) Object.assign(node, { description, ...extra });
  };
  const preferences = z.toJSONSchema(preferencesSchema, { io: 'input', unrepresentable: 'any' }) as Node;
  const prefsProps = preferences.properties as Record<string, Node>;
  describe(prefsProps.occurredAt, 'RFC 3339, as for a transfer; the newest wins.', { pattern: DATE_TIME });
  describe(prefsProps.eventId, 'As for a transfer.', { pattern: '^[A-Za-z0-9._:-]{1,128}$' });
  (prefsProps.data?.properties as Record<string, Node>).optOut = {
    type: 'array',
    description: 'The whole opt-out set: channel names in any case; [] opts back in to every channel.',
    items: { type: 'string', pattern: CHANNEL_NAME },
  };
  const { $schema, ...preferencesUpdated } = preferences;
  return {
    $schema,
    title: 'notifier event',
    description:
      "One Kafka record value (UTF-8 JSON, no key twice in one object) on the events topic: a notice of one of the catalogue's types (templates/<Type>/definition.json) or a PreferencesUpdated. Generated by `npm run schema`: do not edit.",
    oneOf: [...EVENT_TYPES.map((type) => ({ $ref: `#/$defs/${type}` })), { $ref: '#/$defs/preferencesUpdated' }],
    $defs: {
      ...Object.fromEntries(EVENT_TYPES.map((type) => [type, typeJsonSchema(type)])),
      preferencesUpdated,
    },
  };
}

export const schemaText = () => `${JSON.stringify(eventJsonSchema(), null, 2)}\n`;

/** docs/schemas/<Type>.schema.json: one type's schema, standing alone. */
export const typeSchemaTexts = (): Record<string, string> =>
  Object.fromEntries(
    EVENT_TYPES.map((type) => [
      `${type}.schema.json`,
      `${JSON.stringify({ $schema: 'https://json-schema.org/draft/2020-12/schema', title: type, ...typeJsonSchema(type) }, null, 2)}\n`,
    ]),
  );

const USAGE = `
Usage: npm run schema

Writes docs/event.schema.json, the event contract as JSON Schema (every notice type of the catalogue), and
docs/schemas/<Type>.schema.json, one per type, from the schemas ingest validates with. A test fails while a file is
stale.
`;

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  runCommand('schema', async () => {
    parseCommandLine({ usage: USAGE, options: {} }, process.argv.slice(2));
    writeFileSync(SCHEMA_FILE, schemaText());
    mkdirSync(TYPE_SCHEMA_DIR, { recursive: true });
    const files = typeSchemaTexts();
    // A type removed from the catalogue takes its schema with it.
    for (const old of readdirSync(TYPE_SCHEMA_DIR)) if (!(old in files)) rmSync(join(TYPE_SCHEMA_DIR, old));
    for (const [name, text] of Object.entries(files)) writeFileSync(join(TYPE_SCHEMA_DIR, name), text);
    process.stdout.write(`wrote ${SCHEMA_FILE} and ${Object.keys(files).length} schemas in ${TYPE_SCHEMA_DIR}\n`);
    return 0;
  });
}

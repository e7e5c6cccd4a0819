/**
 * `npm run schema`: writes docs/event.schema.json, the event contract as JSON Schema (draft 2020-12), generated from
 * the zod schemas ingest validates with (functions/domain/event.ts: the transfer and PreferencesUpdated) by zod 4's
 * toJSONSchema. Ingest reads spellings before zod sees the event (docs/event.md "Spellings"), so the fields whose
 * spellings it reads are described here as producers may write them (a pattern where JSON Schema can say it, a
 * description otherwise), as are the refinements JSON Schema cannot say (the amount's digits per currency, the IANA
 * zone, TransferFailed's reason). test/unit/event-schema.test.ts fails when the file is not what this script writes.
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import * as z from 'zod/mini';
import { eventSchema, preferencesSchema } from '../../functions/domain/event.ts';
import { parseCommandLine, runCommand } from '../local/cli.ts';

export const SCHEMA_FILE = fileURLToPath(new URL('../../docs/event.schema.json', import.meta.url));

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

export function eventJsonSchema(): Record<string, unknown> {
  const generated = z.toJSONSchema(eventSchema, { io: 'input', unrepresentable: 'any' }) as Node;
  const props = generated.properties as Record<string, Node>;
  const recipient = props.recipient?.properties as Record<string, Node>;
  const data = props.data?.properties as Record<string, Node>;
  const describe = (node: Node | undefined, description: string, extra: Record<string, unknown> = {}) => {
    if (node !== undefined) Object.assign(node, { description, ...extra });
  };
  describe(
    props.eventId,
    'The producer\'s business id: the unit of "the same" with the channel. Never a Kafka offset.',
  );
  describe(props.type, 'TransferFailed needs data.reason.');
  describe(
    props.occurredAt,
    'When the transfer happened: RFC 3339 with Z or an offset (t/z in either case, a space for T, +hhmm, zero seconds left out also read). A leap second (:60) only in the last minute of a UTC month.',
    { pattern: DATE_TIME },
  );
  props.channels = channelSet(
    'Restricts the fan-out: a set of channel names, any case, a repeat counted once; [] records the event and sends nothing. A listed channel without a sendable contact point is refused on its own.',
  );
  describe(recipient.userId, 'No control, format or ill-formed characters.');
  recipient.locale = {
    type: ['string', 'null'],
    description:
      'A BCP 47 language tag (en-US, ja_JP, JA …), negotiated by RFC 4647 lookup to en or ja; any other language, or none, is shown in en (counted, never refused).',
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
  describe(
    data.amount,
    "A decimal string, never a number; at most as many fraction digits as the currency's ISO 4217 minor unit (USD 2, JPY 0), at most 15 integer digits once leading zeros are dropped. Surrounding spaces, a leading + and leading zeros are read.",
    { pattern: '^\\s*\\+?(?:\\d+(?:\\.\\d*)?|\\.\\d+)\\s*$' },
  );
  describe(data.currency, 'An ISO 4217 code with a minor unit, in any case.', { pattern: '^\\s*[A-Za-z]{3}\\s*$' });
  describe(
    data.counterpartyName,
    'Display text: any string; control and format characters are cleaned, never rejected.',
  );
  describe(data.reason, 'Display text, required by TransferFailed.');
  for (const field of ['email', 'pushEndpointArn', 'phoneNumber', 'timeZone'] as const)
    nullable(recipient[field] as Node);
  for (const field of ['counterpartyName', 'reason'] as const) nullable(data[field] as Node);

  const preferences = z.toJSONSchema(preferencesSchema, { io: 'input', unrepresentable: 'any' }) as Node;
  const prefsProps = preferences.properties as Record<string, Node>;
  describe(prefsProps.occurredAt, 'RFC 3339, as for a transfer; the newest wins.', { pattern: DATE_TIME });
  describe(prefsProps.eventId, 'As for a transfer.', { pattern: '^[A-Za-z0-9._:-]{1,128}$' });
  (prefsProps.data?.properties as Record<string, Node>).optOut = {
    type: 'array',
    description: 'The whole opt-out set: channel names in any case; [] opts back in to every channel.',
    items: { type: 'string', pattern: CHANNEL_NAME },
  };
  const { $schema, ...transfer } = generated;
  const { $schema: _, ...preferencesUpdated } = preferences;
  return {
    $schema,
    title: 'notifier event',
    description:
      'One Kafka record value (UTF-8 JSON, no key twice in one object) on the events topic: a transfer or a PreferencesUpdated. Generated from functions/domain/event.ts by `npm run schema`: do not edit.',
    oneOf: [{ $ref: '#/$defs/transfer' }, { $ref: '#/$defs/preferencesUpdated' }],
    $defs: {
      transfer: {
        ...transfer,
        if: { properties: { type: { const: 'TransferFailed' } }, required: ['type'] },
        // biome-ignore lint/suspicious/noThenProperty: JSON Schema's if/then keyword, not a thenable
        then: { properties: { data: { type: 'object', required: ['reason'] } } },
      },
      preferencesUpdated,
    },
  };
}

export const schemaText = () => `${JSON.stringify(eventJsonSchema(), null, 2)}\n`;

const USAGE = `
Usage: npm run schema

Writes docs/event.schema.json, the event contract as JSON Schema, from the schema ingest validates with. A test fails
while the file is stale.
`;

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  runCommand('schema', async () => {
    parseCommandLine({ usage: USAGE, options: {} }, process.argv.slice(2));
    writeFileSync(SCHEMA_FILE, schemaText());
    process.stdout.write(`wrote ${SCHEMA_FILE}\n`);
    return 0;
  });
}

/**
 * `npm run schema`: writes docs/event.schema.json, the event contract as JSON Schema (draft 2020-12), generated from
 * the zod schema ingest validates with (functions/domain/event.ts) by zod 4's toJSONSchema. What zod's refinements
 * check and JSON Schema cannot say (the amount's digits per currency, the IANA zone, TransferFailed's reason) is added
 * here as plain JSON Schema where it can be (a pattern, uniqueItems, if/then) and as a description otherwise.
 * test/unit/event-schema.test.ts fails when the file is not what this script writes.
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import * as z from 'zod/mini';
import { eventSchema } from '../functions/domain/event.ts';
import { DECIMAL_AMOUNT } from '../functions/domain/money.ts';

export const SCHEMA_FILE = fileURLToPath(new URL('../docs/event.schema.json', import.meta.url));

type Node = Record<string, unknown> & { properties?: Record<string, Node> };

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
  describe(props.occurredAt, 'When the transfer happened: ISO 8601 with Z or an offset.');
  describe(props.channels, 'Restricts the fan-out; each listed channel needs its contact point.', {
    uniqueItems: true,
  });
  describe(recipient.userId, 'No control, format or ill-formed characters.');
  describe(recipient.email, 'Enables EMAIL.');
  describe(recipient.pushEndpointArn, 'An SNS platform endpoint ARN: enables PUSH.');
  describe(recipient.phoneNumber, 'E.164: enables SMS.');
  describe(recipient.timeZone, "An IANA time zone name (e.g. America/New_York); absent: the locale's default.");
  describe(
    data.amount,
    "A decimal string, never a number; at most as many fraction digits as the currency's ISO 4217 minor unit (USD 2, JPY 0).",
    {
      pattern: DECIMAL_AMOUNT.source,
    },
  );
  describe(data.currency, 'An ISO 4217 code with a minor unit.', { pattern: '^[A-Z]{3}$' });
  describe(
    data.counterpartyName,
    'Display text: any string; control and format characters are cleaned, never rejected.',
  );
  describe(data.reason, 'Display text, required by TransferFailed.');
  return {
    $schema: generated.$schema,
    title: 'notifier banking event',
    description:
      'One Kafka record value (UTF-8 JSON) on the events topic. Generated from functions/domain/event.ts by `npm run schema`: do not edit.',
    ...Object.fromEntries(Object.entries(generated).filter(([k]) => k !== '$schema')),
    if: { properties: { type: { const: 'TransferFailed' } }, required: ['type'] },
    // biome-ignore lint/suspicious/noThenProperty: JSON Schema's if/then keyword, not a thenable
    then: { properties: { data: { type: 'object', required: ['reason'] } } },
  };
}

export const schemaText = () => `${JSON.stringify(eventJsonSchema(), null, 2)}\n`;

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  writeFileSync(SCHEMA_FILE, schemaText());
  process.stdout.write(`wrote ${SCHEMA_FILE}\n`);
}

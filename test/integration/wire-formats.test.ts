/**
 * The same events send the same notices whatever the producer's format: one set of events (the examples, with their
 * real-world spellings, refused channels and a preferences update) runs as JSON, as Confluent wire-format Avro and as
 * Confluent wire-format Protobuf through the local pipeline — the real handlers on DynamoDB Local, ingest reading
 * writer schemas from the folder standing in for the registry (tools/local/schema-registry.ts) — and what SES and SNS
 * were asked to send is the same each time.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SESClient, SendEmailCommand } from '@aws-sdk/client-ses';
import { PublishCommand, SNSClient } from '@aws-sdk/client-sns';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { confluentRecord, encodeAvro, encodeProtobuf } from '../../functions/domain/event/wire-format.ts';
import { type LocalSchemaRegistry, startLocalSchemaRegistry } from '../../tools/local/schema-registry.ts';
import { SCHEMA_FILE } from '../../tools/scripts/schema.ts';
import { entryFor, WIRE_DIR, wireFilesOf } from '../../tools/scripts/wire-schemas.ts';
import { type LocalPipeline, localPipeline } from '../support/pipeline.ts';

const ses = mockClient(SESClient);
const sns = mockClient(SNSClient);
const wire = wireFilesOf([JSON.parse(readFileSync(SCHEMA_FILE, 'utf8'))]);
const FORMATS = ['json', 'avro', 'proto'] as const;
type Format = (typeof FORMATS)[number];

const root = join(import.meta.dirname, '..', '..');
const examples = ['events.jsonl', 'real-world.jsonl', 'catalogue.jsonl'].flatMap((f) =>
  readFileSync(join(root, 'examples', f), 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as { eventId: string; type: string; recipient: { userId: string } }),
);

/** The event of one format's run: its own eventIds and customers, so the runs share no inbox or preferences. */
const forFormat = (event: (typeof examples)[number], format: Format) => ({
  ...event,
  eventId: `${event.eventId}.${format}`,
  recipient: { ...event.recipient, userId: `${event.recipient.userId}.${format}` },
});

function recordOf(event: ReturnType<typeof forFormat>, format: Format): object | Buffer {
  if (format === 'json') return event;
  const schemaType = format === 'avro' ? 'AVRO' : 'PROTOBUF';
  const entry = entryFor(wire, event.type, schemaType);
  const schema = readFileSync(join(WIRE_DIR, entry.file), 'utf8');
  const payload = format === 'avro' ? encodeAvro(schema, event) : encodeProtobuf(schema, event);
  return confluentRecord(entry.id, schemaType, payload);
}

let registry: LocalSchemaRegistry;
let pipeline: LocalPipeline;
let n = 0;

beforeAll(async () => {
  registry = await startLocalSchemaRegistry(WIRE_DIR);
  pipeline = await localPipeline({ SCHEMA_REGISTRY_KIND: 'confluent', SCHEMA_REGISTRY_URL: registry.url });
  ses.on(SendEmailCommand).callsFake(async () => ({ MessageId: `ses-${n++}` }));
  sns.on(PublishCommand).callsFake(async () => ({ MessageId: `sns-${n++}` }));
});
afterAll(async () => {
  await registry.stop();
});

describe('JSON, Avro and Protobuf', () => {
  it('send the same notices, refuse the same channels and quarantine nothing more', async () => {
    const sent = new Map<Format, string[]>();
    for (const format of FORMATS) {
      ses.resetHistory();
      sns.resetHistory();
      // One record at a time, in order: a corrected resend after its original, as the example file has them.
      for (const event of examples) await pipeline.ingest([recordOf(forFormat(event, format), format) as object]);
      const calls = [...ses.commandCalls(SendEmailCommand), ...sns.commandCalls(PublishCommand)].map((call) =>
        // The run's own suffix removed (also from the notification id tag, eventId#channel in base64url): what is
        // left must be the same in every format.
        JSON.stringify(call.args[0].input)
          .replace(/"notificationId","Value":"([^"]+)"/g, (_, id: string) => {
            const plain = Buffer.from(id, 'base64url').toString('utf8').replace(`.${format}#`, '#');
            return `"notificationId","Value":"${plain}"`;
          })
          .replaceAll(`.${format}`, ''),
      );
      sent.set(format, calls.sort());
    }
    expect(sent.get('json')?.length).toBeGreaterThan(10);
    expect(sent.get('avro')).toEqual(sent.get('json'));
    expect(sent.get('proto')).toEqual(sent.get('json'));
    // The folder registry was asked once per schema the runs used (ingest caches them for the container): one Avro
    // and one Protobuf schema per type of the examples.
    expect(registry.requests()).toBe(new Set(examples.map((e) => e.type)).size * 2);
    // The same outcomes per (event, channel), refused ones included.
    const items = (await pipeline.table.allItems()) as Record<string, unknown>[];
    const outcomes = (format: Format) =>
      items
        .filter(
          (i) => (i.kind === 'NOTIFICATION' || i.kind === 'QUARANTINE') && String(i.eventId).endsWith(`.${format}`),
        )
        .map(
          (i) =>
            `${i.kind} ${String(i.eventId).replace(`.${format}`, '')} ${String(i.channel ?? i.reason)} ${String(i.status)}`,
        )
        .sort();
    expect(outcomes('json').length).toBeGreaterThan(10);
    expect(outcomes('avro')).toEqual(outcomes('json'));
    expect(outcomes('proto')).toEqual(outcomes('json'));
  });
});

/**
 * `npx tsx tools/bench/wire-decode.ts [N]`: what reading a schema-registry record costs ingest per record, against a
 * JSON producer's record — the sample events as JSON, Confluent Avro, Confluent Protobuf, and Confluent Protobuf as
 * @kafkajs/confluent-schema-registry writes it (no message indexes: read both ways), each read as ingest reads it
 * (wire-records.ts with a warm schema cache, then the one decoder). Prints microseconds per record and value bytes.
 */
import { readFileSync } from 'node:fs';
import { decodeRecordValue } from '../../functions/domain/event/decode.ts';
import { confluentRecord, encodeAvro, encodeProtobuf } from '../../functions/domain/event/wire-format.ts';
import type { IngestInput } from '../../functions/ingest/ingest-record.ts';
import { SchemaCache, type SchemaRegistry } from '../../functions/ingest/schema-registry.ts';
import { readWireRecords } from '../../functions/ingest/wire-records.ts';
import { SCHEMA_FILE } from '../scripts/schema.ts';
import { EXAMPLE_EVENTS, entryFor, wireFilesOf } from '../scripts/wire-schemas.ts';

const rounds = Number(process.argv[2] ?? 2000);
const wire = wireFilesOf([JSON.parse(readFileSync(SCHEMA_FILE, 'utf8'))]);
const events = readFileSync(EXAMPLE_EVENTS, 'utf8')
  .split('\n')
  .filter((l) => l.trim() !== '')
  .map((l) => JSON.parse(l) as { type: string });
const registry: SchemaRegistry = {
  kind: 'confluent',
  schema: async (ref) => {
    const entry = wire.registry.find((e) => e.id === ref.id);
    return entry === undefined
      ? undefined
      : { format: entry.schemaType, definition: wire.files.get(entry.file) as string };
  },
};
const schemas = new SchemaCache(registry);
const FORMATS = ['JSON', 'AVRO', 'PROTOBUF', 'PROTOBUF-NO-INDEXES'] as const;
const valuesOf = (format: (typeof FORMATS)[number]) =>
  events.map((event) => {
    if (format === 'JSON') return Buffer.from(JSON.stringify(event)).toString('base64');
    const schemaType = format === 'AVRO' ? 'AVRO' : 'PROTOBUF';
    const entry = entryFor(wire, event.type, schemaType);
    const schema = wire.files.get(entry.file) as string;
    const payload = format === 'AVRO' ? encodeAvro(schema, event) : encodeProtobuf(schema, event);
    // Framed as Avro is (magic byte, schema id, payload): the message with no indexes before it.
    return confluentRecord(entry.id, format === 'PROTOBUF' ? 'PROTOBUF' : 'AVRO', payload).toString('base64');
  });

for (const format of FORMATS) {
  const inputs: IngestInput[] = valuesOf(format).map((value, offset) => ({
    source: { topic: 't', partition: 0, offset },
    value,
  }));
  const read = async () => {
    for (const input of await readWireRecords(inputs, schemas, 65_536)) {
      const d = input.decoded;
      const decoded = d === undefined ? decodeRecordValue(input.value, 65_536) : decodeRecordValue(d.value, d.maxBytes);
      if (!decoded.ok) throw new Error(`${format}: ${decoded.rejection.detail}`);
    }
  };
  for (let i = 0; i < 200; i++) await read(); // warm: the schema cache and the JIT
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < rounds; i++) await read();
  const us = Number(process.hrtime.bigint() - t0) / 1000 / (rounds * inputs.length);
  const bytes = inputs.reduce((n, i) => n + Buffer.from(String(i.value), 'base64').length, 0) / inputs.length;
  process.stdout.write(
    `${format.padEnd(20)} ${us.toFixed(1).padStart(6)} µs/record  ${bytes.toFixed(0)} bytes/record\n`,
  );
}

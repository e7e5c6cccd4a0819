/**
 * `npx tsx tools/bench/wire-decode.ts [N]`: what reading a schema-registry record costs ingest per record, against a
 * JSON producer's record — the sample events as JSON, Confluent Avro, Confluent Protobuf, and Confluent Protobuf as
 * @kafkajs/confluent-schema-registry writes it (no message indexes: read both ways), each read as ingest reads it:
 * the wire header, the writer's schema compiled once (as the function's warm schema cache holds it), the payload
 * decoded to the contract's JSON, then the one decoder. Prints microseconds per record and value bytes.
 */
import { readFileSync } from 'node:fs';
import { decodeRecordValue } from '../../functions/domain/event/decode.ts';
import {
  type Codec,
  compileSchema,
  confluentRecord,
  encodeAvro,
  encodeProtobuf,
  readWireHeader,
  schemaKey,
} from '../../functions/domain/event/wire-format.ts';
import { SCHEMA_FILE } from '../scripts/schema.ts';
import { EXAMPLE_EVENTS, entryFor, wireFilesOf } from '../scripts/wire-schemas.ts';

const rounds = Number(process.argv[2] ?? 2000);
const wire = wireFilesOf([JSON.parse(readFileSync(SCHEMA_FILE, 'utf8'))]);
const events = readFileSync(EXAMPLE_EVENTS, 'utf8')
  .split('\n')
  .filter((l) => l.trim() !== '')
  .map((l) => JSON.parse(l) as { type: string });

/** The warm cache: each writer schema compiled once, by its registry key. */
const codecs = new Map<string, Codec>();
function codecOf(ref: { registry: 'confluent'; id: number } | { registry: 'glue'; id: string }): Codec {
  const key = schemaKey(ref);
  const cached = codecs.get(key);
  if (cached !== undefined) return cached;
  const entry = wire.registry.find((e) => e.id === ref.id);
  if (entry === undefined) throw new Error(`no schema ${key}`);
  const compiled = compileSchema(entry.schemaType, wire.files.get(entry.file) as string, ref.registry);
  if (!compiled.ok) throw new Error(compiled.detail);
  codecs.set(key, compiled.codec);
  return compiled.codec;
}

const FORMATS = ['JSON', 'AVRO', 'PROTOBUF', 'PROTOBUF-NO-INDEXES'] as const;
const valuesOf = (format: (typeof FORMATS)[number]) =>
  events.map((event) => {
    if (format === 'JSON') return Buffer.from(JSON.stringify(event));
    const schemaType = format === 'AVRO' ? 'AVRO' : 'PROTOBUF';
    const entry = entryFor(wire, event.type, schemaType);
    const schema = wire.files.get(entry.file) as string;
    const payload = format === 'AVRO' ? encodeAvro(schema, event) : encodeProtobuf(schema, event);
    // Framed as Avro is (magic byte, schema id, payload): the message with no indexes before it.
    return confluentRecord(entry.id, format === 'PROTOBUF' ? 'PROTOBUF' : 'AVRO', payload);
  });

/** One record, as ingest reads it: a JSON producer's bytes go straight to the decoder. */
function read(bytes: Buffer, format: string): void {
  const header = readWireHeader(bytes, 65_536);
  if (header.kind === 'malformed' || header.kind === 'tooLarge') throw new Error(`${format}: ${header.detail}`);
  let decoded: ReturnType<typeof decodeRecordValue>;
  if (header.kind === 'json') decoded = decodeRecordValue(bytes.toString('base64'), 65_536);
  else {
    const text = codecOf(header.schema).decode(header.payload);
    if (!text.ok) throw new Error(`${format}: ${text.detail}`);
    decoded = decodeRecordValue(Buffer.from(text.text, 'utf8').toString('base64'), 6 * 65_536);
  }
  if (!decoded.ok) throw new Error(`${format}: ${decoded.rejection.detail}`);
}

for (const format of FORMATS) {
  const values = valuesOf(format);
  const all = () => {
    for (const v of values) read(v, format);
  };
  for (let i = 0; i < 200; i++) all(); // warm: the schema cache and the JIT
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < rounds; i++) all();
  const us = Number(process.hrtime.bigint() - t0) / 1000 / (rounds * values.length);
  const bytes = values.reduce((n, v) => n + v.length, 0) / values.length;
  process.stdout.write(
    `${format.padEnd(20)} ${us.toFixed(1).padStart(6)} µs/record  ${bytes.toFixed(0)} bytes/record\n`,
  );
}

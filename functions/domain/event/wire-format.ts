/**
 * Record values as schema-registry producers write them (docs/event.md "Avro and Protobuf"): the wire header that
 * names the writer's schema, and the codecs that turn the payload into the JSON object of the event contract — which
 * the one decoder (decode.ts decodeRecordValue) then reads like any JSON producer's record.
 *
 * Pure: no AWS, no I/O. Finding a schema by its id is the registry adapter's (ingest/schema-registry.ts); this module
 * only reads headers, compiles a schema's text and decodes bytes with it. Every function here is total: bytes that do
 * not decode are an `{ ok: false }` with a detail that names the rule, never a throw.
 *
 * - Confluent wire format: byte 0 is 0x00, bytes 1-4 the schema id (big-endian int32), then the payload; a Protobuf
 *   payload starts with the message indexes (wire-protobuf.ts).
 * - AWS Glue Schema Registry: byte 0 is 0x03 (the header version), byte 1 the compression (0x00 none, 0x05 zlib),
 *   bytes 2-17 the schema version's UUID, then the payload; a Protobuf payload starts with its message's index.
 *
 * The codecs (wire-avro.ts, wire-protobuf.ts) hand the contract the JSON text of the value (wire-json.ts), so every
 * rule of the contract — UTF-8, a key twice, a field read exactly or refused — holds alike for every format.
 * - Anything else is a JSON producer's record: JSON text never starts with 0x00 or 0x03.
 */
import avro from 'avsc';
import { GLUE_COMPRESSION_NONE, GLUE_HEADER_VERSION } from './glue-frame.ts';
import { avroReader, readAvro } from './wire-avro.ts';
import { CONFLUENT_MAGIC, type SchemaRef, type WireFormat } from './wire-header.ts';
import { wireJsonText } from './wire-json.ts';
import { encodeProtobufMessage, type ProtoSchema, parseProtoSchema, readProtobuf } from './wire-protobuf.ts';

// The header, which ingest reads for every record without loading a codec: wire-header.ts.
export {
  readWireHeader,
  type SchemaRef,
  schemaKey,
  WIRE_FORMATS,
  type WireFormat,
  type WireHeader,
} from './wire-header.ts';

/** A schema compiled once per container: decodes a payload to the JSON text of the contract's object. */
export interface Codec {
  readonly format: WireFormat;
  /**
   * The payload as the JSON text a JSON producer would have sent (wire-json.ts), and the spellings read on the way
   * that had one reading but not the format's own (a Protobuf payload without Confluent's message indexes).
   */
  decode(payload: Buffer): { ok: true; text: string; normalised?: readonly string[] } | { ok: false; detail: string };
}

export type Compiled = { ok: true; codec: Codec } | { ok: false; detail: string };

/**
 * Compiles a registry's schema text for the records of that registry (Confluent and Glue frame Protobuf payloads
 * each their own way). A schema notifier cannot read is a problem of the records that name it.
 */
export function compileSchema(format: WireFormat, definition: string, registry: SchemaRef['registry']): Compiled {
  try {
    if (format === 'AVRO') return { ok: true, codec: avroCodec(avroReader(JSON.parse(definition))) };
    if (format === 'PROTOBUF') return { ok: true, codec: protobufCodec(parseProtoSchema(definition).schema, registry) };
    return { ok: true, codec: jsonCodec };
  } catch (error) {
    return { ok: false, detail: `its ${format} schema does not compile: ${(error as Error).message}` };
  }
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** A JSON Schema record behind a registry header: the payload is JSON text, read as any JSON record is. */
const jsonCodec: Codec = {
  format: 'JSON',
  decode(payload) {
    try {
      return { ok: true, text: utf8.decode(payload) };
    } catch {
      return { ok: false, detail: 'JSON payload is not valid UTF-8' };
    }
  },
};

function avroCodec(type: avro.Type): Codec {
  return {
    format: 'AVRO',
    decode(payload) {
      try {
        return { ok: true, text: wireJsonText(readAvro(type, payload)) };
      } catch (error) {
        return {
          ok: false,
          detail: `Avro payload does not decode with its writer's schema: ${(error as Error).message}`,
        };
      }
    },
  };
}

function protobufCodec(schema: ProtoSchema, registry: SchemaRef['registry']): Codec {
  return {
    format: 'PROTOBUF',
    decode(payload) {
      const read = readProtobuf(schema, registry, payload);
      if (!read.ok) return read;
      const text = wireJsonText(read.value);
      return read.normalised === undefined ? { ok: true, text } : { ok: true, text, normalised: read.normalised };
    },
  };
}

// ── The producer's side: encoding (tools, tests, the examples) ──

/** A contract JSON object as the generated schemas carry it: null means absent, as in the JSON contract. */
function withoutNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutNulls);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([, v]) => v !== null && v !== undefined)
      .map(([k, v]) => [k, withoutNulls(v)]),
  );
}

/** Encodes a contract JSON object with an Avro schema (the payload only). Throws when the object does not fit it. */
export function encodeAvro(schema: string, event: object): Buffer {
  const type = avro.Type.forSchema(JSON.parse(schema));
  // An absent optional field takes its default (null): avsc fills a field left undefined from its default.
  return type.toBuffer(withoutNulls(event));
}

/** Encodes a contract JSON object as the .proto's first message (the payload, without message indexes). */
export function encodeProtobuf(definition: string, event: object): Buffer {
  return encodeProtobufMessage(definition, withoutNulls(event) as Record<string, unknown>);
}

/** A Confluent wire-format record: magic byte, schema id, (for Protobuf) the message indexes [0], the payload. */
export function confluentRecord(schemaId: number, format: WireFormat, payload: Buffer): Buffer {
  const header = Buffer.alloc(5);
  header.writeUInt8(CONFLUENT_MAGIC, 0);
  header.writeInt32BE(schemaId, 1);
  return Buffer.concat(format === 'PROTOBUF' ? [header, Buffer.from([0]), payload] : [header, payload]);
}

/** A Glue wire-format record (uncompressed): header version, compression, the schema version's UUID, the payload. */
export function glueRecord(schemaVersionId: string, payload: Buffer): Buffer {
  const uuid = Buffer.from(schemaVersionId.replaceAll('-', ''), 'hex');
  if (uuid.length !== 16) throw new Error(`not a schema version UUID: ${schemaVersionId}`);
  return Buffer.concat([Buffer.from([GLUE_HEADER_VERSION, GLUE_COMPRESSION_NONE]), uuid, payload]);
}

/**
 * The wire header of a schema-registry record (docs/event.md "Avro and Protobuf"): which registry's schema a record
 * was written with, and its payload — read for every record without loading a codec. The codecs that decode a payload
 * (avsc, protobufjs: wire-format.ts) are loaded only when a record names a schema (ingest/schema-registry.ts). Pure,
 * total: never throws.
 */
import {
  GLUE_COMPRESSION_NONE,
  GLUE_COMPRESSION_ZLIB,
  GLUE_HEADER_BYTES,
  GLUE_HEADER_VERSION,
  inflateGluePayload,
} from './glue-frame.ts';

export const WIRE_FORMATS = ['AVRO', 'PROTOBUF', 'JSON'] as const;
/** The data format a registry records for a schema (Confluent's schemaType, Glue's DataFormat). */
export type WireFormat = (typeof WIRE_FORMATS)[number];

export const CONFLUENT_MAGIC = 0x00;

/** Which registry's schema a record was written with. */
export type SchemaRef =
  | { readonly registry: 'confluent'; readonly id: number }
  | { readonly registry: 'glue'; readonly id: string };

export type WireHeader =
  | { readonly kind: 'json' }
  | { readonly kind: 'wire'; readonly schema: SchemaRef; readonly payload: Buffer }
  | { readonly kind: 'malformed'; readonly detail: string }
  /** Larger than the event limit: the record, or what its compressed payload inflates to. */
  | { readonly kind: 'tooLarge'; readonly detail: string };

/** The registry's own spelling of a schema reference: Confluent's numeric id, Glue's schema version UUID. */
export const schemaKey = (ref: SchemaRef): string => `${ref.registry}:${ref.id}`;

/**
 * Reads the wire header, if the record has one. Never throws. A compressed payload is inflated to at most
 * `maxPayloadBytes` (the event limit): 64 KB of zlib inflates to 64 MB, and a few such records in one batch would
 * exhaust the function's memory — the batch failing again on every redelivery, its partition blocked.
 */
export function readWireHeader(bytes: Buffer, maxPayloadBytes: number): WireHeader {
  if (bytes.length === 0) return { kind: 'json' };
  if (bytes[0] === CONFLUENT_MAGIC) {
    if (bytes.length < 5) {
      return {
        kind: 'malformed',
        detail: `Confluent wire-format record of ${bytes.length} bytes: no room for a schema id`,
      };
    }
    const id = bytes.readInt32BE(1);
    if (id <= 0)
      return { kind: 'malformed', detail: `Confluent wire-format record names schema id ${id}: not a registry id` };
    return { kind: 'wire', schema: { registry: 'confluent', id }, payload: bytes.subarray(5) };
  }
  if (bytes[0] === GLUE_HEADER_VERSION) {
    if (bytes.length < GLUE_HEADER_BYTES) {
      return {
        kind: 'malformed',
        detail: `Glue wire-format record of ${bytes.length} bytes: shorter than its 18-byte header`,
      };
    }
    const compression = bytes[1];
    const hex = bytes.subarray(2, GLUE_HEADER_BYTES).toString('hex');
    const id = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
    const body = bytes.subarray(GLUE_HEADER_BYTES);
    if (compression === GLUE_COMPRESSION_NONE) return { kind: 'wire', schema: { registry: 'glue', id }, payload: body };
    if (compression === GLUE_COMPRESSION_ZLIB) {
      const inflated = inflateGluePayload(body, maxPayloadBytes);
      if (inflated.ok) return { kind: 'wire', schema: { registry: 'glue', id }, payload: inflated.payload };
      if (inflated.tooLarge) {
        return {
          kind: 'tooLarge',
          detail: `Glue wire-format record: its zlib-compressed payload inflates to more than ${maxPayloadBytes} bytes`,
        };
      }
      return { kind: 'malformed', detail: 'Glue wire-format record: its zlib-compressed payload does not inflate' };
    }
    return { kind: 'malformed', detail: `Glue wire-format record with unknown compression byte ${compression}` };
  }
  return { kind: 'json' };
}

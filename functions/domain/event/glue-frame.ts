/**
 * AWS Glue Schema Registry's frame around a record's payload: byte 0 the header version (0x03), byte 1 the
 * compression (0x00 none, 0x05 zlib), bytes 2–17 the schema version's UUID, then the payload. Its own module, without
 * the codecs, because quarantine items (notification.ts, in every function's bundle) mask a compressed payload too.
 */
import { deflateSync, inflateSync } from 'node:zlib';

export const GLUE_HEADER_VERSION = 0x03;
export const GLUE_COMPRESSION_NONE = 0x00;
export const GLUE_COMPRESSION_ZLIB = 0x05;
export const GLUE_HEADER_BYTES = 18;

/**
 * A zlib payload inflated to at most `max` bytes, never further: 64 KB of zlib inflates to 64 MB, and a few such
 * records in one batch would exhaust the function's memory.
 */
export function inflateGluePayload(
  body: Buffer,
  max: number,
): { ok: true; payload: Buffer } | { ok: false; tooLarge: boolean } {
  try {
    return { ok: true, payload: inflateSync(body, { maxOutputLength: max }) };
  } catch (error) {
    return { ok: false, tooLarge: (error as { code?: unknown }).code === 'ERR_BUFFER_TOO_LARGE' };
  }
}

/** A zlib-compressed Glue record's header and inflated payload (at most `max` bytes); undefined for any other record. */
export function compressedGlueRecord(bytes: Buffer, max: number): { header: Buffer; payload: Buffer } | undefined {
  if (bytes.length < GLUE_HEADER_BYTES || bytes[0] !== GLUE_HEADER_VERSION || bytes[1] !== GLUE_COMPRESSION_ZLIB)
    return undefined;
  const inflated = inflateGluePayload(bytes.subarray(GLUE_HEADER_BYTES), max);
  return inflated.ok ? { header: bytes.subarray(0, GLUE_HEADER_BYTES), payload: inflated.payload } : undefined;
}

/** The same record with another payload, compressed again. */
export const recompressedGlueRecord = (header: Buffer, payload: Uint8Array): Buffer =>
  Buffer.concat([header, deflateSync(payload)]);

/**
 * Records written through a schema registry (Avro, Protobuf, or JSON behind a registry header), read in the function:
 * each batch's writer schemas are resolved (cached per container, ingest/schema-registry.ts), and each record's
 * payload becomes the JSON text of the contract, which admission then reads through the one decoder like a JSON
 * producer's record (docs/design-choices.md "Avro and Protobuf decoded in the function").
 *
 * A record that cannot be read — a header cut short, a schema id the registry does not have, a payload its writer's
 * schema does not decode — is bad input with a reason (UNKNOWN_SCHEMA, INVALID_ENCODING, TOO_LARGE): quarantined
 * with its original bytes, so it can be replayed once its schema exists. A JSON producer's record passes untouched.
 * The registry being unreachable is no record's fault: `resolve` throws and the batch is redelivered.
 */

import type { Rejection } from '../domain/event/contract.ts';
import { readWireHeader, type SchemaRef, schemaKey } from '../domain/event/wire-header.ts';
import type { IngestInput } from './ingest-record.ts';
import type { SchemaCache } from './schema-registry.ts';

/**
 * A decoded record's JSON text may be longer than its wire bytes (a control character in a string is one byte in
 * Avro and six in JSON): the wire bytes are held to the event limit, their JSON to this multiple of it.
 */
export const JSON_EXPANSION = 6;

/** The first base64 character of a value whose first byte is 0x00 (Confluent) or 0x03 (Glue): both encode to 'A'. */
const MAYBE_WIRE = 'A';

const tooLarge = (bytes: number, limit: number) => ({
  kind: 'tooLarge' as const,
  detail: `value is ${bytes} bytes, limit ${limit}`,
});

/** Writer schemas by reference (SchemaCache): what reading a batch of wire records asks of the cache. */
export type Schemas = Pick<SchemaCache, 'resolve'>;

/**
 * Schemas from a cache made on the first batch that holds a wire record: the cache and its registry adapters
 * (schema-registry.ts) are a chunk of their own, and a JSON producer's container never loads them. A load that
 * fails fails that batch (redelivered) and is tried again with the next.
 */
export function schemasOnFirstUse(make: () => Promise<Schemas>): Schemas {
  let made: Promise<Schemas> | undefined;
  return {
    resolve: async (refs) => {
      made ??= make().catch((error: unknown) => {
        made = undefined;
        throw error;
      });
      return (await made).resolve(refs);
    },
  };
}

export async function readWireRecords(
  inputs: IngestInput[],
  schemas: Schemas,
  maxEventBytes: number,
): Promise<IngestInput[]> {
  const headers = inputs.map((input) => {
    // JSON text starts with '{' or whitespace, never 0x00 or 0x03: only a value that may be a wire record is decoded.
    if (typeof input.value !== 'string' || !input.value.startsWith(MAYBE_WIRE)) return undefined;
    // 3 bytes per 4 base64 characters: an oversized value is refused before it is allocated.
    if (Math.floor((input.value.length * 3) / 4) > maxEventBytes + 2) {
      return tooLarge(Math.floor((input.value.length * 3) / 4), maxEventBytes);
    }
    const bytes = Buffer.from(input.value, 'base64');
    if (bytes.length > maxEventBytes) return tooLarge(bytes.length, maxEventBytes);
    return readWireHeader(bytes, maxEventBytes);
  });
  if (headers.every((h) => h === undefined || h.kind === 'json')) return inputs;
  const refs: SchemaRef[] = headers.flatMap((h) => (h?.kind === 'wire' ? [h.schema] : []));
  // A batch whose wire records are all refused already (malformed, too large) has nothing to resolve: the registry's
  // code, loaded on first use, is not needed to quarantine them — a load that failed would redeliver the batch.
  const resolved = refs.length === 0 ? new Map() : await schemas.resolve(refs);
  return inputs.map((input, i) => {
    const header = headers[i];
    if (header === undefined || header.kind === 'json') return input;
    const refuse = (reason: Rejection['reason'], detail: string): IngestInput => ({
      ...input,
      wireRejection: { reason, detail },
    });
    if (header.kind === 'tooLarge') return refuse('TOO_LARGE', header.detail);
    if (header.kind === 'malformed') return refuse('INVALID_ENCODING', header.detail);
    const schema = resolved.get(schemaKey(header.schema));
    if (schema === undefined || !schema.ok) return refuse('UNKNOWN_SCHEMA', schema?.detail ?? 'schema not resolved');
    // Total per record: a bug or a value JSON cannot hold (never expected) quarantines this record, never the batch.
    try {
      const decoded = schema.codec.decode(header.payload);
      if (!decoded.ok) {
        return refuse('INVALID_ENCODING', `${decoded.detail} (${header.schema.registry} schema ${header.schema.id})`);
      }
      // The JSON text of the payload (a JSON Schema record's own, an Avro or Protobuf value's exact transcription).
      const value = Buffer.from(decoded.text, 'utf8').toString('base64');
      const normalised = decoded.normalised === undefined ? {} : { normalised: decoded.normalised };
      return { ...input, decoded: { value, maxBytes: maxEventBytes * JSON_EXPANSION, ...normalised } };
    } catch (error) {
      return refuse('UNPROCESSABLE', `while reading its ${schema.codec.format} payload: ${(error as Error).message}`);
    }
  });
}

/**
 * What an MSK record says of its producer — its key and its headers — as a quarantine item keeps it, so an incident
 * can be taken to the producer that caused it (docs/operations.md "Incidents"). The key arrives base64, each header
 * as its bytes; both are read as UTF-8 text (bounded and masked by domain/notification.ts boundedProducer).
 */
import type { MSKRecord } from 'aws-lambda';
import type { ProducerTrace } from '../domain/notification.ts';
import { REPLICATED_HEADER } from '../domain/replicated-records.ts';

const utf8 = (bytes: Uint8Array) => new TextDecoder('utf-8', { fatal: false }).decode(bytes);

export function producerOf(record: Partial<Pick<MSKRecord, 'key' | 'headers'>>): ProducerTrace | undefined {
  const key = typeof record.key === 'string' && record.key !== '' ? utf8(Buffer.from(record.key, 'base64')) : undefined;
  const headers: Record<string, string> = {};
  for (const header of Array.isArray(record.headers) ? record.headers : []) {
    if (typeof header !== 'object' || header === null) continue;
    for (const [name, bytes] of Object.entries(header)) {
      if (Array.isArray(bytes) && bytes.every((b) => Number.isInteger(b) && b >= 0 && b <= 255)) {
        headers[name] = utf8(Uint8Array.from(bytes));
      }
    }
  }
  const named = Object.keys(headers).length > 0;
  if (key === undefined && !named) return undefined;
  return { ...(key === undefined ? {} : { key }), ...(named ? { headers } : {}) };
}

/**
 * The value of MSK Replicator's `__mskmr` header (its source cluster and topic, as text) when the record is a copy from
 * another cluster; undefined for a record produced in this cluster. Lambda's MSK event gives `headers` as an array of
 * objects, each mapping one header name to its value's bytes; a header whose bytes are no byte array is still there.
 */
export function replicatedFromOf(record: Partial<Pick<MSKRecord, 'headers'>>): string | undefined {
  for (const header of Array.isArray(record.headers) ? record.headers : []) {
    if (typeof header !== 'object' || header === null || !Object.hasOwn(header, REPLICATED_HEADER)) continue;
    const bytes: unknown = header[REPLICATED_HEADER];
    return Array.isArray(bytes) && bytes.every((b) => Number.isInteger(b) && b >= 0 && b <= 255)
      ? utf8(Uint8Array.from(bytes))
      : '?';
  }
  return undefined;
}

/**
 * What an MSK record says of its producer — its key and its headers — as a quarantine item keeps it, so an incident
 * can be taken to the producer that caused it (docs/operations.md "Incidents"). The key arrives base64, each header
 * as its bytes; both are read as UTF-8 text (bounded and masked by domain/notification.ts boundedProducer).
 */
import type { MSKRecord } from 'aws-lambda';
import type { ProducerTrace } from '../domain/notification.ts';

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

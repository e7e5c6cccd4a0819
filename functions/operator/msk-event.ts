/**
 * MSK events in the exact shape the Lambda event source mapping delivers: records grouped under "<topic>-<partition>"
 * keys, base64 key and value, headers as arrays of byte values. A replay feeds the ingest function such an event, so
 * it reads a replayed record the way it read the original.
 */
import type { MSKEvent, MSKRecord } from 'aws-lambda';
import type { KafkaSource } from '../domain/keys.ts';

export interface KafkaRecordSpec {
  readonly topic: string;
  readonly partition: number;
  readonly offset: number;
  /** The record value's bytes: a string is taken as UTF-8, an object is JSON-encoded, null is a tombstone. */
  readonly value: string | Buffer | object | null;
  readonly key?: string;
  readonly timestamp?: number;
  readonly headers?: Record<string, string>;
}

/** The cluster a replayed (or locally produced) record names: the mapping's, as ingest never reads it. */
export const CLUSTER_ARN =
  'arn:aws:kafka:us-east-1:123456789012:cluster/bank-events/11111111-2222-3333-4444-555555555555-1';

export function valueBytes(value: KafkaRecordSpec['value']): Buffer | null {
  if (value === null) return null;
  if (Buffer.isBuffer(value)) return value;
  return Buffer.from(typeof value === 'string' ? value : JSON.stringify(value), 'utf8');
}

export function mskRecord(spec: KafkaRecordSpec): MSKRecord {
  const bytes = valueBytes(spec.value);
  return {
    topic: spec.topic,
    partition: spec.partition,
    offset: spec.offset,
    timestamp: spec.timestamp ?? Date.now(),
    timestampType: 'CREATE_TIME',
    key: Buffer.from(spec.key ?? '', 'utf8').toString('base64'),
    // MSK omits nothing: a tombstone arrives with a null value.
    value: bytes === null ? (null as unknown as string) : bytes.toString('base64'),
    headers: Object.entries(spec.headers ?? {}).map(([k, v]) => ({ [k]: [...Buffer.from(v, 'utf8')] })),
  };
}

export function mskEvent(
  specs: readonly KafkaRecordSpec[],
  bootstrapServers = 'b-1.bank-events.kafka.us-east-1.amazonaws.com:9098',
): MSKEvent {
  const records: Record<string, MSKRecord[]> = {};
  for (const spec of specs) {
    const key = `${spec.topic}-${spec.partition}`;
    records[key] ??= [];
    records[key].push(mskRecord(spec));
  }
  return { eventSource: 'aws:kafka', eventSourceArn: CLUSTER_ARN, bootstrapServers, records } as MSKEvent;
}

/** An operator's replay: each value at its own topic, partition and offset. */
export const replayEvent = (records: readonly { readonly source: KafkaSource; readonly value: Buffer }[]) =>
  mskEvent(
    records.map(({ source, value }) => ({ ...source, value })),
    'notifier-ops-replay.invalid:9098',
  );

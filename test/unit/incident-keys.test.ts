import { describe, expect, it } from 'vitest';
import { INCIDENT_SHARDS, incidentKeyOf, incidentKeysBetween } from '../../functions/domain/keys.ts';
import { boundedProducer, PRODUCER_HEADERS, PRODUCER_TEXT_LIMIT } from '../../functions/domain/notification.ts';
import { producerOf } from '../../functions/ingest/producer-trace.ts';

describe('the incident index keys', () => {
  it('an item is keyed by its kind, the day it happened and one of the day’s shards; a look-up reads exactly those days', () => {
    const key = incidentKeyOf('QUARANTINED', '2026-12-05T23:59:59.999Z', 'QUARANTINE#t#0#7');
    expect(key).toMatch(/^QUARANTINED#2026-12-05#[0-3]$/);
    const keys = incidentKeysBetween('QUARANTINED', '2026-12-04T22:00:00Z', '2026-12-05T01:00:00Z');
    expect(keys).toHaveLength(2 * INCIDENT_SHARDS);
    expect(keys).toContain(key);
    expect(keys[0]).toBe('QUARANTINED#2026-12-04#0');
    expect(incidentKeysBetween('REFUSED', '2026-12-05T00:00:00Z', '2026-12-04T00:00:00Z')).toEqual([]);
  });

  it('spreads one day’s items over every shard, and refuses a window longer than anything the table keeps', () => {
    const shards = new Set(
      Array.from({ length: 200 }, (_, i) => incidentKeyOf('REFUSED', '2026-12-05T10:00:00Z', `EVENT#e-${i}`)),
    );
    expect(shards.size).toBe(INCIDENT_SHARDS);
    expect(() => incidentKeysBetween('REFUSED', '2020-01-01T00:00:00Z', '2026-12-05T00:00:00Z')).toThrow(RangeError);
  });
});

describe('the producer a quarantined record names', () => {
  it('reads the record key (base64) and each header (bytes) as text; a record without either names none', () => {
    const record = {
      key: Buffer.from('customer-42').toString('base64'),
      headers: [{ producer: [...Buffer.from('payments-svc')] }, { 'trace-id': [...Buffer.from('abc')] }] as Record<
        string,
        number[]
      >[],
    };
    expect(producerOf(record)).toEqual({
      key: 'customer-42',
      headers: { producer: 'payments-svc', 'trace-id': 'abc' },
    });
    expect(producerOf({ key: '', headers: [] })).toBeUndefined();
    expect(producerOf({})).toBeUndefined();
  });

  it('keeps it bounded and masks a card number, like the rest of a quarantine item', () => {
    const headers = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`h${i}`, 'x'.repeat(1000)]));
    const kept = boundedProducer({ key: 'card 4111 1111 1111 1111', headers });
    expect(kept?.key).not.toContain('4111 1111 1111 1111');
    expect(Object.keys(kept?.headers ?? {})).toHaveLength(PRODUCER_HEADERS);
    expect(Object.values(kept?.headers ?? {}).every((v) => v.length === PRODUCER_TEXT_LIMIT)).toBe(true);
  });
});

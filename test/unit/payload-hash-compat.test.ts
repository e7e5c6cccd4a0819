/**
 * Nothing already accepted moves. test/fixtures/main-v2-hashes.json holds 265 events the contract accepted before
 * other spellings were read (the examples, and seeded spellings it took: offsets, fraction digits, amounts with
 * trailing zeros, time zones in any case, null optionals, channel orders, upper-case email domains, unknown country
 * codes), each with the payloadHash ingest stored for it then. Each is still accepted and hashes the same: a producer's
 * resend of it is still a duplicate, never a conflict.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { admitRecord } from '../../functions/domain/admission.ts';
import { b64 } from '../support/events.ts';

const fixture = JSON.parse(readFileSync(new URL('../fixtures/main-v2-hashes.json', import.meta.url), 'utf8')) as {
  events: { value: string; payloadHash: string }[];
};

describe('payloadHash of what was accepted before', () => {
  it('every one of the 265 events is still accepted, with its channels, and hashes as it did', () => {
    expect(fixture.events).toHaveLength(265);
    for (const { value, payloadHash } of fixture.events) {
      const a = admitRecord(
        b64(value),
        { maxEventBytes: 65_536, maxEventAgeSeconds: 0 },
        Date.parse('2026-12-01T00:00:00Z'),
      );
      expect(a.ok ? a.payloadHash : a.rejection, value).toBe(payloadHash);
      // Nothing it had is refused now.
      if (a.ok && 'event' in a) expect(a.refused, value).toEqual([]);
    }
  });
});

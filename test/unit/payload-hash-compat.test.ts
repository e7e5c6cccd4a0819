/**
 * Nothing already accepted moves. test/fixtures/main-v2-hashes.json holds 265 events the contract accepted before
 * other spellings were read (the examples, and seeded spellings it took: offsets, fraction digits, amounts with
 * trailing zeros, time zones in any case, null optionals, channel orders, upper-case email domains, unknown country
 * codes), each with the payloadHash ingest stored for it then; test/fixtures/main-v2-catalogue-hashes.json holds events
 * of every shipped type (each optional field present, absent and null, spellings with one reading, channel sets, a
 * refused contact point) with the hash main stored for them before a field added to a definition stopped moving it.
 * Each is still accepted and hashes the same: a producer's resend of it is still a duplicate, never a conflict.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { admitRecord } from '../../functions/domain/admission.ts';
import { POSITIONAL_FIELDS } from '../../functions/domain/event/hash.ts';
import { b64 } from '../support/events.ts';

const fixture = (name: string) =>
  JSON.parse(readFileSync(new URL(`../fixtures/${name}`, import.meta.url), 'utf8')) as {
    events: { value: string; payloadHash: string }[];
  };

const admit = (value: string) =>
  admitRecord(b64(value), { maxEventBytes: 65_536, maxEventAgeSeconds: 0 }, Date.parse('2026-12-01T00:00:00Z'));

describe('payloadHash of what was accepted before', () => {
  it('every one of the 265 events is still accepted, with its channels, and hashes as it did', () => {
    const { events } = fixture('main-v2-hashes.json');
    expect(events).toHaveLength(265);
    for (const { value, payloadHash } of events) {
      const a = admit(value);
      expect(a.ok ? a.payloadHash : a.rejection, value).toBe(payloadHash);
      // Nothing it had is refused now.
      if (a.ok && 'event' in a) expect(a.refused, value).toEqual([]);
    }
  });

  it('every shipped type is pinned, each event still accepted and hashed as main stored it', () => {
    const { events } = fixture('main-v2-catalogue-hashes.json');
    const types = new Set(events.map((e) => (JSON.parse(e.value) as { type: string }).type));
    // The types whose hash covers fields by position: the catalogue as shipped when that order was frozen.
    expect([...types].sort()).toEqual(Object.keys(POSITIONAL_FIELDS).sort());
    for (const { value, payloadHash } of events) {
      const a = admit(value);
      expect(a.ok ? a.payloadHash : a.rejection, value).toBe(payloadHash);
    }
  });
});

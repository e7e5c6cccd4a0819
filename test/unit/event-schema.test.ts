/**
 * The published contract: docs/event.schema.json is what `npm run schema` generates from the zod schemas ingest
 * validates with, and the example files mean what the docs say — every event in examples/events.jsonl and
 * examples/real-world.jsonl is valid (by the schema and by ingest's own admission), every record of
 * examples/bad-input.jsonl is quarantined for its class.
 */
import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { type Admission, admitRecord } from '../../functions/domain/admission.ts';
import { EVENT_TYPES } from '../../functions/domain/catalogue.ts';
import { eventSchemaFor } from '../../functions/domain/event/schema.ts';
import { SCHEMA_FILE, schemaText } from '../../tools/scripts/schema.ts';

const lines = (file: string) =>
  readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8')
    .split('\n')
    .slice(0, -1);
const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');
/** Ingest's own answer: admission, on a clock after the examples' dates, the age rule off as for a file. */
const admit = (line: string): Admission =>
  admitRecord(
    line === '' ? '' : b64(line),
    { maxEventBytes: 65_536, maxEventAgeSeconds: 0 },
    Date.parse('2026-12-01T00:00:00Z'),
  );
// Formats are checked by the patterns zod wrote beside them; ajv needs no format plugin for that.
const validate = new Ajv2020({ strict: true, strictRequired: false, validateFormats: false, allErrors: true }).compile(
  JSON.parse(readFileSync(SCHEMA_FILE, 'utf8')),
);

describe('docs/event.schema.json', () => {
  it('is what npm run schema generates from the zod schema (run it after changing functions/domain/event/schema.ts)', () => {
    expect(readFileSync(SCHEMA_FILE, 'utf8')).toBe(schemaText());
  });

  it('accepts every event of examples/events.jsonl, which ingest accepts and routes too', () => {
    const events = lines('examples/events.jsonl');
    expect(events.length).toBeGreaterThanOrEqual(6);
    for (const line of events) {
      expect(validate(JSON.parse(line)), JSON.stringify(validate.errors)).toBe(true);
      expect(admit(line), line).toMatchObject({ ok: true, refused: [], normalised: [], fallbacks: [] });
    }
  });

  it('accepts every event of examples/real-world.jsonl, written as producers write them: each read as the file says', () => {
    const rows = lines('examples/real-world.jsonl').map((line) => {
      expect(validate(JSON.parse(line)), `${line} ${JSON.stringify(validate.errors)}`).toBe(true);
      const a = admit(line);
      if (!a.ok) throw new Error(`${line}: ${a.rejection.reason} ${a.rejection.detail}`);
      if ('preferences' in a)
        return [a.preferences.eventId, a.preferences.optOut.join(','), '', a.normalised.length > 0];
      return [
        a.event.eventId,
        a.channels.join(','),
        a.refused.map((r) => `${r.channel} ${r.reason}`).join(','),
        a.normalised.length > 0 || a.fallbacks.length > 0,
      ];
    });
    expect(rows).toEqual([
      ['rw-java-jackson', 'EMAIL,SMS', '', true],
      ['rw-java-time', 'EMAIL', '', true],
      ['rw-dotnet', 'EMAIL,PUSH,SMS', '', true],
      ['rw-python', 'EMAIL,PUSH', '', true],
      ['rw-mainframe', 'EMAIL,SMS', '', true],
      ['rw-french', 'EMAIL', '', true],
      ['rw-unknown-zone', 'EMAIL', '', true],
      ['rw-record-only', '', '', false],
      ['rw-leap-second', 'EMAIL', '', false],
      ['rw-unsendable-email', 'PUSH,SMS', 'EMAIL UNSENDABLE_ADDRESS', false],
      ['rw-no-country-code', 'EMAIL,PUSH', 'SMS INVALID_CONTACT', false],
      // The producer's corrected resend: the same event apart from the refused phone (it repairs SMS in ingest).
      ['rw-no-country-code', 'EMAIL,PUSH,SMS', '', true],
      ['rw-missing-phone', 'EMAIL', 'SMS MISSING_CONTACT', false],
      ['rw-prefs', 'PUSH,SMS', '', true],
    ]);
  });

  it('covers each type, each locale and each channel in examples/events.jsonl', () => {
    const events = lines('examples/events.jsonl').map((l) => JSON.parse(l));
    expect(new Set(events.map((e) => e.type))).toEqual(new Set(['TransferCompleted', 'TransferFailed']));
    expect(new Set(events.map((e) => e.recipient.locale))).toEqual(new Set(['en', 'ja']));
    const channels = new Set(events.flatMap((e) => e.channels ?? ['EMAIL', 'PUSH', 'SMS']));
    expect(channels).toEqual(new Set(['EMAIL', 'PUSH', 'SMS']));
  });

  it('rejects what the decoder rejects for its shape: a float amount, a missing reason, an unknown channel', () => {
    const [good] = lines('examples/events.jsonl');
    const event = JSON.parse(good!);
    expect(validate({ ...event, data: { ...event.data, amount: 12.5 } })).toBe(false);
    expect(validate({ ...event, data: { ...event.data, amount: '1e3' } })).toBe(false);
    expect(validate({ ...event, type: 'TransferFailed' })).toBe(false);
    expect(validate({ ...event, channels: ['EMAIL', 'FAX'] })).toBe(false);
    expect(validate({ ...event, eventId: 'has space' })).toBe(false);
    expect(validate({ ...event, occurredAt: '2026-11-30T09:15:00' })).toBe(false);
    expect(validate({ ...event, type: 'PreferencesUpdated' })).toBe(false);
  });

  it('accepts the spellings the decoder reads: channels in any case and repeated, a lower-case currency, a signed amount', () => {
    const [good] = lines('examples/events.jsonl');
    const event = JSON.parse(good!);
    expect(validate({ ...event, channels: ['email', 'EMAIL', 'Push'] })).toBe(true);
    expect(validate({ ...event, channels: [] })).toBe(true);
    expect(validate({ ...event, data: { ...event.data, amount: ' +0012.50', currency: 'usd' } })).toBe(true);
    expect(validate({ ...event, occurredAt: '2026-11-30 09:15:00+0000' })).toBe(true);
    expect(validate({ ...event, recipient: { ...event.recipient, locale: 'en_US' } })).toBe(true);
    const prefs = {
      eventId: 'p-1',
      type: 'PreferencesUpdated',
      occurredAt: '2026-11-30T09:15:00Z',
      recipient: { userId: 'u-1' },
      data: { optOut: ['sms'] },
    };
    expect(validate(prefs), JSON.stringify(validate.errors)).toBe(true);
  });
});

describe('examples/bad-input.jsonl', () => {
  it('holds one record of each bad-input class, each quarantined with its reason and a detail', () => {
    const reasons = lines('examples/bad-input.jsonl').map((line) => {
      const a = admit(line);
      return a.ok ? 'ACCEPTED' : a.rejection.reason;
    });
    // The last line reuses an eventId of examples/events.jsonl with another amount: a conflict once both run.
    expect(reasons).toEqual([
      'INVALID_JSON',
      'SCHEMA_VIOLATION',
      'INVALID_EVENT_ID',
      'UNKNOWN_TYPE',
      'UNKNOWN_CHANNEL',
      'INVALID_CONTACT',
      'INVALID_AMOUNT',
      'INVALID_AMOUNT',
      'MISSING_CONTACT',
      'SCHEMA_VIOLATION',
      'NO_VALUE',
      'INVALID_JSON',
      'SCHEMA_VIOLATION',
      'ACCEPTED',
    ]);
  });
});

describe("a type's schema", () => {
  it('is built for each catalogue type with its first event and kept; no other name has one', () => {
    for (const type of EVENT_TYPES) {
      const schema = eventSchemaFor(type);
      expect(schema).toBeDefined();
      expect(eventSchemaFor(type)).toBe(schema);
    }
    for (const other of ['NotAType', '__proto__', 'constructor', '']) expect(eventSchemaFor(other)).toBeUndefined();
  });
});

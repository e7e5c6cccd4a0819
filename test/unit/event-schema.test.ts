/**
 * The published contract: docs/event.schema.json is what `npm run schema` generates from the zod schema ingest
 * validates with, and the example files mean what the README says — every event in examples/events.jsonl is valid
 * (by the schema and by ingest's own decoder), every record of examples/bad-input.jsonl is quarantined for its class.
 */
import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { decodeRecordValue } from '../../functions/domain/event.ts';
import { route } from '../../functions/domain/routing.ts';
import { SCHEMA_FILE, schemaText } from '../../scripts/schema.ts';

const lines = (file: string) =>
  readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8')
    .split('\n')
    .slice(0, -1);
const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');
// Formats are checked by the patterns zod wrote beside them; ajv needs no format plugin for that.
const validate = new Ajv2020({ strict: true, strictRequired: false, validateFormats: false, allErrors: true }).compile(
  JSON.parse(readFileSync(SCHEMA_FILE, 'utf8')),
);

describe('docs/event.schema.json', () => {
  it('is what npm run schema generates from the zod schema (run it after changing functions/domain/event.ts)', () => {
    expect(readFileSync(SCHEMA_FILE, 'utf8')).toBe(schemaText());
  });

  it('accepts every event of examples/events.jsonl, which ingest accepts and routes too', () => {
    const events = lines('examples/events.jsonl');
    expect(events.length).toBeGreaterThanOrEqual(6);
    for (const line of events) {
      expect(validate(JSON.parse(line)), JSON.stringify(validate.errors)).toBe(true);
      const decoded = decodeRecordValue(b64(line), 65_536);
      expect(decoded.ok, line).toBe(true);
      if (decoded.ok) expect(route(decoded.event).ok, line).toBe(true);
    }
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
    expect(validate({ ...event, type: 'TransferFailed' })).toBe(false);
    expect(validate({ ...event, channels: ['EMAIL', 'FAX'] })).toBe(false);
    expect(validate({ ...event, channels: ['EMAIL', 'EMAIL'] })).toBe(false);
    expect(validate({ ...event, eventId: 'has space' })).toBe(false);
  });
});

describe('examples/bad-input.jsonl', () => {
  it('holds one record of each bad-input class, each quarantined with its reason and a detail', () => {
    const reasons = lines('examples/bad-input.jsonl').map((line) => {
      const decoded = decodeRecordValue(line === '' ? '' : b64(line), 65_536);
      if (!decoded.ok) return decoded.rejection.reason;
      const routed = route(decoded.event);
      return routed.ok ? 'ACCEPTED' : routed.rejection.reason;
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
      'ACCEPTED',
    ]);
  });
});

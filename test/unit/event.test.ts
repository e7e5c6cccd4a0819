import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { RejectionReason } from '../../functions/domain/event/contract.ts';
import { decodeRecordValue } from '../../functions/domain/event/decode.ts';
import { utcInstant } from '../../functions/domain/event/spellings.ts';
import { route } from '../../functions/domain/routing.ts';
import { b64, decodeTransfer, type EventOverrides, transferEvent } from '../support/events.ts';

const MAX = 65_536;
const decode = (value: object | string | Buffer) => decodeRecordValue(b64(value), MAX);
/** What the one decoder answers for a JSON text: a rejection's reason, or the decoded transfer. */
const parseEventJson = (text: string) => decodeRecordValue(b64(text), 1_048_576);
const reasonOf = (value: object | string | Buffer) => {
  const d = decode(value);
  return d.ok ? 'OK' : d.rejection.reason;
};

describe('event contract', () => {
  it('decodes the docs/event.md example into a typed event', () => {
    const d = decodeTransfer(transferEvent());
    expect(d.event.eventId).toBe('trf-2026-000123');
    expect(d.event.recipient.locale).toBe('ja');
    expect(d.payloadHash).toMatch(/^v2:[0-9a-f]{64}$/);
    expect(d.sanitised).toEqual([]);
  });

  it('defaults the locale to en', () => {
    const d = decodeTransfer(transferEvent({ recipient: { locale: undefined } }));
    expect(d.event.recipient.locale).toBe('en');
    expect(d.fallbacks).toEqual([]);
  });

  const cases: [string, object | string | Buffer | null, RejectionReason][] = [
    ['tombstone', null, 'NO_VALUE'],
    ['invalid UTF-8', Buffer.from([0x7b, 0xff, 0xfe, 0x7d]), 'INVALID_ENCODING'],
    ['invalid JSON', '{"eventId": ', 'INVALID_JSON'],
    ['a JSON array', '[1,2]', 'SCHEMA_VIOLATION'],
    ['a missing eventId', transferEvent({ eventId: undefined }), 'INVALID_EVENT_ID'],
    ['an eventId with a space', transferEvent({ eventId: 'a b' }), 'INVALID_EVENT_ID'],
    ['an eventId of 129 chars', transferEvent({ eventId: 'x'.repeat(129) }), 'INVALID_EVENT_ID'],
    ['an unknown type', transferEvent({ type: 'AccountOpened' }), 'UNKNOWN_TYPE'],
    ['a missing type', transferEvent({ type: undefined }), 'SCHEMA_VIOLATION'],
    ['an unknown channel', transferEvent({ channels: ['FAX'] }), 'UNKNOWN_CHANNEL'],
    ['money as a float', transferEvent({ data: { amount: 10000.5 } }), 'INVALID_AMOUNT'],
    ['money in exponent form', transferEvent({ data: { amount: '1e5' } }), 'INVALID_AMOUNT'],
    ['a negative amount', transferEvent({ data: { amount: '-5' } }), 'INVALID_AMOUNT'],
    ['an unknown currency', transferEvent({ data: { currency: 'XXY' } }), 'INVALID_AMOUNT'],
    ['a missing recipient', { ...transferEvent(), recipient: undefined }, 'SCHEMA_VIOLATION'],
    ['an amount of the wrong type', transferEvent({ data: { amount: ['1'] } }), 'INVALID_AMOUNT'],
    ['a userId of the wrong type', transferEvent({ recipient: { userId: 42 } }), 'SCHEMA_VIOLATION'],
    ['TransferFailed without a reason', transferEvent({ type: 'TransferFailed' }), 'SCHEMA_VIOLATION'],
    ['a bad occurredAt', transferEvent({ occurredAt: 'yesterday' }), 'SCHEMA_VIOLATION'],
    // Two readings (whose local time?): refused.
    ['an occurredAt without an offset', transferEvent({ occurredAt: '2026-11-30T09:15:00' }), 'SCHEMA_VIOLATION'],
    ['a second 60 that is no leap second', transferEvent({ occurredAt: '2026-11-30T09:15:60Z' }), 'SCHEMA_VIOLATION'],
    ['a duplicate key', '{"eventId":"d","eventId":"d"}', 'INVALID_JSON'],
    [
      'every channel refused',
      transferEvent({ channels: ['SMS'], recipient: { phoneNumber: '03-1234-5678' } }),
      'INVALID_CONTACT',
    ],
    ['an unknown channel among known ones', transferEvent({ channels: ['email', 'FAX'] }), 'UNKNOWN_CHANNEL'],
    ['a channels array of numbers', transferEvent({ channels: Array(1_000).fill(1) }), 'SCHEMA_VIOLATION'],
    ['a NUL in the transfer id', transferEvent({ data: { transferId: 't\u0000' } }), 'SCHEMA_VIOLATION'],
    // Identifiers and addresses are strict: ill-formed or invisible characters are bad input.
    ['a lone surrogate in the userId', transferEvent({ recipient: { userId: 'u\uD800' } }), 'SCHEMA_VIOLATION'],
    ['a lone low surrogate in the transferId', transferEvent({ data: { transferId: '\uDC00t' } }), 'SCHEMA_VIOLATION'],
    ['a noncharacter in the transferId', transferEvent({ data: { transferId: 't-\uFFFE' } }), 'SCHEMA_VIOLATION'],
    [
      'a supplementary noncharacter in the userId',
      transferEvent({ recipient: { userId: 'u\u{10FFFF}' } }),
      'SCHEMA_VIOLATION',
    ],
    ['a bidi override in the transferId', transferEvent({ data: { transferId: 't\u202E99' } }), 'SCHEMA_VIOLATION'],
    ['a line separator in the userId', transferEvent({ recipient: { userId: 'u\u2028' } }), 'SCHEMA_VIOLATION'],
    ['a zero-width space in the userId', transferEvent({ recipient: { userId: 'u\u200B42' } }), 'SCHEMA_VIOLATION'],
    ['a lone surrogate in the eventId', transferEvent({ eventId: 'e\uD800' }), 'INVALID_EVENT_ID'],
    ['a lone surrogate in the currency', transferEvent({ data: { currency: 'JP\uD800' } }), 'INVALID_AMOUNT'],
    ['a metal (no minor unit)', transferEvent({ data: { currency: 'XAU', amount: '1' } }), 'INVALID_AMOUNT'],
    ['the testing currency', transferEvent({ data: { currency: 'XTS', amount: '1' } }), 'INVALID_AMOUNT'],
    ['a lone surrogate in the type', transferEvent({ type: 'Transfer\uD800' }), 'UNKNOWN_TYPE'],
    ['a lone surrogate in a channel', transferEvent({ channels: ['EMAIL\uD800'] }), 'UNKNOWN_CHANNEL'],
    ['a lone surrogate in occurredAt', transferEvent({ occurredAt: '2026-11-30T09:15:00\uD800Z' }), 'SCHEMA_VIOLATION'],
    ['a display text of the wrong type', transferEvent({ data: { counterpartyName: 42 } }), 'SCHEMA_VIOLATION'],
  ];
  it.each(cases)('rejects %s with its reason code', (_name, value, reason) => {
    const d = value === null ? decodeRecordValue(null, MAX) : decode(value);
    if (d.ok && 'event' in d && reason !== undefined) {
      // A contact point is refused by routing (admission.ts): every channel refused rejects the event.
      const routed = route(d.event, d.contactRefusals);
      expect(routed.ok ? 'OK' : routed.rejection.reason).toBe(reason);
      return;
    }
    expect(d.ok ? 'OK' : d.rejection.reason).toBe(reason);
  });

  it('rejects a value over the size limit before parsing it', () => {
    expect(reasonOf(transferEvent({ data: { counterpartyName: 'x'.repeat(70_000) } }))).toBe('TOO_LARGE');
  });

  it('rejects a value that is not base64', () => {
    const d = decodeRecordValue('not base64!!', MAX);
    expect(!d.ok && d.rejection.reason).toBe('INVALID_ENCODING');
  });

  it('rejects JSON nested deeper than the stack', () => {
    const d = parseEventJson(`${'['.repeat(200_000)}${']'.repeat(200_000)}`);
    expect(d.ok).toBe(false);
  });

  it('names the failing path but never the offending value', () => {
    const d = decode(transferEvent({ data: { amount: '12,50' } }));
    expect(d.ok).toBe(false);
    if (d.ok) return;
    expect(d.rejection.detail).toContain('data.amount');
    expect(d.rejection.detail).not.toContain('12,50');
    expect(d.rejection.eventId).toBe('trf-2026-000123');
    const refused = decodeTransfer(transferEvent({ recipient: { email: 'bad@@example.com' } })).contactRefusals;
    expect(refused).toEqual([
      {
        channel: 'EMAIL',
        field: 'email',
        reason: 'INVALID_CONTACT',
        detail: expect.stringContaining('(at recipient.email)'),
      },
    ]);
    expect(JSON.stringify(refused)).not.toContain('bad@@');
  });

  it('ignores prototype-pollution keys', () => {
    const text = JSON.stringify(transferEvent()).replace('{', '{"__proto__":{"polluted":true},');
    const d = parseEventJson(text);
    expect(d.ok).toBe(true);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('hashes the canonical event: key order and whitespace do not matter, the amount does', () => {
    const a = parseEventJson(JSON.stringify(transferEvent()));
    const reordered = JSON.stringify(Object.fromEntries(Object.entries(transferEvent()).reverse()), null, 2);
    const b = parseEventJson(reordered);
    const c = parseEventJson(JSON.stringify(transferEvent({ data: { amount: '10001' } })));
    expect(a.ok && b.ok && c.ok).toBe(true);
    if (!a.ok || !b.ok || !c.ok) return;
    expect(b.payloadHash).toBe(a.payloadHash);
    expect(c.payloadHash).not.toBe(a.payloadHash);
  });
});

const accepted = (value: object) => decodeTransfer(value);

describe('display text is cleaned, never a reason to reject', () => {
  it.each([
    ['CR/LF header injection', 'Taro\r\nBcc: x@example.com', 'Taro Bcc: x@example.com'],
    ['NUL', 'Ta\u0000ro', 'Ta ro'],
    ['ESC sequence', '\u001b[31mred', '[31mred'],
    ['bidi override', '\u202Egnp.exe', 'gnp.exe'],
    ['line separator', 'Taro\u2028Yamada', 'Taro Yamada'],
    ['lone surrogate', 'Taro\uD800', 'Taro\uFFFD'],
    ['decomposed accents (NFC)', 'Jose\u0301', 'José'],
  ])('%s in a name: accepted, cleaned and counted', (_name, raw, clean) => {
    const d = accepted(transferEvent({ data: { counterpartyName: raw } }));
    expect(d.event.data.counterpartyName).toBe(clean);
    expect(d.sanitised).toEqual(['counterpartyName']);
  });

  it('a name that cleans to nothing is absent', () => {
    const d = accepted(transferEvent({ data: { counterpartyName: '\r\n\u202E\u200B ' } }));
    expect(d.event.data).not.toHaveProperty('counterpartyName');
    expect(d.sanitised).toEqual(['counterpartyName']);
  });

  it('a TransferFailed whose reason cleans to nothing is accepted without a reason', () => {
    const d = accepted(transferEvent({ type: 'TransferFailed', data: { reason: '\u0000\u2029' } }));
    expect(d.event.data).not.toHaveProperty('reason');
    expect(d.sanitised).toEqual(['reason']);
  });

  it('an over-long name is cut with an ellipsis, not rejected', () => {
    const d = accepted(transferEvent({ data: { counterpartyName: 'n'.repeat(141) } }));
    expect(d.event.data.counterpartyName).toBe(`${'n'.repeat(139)}…`);
  });

  it('clean text is left alone and not counted', () => {
    const d = accepted(transferEvent({ data: { counterpartyName: '山田 太郎', reason: 'insufficient funds' } }));
    expect(d.event.data).toMatchObject({ counterpartyName: '山田 太郎', reason: 'insufficient funds' });
    expect(d.sanitised).toEqual([]);
  });
});

describe('money: at most the currency minor unit of fraction digits (ISO 4217)', () => {
  it.each([
    ['0.004', 'USD'],
    ['10000.5', 'JPY'],
    ['999999999999999.9999', 'USD'],
    ['1.2345', 'BHD'],
    ['1.0', 'JPY'],
    ['1.001', 'EUR'],
    ['1.5', 'IQD', false],
    ['1.2345', 'CLF', false],
    ['1.23456', 'CLF'],
    ['1.5', 'ISK'],
    ['1234567890123456', 'USD'],
    ['.5', 'USD', false],
    ['5.', 'USD', false],
    ['05', 'USD', false],
    ['1,000', 'USD'],
    ['-5', 'USD'],
    ['+-5', 'USD'],
    ['1 000', 'USD'],
    ['1e3', 'USD'],
    ['.', 'USD'],
    ['+', 'USD'],
    ['１０', 'JPY'],
  ])('%s %s', (amount, currency, rejected = true) => {
    expect(reasonOf(transferEvent({ data: { amount, currency } }))).toBe(rejected ? 'INVALID_AMOUNT' : 'OK');
  });

  it('accepts every minor unit exactly', () => {
    for (const [amount, currency] of [
      ['10000', 'JPY'],
      ['0.01', 'USD'],
      ['1.234', 'KWD'],
      ['1.234', 'BHD'],
      ['1.234', 'IQD'],
      ['1.2345', 'CLF'],
      ['999999999999999.99', 'USD'],
      ['999999999999999', 'JPY'],
    ]) {
      expect(reasonOf(transferEvent({ data: { amount, currency } })), `${amount} ${currency}`).toBe('OK');
    }
  });
});

describe('null for an optional field means absent (what many producers serialize)', () => {
  it('optional contact points, locale, time zone, display text and channels given as null are read as absent', () => {
    const withNulls = transferEvent();
    const r = withNulls.recipient as Record<string, unknown>;
    r.phoneNumber = null;
    r.timeZone = null;
    r.locale = null;
    (withNulls.data as Record<string, unknown>).counterpartyName = null;
    (withNulls as Record<string, unknown>).channels = null;
    const d = decodeTransfer(withNulls);
    expect(d.event.recipient).not.toHaveProperty('phoneNumber');
    expect(d.event.recipient.locale).toBe('en');
    expect(d.event.data).not.toHaveProperty('counterpartyName');
    // The same meaning as leaving them out: a resend written either way is a duplicate, not a conflict.
    const without = transferEvent();
    const w = without.recipient as Record<string, unknown>;
    delete w.phoneNumber;
    delete w.timeZone;
    delete w.locale;
    delete (without.data as Record<string, unknown>).counterpartyName;
    const e = decodeTransfer(without);
    expect(d.payloadHash).toBe(e.payloadHash);
  });

  it('a required field given as null is still bad input', () => {
    expect(reasonOf({ ...transferEvent(), type: null })).toBe('UNKNOWN_TYPE');
    expect(reasonOf({ ...transferEvent(), eventId: null })).toBe('INVALID_EVENT_ID');
    const noAmount = transferEvent();
    (noAmount.data as Record<string, unknown>).amount = null;
    expect(reasonOf(noAmount)).toBe('INVALID_AMOUNT');
    const failedWithoutReason = transferEvent({ type: 'TransferFailed' });
    (failedWithoutReason.data as Record<string, unknown>).reason = null;
    expect(reasonOf(failedWithoutReason)).toBe('SCHEMA_VIOLATION');
  });
});

describe('the payloadHash covers meaning, not spelling', () => {
  const hash = (o: EventOverrides) => accepted(transferEvent(o)).payloadHash;
  const base = hash({ channels: ['EMAIL', 'PUSH'] });

  it('is unchanged for events without a timeZone (the value computed before the field existed)', () => {
    expect(hash({})).toBe('v2:fd292ee15d69c9c67d035963e716c1765f9f5db58a332550df55e9463992d008');
  });

  it('covers the timeZone when given, case-insensitively (IANA names are)', () => {
    const tz = (timeZone: string) => hash({ recipient: { timeZone } });
    expect(tz('Asia/Tokyo')).not.toBe(hash({}));
    expect(tz('asia/tokyo')).toBe(tz('Asia/Tokyo'));
    expect(tz('America/New_York')).not.toBe(tz('Asia/Tokyo'));
  });

  it.each([
    ['channels in another order', { channels: ['PUSH', 'EMAIL'] }],
    ['occurredAt with +00:00 instead of Z', { channels: ['EMAIL', 'PUSH'], occurredAt: '2026-11-30T09:15:00+00:00' }],
    ['occurredAt in another offset', { channels: ['EMAIL', 'PUSH'], occurredAt: '2026-11-30T18:15:00+09:00' }],
    ['occurredAt with zero fraction digits', { channels: ['EMAIL', 'PUSH'], occurredAt: '2026-11-30T09:15:00.000Z' }],
    ['a name spelled with controls', { channels: ['EMAIL', 'PUSH'], data: { counterpartyName: 'Taro\r\nYamada' } }],
  ])('%s: same hash', (_name, o) => {
    expect(hash(o as EventOverrides)).toBe(base);
  });

  it('the locale after its default: absent ≡ "en"', () => {
    expect(hash({ recipient: { locale: undefined } })).toBe(hash({ recipient: { locale: 'en' } }));
  });

  it('the amount as a decimal: 10.5 ≡ 10.50, 10 ≡ 10.0 ≡ 10.00', () => {
    const usd = (amount: string) => hash({ data: { amount, currency: 'USD' } });
    expect(usd('10.5')).toBe(usd('10.50'));
    expect(usd('10')).toBe(usd('10.0'));
    expect(usd('10')).toBe(usd('10.00'));
    expect(usd('10.5')).not.toBe(usd('10.05'));
    expect(usd('100')).not.toBe(usd('10'));
  });

  it('sub-millisecond digits of occurredAt count, exactly', () => {
    const at = (occurredAt: string) => hash({ occurredAt });
    expect(at('2026-11-30T09:15:00.1234567Z')).toBe(at('2026-11-30T18:15:00.12345670+09:00'));
    expect(at('2026-11-30T09:15:00.1234567Z')).not.toBe(at('2026-11-30T09:15:00.1234568Z'));
  });

  it.each([
    ['another amount', { channels: ['EMAIL', 'PUSH'], data: { amount: '10001' } }],
    ['another channel set', { channels: ['EMAIL'] }],
    ['no channel list', {}],
    ['another instant', { channels: ['EMAIL', 'PUSH'], occurredAt: '2026-11-30T09:15:01Z' }],
    ['another name', { channels: ['EMAIL', 'PUSH'], data: { counterpartyName: 'Jiro' } }],
    ['another locale', { channels: ['EMAIL', 'PUSH'], recipient: { locale: 'en' } }],
  ])('%s: another hash', (_name, o) => {
    expect(hash(o as EventOverrides)).not.toBe(base);
  });

  it('property: utcInstant agrees with Date on every millisecond instant written in any offset', () => {
    const p2 = (n: number) => String(n).padStart(2, '0');
    fc.assert(
      fc.property(
        fc.date({ min: new Date('0001-01-02T00:00:00Z'), max: new Date('9999-12-30T23:59:59Z'), noInvalidDate: true }),
        fc.integer({ min: -(23 * 60 + 59), max: 23 * 60 + 59 }),
        (date, offset) => {
          const local = new Date(date.getTime() + offset * 60_000);
          const text = `${String(local.getUTCFullYear()).padStart(4, '0')}-${p2(local.getUTCMonth() + 1)}-${p2(local.getUTCDate())}T${p2(local.getUTCHours())}:${p2(local.getUTCMinutes())}:${p2(local.getUTCSeconds())}.${String(local.getUTCMilliseconds()).padStart(3, '0')}${offset < 0 ? '-' : '+'}${p2(Math.floor(Math.abs(offset) / 60))}:${p2(Math.abs(offset) % 60)}`;
          const instant = utcInstant(text);
          expect(instant?.epochMs).toBe(date.getTime());
          expect(instant?.iso).toBe(
            date.toISOString().replace(/\.?0*Z$/, (m) => (m === '.000Z' ? 'Z' : m.replace(/0+Z$/, 'Z'))),
          );
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('utcInstant keeps every fraction digit and normalises the offset', () => {
    expect(utcInstant('2026-11-30T18:15:00.1230+09:00')).toEqual({
      iso: '2026-11-30T09:15:00.123Z',
      epochMs: Date.parse('2026-11-30T09:15:00.123Z'),
    });
    expect(utcInstant('0001-01-01T00:30:00+01:00')?.iso).toBe('0000-12-31T23:30:00Z');
    expect(utcInstant('2026-02-30T00:00:00Z')).toBeUndefined();
    expect(utcInstant('2026-11-30 09:15:00Z')?.iso).toBe('2026-11-30T09:15:00Z');
    expect(utcInstant('2026-11-30T09:15:00')).toBeUndefined();
  });
});

describe("the recipient's time zone", () => {
  it('an IANA name is accepted and kept as given', () => {
    for (const timeZone of ['Asia/Tokyo', 'America/Argentina/Buenos_Aires', 'UTC', 'Etc/GMT+9', 'asia/tokyo']) {
      const d = decodeTransfer(transferEvent({ recipient: { timeZone } }));
      expect(d.event.recipient.timeZone, timeZone).toBe(timeZone);
    }
    const none = decodeTransfer(transferEvent());
    expect('timeZone' in none.event.recipient).toBe(false);
  });

  it("anything the runtime does not know is a presentation hint without a reading: the locale's default zone, counted", () => {
    // "+09:00" falls back on every runtime: newer engines would take it as a zone, Node 20 does not.
    for (const timeZone of ['Mars/Olympus_Mons', '+09:00', 'JST-9', '', 42, 'A'.repeat(100)]) {
      const d = decodeTransfer(transferEvent({ recipient: { timeZone } }));
      expect(d.event.recipient, String(timeZone)).not.toHaveProperty('timeZone');
      expect(d.fallbacks).toEqual(['recipient.timeZone']);
      // The same meaning as naming no zone: shown in the default, hashed alike.
      expect(d.payloadHash).toBe(decodeTransfer(transferEvent()).payloadHash);
    }
    const spaced = decodeTransfer(transferEvent({ recipient: { timeZone: 'Asia/Tokyo\n' } }));
    expect(spaced.event.recipient.timeZone).toBe('Asia/Tokyo');
    expect(spaced.normalised).toEqual(['recipient.timeZone']);
  });
});

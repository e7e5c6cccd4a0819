import { describe, expect, it } from 'vitest';
import { decodeRecordValue, parseEventJson, type RejectionReason } from '../../functions/domain/event.ts';
import { b64, transferEvent } from '../support/events.ts';

const MAX = 65_536;
const decode = (value: object | string | Buffer) => decodeRecordValue(b64(value), MAX);
const reasonOf = (value: object | string | Buffer) => {
  const d = decode(value);
  return d.ok ? 'OK' : d.rejection.reason;
};

describe('event contract', () => {
  it('decodes the DESIGN.md example into a typed event', () => {
    const d = decode(transferEvent());
    expect(d.ok).toBe(true);
    if (!d.ok) return;
    expect(d.event.eventId).toBe('trf-2026-000123');
    expect(d.event.recipient.locale).toBe('ja');
    expect(d.payloadHash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('defaults the locale to en', () => {
    const d = decode(transferEvent({ recipient: { locale: undefined } }));
    expect(d.ok && d.event.recipient.locale).toBe('en');
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
    ['a repeated channel', transferEvent({ channels: ['EMAIL', 'EMAIL'] }), 'SCHEMA_VIOLATION'],
    ['a bad email', transferEvent({ recipient: { email: 'not-an-email' } }), 'INVALID_CONTACT'],
    ['a non-E.164 phone', transferEvent({ recipient: { phoneNumber: '090-1234-5678' } }), 'INVALID_CONTACT'],
    ['a bad endpoint ARN', transferEvent({ recipient: { pushEndpointArn: 'arn:aws:sns:x' } }), 'INVALID_CONTACT'],
    ['money as a float', transferEvent({ data: { amount: 10000.5 } }), 'INVALID_AMOUNT'],
    ['money in exponent form', transferEvent({ data: { amount: '1e5' } }), 'INVALID_AMOUNT'],
    ['a negative amount', transferEvent({ data: { amount: '-5' } }), 'INVALID_AMOUNT'],
    ['an unknown currency', transferEvent({ data: { currency: 'XXY' } }), 'INVALID_AMOUNT'],
    ['a missing recipient', { ...transferEvent(), recipient: undefined }, 'SCHEMA_VIOLATION'],
    ['an amount of the wrong type', transferEvent({ data: { amount: ['1'] } }), 'INVALID_AMOUNT'],
    ['a userId of the wrong type', transferEvent({ recipient: { userId: 42 } }), 'SCHEMA_VIOLATION'],
    ['TransferFailed without a reason', transferEvent({ type: 'TransferFailed' }), 'SCHEMA_VIOLATION'],
    ['a bad occurredAt', transferEvent({ occurredAt: 'yesterday' }), 'SCHEMA_VIOLATION'],
    [
      'CR/LF in a name',
      transferEvent({ data: { counterpartyName: 'Taro\r\nBcc: x@example.com' } }),
      'SCHEMA_VIOLATION',
    ],
    ['a NUL in the transfer id', transferEvent({ data: { transferId: 't\u0000' } }), 'SCHEMA_VIOLATION'],
    ['an unknown locale', transferEvent({ recipient: { locale: 'fr' } }), 'SCHEMA_VIOLATION'],
    ['a huge channels array', transferEvent({ channels: Array(1_000).fill('EMAIL') }), 'SCHEMA_VIOLATION'],
  ];
  it.each(cases)('rejects %s with its reason code', (_name, value, reason) => {
    const d = value === null ? decodeRecordValue(null, MAX) : decode(value);
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
    const d = decode(transferEvent({ recipient: { email: 'bad@@example.com' } }));
    expect(d.ok).toBe(false);
    if (d.ok) return;
    expect(d.rejection.detail).toContain('recipient.email');
    expect(d.rejection.detail).not.toContain('bad@@example.com');
    expect(d.rejection.eventId).toBe('trf-2026-000123');
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

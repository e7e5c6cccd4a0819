/**
 * A spelling with exactly one reading is accepted, normalised before the hash, and counted; a value with two readings
 * or none is refused at the smallest unit it touches (docs/event.md "Spellings"). Written as producers' serialisers
 * and mainframe bridges write events, not as our examples do.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import * as z from 'zod/mini';
import { admitRecord } from '../../functions/domain/admission.ts';
import type { Channel } from '../../functions/domain/channels.ts';
import { readEmail, readPhoneNumber } from '../../functions/domain/contact.ts';
import { decodeRecordValue } from '../../functions/domain/event/decode.ts';
import { earlierPayloadHashes } from '../../functions/domain/event/hash.ts';
import { parseJson } from '../../functions/domain/json.ts';
import { LOCALES, negotiateLocale } from '../../functions/domain/locale.ts';
import { readInstant } from '../../functions/domain/moment.ts';
import { b64, decodeTransfer, type EventOverrides, PUSH_ARN, transferEvent } from '../support/events.ts';

const canonical = decodeTransfer(transferEvent());
const hashOf = (o: EventOverrides) => decodeTransfer(transferEvent(o)).payloadHash;
const admit = (value: object | string) =>
  admitRecord(b64(value), { maxEventBytes: 65_536, maxEventAgeSeconds: 0 }, Date.parse('2026-12-01T00:00:00Z'));

describe('language tags (BCP 47, RFC 4647 lookup)', () => {
  it.each([
    ['ja-JP', 'ja'],
    ['JA', 'ja'],
    ['ja_JP', 'ja'],
    ['ja_JP.UTF-8', 'ja'],
    ['ja-Jpan-JP', 'ja'],
    ['ja-JP-u-ca-japanese', 'ja'],
    [' ja ', 'ja'],
    ['en-US', 'en'],
    ['en_us', 'en'],
    ['en-GB', 'en'],
    ['EN-latn-us', 'en'],
  ])('%s is %s: normalised, hashed as the canonical tag, counted as a spelling', (tag, locale) => {
    const d = decodeTransfer(transferEvent({ recipient: { locale: tag } }));
    expect(d.event.recipient.locale).toBe(locale);
    expect(d.payloadHash).toBe(hashOf({ recipient: { locale } }));
    expect(d.normalised).toEqual(['recipient.locale']);
    expect(d.fallbacks).toEqual([]);
  });

  // Tags of languages templates/ does not have (a bank that adds French drops the first two, and nothing else changes).
  const written = (tag: unknown) => typeof tag === 'string' && LOCALES.some((l) => tag.toLowerCase().startsWith(l));
  it.each(
    ['fr', 'fr-CA', 'zh-Hant-TW', 'sr_RS_#Latn', 'und', 'x', '', '!!', 'e\uD800', 42, ['ja']].filter(
      (t) => !written(t),
    ),
  )('%j has no language the brand writes: the default language, counted as a fallback, never refused', (tag) => {
    const d = decodeTransfer(transferEvent({ recipient: { locale: tag } }));
    expect(d.event.recipient.locale).toBe('en');
    expect(d.fallbacks).toEqual(['recipient.locale']);
    expect(d.payloadHash).toBe(hashOf({ recipient: { locale: 'en' } }));
  });

  it('a resend spelled en-US and one spelled en_us are duplicates (the hash covers the negotiated locale)', () => {
    expect(hashOf({ recipient: { locale: 'en-US' } })).toBe(hashOf({ recipient: { locale: 'en_us' } }));
    expect(negotiateLocale('ja-JP')).toEqual({ locale: 'ja', how: 'normalised' });
  });
});

describe('phone numbers (E.164, written as E.123 allows; libphonenumber-js)', () => {
  it.each([
    ['+1 415-555-0123', '+14155550123'],
    ['+1 (415) 555-0123', '+14155550123'],
    ['+1.415.555.0123', '+14155550123'],
    [' +14155550123 ', '+14155550123'],
    ['+81 90-1234-5678', '+819012345678'],
    ['0081 90 1234 5678', '+819012345678'],
    ['011 81 90 1234 5678', '+819012345678'],
    ['+44 (0) 20 7946 0958', '+442079460958'],
    ['0044 20 7946 0958', '+442079460958'],
    ['tel:+1-415-555-0123', '+14155550123'],
    ['TEL:+81-90-1234-5678', '+819012345678'],
  ])('%s → %s, hashed as the E.164 spelling', (given, e164) => {
    expect(readPhoneNumber(given)).toEqual({ ok: true, address: e164, normalised: true });
    const d = decodeTransfer(transferEvent({ recipient: { phoneNumber: given } }));
    expect(d.event.recipient.phoneNumber).toBe(e164);
    expect(d.payloadHash).toBe(hashOf({ recipient: { phoneNumber: e164 } }));
    expect(d.normalised).toEqual(['recipient.phoneNumber']);
  });

  it.each([
    ['090-1234-5678', /no country code/],
    ['(415) 555-0123', /no country code/],
    ['+14155550123 ext. 12', /not an international phone number/],
    ['+1 415 555', /not an international phone number/],
    ['＋８１９０１２３４５６７８', /no country code/],
    ['0011 61 2 9876 5432', /not an international phone number/],
    ['tel:090-1234-5678', /no country code/],
  ])('%s has no reading SNS can send to: the SMS channel is refused, never guessed', (given, rule) => {
    const r = readPhoneNumber(given);
    expect(r).toMatchObject({ ok: false, problem: 'INVALID_CONTACT' });
    expect(!r.ok && r.rule).toMatch(rule);
  });

  it('an E.164 number is kept as given, even with a country code the library does not know (as always)', () => {
    expect(readPhoneNumber('+999123456')).toEqual({ ok: true, address: '+999123456', normalised: false });
  });
});

describe('email addresses (RFC 5321/5322; the domain as IDNA; SES sends 7-bit ASCII only)', () => {
  it.each([
    ['hanako@例え.jp', 'hanako@xn--r8jz45g.jp'],
    ['hanako@例え．jp', 'hanako@xn--r8jz45g.jp'],
    ['anna@Bücher.DE', 'anna@xn--bcher-kva.de'],
    [' alex@example.com ', 'alex@example.com'],
    ['o.k!#$%&*/=?^`{|}~@example.com', 'o.k!#$%&*/=?^`{|}~@example.com'],
    ['ivan@пример.рф', 'ivan@xn--e1afmkfd.xn--p1ai'],
    ['"Hanako Yamada" <hanako@example.jp>', 'hanako@example.jp'],
    ['山田 花子 <hanako@例え.jp>', 'hanako@xn--r8jz45g.jp'],
    ['mailto:alex@example.com', 'alex@example.com'],
    ['alex@example.com.', 'alex@example.com'],
    ['hanako@例え.jp.', 'hanako@xn--r8jz45g.jp'],
  ])('%s → %s: the local part exactly, the domain in Punycode', (given, address) => {
    const d = decodeTransfer(transferEvent({ recipient: { email: given } }));
    expect(d.event.recipient.email).toBe(address);
    expect(d.payloadHash).toBe(hashOf({ recipient: { email: address } }));
    expect(d.contactRefusals).toEqual([]);
  });

  it("an address is accepted as written by zod's own email pattern, the one z.email() checks", () => {
    expect(z.email().def.pattern).toBe(z.regexes.email);
    expect(readEmail("o'brien_+x@mail.example.org")).toEqual({
      ok: true,
      address: "o'brien_+x@mail.example.org",
      normalised: false,
    });
  });

  it('an ASCII address is kept byte for byte, the domain case included (its hash is what it always was)', () => {
    expect(readEmail('Alex.Lee+bank@Example.COM')).toEqual({
      ok: true,
      address: 'Alex.Lee+bank@Example.COM',
      normalised: false,
    });
  });

  it('a non-ASCII local part is a real address SES cannot send to: EMAIL refused (UNSENDABLE_ADDRESS), push and SMS sent', () => {
    const a = admit(transferEvent({ recipient: { email: '山田@example.jp' } }));
    expect(a).toMatchObject({
      ok: true,
      channels: ['PUSH', 'SMS'],
      refused: [
        {
          channel: 'EMAIL',
          reason: 'UNSENDABLE_ADDRESS',
          detail: expect.stringMatching(/SMTPUTF8.*\(at recipient\.email\)$/),
        },
      ],
    });
  });

  it.each([
    'not-an-email',
    'a@@example.com',
    'a@example',
    'a@[192.0.2.1]',
    'a b@example.com',
    'a\uD800@example.com',
    '.a@example.com',
    'a@exa_mple.com',
    42,
  ])('%j has no reading: EMAIL refused (INVALID_CONTACT), the rest sent', (email) => {
    const a = admit(transferEvent({ recipient: { email } }));
    expect(a).toMatchObject({
      ok: true,
      channels: ['PUSH', 'SMS'],
      refused: [{ channel: 'EMAIL', reason: 'INVALID_CONTACT' }],
    });
  });
});

describe('channels, amounts, currency codes, date-times', () => {
  it('channel names in any case, repeated: the set, hashed as the set', () => {
    const d = decodeTransfer(transferEvent({ channels: ['email', ' Push', 'EMAIL'] }));
    expect(d.event.channels).toEqual(['EMAIL', 'PUSH']);
    expect(d.payloadHash).toBe(hashOf({ channels: ['PUSH', 'EMAIL'] }));
    expect(d.normalised).toEqual(['channels']);
  });

  it('an empty channel list records the event and sends nothing ("record it, send nothing")', () => {
    const a = admit(transferEvent({ channels: [] }));
    expect(a).toMatchObject({ ok: true, channels: [], refused: [] });
    // Not the same meaning as no list at all (every channel).
    expect(hashOf({ channels: [] })).not.toBe(canonical.payloadHash);
  });

  it.each([
    [' 10000 ', '10000'],
    ['+10000', '10000'],
    ['0000010000', '10000'],
    ['+000000010000', '10000'],
  ])('amount %j is %s: the digits shown as before, hashed alike', (amount, canonicalAmount) => {
    const d = decodeTransfer(transferEvent({ data: { amount } }));
    expect(d.event.data.amount).toBe(canonicalAmount);
    expect(d.payloadHash).toBe(canonical.payloadHash);
    expect(d.normalised).toEqual(['data.amount']);
  });

  it('a decimal point with an omitted digit has one reading: .5 is 0.5, 5. is 5', () => {
    expect(decodeTransfer(transferEvent({ data: { amount: '.5', currency: 'USD' } })).event.data.amount).toBe('0.5');
    expect(decodeTransfer(transferEvent({ data: { amount: '5.', currency: 'USD' } })).event.data.amount).toBe('5');
  });

  it('a currency code in lower case or with spaces is the ISO 4217 code', () => {
    const d = decodeTransfer(transferEvent({ data: { currency: ' jpy' } }));
    expect(d.event.data.currency).toBe('JPY');
    expect(d.payloadHash).toBe(canonical.payloadHash);
  });

  it.each([
    '2026-11-30t09:15:00z',
    '2026-11-30 09:15:00Z',
    '2026-11-30T18:15:00+0900',
    '2026-11-30T09:15:00,000Z',
    '2026-11-30T04:15:00-0500',
    '2026-11-30T18:15+09:00',
    '2026-11-30T09:15Z',
  ])(
    'occurredAt %s: RFC 3339 spelled upper case with a colon offset, the same instant, the same hash',
    (occurredAt) => {
      const d = decodeTransfer(transferEvent({ occurredAt }));
      expect(d.event.occurredAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/);
      expect(d.payloadHash).toBe(canonical.payloadHash);
      expect(d.normalised).toEqual(['occurredAt']);
    },
  );

  it('a leap second is accepted: its own instant in the hash (:60), shown as the minute it belongs to', () => {
    const at = readInstant('2016-12-31T23:59:60Z');
    expect(at).toEqual({
      iso: '2016-12-31T23:59:60Z',
      epochMs: Date.parse('2016-12-31T23:59:59.999Z'),
      spelling: '2016-12-31T23:59:60Z',
    });
    expect(readInstant('2017-01-01T08:59:60.5+09:00')?.iso).toBe('2016-12-31T23:59:60.5Z');
    expect(hashOf({ occurredAt: '2016-12-31T23:59:60Z' })).not.toBe(hashOf({ occurredAt: '2016-12-31T23:59:59Z' }));
    expect(readInstant('2016-12-30T23:59:60Z')).toBeUndefined();
    expect(readInstant('2016-12-31T12:00:60Z')).toBeUndefined();
  });
});

describe('what other parsers write', () => {
  it('a UTF-8 byte order mark before the JSON (RFC 8259 §8.1 lets a parser ignore it) is read past', () => {
    const withBom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(JSON.stringify(transferEvent()))]);
    expect(decodeRecordValue(withBom.toString('base64'), 65_536)).toMatchObject({
      ok: true,
      payloadHash: canonical.payloadHash,
    });
  });

  it('a time as epoch seconds or milliseconds has two readings: refused', () => {
    for (const occurredAt of [1796030100, 1796030100000]) {
      const d = decodeRecordValue(b64(transferEvent({ occurredAt })), 65_536);
      expect(!d.ok && d.rejection).toMatchObject({
        reason: 'SCHEMA_VIOLATION',
        detail: expect.stringContaining('(at occurredAt)'),
      });
    }
  });

  it('more than one address, or a name with an @ outside quotes, has no one reading: EMAIL refused', () => {
    for (const email of ['a <b@example.com> <c@example.com>', 'x@y <a@example.com>', 'a@example.com, b@example.com']) {
      expect(readEmail(email)).toMatchObject({ ok: false, problem: 'INVALID_CONTACT' });
    }
  });
});

describe('duplicate keys: two readings, refused as INVALID_JSON naming the key', () => {
  const text = JSON.stringify(transferEvent());
  it.each([
    ['at the top', text.replace('{', '{"type":"TransferFailed",'), 'duplicate key "type" (at type)'],
    [
      'in data',
      text.replace('"amount":"10000"', '"amount":"1","currency":"JPY","amount":"10000"'),
      'duplicate key "amount" (at data.amount)',
    ],
    [
      'spelled with an escape',
      text.replace('"amount":"10000"', '"amount":"1","\\u0061mount":"10000"'),
      'duplicate key "amount" (at data.amount)',
    ],
    ['inside a list', text.replace('"data":', '"x":[{"a":1,"a":2}],"data":'), 'duplicate key "a" (at x[].a)'],
    [
      'an unreadable name',
      text.replace('{', '{"a@b.c":1,"a@b.c":2,'),
      'duplicate key "<a key of 5 characters>" (at <a key of 5 characters>)',
    ],
  ])('%s', (_name, value, detail) => {
    const d = decodeRecordValue(b64(value), 65_536);
    expect(d).toEqual({ ok: false, rejection: { reason: 'INVALID_JSON', detail } });
  });

  it('the same key in different objects, and a colon inside strings, are not duplicates', () => {
    const value = text.replace('"data":', '"x":[{"a":"k:v"},{"a":":"}],"data":');
    expect(decodeRecordValue(b64(value), 65_536).ok).toBe(true);
  });
});

// ── Properties ──

/** Other spellings of one meaning, field by field: each has exactly one reading. */
const respell = {
  locale: (l: string) =>
    fc.constantFrom(
      l,
      l.toUpperCase(),
      `${l}-${l === 'ja' ? 'JP' : 'US'}`,
      `${l}_${l === 'ja' ? 'jp' : 'us'}`,
      ` ${l} `,
    ),
  phone: fc.constantFrom(
    '+819012345678',
    '+81 90-1234-5678',
    '+81 (90) 1234-5678',
    '0081 90 1234 5678',
    '011 81 90 1234 5678',
    '+81.90.1234.5678',
  ),
  email: fc.constantFrom('hanako@xn--r8jz45g.jp', 'hanako@例え.jp', ' hanako@例え.jp', 'hanako@xn--r8jz45g.jp\t'),
  amount: fc.constantFrom('10000', ' 10000', '+10000', '0010000', '+0010000 '),
  currency: fc.constantFrom('JPY', 'jpy', 'Jpy', ' JPY '),
  occurredAt: fc.constantFrom(
    '2026-11-30T09:15:00Z',
    '2026-11-30t09:15:00z',
    '2026-11-30 18:15:00+09:00',
    '2026-11-30T18:15:00+0900',
    '2026-11-30T09:15:00.000+00:00',
  ),
  channels: fc.constantFrom(['EMAIL', 'SMS'], ['sms', 'email'], ['Email', 'SMS', 'EMAIL'], [' email ', 'sms', 'Sms']),
};

describe('property: every accepted spelling hashes as the canonical event', () => {
  it('any combination of respelled fields is accepted, normalised to the canonical event and its hash', () => {
    const canon = decodeTransfer(
      transferEvent({
        recipient: { email: 'hanako@xn--r8jz45g.jp', phoneNumber: '+819012345678' },
        channels: ['EMAIL', 'SMS'],
      }),
    );
    fc.assert(
      fc.property(
        fc.record({
          locale: respell.locale('ja'),
          phone: respell.phone,
          email: respell.email,
          amount: respell.amount,
          currency: respell.currency,
          occurredAt: respell.occurredAt,
          channels: respell.channels,
        }),
        (s) => {
          const d = decodeTransfer(
            transferEvent({
              occurredAt: s.occurredAt,
              recipient: { locale: s.locale, email: s.email, phoneNumber: s.phone },
              data: { amount: s.amount, currency: s.currency },
              channels: [...s.channels],
            }),
          );
          expect(d.payloadHash).toBe(canon.payloadHash);
          // The same event, apart from the order of the channel set and how the producer wrote its local time.
          const same = (e: typeof d.event) => ({
            ...e,
            occurredAt: undefined,
            channels: [...(e.channels ?? [])].sort(),
          });
          expect(same(d.event)).toEqual(same(canon.event));
          expect(d.contactRefusals).toEqual([]);
          expect(d.fallbacks).toEqual([]);
        },
      ),
      { numRuns: 300 },
    );
  });
});

const BAD: Record<Channel, fc.Arbitrary<unknown>> = {
  EMAIL: fc.constantFrom('no-at-sign', 'a@@b.example', '山田@example.jp', 'x@localhost', 42, 'a\uD800@example.com'),
  PUSH: fc.constantFrom('arn:aws:sns:x', 'endpoint', 'arn:aws:sns:us-east-1:1:topic', 17, `${PUSH_ARN}\u0000`),
  SMS: fc.constantFrom(
    '090-1234-5678',
    '(415) 555-0123',
    '+1 415 555',
    'call me',
    '+14155550123x9',
    false,
    '+81901234\uFFFF',
  ),
};

describe('property: one bad contact point refuses its channel, never the event', () => {
  it('the other channels are created, the bad one refused with its reason, the event accepted', () => {
    fc.assert(
      fc.property(
        fc.constantFrom<Channel>('EMAIL', 'PUSH', 'SMS'),
        fc.constantFrom('EMAIL', 'PUSH', 'SMS').chain((bad) => BAD[bad as Channel].map((value) => ({ bad, value }))),
        fc.boolean(),
        (_unused, { bad, value }, listed) => {
          const field = { EMAIL: 'email', PUSH: 'pushEndpointArn', SMS: 'phoneNumber' }[bad as Channel];
          const a = admit(
            transferEvent({
              recipient: { [field]: value },
              ...(listed ? { channels: ['EMAIL', 'PUSH', 'SMS'] } : {}),
            }),
          );
          expect(a.ok).toBe(true);
          if (!a.ok || !('event' in a)) return;
          expect(a.channels).toEqual(['EMAIL', 'PUSH', 'SMS'].filter((c) => c !== bad));
          expect(a.refused).toHaveLength(1);
          expect(a.refused[0]?.channel).toBe(bad);
          expect(['INVALID_CONTACT', 'UNSENDABLE_ADDRESS']).toContain(a.refused[0]?.reason);
          expect(a.refused[0]?.detail).toContain(`(at recipient.${field})`);
          expect(a.repairHash).toMatch(/^v2:[0-9a-f]{64}$/);
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('an empty contact point or optional field is absent: one reading, like null', () => {
  it('"" or spaces for a contact point: its channel is not routed, nothing is refused, the event hashes as without it', () => {
    for (const empty of ['', '   ']) {
      const a = admit(transferEvent({ recipient: { email: empty } }));
      expect(a.ok).toBe(true);
      if (!a.ok || !('event' in a)) continue;
      expect(a.channels).not.toContain('EMAIL');
      expect(a.refused).toEqual([]);
      expect(a.repairHash).toBeUndefined();
      expect(a.event.recipient.email).toBeUndefined();
      expect(a.normalised).toContain('recipient.email');
      expect(a.payloadHash).toBe(hashOf({ recipient: { email: undefined } }));
    }
  });

  it('a channel listed with an empty contact point is refused as missing, as if the field were absent', () => {
    const a = admit(transferEvent({ recipient: { phoneNumber: '' }, channels: ['EMAIL', 'SMS'] }));
    expect(a.ok && 'event' in a && a.refused.map((r) => [r.channel, r.reason])).toEqual([['SMS', 'MISSING_CONTACT']]);
  });

  it('the hash the earlier reading stored ({"refused": ""}) is still this event’s: a resend across the deploy is a duplicate', () => {
    // Pinned from main before the reading changed: what the inbox holds for events stored then.
    const one = decodeTransfer(transferEvent({ recipient: { email: '' } }));
    expect(earlierPayloadHashes(one.hashInput)).toEqual([
      'v2:7e257a24559c93bebd1eb26c4c9639feaa515b7b802adb9ff8f603f364e5a95c',
    ]);
    const two = decodeTransfer(transferEvent({ recipient: { email: '  ', phoneNumber: '' } }));
    expect(earlierPayloadHashes(two.hashInput)).toEqual([
      'v2:331f4e4942a9bfafc437ce208ca9e6fea7050af6c58d9d872c014283bb614497',
    ]);
    expect(earlierPayloadHashes(canonical.hashInput)).toEqual([]);
  });

  it('"" for an optional money, date or enum field is absent; for a required one, or display text, it is not', () => {
    const due = (data: Record<string, unknown>) =>
      admit({
        ...transferEvent(),
        type: 'PaymentDue',
        data: { billId: 'b-1', amount: '10.00', currency: 'USD', dueDate: '2026-12-20', payee: 'Utility Co', ...data },
      });
    const blank = due({ minimumPayment: '' });
    expect(blank.ok).toBe(true);
    expect(blank.ok && 'event' in blank && blank.payloadHash).toBe((due({}) as { payloadHash: string }).payloadHash);
    expect(due({ dueDate: '' }).ok).toBe(false);
  });
});

describe('property: duplicate keys are found wherever they are, and only then', () => {
  it('any JSON a serialiser writes (no repeated key) reads as JSON.parse reads it', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), (value) => {
        const text = JSON.stringify(value);
        expect(parseJson(text)).toEqual({ ok: true, value: JSON.parse(text) });
      }),
      { numRuns: 500 },
    );
  });

  it('a key repeated in any object, at any depth, is INVALID_JSON', () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom('a', 'data', 'x:y', 'q"t', '\\'), { minLength: 1, maxLength: 5 }),
        fc.string(),
        fc.jsonValue({ maxDepth: 2 }),
        (path, key, value) => {
          // {"p1":{"p2":{… {"key":value,"key":value} …}}}: the innermost object names its key twice.
          const inner = `{${JSON.stringify(key)}:${JSON.stringify(value)},${JSON.stringify(key)}:${JSON.stringify(value)}}`;
          const text = path.reduceRight((acc, p) => `{${JSON.stringify(p)}:[${acc}]}`, inner);
          const read = parseJson(text);
          expect(read.ok).toBe(false);
          expect(!read.ok && read.detail).toMatch(/^duplicate key /);
        },
      ),
      { numRuns: 300 },
    );
  });
});

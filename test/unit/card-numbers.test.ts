/**
 * A card number is never shown, and never stored (PCI DSS v4.0 3.4.1, 3.5.1). A producer that puts one where a notice
 * shows text — the whole number in `cardLast4`, a card number in a merchant's name or a transfer's reason — gets it
 * masked to its last four digits wherever it is shown, stored or hashed; a value of a field whose definition gives its
 * shape (`cardLast4`: four digits) is refused when it has another. Attacked both ways: every brand, every spelling
 * (groups, dashes, full-width digits, beside other numbers, in the bytes of a quarantined record) is masked, and what
 * a bank writes that merely has many digits (account numbers, sort codes, phone numbers, references, amounts) is
 * shown as written. IBANs are shown masked to their country, check digits and last four: iban-masking.test.ts.
 */
import { deflateSync } from 'node:zlib';
import creditCardType from 'credit-card-type';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { admitRecord } from '../../functions/domain/admission.ts';
import { isCardNumber, maskCardNumbers, maskCardNumbersInBytes } from '../../functions/domain/card-number.ts';
import { definitionOf, EVENT_TYPES } from '../../functions/domain/catalogue.ts';
import { readWireHeader } from '../../functions/domain/event/wire-format.ts';
import { LOCALES } from '../../functions/domain/locale.ts';
import type { NotificationItem, QuarantineItem } from '../../functions/domain/notification.ts';
import { loadAllTemplates } from '../../functions/domain/template-sets.ts';
import { render } from '../../functions/domain/templates.ts';
import { ingestBatch } from '../../functions/ingest/ingest-batch.ts';
import { SchemaCache } from '../../functions/ingest/schema-registry.ts';
import { EXAMPLE_BRAND as brand } from '../../tools/local/example-brand.ts';
import { mskEvent } from '../../tools/local/msk.ts';
import { grouped, luhnDigit } from '../support/account-numbers.ts';
import { b64 } from '../support/events.ts';
import { MemoryInboxStore, memoryBatchDeps } from '../support/memory-inbox-store.ts';

// Every notice type's templates (dispatch loads a type when it first renders one: template-sets.ts).
await loadAllTemplates();

/** Card numbers of every brand notifier knows (the networks' published test numbers, and generated ones). */
const PANS = [
  '4111111111111111', // Visa
  '4000056655665556',
  '4111111111111111003', // Visa, 19 digits
  '5555555555554444', // Mastercard
  '2223003122003222', // Mastercard 2-series
  '378282246310005', // American Express, 15
  '6011111111111117', // Discover
  '30569309025904', // Diners Club, 14
  '3530111333300000', // JCB
  '6200000000000005', // UnionPay
  '6759649826438453', // Maestro
  '2201382000000013', // Mir
];

/** The digits of a text, with its other characters dropped: what a reader could copy off the screen. */
const digitsOf = (s: string) =>
  s.replace(/[^0-9０-９]/g, '').replace(/[０-９]/g, (d) => String(d.charCodeAt(0) - 0xff10));
const showsPan = (shown: string, pan: string) => digitsOf(shown).includes(pan.slice(0, 12));
/**
 * The digits a reader reads off a text, whatever their script or form (superscript, circled, full-width) and whatever
 * stands between them unseen (joiners, marks): NFKC, then each decimal digit's value, everything else dropped.
 */
const readDigits = (s: string) =>
  [...s.normalize('NFKC')]
    .filter((c) => /\p{Nd}/u.test(c))
    .map((c) => {
      let zero = c.codePointAt(0) as number;
      while (/\p{Nd}/u.test(String.fromCodePoint(zero - 1))) zero--;
      return String(((c.codePointAt(0) as number) - zero) % 10);
    })
    .join('');
const readsPan = (shown: string, pan: string) => readDigits(shown).includes(pan.slice(0, 12));

describe('a card number in text', () => {
  it('of every brand, written together or in groups, is masked to its last four digits', () => {
    for (const pan of PANS) {
      expect(isCardNumber([...pan].map(Number)), pan).toBe(true);
      const last4 = pan.slice(-4);
      for (const written of [pan, grouped(pan), grouped(pan, 4, '-'), `Paid at shop ${grouped(pan)}, thank you`]) {
        const { text, masked } = maskCardNumbers(written);
        expect(masked, written).toBe(true);
        expect(showsPan(text, pan), written).toBe(false);
        expect(digitsOf(text), written).toBe(last4);
        expect(text.length, written).toBe(written.length);
      }
    }
    expect(maskCardNumbers('4111 1111 1111 1111').text).toBe('**** **** **** 1111');
    expect(maskCardNumbers('3782-822463-10005').text).toBe('****-******-*0005');
  });

  it('in full-width or other scripts’ digits, beside other numbers, or twice, is masked', () => {
    const fullWidth = '４１１１１１１１１１１１１１１１';
    expect(maskCardNumbers(`カード ${fullWidth}`).text).toBe('カード ************１１１１');
    const arabicIndic = [...'4111111111111111'].map((d) => String.fromCodePoint(0x660 + Number(d))).join('');
    expect(maskCardNumbers(arabicIndic).masked).toBe(true);
    expect(maskCardNumbers('ref 12 4111 1111 1111 1111 exp 12 27').text).toBe('ref 12 **** **** **** 1111 exp 12 27');
    expect(maskCardNumbers('5555555555554444 / 378282246310005').text).toBe('************4444 / ***********0005');
    expect(maskCardNumbers('4111 - 1111 - 1111 - 1111').text).toBe('**** - **** - **** - 1111');
  });

  it('grouped by dots, slashes, commas or underscores, or with unseen characters or marks between its digits, is masked', () => {
    const pan = '4111111111111111';
    const each = (f: (d: string) => string) => [...pan].map(f).join('');
    const superscript = '⁰¹²³⁴⁵⁶⁷⁸⁹';
    const spellings = {
      dots: grouped(pan, 4, '.'),
      slashes: grouped(pan, 4, '/'),
      commas: grouped(pan, 4, ','),
      underscores: grouped(pan, 4, '_'),
      'full-width dots': grouped(pan, 4, '．'),
      'dots and spaces': grouped(pan, 4, '. '),
      'zero-width joiners (kept by cleaning, for emoji)': grouped(pan, 4, '\u200d'),
      'zero-width non-joiners': grouped(pan, 4, '\u200c'),
      'a combining underline on each digit': each((d) => `${d}\u0332`),
      'keycaps (a variation selector and an enclosing mark)': each((d) => `${d}\ufe0f\u20e3`),
      'superscript digits': grouped(
        each((d) => superscript[Number(d)] as string),
        4,
        ' ',
      ),
      'circled digits': each((d) => (d === '0' ? '⓪' : String.fromCodePoint(0x245f + Number(d)))),
    };
    for (const [how, written] of Object.entries(spellings)) {
      expect(readDigits(written), how).toBe(pan);
      // Beside other numbers too, separated otherwise: `4111.1111.1111.1111 12 27` is a card number and a date.
      for (const text of [written, `Paid at ${written}, thanks`, `${written} 12 27`, `ref 12 ${written}`]) {
        const shown = maskCardNumbers(text);
        expect(shown.masked, how).toBe(true);
        expect(readsPan(shown.text, pan), `${how}: ${shown.text}`).toBe(false);
        expect(readDigits(shown.text), how).toContain('1111');
      }
    }
  });

  it('where IIN ranges overlap, a length any covering brand issues is a card number: 17 digits in Elo’s 627780, inside Maestro’s 6', () => {
    // Elo's 627780 is the most specific range (16 digits only), cut out of UnionPay's 6277; Maestro's range covers
    // every number starting with 6, at 12–19 digits. A masker asks whether any brand may have issued the number.
    for (const pan of ['62778000000000000', '62778012345678903']) {
      expect(isCardNumber([...pan].map(Number)), pan).toBe(true);
      for (const written of [pan, grouped(pan), grouped(pan, 4, '-'), `ref ${grouped(pan, 3, ' ')} paid`]) {
        const shown = maskCardNumbers(written);
        expect(shown.masked, written).toBe(true);
        expect(showsPan(shown.text, pan), shown.text).toBe(false);
        expect(digitsOf(shown.text), written).toBe(pan.slice(-4));
      }
    }
    // Elo's own 16 digits, and a 13-digit Discover-range number Maestro's range covers, are masked too.
    for (const pan of ['6277800000000006', '6011000000001']) expect(maskCardNumbers(pan).masked, pan).toBe(true);
    // Failing the Luhn check outside UnionPay's ranges stays a number: 627780 is not UnionPay's.
    expect(maskCardNumbers('62778000000000001').masked).toBe(false);
  });

  it('any card number, grouped by any separator a reader reads through, is masked (property)', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('4', '51', '2221', '6011', '3528'),
        fc.stringMatching(/^[0-9]{20}$/),
        fc.constantFrom(' ', '-', '.', '/', ',', '_', '\u00a0', '\u202f', '\u200d', ' - ', '. '),
        fc.integer({ min: 3, max: 6 }),
        (prefix, random, sep, size) => {
          const body = `${prefix}${random}`.slice(0, 15);
          const pan = `${body}${luhnDigit(body)}`;
          return !readsPan(maskCardNumbers(`note ${grouped(pan, size, sep)}.`).text, pan);
        },
      ),
      { numRuns: 2_000 },
    );
  });

  it('any card number a brand could issue is masked, however it is grouped (property)', () => {
    // A brand's first digits and a length it issues.
    const brands: [string, number][] = [
      ['4', 16],
      ['4', 19],
      ['51', 16],
      ['55', 16],
      ['2221', 16],
      ['34', 15],
      ['37', 15],
      ['6011', 16],
      ['6011', 19],
      ['3528', 16],
      ['62', 17],
      ['36', 14],
      ['6759', 13],
    ];
    fc.assert(
      fc.property(
        fc.constantFrom(...brands),
        fc.stringMatching(/^[0-9]{20}$/),
        fc.constantFrom(' ', '-', ''),
        fc.integer({ min: 3, max: 6 }),
        ([prefix, length], random, sep, size) => {
          const body = `${prefix}${random}`.slice(0, length - 1);
          const pan = `${body}${luhnDigit(body)}`;
          const written = sep === '' ? pan : grouped(pan, size, sep);
          return !showsPan(maskCardNumbers(`note ${written}.`).text, pan);
        },
      ),
      // A fixed seed: the same numbers on every run, so a run's verdict is the code's, not the draw's (a random draw
      // once found 62778000000000000, now an example above). Change the seed to explore.
      { numRuns: 5_000, seed: 20_261_206 },
    );
  });
});

describe('what merely has many digits is shown as written', () => {
  const legitimate = [
    // Domestic account numbers, sort codes, routing numbers.
    '20-00-00 55779911',
    'sort code 60-16-13, account 31926819',
    '021000021 1234567890',
    '0001-234-5678901',
    // Phone numbers, references, transaction ids, dates, amounts.
    '+1 415-555-0123',
    '+81 90-1234-5678',
    '+44 20 7946 0958 ext 1234',
    't-20261130000012345',
    'TRX-2026-11-30-000123',
    'eb6305c9-1f7f-49de-aed0-16487c27b42d',
    '12345678901234567890123',
    '4111111111111112',
    '2026-11-30 09:15:00 1250.00',
    '¥1,250,000,000,000',
    // Dates and addresses grouped by dots, slashes and commas, whose digits together would be a card number: not one
    // number, since their separators differ (a card number's groups are separated alike).
    '22.01.2026 - 01.04.2026',
    '22.01.2026, 01.12.2026',
    '22/01/2026 - 02/03/2026',
    '22.01.2026-03.10.2026',
    '56.23.15.159, 10.221.122.7',
    '6.65.9.47 10.72.184.249',
  ];

  it.each(legitimate)('%s', (text) => {
    expect(maskCardNumbers(text)).toEqual({ text, masked: false, ibanMasked: false });
  });

  it('a number no card brand issues, or failing the Luhn check, is never masked (property)', () => {
    fc.assert(
      fc.property(fc.constantFrom('0', '1', '7', '9'), fc.stringMatching(/^[0-9]{12,18}$/), (first, rest) => {
        const digits = `${first}${rest}`;
        // Few brands start so (JCB's 1800, Troy's 9792): a number one of them issues is a card number.
        fc.pre(!creditCardType(digits).some((b) => b.lengths.includes(digits.length)));
        return !maskCardNumbers(`ref ${digits}`).masked;
      }),
      { numRuns: 2_000 },
    );
    fc.assert(
      fc.property(fc.stringMatching(/^4[0-9]{14}$/), (body) => {
        const wrong = `${body}${(Number(luhnDigit(body)) + 1) % 10}`;
        return !maskCardNumbers(wrong).masked;
      }),
      { numRuns: 2_000 },
    );
  });
});

const NOW = Date.parse('2026-11-30T09:20:00Z');
const admit = (event: object) => admitRecord(b64(event), { maxEventBytes: 65_536, maxEventAgeSeconds: 0 }, NOW);
const base = (type: string, data: Record<string, unknown>, eventId = `pan-${type}`) => ({
  eventId,
  type,
  occurredAt: '2026-11-30T09:15:00Z',
  recipient: {
    userId: 'u-7',
    locale: 'en',
    email: 'alex@example.com',
    phoneNumber: '+14155550123',
    pushEndpointArn: 'arn:aws:sns:us-east-1:123456789012:endpoint/GCM/bank-app/9a8b7c6d-5e4f-3a2b-1c0d-e9f8a7b6c5d4',
  },
  data,
});
/** Data of a type with every field given, a card number in the field `at`. */
function dataWithPan(type: string, at: string, pan: string): Record<string, unknown> {
  const data: Record<string, unknown> = {};
  for (const f of definitionOf(type)?.data ?? []) {
    const value = {
      identifier: f.name.endsWith('Last4') ? '4242' : 'ref-1',
      text: 'Blue Bottle',
      money: '12.50',
      date: '2026-12-24',
      instant: '2026-11-29T08:00:00Z',
      number: '3',
      enum: f.values?.[0],
      secret: '123456',
    }[f.kind];
    data[f.name] = f.name === at ? pan : value;
    if (f.currencyField !== undefined) data[f.currencyField] = 'USD';
  }
  return data;
}
/** Every identifier and text field of every type, except those whose definition gives their shape. */
const SHOWN = EVENT_TYPES.flatMap((type) =>
  (definitionOf(type)?.data ?? [])
    .filter((f) => (f.kind === 'identifier' && f.pattern === undefined) || f.kind === 'text')
    .map((f) => [type, f.name] as const),
);

describe('a card number in an event', () => {
  it('covers every shown field of every type', () => {
    expect(SHOWN.length).toBeGreaterThanOrEqual(17);
    for (const shown of [
      ['CardPayment', 'merchantName'],
      ['CardPayment', 'paymentId'],
      ['TransferFailed', 'reason'],
    ])
      expect(SHOWN).toContainEqual(shown);
  });

  it.each(SHOWN)('in %s.%s: accepted, masked where it is stored and hashed, never shown on any channel', (type, at) => {
    const pan = '4111 1111 1111 1111';
    const a = admit(base(type, dataWithPan(type, at, `Card ${pan}`)));
    if (!a.ok || !('event' in a)) throw new Error(JSON.stringify(a));
    expect(a.masked).toEqual([at]);
    expect(a.event.data[at]).toBe('Card **** **** **** 1111');
    expect(JSON.stringify(a.event)).not.toContain('1111 1111 1111');
    // The meaning is what is shown: the same event with the number masked is a duplicate.
    const maskedEvent = admit(base(type, dataWithPan(type, at, 'Card **** **** **** 1111')));
    expect(maskedEvent.ok && maskedEvent.payloadHash).toBe(a.payloadHash);
    for (const locale of LOCALES) {
      for (const channel of definitionOf(type)?.channels ?? []) {
        const message = render(
          { template: type, locale, channel, data: a.event.data, occurredAt: a.event.occurredAt },
          brand,
        );
        expect(showsPan(JSON.stringify(message), '4111111111111111'), `${locale} ${channel}`).toBe(false);
      }
    }
  });

  it('joined by zero-width joiners in a merchant name (cleaning keeps them) or by dots in an identifier: stored masked, never shown', () => {
    const pan = '4111111111111111';
    const data = dataWithPan('CardPayment', 'merchantName', `Shop ${grouped(pan, 4, '\u200d')}`);
    data.paymentId = grouped(pan, 4, '.');
    const a = admit(base('CardPayment', data));
    if (!a.ok || !('event' in a)) throw new Error(JSON.stringify(a));
    expect(a.masked).toEqual(['paymentId', 'merchantName']);
    expect(readsPan(JSON.stringify(a.event), pan)).toBe(false);
    for (const channel of definitionOf('CardPayment')?.channels ?? []) {
      const message = render(
        { template: 'CardPayment', locale: 'en', channel, data: { ...data } as Record<string, string> },
        brand,
      );
      expect(readsPan(JSON.stringify(message), pan), channel).toBe(false);
    }
  });

  it.each(SHOWN)('in %s.%s of a notification written before the rule: never shown when it is rendered', (type, at) => {
    const data = dataWithPan(type, at, '5555-5555-5555-4444') as Record<string, string>;
    for (const channel of definitionOf(type)?.channels ?? []) {
      const message = render(
        { template: type, locale: 'ja', channel, data, occurredAt: '2026-11-30T09:15:00Z' },
        brand,
      );
      expect(showsPan(JSON.stringify(message), '5555555555554444'), channel).toBe(false);
    }
  });
});

describe('a field whose definition gives its shape', () => {
  it('cardLast4 and accountLast4 are four digits: the whole card number there is refused, naming the field, never the value', () => {
    const card = base('CardPayment', dataWithPan('CardPayment', 'cardLast4', '4111111111111111'));
    const a = admit(card);
    expect(a).toMatchObject({ ok: false, rejection: { reason: 'SCHEMA_VIOLATION' } });
    const detail = a.ok ? '' : a.rejection.detail;
    expect(detail).toMatch(/data\.cardLast4/);
    expect(detail).toMatch(/pattern/);
    expect(digitsOf(detail)).not.toContain('4111');
    for (const wrong of ['42', '42424', ' 4242', '４２４２', '42a2', '****']) {
      expect(admit(base('CardPayment', dataWithPan('CardPayment', 'cardLast4', wrong))), wrong).toMatchObject({
        ok: false,
        rejection: { reason: 'SCHEMA_VIOLATION' },
      });
    }
    expect(admit(base('CardPayment', dataWithPan('CardPayment', 'cardLast4', '0042')))).toMatchObject({ ok: true });
    for (const type of ['LowBalance', 'StatementReady', 'DirectDebitUpcoming']) {
      expect(admit(base(type, dataWithPan(type, 'accountLast4', '12345678'))), type).toMatchObject({
        ok: false,
        rejection: { reason: 'SCHEMA_VIOLATION' },
      });
    }
  });
});

describe('an IBAN spaced out from its first character', () => {
  it('is masked in what is shown as in the kept bytes: the quick check reads past the spaces and dashes the masker does', () => {
    for (const written of ['IT 29 X054 2811 101A BCDE FGHI JKL', 'I-T-6-0 X054 2811 1010 0000 0123 456']) {
      const shown = maskCardNumbers(written);
      expect(shown.ibanMasked, written).toBe(true);
      expect(shown.text).toMatch(/\*{4} \*{4}/);
    }
  });
});

describe('what ingest stores and reports', () => {
  const record = (offset: number, value: object | string) => ({ topic: 'pan', partition: 0, offset, value });

  it('a refused event’s kept copy has its card numbers masked, in JSON and in a schema registry’s bytes', async () => {
    const store = new MemoryInboxStore();
    const refused = base('CardPayment', dataWithPan('CardPayment', 'cardLast4', '4111111111111111'), 'pan-q-1');
    const badCurrency = {
      ...base('CardPayment', dataWithPan('CardPayment', 'merchantName', 'Shop 5555 5555 5555 4444'), 'pan-q-2'),
    };
    (badCurrency.data as Record<string, unknown>).currency = 'XYZ';
    const result = await ingestBatch(mskEvent([record(0, refused), record(1, badCurrency)]), memoryBatchDeps(store));
    expect(result.results.map((r) => r.kind)).toEqual(['quarantined', 'quarantined']);
    const kept = [...store.items.values()].filter((i): i is QuarantineItem => i.kind === 'QUARANTINE');
    expect(kept).toHaveLength(2);
    for (const item of kept) {
      const raw = Buffer.from(item.raw, 'base64').toString('utf8');
      expect(JSON.parse(raw)).toMatchObject({ type: 'CardPayment' });
      expect(showsPan(raw, '4111111111111111') || showsPan(raw, '5555555555554444'), raw).toBe(false);
    }
    // Binary formats keep their length prefixes: each masked byte is replaced, never removed.
    const avroLike = Buffer.concat([
      Buffer.from([0, 0, 0, 0, 7, 0x20]),
      Buffer.from('4111111111111111'),
      Buffer.from([0xff, 0x02]),
    ]);
    const masked = maskCardNumbersInBytes(avroLike);
    expect(masked.masked).toBe(true);
    expect(masked.bytes.length).toBe(avroLike.length);
    expect(Buffer.from(masked.bytes).toString('latin1')).toContain('************1111');
  });

  it('a quarantined record is reported with its kept detail: a card number a duplicate key quotes never reaches the log line', async () => {
    const store = new MemoryInboxStore();
    const value = '{"eventId":"pan-dup","x4111111111111111":1,"x4111111111111111":2}';
    const result = await ingestBatch(mskEvent([record(0, value)]), memoryBatchDeps(store));
    const [r] = result.results;
    if (r?.kind !== 'quarantined') throw new Error(`not quarantined: ${r?.kind}`);
    const kept = store.quarantined('pan', 0, 0) as QuarantineItem;
    expect(r.rejection.detail).toBe(kept.detail);
    expect(readsPan(r.rejection.detail, '4111111111111111'), r.rejection.detail).toBe(false);
  });

  it('bytes that are not UTF-8 (beyond U+10FFFF, a surrogate, an overlong form) are bytes: nothing throws, a number beside them is masked', () => {
    for (const bad of [
      [0xf4, 0x90, 0x80, 0x80],
      [0xed, 0xa0, 0x80],
      [0xe0, 0x80, 0xb1],
      [0xf0, 0x80, 0x80, 0xb1],
    ]) {
      const bytes = Buffer.concat([Buffer.from(bad), Buffer.from(' 4111 1111 1111 1111')]);
      const masked = maskCardNumbersInBytes(bytes);
      expect(masked.bytes.length).toBe(bytes.length);
      expect(Buffer.from(masked.bytes.subarray(0, bad.length))).toEqual(Buffer.from(bad));
      expect(Buffer.from(masked.bytes).toString('latin1')).toContain('**** **** **** 1111');
    }
  });

  it('a refused JSON event’s kept copy has a card number masked also where JSON escapes spell its digits or separators', async () => {
    const store = new MemoryInboxStore();
    const event = base('CardPayment', dataWithPan('CardPayment', 'merchantName', 'PAN_HERE'), 'pan-q-3');
    (event.data as Record<string, unknown>).currency = 'XYZ';
    // What a JSON producer may write: escaped digits (\u0034 is 4), an escaped slash, an escaped no-break space.
    const escaped = [
      '\\u0034\\u0031\\u0031\\u0031 1111 1111 1111',
      '4111\\/1111\\/1111\\/1111',
      '4111\\u00a01111\\u00a01111\\u00a01111',
      '\\ud835\\udfdc111 1111 1111 1111',
    ];
    const records = escaped.map((pan, i) => ({
      topic: 'pan',
      partition: 0,
      offset: i,
      value: JSON.stringify({ ...event, eventId: `pan-q-3-${i}` }).replace('PAN_HERE', pan),
    }));
    for (const r of records) expect(readsPan(JSON.parse(r.value).data.merchantName, '4111111111111111')).toBe(true);
    await ingestBatch(mskEvent(records), memoryBatchDeps(store));
    const kept = [...store.items.values()].filter((i): i is QuarantineItem => i.kind === 'QUARANTINE');
    expect(kept).toHaveLength(escaped.length);
    for (const item of kept) {
      const raw = Buffer.from(item.raw, 'base64').toString('utf8');
      const merchant = (JSON.parse(raw) as { data: { merchantName: string } }).data.merchantName;
      expect(readsPan(merchant, '4111111111111111'), raw).toBe(false);
    }
  });

  it('a refused zlib-compressed Glue record’s kept copy has its card numbers masked, and still replays as the same record', async () => {
    const glue = {
      kind: 'glue' as const,
      schema: async () => ({ format: 'JSON' as const, definition: '{}' }),
    };
    const event = base('CardPayment', dataWithPan('CardPayment', 'merchantName', 'Shop 5555 5555 5555 4444'), 'pan-z');
    (event.data as Record<string, unknown>).currency = 'XYZ';
    const compressed = (payload: Buffer) =>
      Buffer.concat([Buffer.from([3, 5]), Buffer.alloc(16, 9), deflateSync(payload)]);
    const quarantine = async (value: Buffer) => {
      const store = new MemoryInboxStore();
      const deps = { ...memoryBatchDeps(store), schemas: new SchemaCache(glue, { sleep: async () => {} }) };
      await ingestBatch(mskEvent([{ topic: 'pan', partition: 0, offset: 0, value }]), deps);
      return store.quarantined('pan', 0, 0) as QuarantineItem;
    };
    const item = await quarantine(compressed(Buffer.from(JSON.stringify(event))));
    expect(item.reason).toBe('INVALID_AMOUNT');
    const kept = Buffer.from(item.raw, 'base64');
    const header = readWireHeader(kept, 65_536);
    if (header.kind !== 'wire') throw new Error(header.kind);
    expect(readsPan(header.payload.toString('utf8'), '5555555555554444')).toBe(false);
    expect(JSON.parse(header.payload.toString('utf8'))).toMatchObject({ eventId: 'pan-z' });
    const replayed = await quarantine(kept);
    expect([replayed.reason, replayed.detail]).toEqual([item.reason, item.detail]);
  });

  it('an accepted event with a card number is stored masked, and the fields are reported (never the value)', async () => {
    const store = new MemoryInboxStore();
    const event = base('TransferCompleted', {
      transferId: 't-1',
      amount: '10.00',
      currency: 'USD',
      counterpartyName: 'Jordan 4111111111111111',
      reason: 'card 378282246310005',
    });
    const result = await ingestBatch(mskEvent([record(0, event)]), memoryBatchDeps(store, { maxEventAgeSeconds: 0 }));
    expect(result.results[0]).toMatchObject({ kind: 'accepted', masked: ['counterpartyName', 'reason'] });
    const stored = JSON.stringify([...store.items.values()]);
    expect(showsPan(stored, '4111111111111111')).toBe(false);
    expect(showsPan(stored, '378282246310005')).toBe(false);
    const notifications = [...store.items.values()].filter((i): i is NotificationItem => i.kind === 'NOTIFICATION');
    expect(notifications.map((n) => n.data.counterpartyName)).toEqual(Array(3).fill('Jordan ************1111'));
  });
});

import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { escape as escapeHtml } from 'html-escaper';
import Mustache from 'mustache';
import { describe, expect, it } from 'vitest';
import { pushPayload } from '../../functions/dispatch/senders.ts';
import type { Brand } from '../../functions/domain/brand.ts';
import { dataPlaceholders, definitionOf, EVENT_TYPES } from '../../functions/domain/catalogue.ts';
import { CHANNELS } from '../../functions/domain/channels.ts';
import { cleanDisplayText } from '../../functions/domain/display-text.ts';
import type { TransferData } from '../../functions/domain/event/contract.ts';
import { LOCALES, type Locale } from '../../functions/domain/locale.ts';
import { loadAllTemplates } from '../../functions/domain/template-sets.ts';

/** The transfers: the edge cases below are their data (test/unit/catalogue.test.ts renders every other type). */
const TRANSFER_TYPES = ['TransferCompleted', 'TransferFailed'];

import { HTML_FIELDS, SHORT_FIELDS, TEXT_FIELDS } from '../../functions/domain/message-view.ts';
import { minorUnit } from '../../functions/domain/money.ts';
import type { NotificationItem } from '../../functions/domain/notification.ts';
import { gsmFriendly, smsSize } from '../../functions/domain/sms.ts';
import { compiledSet } from '../../functions/domain/template-sets.ts';
import { TEXT_PARTIALS } from '../../functions/domain/templates.generated.ts';
import {
  formatAmount,
  type Message,
  RenderError,
  render,
  type TemplateInput,
} from '../../functions/domain/templates.ts';
import { isSafeDisplayText, isSafeMultilineText } from '../../tools/chaos/text-oracle.ts';
import { EXAMPLE_BRAND } from '../../tools/local/example-brand.ts';

// Every notice type's templates (dispatch loads a type when it first renders one: template-sets.ts).
await loadAllTemplates();

const OCCURRED = '2026-11-30T09:15:00Z';
const brand = EXAMPLE_BRAND;
const r = (input: Omit<TemplateInput, 'occurredAt'> & { occurredAt?: string }, b: Brand = brand) =>
  render({ occurredAt: OCCURRED, ...input }, b);
const email = (m: Message) => {
  if (m.channel !== 'EMAIL') throw new Error(`expected an email, got ${m.channel}`);
  return m;
};

/** Every text a message carries. */
const texts = (m: Message) =>
  m.channel === 'EMAIL' ? [m.subject, m.text, m.html] : m.channel === 'PUSH' ? [m.title, m.body] : [m.text];
const everyMessage = function* (d: TransferData) {
  for (const template of TRANSFER_TYPES)
    for (const locale of LOCALES)
      for (const channel of CHANNELS) yield { template, locale, channel, m: r({ template, locale, channel, data: d }) };
};

const data = {
  transferId: 't-99',
  amount: '10000',
  currency: 'JPY',
  counterpartyName: 'Taro Yamada',
  reason: 'insufficient funds',
};

/** Gmail clips a message whose HTML is over 102 KB ("[Message clipped]"), hiding the footer. */
const GMAIL_CLIP_BYTES = 102 * 1024;

describe('templates: money', () => {
  it('formats amounts with the currency, from the decimal string', () => {
    expect(formatAmount('10000', 'JPY', 'en')).toBe('¥10,000');
    expect(formatAmount('12.50', 'USD', 'en')).toBe('$12.50');
    expect(formatAmount('10000', 'JPY', 'ja')).toBe('￥10,000');
    // 17 significant digits: a float would round this; the decimal string does not.
    expect(formatAmount('123456789012345.67', 'USD', 'en')).toBe('$123,456,789,012,345.67');
  });

  it('shows exactly the currency minor unit of fraction digits (ISO 4217, not CLDR)', () => {
    expect(formatAmount('12.5', 'USD', 'en')).toBe('$12.50');
    expect(formatAmount('12', 'USD', 'en')).toBe('$12.00');
    expect(formatAmount('1.5', 'BHD', 'en')).toBe('BHD\u00a01.500');
    expect(formatAmount('1.5', 'KWD', 'ja')).toBe('KWD\u00a01.500');
    // CLDR shows IQD with 0 digits; ISO 4217 says 3.
    expect(formatAmount('1500.25', 'IQD', 'en')).toBe('IQD\u00a01,500.250');
    expect(formatAmount('1.2345', 'CLF', 'en')).toBe('CLF\u00a01.2345');
    expect(formatAmount('0', 'JPY', 'ja')).toBe('￥0');
  });

  it('renders 15-digit amounts digit for digit in every template, locale and channel', () => {
    for (const [amount, currency, en, ja] of [
      ['999999999999999.99', 'USD', '$999,999,999,999,999.99', '$999,999,999,999,999.99'],
      ['999999999999999', 'JPY', '¥999,999,999,999,999', '￥999,999,999,999,999'],
      ['123456789012345.678', 'BHD', 'BHD 123,456,789,012,345.678', 'BHD\u00a0123,456,789,012,345.678'],
      ['100000000000000.0001', 'CLF', 'CLF 100,000,000,000,000.0001', 'CLF\u00a0100,000,000,000,000.0001'],
      ['900719925474099.3', 'EUR', '€900,719,925,474,099.30', '€900,719,925,474,099.30'],
    ] as const) {
      for (const { locale, channel, m } of everyMessage({ ...data, amount, currency })) {
        // en and ja as written here; a language a bank adds, as Intl formats the amount for it.
        const shown = locale === 'en' ? en : locale === 'ja' ? ja : formatAmount(amount, currency, locale);
        // An SMS in GSM-7 swaps no-break spaces for plain ones; every other text keeps them.
        const variants = [shown, shown.replace(' ', '\u00a0'), shown.replace(/[\u00a0\u202f]/g, ' ')];
        expect(
          texts(m).some((t) => variants.some((v) => t.includes(v))),
          `${amount} ${currency} ${locale} ${channel}`,
        ).toBe(true);
      }
    }
  });

  it('refuses to show an amount it cannot show exactly (RenderError), never a rounded one', () => {
    expect(() => formatAmount('0.004', 'USD', 'en')).toThrow(RenderError);
    expect(() => formatAmount('10000.5', 'JPY', 'ja')).toThrow(RenderError);
    expect(() => formatAmount('999999999999999.9999', 'USD', 'en')).toThrow(RenderError);
    expect(() => formatAmount('1', 'XAU', 'en')).toThrow(RenderError);
    expect(() =>
      r({ template: 'TransferCompleted', locale: 'en', channel: 'SMS', data: { ...data, amount: '1.5' } }),
    ).toThrow(RenderError);
  });

  it('knows the ISO 4217 minor units', () => {
    expect([minorUnit('USD'), minorUnit('JPY'), minorUnit('BHD'), minorUnit('KWD'), minorUnit('IQD')]).toEqual([
      2, 0, 3, 3, 3,
    ]);
    expect([minorUnit('CLF'), minorUnit('ISK'), minorUnit('XCG'), minorUnit('XAU'), minorUnit('usd')]).toEqual([
      4,
      0,
      2,
      undefined,
      undefined,
    ]);
  });
});

describe('templates: what the customer receives', () => {
  it('an email carries the bank as sender, a subject, a text alternative and HTML with lang, viewport and footer', () => {
    const en = email(r({ template: 'TransferCompleted', locale: 'en', channel: 'EMAIL', data }));
    expect(en).toMatchObject({ fromName: 'Example Bank', subject: 'Your transfer is complete' });
    expect(en.text).toContain('Your transfer of ¥10,000 to Taro Yamada is complete.');
    expect(en.text).toContain('Reference: t-99');
    expect(en.text).toContain('We will never ask for your password or PIN.');
    expect(en.text).toContain('https://bank.example/help');
    expect(en.html).toMatch(/^<!doctype html><html lang="en" dir="ltr"/);
    expect(en.html).toContain('<meta name="viewport" content="width=device-width, initial-scale=1">');
    expect(en.html).toContain('<title>Your transfer is complete</title>');
    expect(en.html).toContain('We will never ask for your password or PIN.');
    expect(en.html).toContain('href="tel:+18005550100"');
    expect(en.html).toContain('#0f4c81');

    const ja = email(r({ template: 'TransferCompleted', locale: 'ja', channel: 'EMAIL', data }));
    expect(ja).toMatchObject({ fromName: 'サンプル銀行', subject: 'お振込みが完了しました' });
    expect(ja.html).toMatch(/^<!doctype html><html lang="ja" dir="ltr"/);
    expect(ja.text).toContain('Taro Yamada 様への￥10,000のお振込みが完了しました');
    expect(ja.text).toContain('パスワードや暗証番号をお尋ねすることは決してありません');
  });

  it('the HTML and its text alternative state the same facts: amount, payee, reference, date and time, reason', () => {
    for (const template of TRANSFER_TYPES)
      for (const locale of LOCALES) {
        const m = email(r({ template, locale, channel: 'EMAIL', data }));
        const facts =
          locale === 'en'
            ? ['Example Bank', '¥10,000', 'Taro Yamada', 't-99', 'November 30, 2026 at 9:15']
            : locale === 'ja'
              ? ['サンプル銀行', '￥10,000', 'Taro Yamada', 't-99', '2026年11月30日 18:15 JST']
              : // A language a bank adds: its bank name and its amount, whatever its wording.
                [brand.name[locale], formatAmount('10000', 'JPY', locale), 'Taro Yamada', 't-99'];
        if (template === 'TransferFailed') facts.push('insufficient funds');
        for (const fact of facts) {
          expect(m.text, `${template}/${locale} text: ${fact}`).toContain(fact);
          expect(m.html, `${template}/${locale} html: ${fact}`).toContain(fact);
        }
      }
  });

  it('the HTML has a preheader, hidden, ahead of the body', () => {
    const m = email(r({ template: 'TransferFailed', locale: 'en', channel: 'EMAIL', data }));
    expect(m.html).toMatch(
      /<body[^>]*> <div style="display:none;[^"]*">¥10,000 to Taro Yamada was not sent: insufficient funds\. Reference t-99\.(&#847;&zwnj;&nbsp;)+<\/div>/,
    );
  });

  it('SMS and push are signed with the bank name', () => {
    for (const template of TRANSFER_TYPES)
      for (const locale of LOCALES) {
        const name = brand.name[locale];
        const sms = r({ template, locale, channel: 'SMS', data });
        const push = r({ template, locale, channel: 'PUSH', data });
        const signed = { en: `${name}: `, ja: `【${name}】` }[locale as string] ?? '';
        expect(sms.channel === 'SMS' && sms.text.startsWith(signed) && sms.text.includes(name)).toBe(true);
        expect(push.channel === 'PUSH' && push.title.startsWith(name)).toBe(true);
      }
    expect(r({ template: 'TransferCompleted', locale: 'en', channel: 'SMS', data })).toEqual({
      channel: 'SMS',
      text: 'Example Bank: your transfer of ¥10,000 to Taro Yamada is complete. Ref t-99',
      segments: 1,
    });
  });

  it("another bank's settings change every channel: its name, colour, logo, support and legal text", () => {
    const other: Brand = {
      ...brand,
      name: { ...brand.name, en: 'Harbor & Co. "Savings"', ja: 'みなと銀行' },
      brandColor: '#006c5b',
      supportUrl: 'https://harbor.example/contact?from=email&x=1',
      supportPhone: '0120-123-456',
      logo: { url: 'https://cdn.harbor.example/logo@2x.png', width: 120, height: 32 },
      legalFooter: { ...brand.legalFooter, en: 'Harbor & Co. Member FDIC.', ja: 'みなと銀行株式会社 登録金融機関' },
    };
    const m = email(r({ template: 'TransferCompleted', locale: 'en', channel: 'EMAIL', data }, other));
    expect(m.fromName).toBe('Harbor & Co. "Savings"');
    expect(m.html).toContain(
      '<img src="https://cdn.harbor.example/logo@2x.png" alt="Harbor &amp; Co. &quot;Savings&quot;" width="120" height="32"',
    );
    expect(m.html).toContain('href="https://harbor.example/contact?from=email&amp;x=1"');
    expect(m.html).toContain('href="tel:0120123456"');
    expect(m.html).toContain('#006c5b');
    expect(m.html).not.toContain('#0f4c81');
    expect(m.html).toContain('Harbor &amp; Co. Member FDIC.');
    expect(m.text).toContain('Harbor & Co. Member FDIC.');
    const sms = r({ template: 'TransferCompleted', locale: 'ja', channel: 'SMS', data }, other);
    expect(sms.channel === 'SMS' && sms.text.startsWith('【みなと銀行】')).toBe(true);
  });
});

describe('templates: a language removed from templates/', () => {
  it('a notification written in it is still sent, in the default language', () => {
    for (const channel of CHANNELS) {
      const input = { template: 'TransferCompleted', channel, data };
      expect(r({ ...input, locale: 'xx' as Locale })).toEqual(r({ ...input, locale: 'en' }));
    }
  });
});

describe('templates: the moment in the customer time', () => {
  const html = (over: Partial<TemplateInput>) =>
    email(r({ template: 'TransferCompleted', locale: 'en', channel: 'EMAIL', data, ...over }));

  it("shows occurredAt in the recipient's time zone, in the locale's format", () => {
    expect(html({ timeZone: 'America/New_York' }).text).toMatch(/Date and time: November 30, 2026 at 4:15\sAM EST/);
    expect(html({ locale: 'ja', timeZone: 'America/New_York' }).text).toContain('日時: 2026年11月30日 4:15 GMT-5');
    // The date is the customer's: 12:00 UTC is already December 1st on Kiritimati (UTC+14).
    expect(html({ occurredAt: '2026-11-30T12:00:00Z', timeZone: 'Pacific/Kiritimati' }).text).toContain(
      'December 1, 2026 at 2:00',
    );
    // An instant written with another offset is the same moment.
    expect(html({ occurredAt: '2026-11-30T18:15:00+09:00', locale: 'ja' }).text).toContain('2026年11月30日 18:15 JST');
  });

  it("without a time zone: the brand's default for the locale (en UTC, ja Asia/Tokyo in the example)", () => {
    expect(html({}).text).toMatch(/November 30, 2026 at 9:15\sAM UTC/);
    expect(html({ locale: 'ja' }).text).toContain('2026年11月30日 18:15 JST');
    const berlin = { ...brand, defaultTimeZone: { ...brand.defaultTimeZone, en: 'Europe/Berlin' } };
    expect(email(r({ template: 'TransferCompleted', locale: 'en', channel: 'EMAIL', data }, berlin)).text).toMatch(
      /10:15\sAM GMT\+1/,
    );
  });

  it('an item written before occurredAt was kept shows no time rather than a wrong one', () => {
    const m = email(render({ template: 'TransferCompleted', locale: 'en', channel: 'EMAIL', data }, brand));
    expect(m.text).not.toContain('Date and time');
    expect(m.html).not.toContain('Date and time');
    expect(m.html).not.toMatch(/\{\{|\}\}/);
  });

  it('push and SMS leave the time out (they arrive within the max event age; SMS pays by the character)', () => {
    for (const channel of ['PUSH', 'SMS'] as const)
      for (const t of texts(r({ template: 'TransferCompleted', locale: 'en', channel, data }))) {
        expect(t).not.toContain('2026');
      }
  });
});

/** Display text as ingest stores it: cleaned. */
const clean = (s: string, max = 140) => cleanDisplayText(s, max).text;

const EDGE_CASES: Record<string, TransferData> = {
  typical: {
    transferId: 't-2026-000123',
    amount: '12.50',
    currency: 'USD',
    counterpartyName: 'Jordan Lee',
    reason: 'insufficient funds',
  },
  kanjiPayee: {
    transferId: 't-99',
    amount: '10000',
    currency: 'JPY',
    counterpartyName: '山田 太郎',
    reason: '残高不足',
  },
  longestName: {
    transferId: 't-1',
    amount: '12.50',
    currency: 'USD',
    counterpartyName: clean('Wolfeschlegelsteinhausenbergerdorff '.repeat(6)),
    reason: 'insufficient funds',
  },
  longestNameJa: {
    transferId: 't-1',
    amount: '10000',
    currency: 'JPY',
    counterpartyName: clean('寿限無寿限無五劫の擦り切れ海砂利水魚の'.repeat(10)),
    reason: '残高不足',
  },
  longestReason: {
    transferId: 't-1',
    amount: '12.50',
    currency: 'USD',
    counterpartyName: 'Jordan Lee',
    reason: clean('the receiving bank declined the payment because the account is closed '.repeat(4), 200),
  },
  largestAmount: {
    transferId: 'T'.repeat(128),
    amount: '999999999999999.99',
    currency: 'USD',
    counterpartyName: 'Jordan Lee',
    reason: 'insufficient funds',
  },
  rtl: {
    transferId: 't-1',
    amount: '12.50',
    currency: 'USD',
    counterpartyName: clean('شركة\u202E المثال\u200F للتجارة'),
    reason: clean('\u05D4\u05D7\u05E9\u05D1\u05D5\u05DF \u05E1\u05D2\u05D5\u05E8'),
  },
  combining: {
    transferId: 't-1',
    amount: '1.5',
    currency: 'BHD',
    counterpartyName: clean(`Zoe\u0308 Z${'\u0301'.repeat(80)}algo`),
    reason: 'insufficient funds',
  },
  markup: {
    transferId: 't-1',
    amount: '12.50',
    currency: 'USD',
    counterpartyName: '<img src=x onerror=alert(1)> & "co" \'s',
    reason: '</td></tr></table><script>alert(1)</script>',
  },
  // A failed transfer's reason is required: present, and empty (what a payee's bank may give; ingest accepts it).
  noNameNoReason: { transferId: 't-1', amount: '12.50', currency: 'USD', reason: '' },
};

/**
 * SMS segments per case, per type/locale (Completed en, Completed ja, Failed en, Failed ja). English is GSM-7
 * (160 characters) unless the name or reason is not; Japanese is always UCS-2 (70).
 */
const SEGMENTS: Record<string, [number, number, number, number]> = {
  typical: [1, 1, 1, 1],
  kanjiPayee: [1, 1, 1, 1],
  longestName: [1, 1, 1, 1],
  longestNameJa: [2, 1, 1, 1],
  longestReason: [1, 1, 1, 1],
  largestAmount: [2, 3, 2, 3],
  rtl: [2, 1, 1, 1],
  combining: [2, 2, 1, 1],
  markup: [1, 1, 1, 1],
  noNameNoReason: [1, 1, 1, 1],
};

describe('templates: every template × locale × channel with edge-case data', () => {
  for (const [name, d] of Object.entries(EDGE_CASES)) {
    it(`${name}: placeholders resolved, markup escaped, text clean, HTML under Gmail's clip, SMS segments known`, () => {
      const segments: number[] = [];
      for (const { template, locale, channel, m } of everyMessage(d)) {
        const where = `${name} ${template}/${locale}/${channel}`;
        for (const t of texts(m)) expect(t, where).not.toMatch(/\{\{|\}\}/);
        if (m.channel === 'EMAIL') {
          expect(Buffer.byteLength(m.html), where).toBeLessThan(GMAIL_CLIP_BYTES);
          expect(m.html, where).toContain(`<html lang="${locale}"`);
          expect(m.html, where).toContain('name="viewport"');
          expect(m.text.length, where).toBeGreaterThan(200);
          expect(isSafeDisplayText(m.subject) && isSafeDisplayText(m.html), where).toBe(true);
          expect(isSafeMultilineText(m.text), where).toBe(true);
          expect(m.html, where).not.toMatch(/<script|<img src=x|<\/td><\/tr><\/table><script/);
          if (d.counterpartyName !== undefined) expect(m.html, where).toContain(escapeHtml(d.counterpartyName));
          if (d.counterpartyName !== undefined) expect(m.text, where).toContain(d.counterpartyName);
          expect(m.html, where).toContain(escapeHtml(d.transferId));
        } else {
          for (const t of texts(m)) expect(isSafeDisplayText(t), where).toBe(true);
        }
        if (m.channel === 'SMS') {
          expect(m.segments, where).toBe(smsSize(m.text).segments);
          // The table below is for the wording shipped in en and ja.
          if (locale === 'en' || locale === 'ja') segments.push(m.segments);
        }
      }
      expect(segments, `${name}: SMS segments (Completed en, ja, Failed en, ja)`).toEqual(SEGMENTS[name]);
    });
  }

  it('a push fits the 4 KB APNs and FCM payload even when the payee and the reason are as heavy as cleaning lets them be', () => {
    // 140 and 200 characters of 32 code points each: over 20 KB of push text before fitting.
    const heavy = (n: number) =>
      Array.from({ length: n }, (_, i) => `${String.fromCharCode(0x41 + (i % 26))}${'\u0301'.repeat(31)}`).join('');
    const data = { ...EDGE_CASES.typical!, counterpartyName: clean(heavy(200)), reason: clean(heavy(300), 200) };
    const id = `${'e'.repeat(128)}#EMAIL`;
    for (const template of ['TransferCompleted', 'TransferFailed'] as const) {
      for (const locale of ['en', 'ja'] as const) {
        const m = r({ template, locale, channel: 'PUSH', data });
        if (m.channel !== 'PUSH') throw new Error('not a push');
        const payload = JSON.parse(pushPayload({ notificationId: id } as NotificationItem, m));
        expect(Buffer.byteLength(payload.APNS), `${template}/${locale}`).toBeLessThanOrEqual(4096);
        expect(Buffer.byteLength(payload.GCM), `${template}/${locale}`).toBeLessThanOrEqual(4096);
        expect(m.body, `${template}/${locale}`).toContain('…');
        expect(isSafeDisplayText(m.body), `${template}/${locale}`).toBe(true);
      }
    }
    // Typical data is never cut.
    const typical = r({ template: 'TransferCompleted', locale: 'en', channel: 'PUSH', data: EDGE_CASES.typical! });
    expect(typical.channel === 'PUSH' && typical.body).toContain('Jordan Lee');
  });

  it('an English SMS stays GSM-7 for typical data: one segment of 160, not 70', () => {
    const m = r({ template: 'TransferCompleted', locale: 'en', channel: 'SMS', data: EDGE_CASES.typical! });
    expect(m.channel === 'SMS' && smsSize(m.text).encoding).toBe('GSM-7');
    // A no-break space (BHD 1.500) or an ellipsis would make it UCS-2: their GSM-7 look-alikes are used instead.
    expect(gsmFriendly('BHD\u00a01.500 to Pat…')).toBe('BHD 1.500 to Pat...');
    expect(gsmFriendly('山田\u00a0太郎')).toBe('山田\u00a0太郎');
  });

  it('an SMS cuts the longest name to fit one segment, never below 12 characters; the email keeps it whole', () => {
    const d = EDGE_CASES.longestName!;
    const sms = r({ template: 'TransferCompleted', locale: 'en', channel: 'SMS', data: d });
    expect(sms.channel === 'SMS' && sms.text).toMatch(
      /^Example Bank: your transfer of \$12\.50 to Wolfeschlegelsteinhausenbergerdorff .+\.\.\. is complete\. Ref t-1$/,
    );
    expect(sms.channel === 'SMS' && smsSize(sms.text).units).toBeLessThanOrEqual(160);
    expect(email(r({ template: 'TransferCompleted', locale: 'en', channel: 'EMAIL', data: d })).text).toContain(
      d.counterpartyName,
    );
    const short = r({
      template: 'TransferCompleted',
      locale: 'en',
      channel: 'SMS',
      data: { ...d, counterpartyName: '山田太郎山田太郎山田太郎山田太郎山田太郎' },
    });
    expect(short.channel === 'SMS' && short.text).toContain('to 山田太郎山田太郎山田太郎… is complete');
  });

  it('a name that spells a placeholder is shown as written, never rendered', () => {
    const d = { ...data, counterpartyName: '{{bank}} {{{supportUrl}}} {{#to}}x{{/to}}' };
    for (const { m } of everyMessage(d)) {
      if (m.channel === 'EMAIL') {
        expect(m.text).toContain('{{bank}} {{{supportUrl}}} {{#to}}x{{/to}}');
        expect(m.html).toContain('{{bank}} {{{supportUrl}}} {{#to}}x{{/to}}');
      }
    }
  });

  it('strips CR/LF so nothing can be injected into a subject, title or SMS', () => {
    const evil = { ...data, counterpartyName: 'Taro\r\nBcc: victim@example.com', reason: 'x\r\nSubject: y' };
    for (const { m } of everyMessage(evil)) {
      const oneLineFields = m.channel === 'EMAIL' ? [m.subject] : m.channel === 'PUSH' ? [m.title, m.body] : [m.text];
      for (const f of oneLineFields) expect(f).not.toMatch(/[\r\n]/);
      if (m.channel === 'EMAIL') expect(m.text).not.toMatch(/^(Bcc|Subject):|\r/m);
    }
  });

  it('no control, line separator, bidi or ill-formed character reaches any sent text', () => {
    const evil = {
      ...data,
      counterpartyName: '\u202Eevil\u2028Bcc: x\u0000\uD800',
      reason: 'no\r\nfunds\u2066\u200B\uFFFE',
    };
    for (const { m } of everyMessage(evil)) {
      for (const t of texts(m)) expect(isSafeMultilineText(t), t).toBe(true);
      if (m.channel !== 'EMAIL') for (const t of texts(m)) expect(isSafeDisplayText(t), t).toBe(true);
    }
  });

  it('the text alternative has the same lines whatever the names hold (data adds no line break)', () => {
    const lineCount = (d: TransferData) =>
      email(r({ template: 'TransferFailed', locale: 'en', channel: 'EMAIL', data: d })).text.split('\n').length;
    expect(lineCount({ ...data, counterpartyName: 'a\nb\r\nc\u2028d', reason: 'x\n\ny' })).toBe(lineCount(data));
  });

  it('a TransferFailed whose reason is empty says it without one, as one without the field (ingest leaves out a reason that cleans to nothing)', () => {
    const { reason: _, ...withoutReason } = data;
    expect(r({ template: 'TransferFailed', locale: 'en', channel: 'SMS', data: withoutReason })).toEqual(
      r({ template: 'TransferFailed', locale: 'en', channel: 'SMS', data: { ...data, reason: '' } }),
    );
    const noReason = { ...data, reason: ' \u200b ' };
    const en = email(r({ template: 'TransferFailed', locale: 'en', channel: 'EMAIL', data: noReason }));
    expect(en.text).toContain('Your transfer of ¥10,000 to Taro Yamada could not be completed.');
    expect(en.text).not.toContain('Reason:');
    expect(en.html).not.toContain('>Reason<');
    expect(r({ template: 'TransferFailed', locale: 'en', channel: 'PUSH', data: noReason })).toMatchObject({
      body: '¥10,000 to Taro Yamada was not sent.',
    });
    expect(r({ template: 'TransferFailed', locale: 'ja', channel: 'SMS', data: noReason })).toMatchObject({
      text: '【サンプル銀行】￥10,000の振込を完了できませんでした。受付番号t-99',
    });
  });

  it('counts SMS segments for GSM-7 and UCS-2', () => {
    expect(smsSize('a'.repeat(160))).toEqual({ encoding: 'GSM-7', units: 160, segments: 1 });
    expect(smsSize('a'.repeat(161)).segments).toBe(2);
    expect(smsSize('€'.repeat(80))).toEqual({ encoding: 'GSM-7', units: 160, segments: 1 });
    expect(smsSize('あ'.repeat(70))).toEqual({ encoding: 'UCS-2', units: 70, segments: 1 });
    expect(smsSize('あ'.repeat(71)).segments).toBe(2);
  });
});

describe('templates: the compiled module', () => {
  it('uses only the placeholders each channel has, and never an unescaped one', () => {
    const names = (template: string) => {
      const found = new Set<string>();
      const walk = (tokens: unknown[][]) => {
        for (const [type, value, , , children] of tokens) {
          expect(type, `${value}`).not.toMatch(/^[&{=]$/);
          if (type === 'name' || type === '#' || type === '^') found.add(String(value));
          if (Array.isArray(children)) walk(children as unknown[][]);
        }
      };
      walk(Mustache.parse(template) as unknown as unknown[][]);
      return [...found];
    };
    for (const type of EVENT_TYPES)
      for (const locale of LOCALES) {
        const set = compiledSet(type, locale);
        const data = dataPlaceholders(definitionOf(type) ?? expect.fail(type));
        if (set === undefined) expect.fail(`${type}/${locale}`);
        for (const n of names(set.html)) expect([...HTML_FIELDS, ...data]).toContain(n);
        for (const n of names(set.text)) expect([...TEXT_FIELDS, ...data]).toContain(n);
        for (const t of [set.subject, set.pushTitle, set.pushBody, set.sms])
          for (const n of names(t)) expect([...SHORT_FIELDS, ...data]).toContain(n);
        for (const partial of Object.values(TEXT_PARTIALS[locale]))
          for (const n of names(partial)) expect(TEXT_FIELDS).toContain(n);
      }
  });

  it('is one line of HTML per email (nothing but data could add a line break, and data cannot)', () => {
    for (const type of EVENT_TYPES)
      for (const locale of LOCALES) expect(compiledSet(type, locale)?.html).not.toContain('\n');
  });

  it('the compiler refuses a misspelt placeholder, an unescaped one, an SMS of two lines, and a type without a description', async () => {
    const { generateModule, TEMPLATES_DIR } = await import('../../tools/scripts/templates.ts');
    const cases: [string, (source: string) => string, RegExp][] = [
      ['TransferCompleted/sms.en.txt', () => '{{bank}}: {{amout}}\n', /unknown placeholder \{\{amout\}\}/],
      ['TransferFailed/email.ja.mjml', (s) => s.replace('>{{reason}}</span>', '>{{{reason}}}</span>'), /skip escaping/],
      ['TransferCompleted/sms.en.txt', () => '{{bank}}\n{{amount}}\n', /must be one line/],
      ['partials/footer.en.txt', (s) => `${s}{{recipientEmail}}`, /unknown placeholder \{\{recipientEmail\}\}/],
      // The functions' catalogue leaves descriptions out; the folder must still say what a notice tells the customer.
      [
        'LowBalance/definition.json',
        (s) => JSON.stringify({ ...JSON.parse(s), description: undefined }),
        /LowBalance\/definition.json: description: what the notice tells the customer/,
      ],
    ];
    for (const [file, change, error] of cases) {
      const dir = mkdtempSync(join(tmpdir(), 'notifier-templates-'));
      cpSync(TEMPLATES_DIR, dir, { recursive: true });
      const original = readFileSync(join(dir, file), 'utf8');
      expect(change(original), `${file}: the change applies`).not.toBe(original);
      writeFileSync(join(dir, file), change(original));
      await expect(generateModule(dir), file).rejects.toThrow(error);
    }
  }, 60_000);

  it('is what templates/ compiles to (run `npm run templates` after editing a template)', async () => {
    const { generateModule, modulesCurrent } = await import('../../tools/scripts/templates.ts');
    expect(modulesCurrent(await generateModule()), 'templates.generated.ts is stale: npm run generate').toBe(true);
  }, 60_000);
});

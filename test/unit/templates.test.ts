import { describe, expect, it } from 'vitest';
import { CHANNELS } from '../../functions/domain/channels.ts';
import { isCleanDisplayText } from '../../functions/domain/display-text.ts';
import { EVENT_TYPES, LOCALES } from '../../functions/domain/event.ts';
import { minorUnit } from '../../functions/domain/money.ts';
import { smsSize } from '../../functions/domain/sms.ts';
import { formatAmount, type Message, RenderError, render } from '../../functions/domain/templates.ts';

/** Every text a message carries. */
const texts = (m: Message) =>
  m.channel === 'EMAIL' ? [m.subject, m.text, m.html] : m.channel === 'PUSH' ? [m.title, m.body] : [m.text];
const everyMessage = function* (d: typeof data) {
  for (const template of EVENT_TYPES)
    for (const locale of LOCALES)
      for (const channel of CHANNELS)
        yield { template, locale, channel, m: render({ template, locale, channel, data: d }) };
};

const data = {
  transferId: 't-99',
  amount: '10000',
  currency: 'JPY',
  counterpartyName: 'Taro Yamada',
  reason: 'insufficient funds',
};

describe('templates', () => {
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
      ['123456789012345.678', 'BHD', 'BHD\u00a0123,456,789,012,345.678', 'BHD\u00a0123,456,789,012,345.678'],
      ['100000000000000.0001', 'CLF', 'CLF\u00a0100,000,000,000,000.0001', 'CLF\u00a0100,000,000,000,000.0001'],
      ['900719925474099.3', 'EUR', '€900,719,925,474,099.30', '€900,719,925,474,099.30'],
    ] as const) {
      for (const { locale, channel, m } of everyMessage({ ...data, amount, currency })) {
        const shown = locale === 'en' ? en : ja;
        expect(
          texts(m).some((t) => t.includes(shown)),
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
      render({ template: 'TransferCompleted', locale: 'en', channel: 'SMS', data: { ...data, amount: '1.5' } }),
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

  it('renders en and ja email with subject, text and HTML', () => {
    const en = render({ template: 'TransferCompleted', locale: 'en', channel: 'EMAIL', data });
    expect(en).toMatchObject({ subject: 'Your transfer is complete' });
    expect(en.channel === 'EMAIL' && en.text).toBe(
      'Your transfer of ¥10,000 to Taro Yamada is complete. Reference: t-99.',
    );
    const ja = render({ template: 'TransferCompleted', locale: 'ja', channel: 'EMAIL', data });
    expect(ja).toMatchObject({ subject: 'お振込みが完了しました' });
    expect(ja.channel === 'EMAIL' && ja.html).toContain('<html lang="ja">');
    expect(ja.channel === 'EMAIL' && ja.text).toContain('Taro Yamada 様への￥10,000 のお振込みが完了しました');
  });

  it('renders TransferFailed with its reason', () => {
    const m = render({ template: 'TransferFailed', locale: 'en', channel: 'PUSH', data });
    expect(m).toEqual({
      channel: 'PUSH',
      title: 'Transfer failed',
      body: '¥10,000 to Taro Yamada was not sent: insufficient funds',
    });
  });

  it('escapes markup in names: no <script> reaches the HTML', () => {
    const m = render({
      template: 'TransferCompleted',
      locale: 'en',
      channel: 'EMAIL',
      data: { ...data, counterpartyName: '<script>alert(1)</script> & "co"' },
    });
    expect(m.channel === 'EMAIL' && m.html).toContain('&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;co&quot;');
    expect(m.channel === 'EMAIL' && m.html).not.toContain('<script>');
  });

  it('strips CR/LF so nothing can be injected into a subject, title or SMS', () => {
    const evil = { ...data, counterpartyName: 'Taro\r\nBcc: victim@example.com', reason: 'x\r\nSubject: y' };
    for (const template of EVENT_TYPES) {
      for (const locale of LOCALES) {
        for (const channel of CHANNELS) {
          const m: Message = render({ template, locale, channel, data: evil });
          const oneLineFields =
            m.channel === 'EMAIL' ? [m.subject] : m.channel === 'PUSH' ? [m.title, m.body] : [m.text];
          for (const f of oneLineFields) expect(f).not.toMatch(/[\r\n]/);
        }
      }
    }
  });

  it('a TransferFailed without a reason says it without one', () => {
    const { reason: _, ...noReason } = data;
    const en = render({ template: 'TransferFailed', locale: 'en', channel: 'EMAIL', data: noReason });
    expect(en.channel === 'EMAIL' && en.text).toBe(
      'Your transfer of ¥10,000 to Taro Yamada could not be completed. Reference: t-99.',
    );
    expect(render({ template: 'TransferFailed', locale: 'en', channel: 'PUSH', data: noReason })).toMatchObject({
      body: '¥10,000 to Taro Yamada was not sent.',
    });
    expect(render({ template: 'TransferFailed', locale: 'ja', channel: 'SMS', data: noReason })).toMatchObject({
      text: '【銀行】￥10,000の振込を完了できませんでした。受付番号t-99',
    });
  });

  it('no control, line separator, bidi or ill-formed character reaches any sent text', () => {
    const evil = {
      ...data,
      counterpartyName: '\u202Eevil\u2028Bcc: x\u0000\uD800',
      reason: 'no\r\nfunds\u2066\u200B\uFFFE',
    };
    for (const { m } of everyMessage(evil)) for (const t of texts(m)) expect(isCleanDisplayText(t), t).toBe(true);
  });

  it('keeps every SMS to one segment for typical data, and knows the count', () => {
    for (const template of EVENT_TYPES) {
      for (const locale of LOCALES) {
        const m = render({ template, locale, channel: 'SMS', data });
        expect(m.channel === 'SMS' && m.segments).toBe(1);
      }
    }
  });

  it('counts SMS segments for GSM-7 and UCS-2', () => {
    expect(smsSize('a'.repeat(160))).toEqual({ encoding: 'GSM-7', units: 160, segments: 1 });
    expect(smsSize('a'.repeat(161)).segments).toBe(2);
    expect(smsSize('€'.repeat(80))).toEqual({ encoding: 'GSM-7', units: 160, segments: 1 });
    expect(smsSize('あ'.repeat(70))).toEqual({ encoding: 'UCS-2', units: 70, segments: 1 });
    expect(smsSize('あ'.repeat(71)).segments).toBe(2);
  });
});

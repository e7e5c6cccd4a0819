import { describe, expect, it } from 'vitest';
import { CHANNELS } from '../../functions/domain/channels.ts';
import { EVENT_TYPES, LOCALES } from '../../functions/domain/event.ts';
import { smsSize } from '../../functions/domain/sms.ts';
import { formatAmount, type Message, render } from '../../functions/domain/templates.ts';

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

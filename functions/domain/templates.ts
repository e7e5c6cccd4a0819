/**
 * Message templates: TransferCompleted / TransferFailed × EMAIL / PUSH / SMS × en / ja.
 *
 * Every interpolated value is escaped for HTML (html-escaper); display text is cleaned again here (the same cleaning
 * as at ingest: idempotent), so no control, line break or bidi control can reach a header, a push or an SMS even from
 * an item written some other way. Amounts are shown digit for digit in the currency's minor unit, or not at all
 * (money.ts: a mismatch throws RenderError and the notification fails instead of showing a rounded figure).
 */
import { escape as escapeHtml } from 'html-escaper';
import type { Channel } from './channels.ts';
import { cleanDisplayText, NAME_MAX_GRAPHEMES, REASON_MAX_GRAPHEMES } from './display-text.ts';
import type { EventType, Locale, TransferData } from './event.ts';
import { formatAmount } from './money.ts';
import { smsSize } from './sms.ts';

export { formatAmount, RenderError } from './money.ts';

export interface EmailMessage {
  readonly channel: 'EMAIL';
  readonly subject: string;
  readonly text: string;
  readonly html: string;
}
export interface PushMessage {
  readonly channel: 'PUSH';
  readonly title: string;
  readonly body: string;
}
export interface SmsMessage {
  readonly channel: 'SMS';
  readonly text: string;
  readonly segments: number;
}
export type Message = EmailMessage | PushMessage | SmsMessage;

export interface TemplateInput {
  readonly template: EventType;
  readonly locale: Locale;
  readonly channel: Channel;
  readonly data: TransferData;
}

/** One line of plain text: control characters (CR, LF, TAB, NUL …) and line separators become a space. */
export const oneLine = (s: string) => s.replace(/[\p{Cc}\u2028\u2029]+/gu, ' ').trim();

interface Parts {
  amount: string;
  to: string;
  ref: string;
  reason: string;
}

interface Copy {
  subject: (p: Parts) => string;
  text: (p: Parts) => string;
  pushTitle: string;
  pushBody: (p: Parts) => string;
  sms: (p: Parts) => string;
}

const jaReason = (p: Parts) => (p.reason ? `（${p.reason}）` : '');

const COPY: Record<EventType, Record<Locale, Copy>> = {
  TransferCompleted: {
    en: {
      subject: () => 'Your transfer is complete',
      text: (p) => `Your transfer of ${p.amount}${p.to ? ` to ${p.to}` : ''} is complete. Reference: ${p.ref}.`,
      pushTitle: 'Transfer complete',
      pushBody: (p) => `${p.amount}${p.to ? ` to ${p.to}` : ''} has been sent.`,
      sms: (p) => `Bank: your transfer of ${p.amount}${p.to ? ` to ${p.to}` : ''} is complete. Ref ${p.ref}`,
    },
    ja: {
      subject: () => 'お振込みが完了しました',
      text: (p) => `${p.to ? `${p.to} 様への` : ''}${p.amount} のお振込みが完了しました。受付番号: ${p.ref}`,
      pushTitle: '振込完了',
      pushBody: (p) => `${p.to ? `${p.to} 様へ` : ''}${p.amount} を送金しました。`,
      sms: (p) => `【銀行】${p.to ? `${p.to}様へ` : ''}${p.amount}の振込が完了しました。受付番号${p.ref}`,
    },
  },
  TransferFailed: {
    en: {
      subject: () => 'Your transfer could not be completed',
      text: (p) =>
        `Your transfer of ${p.amount}${p.to ? ` to ${p.to}` : ''} could not be completed${p.reason ? `: ${p.reason}` : ''}. Reference: ${p.ref}.`,
      pushTitle: 'Transfer failed',
      pushBody: (p) => `${p.amount}${p.to ? ` to ${p.to}` : ''} was not sent${p.reason ? `: ${p.reason}` : '.'}`,
      sms: (p) => `Bank: your transfer of ${p.amount} failed${p.reason ? `: ${p.reason}` : ''}. Ref ${p.ref}`,
    },
    ja: {
      subject: () => 'お振込みを完了できませんでした',
      text: (p) =>
        `${p.to ? `${p.to} 様への` : ''}${p.amount} のお振込みを完了できませんでした${jaReason(p)}。受付番号: ${p.ref}`,
      pushTitle: '振込失敗',
      pushBody: (p) => `${p.amount} のお振込みを完了できませんでした${jaReason(p)}`,
      sms: (p) => `【銀行】${p.amount}の振込を完了できませんでした${jaReason(p)}。受付番号${p.ref}`,
    },
  },
};

const LANG: Record<Locale, string> = { en: 'en', ja: 'ja' };

export function render(input: TemplateInput): Message {
  const copy = COPY[input.template][input.locale];
  const parts: Parts = {
    amount: formatAmount(input.data.amount, input.data.currency, input.locale),
    to: cleanDisplayText(input.data.counterpartyName ?? '', NAME_MAX_GRAPHEMES).text,
    ref: oneLine(input.data.transferId),
    reason: cleanDisplayText(input.data.reason ?? '', REASON_MAX_GRAPHEMES).text,
  };
  switch (input.channel) {
    case 'EMAIL': {
      const escaped: Parts = {
        amount: escapeHtml(parts.amount),
        to: escapeHtml(parts.to),
        ref: escapeHtml(parts.ref),
        reason: escapeHtml(parts.reason),
      };
      const subject = oneLine(copy.subject(parts));
      return {
        channel: 'EMAIL',
        subject,
        text: copy.text(parts),
        html: `<!doctype html><html lang="${LANG[input.locale]}"><head><meta charset="utf-8"><title>${escapeHtml(subject)}</title></head><body><p>${copy.text(escaped)}</p></body></html>`,
      };
    }
    case 'PUSH':
      return { channel: 'PUSH', title: copy.pushTitle, body: oneLine(copy.pushBody(parts)) };
    case 'SMS': {
      const text = oneLine(copy.sms(parts));
      return { channel: 'SMS', text, segments: smsSize(text).segments };
    }
  }
}

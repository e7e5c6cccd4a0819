/**
 * Messages: TransferCompleted / TransferFailed × EMAIL / PUSH / SMS × en / ja, rendered from the templates in
 * templates/ (compiled at build time into templates.generated.ts: `npm run templates`) with the bank's identity.
 *
 * - HTML placeholders are escaped (html-escaper); the compiler refuses unescaped ones. Plain-text channels are not
 *   HTML-escaped, and subjects, push texts and SMS are one line.
 * - Display text is cleaned again here (the same cleaning as at ingest: idempotent), so no control, line break or
 *   bidi control can reach a header, a push or an SMS even from an item written some other way.
 * - Amounts are shown digit for digit in the currency's minor unit, or not at all (money.ts: a mismatch throws
 *   RenderError and the notification fails instead of showing a rounded figure).
 * - The moment is the event's occurredAt in the recipient's time zone (or the brand's default for the locale), in the
 *   locale's own format. Push and SMS leave it out: they arrive within the max event age, and SMS pays by the character.
 */
import { escape as escapeHtml } from 'html-escaper';
import Mustache from 'mustache';
import { type Brand, telHref } from './brand.ts';
import type { Channel } from './channels.ts';
import { cleanDisplayText, NAME_MAX_GRAPHEMES, REASON_MAX_GRAPHEMES } from './display-text.ts';
import { type EventType, type Locale, type TransferData, utcInstant } from './event.ts';
import { INTL_LOCALES } from './locale.ts';
import { type CompiledSet, SMS_SHORTENABLE, type View } from './message-view.ts';
import { formatMoment } from './moment.ts';
import { formatAmount } from './money.ts';
import { gsmFriendly, smsSize } from './sms.ts';
import { TEMPLATES, TEXT_PARTIALS } from './templates.generated.ts';

export { formatAmount, RenderError } from './money.ts';

export interface EmailMessage {
  readonly channel: 'EMAIL';
  /** The bank's name in the customer's locale: the sender's display name. */
  readonly fromName: string;
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
  /** The event's occurredAt (ISO 8601 with an offset); absent on items written before it was kept: no time shown. */
  readonly occurredAt?: string | undefined;
  /** The recipient's IANA time zone; absent: the brand's default for the locale. */
  readonly timeZone?: string | undefined;
}

/** One line of plain text: control characters (CR, LF, TAB, NUL …) and line separators become a space. */
export const oneLine = (s: string) => s.replace(/[\p{Cc}\u2028\u2029]+/gu, ' ').trim();

/** An SMS never shortens a name or a reason below this many characters to save a segment. */
export const SMS_MIN_GRAPHEMES = 12;

const asHtml = { escape: escapeHtml };
const asText = { escape: (s: string) => s };

export function render(input: TemplateInput, brand: Brand): Message {
  const set: CompiledSet = TEMPLATES[input.template][input.locale];
  const view = viewOf(input, brand);
  const plain = (template: string, v: View = view) => Mustache.render(template, v, undefined, asText);
  switch (input.channel) {
    case 'EMAIL':
      return {
        channel: 'EMAIL',
        fromName: view.bank,
        subject: oneLine(plain(set.subject)),
        text: Mustache.render(set.text, view, TEXT_PARTIALS[input.locale], asText)
          .replace(/\n{3,}/g, '\n\n')
          .trim(),
        html: Mustache.render(set.html, view, undefined, asHtml),
      };
    case 'PUSH': {
      const { title, body } = fitPush(
        (v) => ({ title: oneLine(plain(set.pushTitle, v)), body: oneLine(plain(set.pushBody, v)) }),
        view,
      );
      return { channel: 'PUSH', title, body };
    }
    case 'SMS': {
      const text = fitSms((v) => gsmFriendly(oneLine(plain(set.sms, v))), view);
      return { channel: 'SMS', text, segments: smsSize(text).segments };
    }
  }
}

function viewOf(input: TemplateInput, brand: Brand): View {
  const { locale, data } = input;
  return {
    bank: brand.name[locale],
    amount: formatAmount(data.amount, data.currency, locale),
    to: cleanDisplayText(data.counterpartyName ?? '', NAME_MAX_GRAPHEMES).text,
    reference: oneLine(data.transferId),
    when: momentOf(input, brand) ?? '',
    reason: cleanDisplayText(data.reason ?? '', REASON_MAX_GRAPHEMES).text,
    supportUrl: brand.supportUrl,
    supportPhone: brand.supportPhone,
    supportPhoneHref: telHref(brand.supportPhone),
    legal: brand.legalFooter[locale],
    logoUrl: brand.logo?.url ?? '',
    logoWidth: brand.logo === undefined ? '' : String(brand.logo.width),
    logoHeight: brand.logo === undefined ? '' : String(brand.logo.height),
    brandColor: brand.brandColor,
  };
}

function momentOf(input: TemplateInput, brand: Brand): string | undefined {
  const instant = input.occurredAt === undefined ? undefined : utcInstant(input.occurredAt);
  if (instant === undefined) return undefined;
  const fallback = brand.defaultTimeZone[input.locale];
  const intl = INTL_LOCALES[input.locale];
  // A zone this runtime does not know (ingest ran on another runtime version) falls back to the locale's default.
  return (
    formatMoment(instant.epochMs, intl, input.timeZone ?? fallback) ?? formatMoment(instant.epochMs, intl, fallback)
  );
}

/**
 * The most the title and body of a push may take, as UTF-8 bytes of their JSON strings (escapes counted). APNs and FCM
 * refuse a payload over 4,096 bytes; what the sender adds around the texts (functions/dispatch/senders.ts pushPayload:
 * the aps/notification structure and a notificationId of at most 134 characters) stays under 600 bytes.
 */
export const PUSH_TEXT_MAX_BYTES = 3_500;
const utf8 = new TextEncoder();
const pushTextBytes = (p: { title: string; body: string }) =>
  utf8.encode(JSON.stringify(p.title)).length + utf8.encode(JSON.stringify(p.body)).length;

/**
 * A push within the platforms' limit: a payee's name or a reason may be 140 / 200 characters each carrying up to 32
 * code points after cleaning, over 20 KB — a push the platform would refuse, so the customer would hear nothing. While
 * it is too big, the heavier of the two is cut in proportion (never splitting a character, ending in "…", never
 * below SMS_MIN_GRAPHEMES); the email keeps them whole.
 */
function fitPush(
  renderWith: (view: View) => { title: string; body: string },
  view: View,
): { title: string; body: string } {
  const fields = new Shortenable(view);
  let push = renderWith(view);
  for (let size = pushTextBytes(push); size > PUSH_TEXT_MAX_BYTES; size = pushTextBytes(push)) {
    const field = fields.largest((f) => utf8.encode(fields.kept(f)).length);
    if (field === undefined) break;
    // Keep the share of the field that the limit allows, and one character less for the ellipsis.
    const bytes = Math.max(1, utf8.encode(fields.kept(field)).length);
    const share = Math.max(0, 1 - (size - PUSH_TEXT_MAX_BYTES) / bytes);
    push = renderWith(fields.cut(field, (kept) => Math.min(kept - 1, Math.floor(kept * share) - 1)));
  }
  return push;
}

const graphemes = new Intl.Segmenter('und', { granularity: 'grapheme' });
const clusters = (s: string) => Array.from(graphemes.segment(s), (g) => g.segment);

type ShortenableField = (typeof SMS_SHORTENABLE)[number];

/**
 * The payee's name and the reason of a view, cut down step by step: never splitting a character, ending in "…", never
 * below SMS_MIN_GRAPHEMES. A field at that floor is no longer offered.
 */
class Shortenable {
  private readonly full: Record<ShortenableField, string[]>;
  private readonly count: Record<ShortenableField, number>;
  private current: View;

  constructor(view: View) {
    this.current = view;
    this.full = { reason: clusters(view.reason), to: clusters(view.to) };
    this.count = { reason: this.full.reason.length, to: this.full.to.length };
  }

  kept(field: ShortenableField): string {
    return this.full[field].slice(0, this.count[field]).join('');
  }

  /** The field that weighs most by `weight` and can still be cut. */
  largest(weight: (field: ShortenableField) => number): ShortenableField | undefined {
    return [...SMS_SHORTENABLE]
      .filter((f) => this.count[f] > SMS_MIN_GRAPHEMES)
      .sort((a, b) => weight(b) - weight(a))[0];
  }

  /** Cuts `field` to `to(characters kept)` (at least the floor) and returns the view with it. */
  cut(field: ShortenableField, to: (kept: number) => number): View {
    this.count[field] = Math.max(SMS_MIN_GRAPHEMES, to(this.count[field]));
    this.current = { ...this.current, [field]: `${this.kept(field).trimEnd()}…` };
    return this.current;
  }
}

/**
 * The SMS in as few segments as it can take: while it needs more than one, the longer of the reason and the payee's
 * name is cut (never splitting a character, ending in "…", never below SMS_MIN_GRAPHEMES). The email keeps them whole.
 */
function fitSms(renderWith: (view: View) => string, view: View): string {
  const fields = new Shortenable(view);
  let text = renderWith(view);
  for (let size = smsSize(text); size.segments > 1; size = smsSize(text)) {
    const field = fields.largest((f) => clusters(fields.kept(f)).length);
    if (field === undefined) break;
    const limit = size.encoding === 'GSM-7' ? 160 : 70;
    // Cut the excess at once (at least one character, plus one for the ellipsis); the loop checks the result.
    const excess = Math.max(1, size.units - limit) + 1;
    text = renderWith(fields.cut(field, (kept) => kept - excess));
  }
  return text;
}

/**
 * Messages: every type of the catalogue × its channels × the languages, rendered from the templates in templates/
 * (compiled at build time into templates.generated.ts: `npm run templates`) with the bank's identity. The view holds
 * the type's data fields, each formatted by its kind (catalogue.ts), and the bank's fields (message-view.ts).
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
import { type Brand, supportPhoneFor, telHref } from './brand.ts';
import { isCalendarDate } from './calendar-date.ts';
import { maskCardNumbers } from './card-number.ts';
// Rendering masks every shown value: the rules with the templates, wherever they are loaded.
import './card-rules.ts';
import { type Definition, dataNamesOf, definitionOf, textFields } from './catalogue.ts';
import { type Channel, unknownChannel } from './channels.ts';
import { cleanDisplayText, NAME_MAX_GRAPHEMES } from './display-text.ts';
import type { EventData, EventType } from './event/contract.ts';
import { DEFAULT_LOCALE, isLocale, type Locale } from './locale.ts';
import { bareNames, type CompiledSet, type View } from './message-view.ts';
import { formatMoment, readInstant } from './moment.ts';
import { formatAmount, RenderError } from './money.ts';
import { gsmFriendly, smsSize } from './sms.ts';
import { compiledSet } from './template-sets.ts';
import { TEXT_PARTIALS } from './templates.generated.ts';

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
  /** Set right before the send (dispatch/moment-checks.ts): the remaining validity, SNS's TTL for the platform. */
  readonly ttlSeconds?: number;
  /** Set right before the send for a type whose newer notice replaces an older one: the device shows the newest. */
  readonly collapseId?: string;
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
  readonly data: EventData;
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

export function render(given: TemplateInput, brand: Brand): Message {
  // A notification written in a language since removed from templates/ is still sent, in the default language: the
  // language is how a notice is shown, never whether (as at ingest).
  const input = isLocale(given.locale) ? given : { ...given, locale: DEFAULT_LOCALE };
  const def = definitionOf(input.template);
  // Loaded by whoever renders (template-sets.ts): dispatch loads each record's type before it renders.
  const set: CompiledSet | undefined = compiledSet(input.template, input.locale);
  // An item whose type left the catalogue after it was written: nothing to say it with.
  if (def === undefined || set === undefined) throw new RenderError(`no templates for ${input.template}`);
  const view = viewOf(input, brand, def);
  refuseBlanks(def, view, input.channel, set);
  const shortenable = textFields(def);
  const plain = (template: string, v: View = view) => Mustache.render(template, v, undefined, asText);
  switch (input.channel) {
    case 'EMAIL':
      return {
        channel: 'EMAIL',
        fromName: brand.name[input.locale],
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
        shortenable,
      );
      return { channel: 'PUSH', title, body };
    }
    case 'SMS': {
      const text = fitSms((v) => gsmFriendly(oneLine(plain(set.sms, v))), view, shortenable);
      return { channel: 'SMS', text, segments: smsSize(text).segments };
    }
    default:
      return unknownChannel(input.channel);
  }
}

/** The compiled templates a channel's message is rendered from. */
const PARTS: Readonly<Record<Channel, readonly (keyof CompiledSet)[]>> = {
  EMAIL: ['subject', 'text', 'html'],
  PUSH: ['pushTitle', 'pushBody'],
  SMS: ['sms'],
};

/** Nothing a reader could see: spaces, controls and format characters (a zero-width space) only. */
const isBlank = (value: string | boolean | undefined) =>
  typeof value !== 'boolean' && (value ?? '').replace(/[\s\p{Z}\p{Cc}\p{Cf}]+/gu, '') === '';

/**
 * A notice is never sent with a blank where a fact belongs: a field that shows nothing (empty, or nothing left once
 * cleaned) is refused when the channel's template shows it outside a section of its own. A template that says it
 * without one (`{{#reason}}…{{/reason}}`, `{{^deviceName}}an unnamed device{{/deviceName}}`) is sent without it; the
 * compiler lets no template show display text or an optional field otherwise, so this refuses only a blank of another
 * kind on an item ingest did not write.
 */
function refuseBlanks(def: Definition, view: View, channel: Channel, set: CompiledSet): void {
  for (const field of def.data) {
    if (!isBlank(view[field.name])) continue;
    if (PARTS[channel].some((part) => bareNames(set[part]).has(field.name))) {
      throw new RenderError(`${field.name} is empty and the ${channel} shows it: never sent with a blank`);
    }
  }
}

function viewOf(input: TemplateInput, brand: Brand, def: Definition): View {
  const { locale, data } = input;
  // A required field absent: not an item ingest wrote as it is (ingest refuses such an event) — an erased one, or
  // one written some other way. Nothing of it is shown. Not display text: ingest leaves out text that cleans to
  // nothing (a third party's is never refused), so its absence is a blank, and every template says it without (the
  // compiler refuses one that shows it outside {{#field}}, with no words for its absence in {{^field}}): a device
  // naming itself in zero-width characters cannot silence a sign-in alert.
  for (const name of def.data.filter((f) => f.required && f.kind !== 'text').flatMap(dataNamesOf)) {
    if (typeof data[name] !== 'string') throw new RenderError(`required field ${name} is missing`);
  }
  // The language's code is its Intl locale (a lower-case BCP 47 tag): dates and money are formatted for it.
  const intl: string = locale;
  const view: Record<string, string | boolean> = {
    bank: brand.name[locale],
    when: momentOf(input, brand, input.occurredAt) ?? '',
    supportUrl: brand.supportUrl,
    supportPhone: supportPhoneFor(brand, locale),
    supportPhoneHref: telHref(supportPhoneFor(brand, locale)),
    legal: brand.legalFooter[locale],
    logoUrl: brand.logo?.url ?? '',
    logoWidth: brand.logo === undefined ? '' : String(brand.logo.width),
    logoHeight: brand.logo === undefined ? '' : String(brand.logo.height),
    brandColor: brand.brandColor,
  };
  // An empty or blank value is absent: an optional field's section then shows nothing.
  const given = (name: string): string | undefined => {
    const value = data[name];
    return typeof value === 'string' && value.trim() !== '' ? value : undefined;
  };
  for (const field of def.data) {
    const value = given(field.name);
    switch (field.kind) {
      case 'identifier':
        // A card number is masked here too (and in text below): a notification written before ingest masked them, or
        // resent by an operator, is still rendered without it.
        view[field.name] = maskCardNumbers(oneLine(value ?? '')).text;
        break;
      case 'text':
        view[field.name] = cleanDisplayText(
          maskCardNumbers(value ?? '').text,
          field.maxGraphemes ?? NAME_MAX_GRAPHEMES,
        ).text;
        break;
      case 'money': {
        const currency = given(field.currencyField as string);
        view[field.name] = value === undefined || currency === undefined ? '' : formatAmount(value, currency, locale);
        break;
      }
      case 'instant':
        view[field.name] = momentOf(input, brand, value) ?? '';
        break;
      case 'date':
        view[field.name] = value === undefined ? '' : formatDate(value, intl);
        break;
      case 'number':
        view[field.name] = value === undefined ? '' : formatNumber(value, intl);
        break;
      case 'secret':
        // Sent as given: its kind allows only characters every channel writes alike.
        view[field.name] = value ?? '';
        break;
      case 'enum':
        view[field.name] = value ?? '';
        for (const v of field.values ?? []) view[`${field.name}=${v}`] = value === v;
        break;
    }
  }
  return view;
}

/** A calendar date in the language's long format, as that day wherever the customer is (formatted in UTC). */
function formatDate(date: string, intl: string): string {
  if (!isCalendarDate(date)) throw new RenderError('a date field is not a calendar date');
  const [y, m, d] = date.split('-').map(Number);
  const ms = Date.UTC(y ?? 0, (m ?? 1) - 1, d ?? 1);
  return new Intl.DateTimeFormat(intl, { dateStyle: 'long', timeZone: 'UTC', numberingSystem: 'latn' }).format(ms);
}

/** A decimal string digit for digit (Intl formats a decimal string exactly), grouped as the language groups. */
const formatNumber = (value: string, intl: string): string =>
  new Intl.NumberFormat(intl, { maximumFractionDigits: 6, numberingSystem: 'latn' }).format(
    value as Intl.StringNumericLiteral,
  );

function momentOf(input: TemplateInput, brand: Brand, at: string | undefined): string | undefined {
  const instant = at === undefined ? undefined : readInstant(at);
  if (instant === undefined) return undefined;
  const fallback = brand.defaultTimeZone[input.locale];
  const intl: string = input.locale;
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
  shortenable: readonly string[],
): { title: string; body: string } {
  const fields = new Shortenable(view, shortenable);
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

/** Made on first use, as display-text.ts's: only a push over its size is cut, and a cold start makes no segmenter. */
let graphemes: Intl.Segmenter | undefined;
function clusters(s: string): string[] {
  graphemes ??= new Intl.Segmenter('und', { granularity: 'grapheme' });
  return Array.from(graphemes.segment(s), (g) => g.segment);
}

/**
 * The display-text fields of a view (a payee's name, a reason, a merchant …: kind `text`), cut down step by step:
 * never splitting a character, ending in "…", never below SMS_MIN_GRAPHEMES. A field at that floor is no longer offered.
 */
class Shortenable {
  private readonly full = new Map<string, string[]>();
  private readonly count = new Map<string, number>();
  private current: View;

  constructor(view: View, fields: readonly string[]) {
    this.current = view;
    for (const field of fields) {
      const text = view[field];
      const all = clusters(typeof text === 'string' ? text : '');
      this.full.set(field, all);
      this.count.set(field, all.length);
    }
  }

  kept(field: string): string {
    return (this.full.get(field) ?? []).slice(0, this.count.get(field) ?? 0).join('');
  }

  /** The field that weighs most by `weight` and can still be cut. */
  largest(weight: (field: string) => number): string | undefined {
    return [...this.count.keys()]
      .filter((f) => (this.count.get(f) ?? 0) > SMS_MIN_GRAPHEMES)
      .sort((a, b) => weight(b) - weight(a))[0];
  }

  /** Cuts `field` to `to(characters kept)` (at least the floor) and returns the view with it. */
  cut(field: string, to: (kept: number) => number): View {
    this.count.set(field, Math.max(SMS_MIN_GRAPHEMES, to(this.count.get(field) ?? 0)));
    this.current = { ...this.current, [field]: `${this.kept(field).trimEnd()}…` };
    return this.current;
  }
}

/**
 * The SMS in as few segments as it can take: while it needs more than one, the longer of the reason and the payee's
 * name is cut (never splitting a character, ending in "…", never below SMS_MIN_GRAPHEMES). The email keeps them whole.
 */
function fitSms(renderWith: (view: View) => string, view: View, shortenable: readonly string[]): string {
  const fields = new Shortenable(view, shortenable);
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

/**
 * What a template can say: the named values ("view") every template in templates/ is rendered with, and the shape of
 * the compiled templates (templates.generated.ts). Kept apart from the generated module so the template compiler
 * (tools/scripts/templates.ts) can check every placeholder against this list before that module exists. Pure.
 */
import type { EventType, Locale } from './event.ts';

/** Names every template may use. Absent values are '' (a `{{#name}}…{{/name}}` section then shows nothing). */
export const SHORT_FIELDS = [
  'bank',
  'amount',
  'to',
  'reference',
  'when',
  'reason',
  'supportPhone',
  'supportUrl',
] as const;
/** The email's text alternative may also use these. */
export const TEXT_FIELDS = [...SHORT_FIELDS, 'supportPhoneHref', 'legal'] as const;
/** The email's HTML may also use these. */
export const HTML_FIELDS = [...TEXT_FIELDS, 'logoUrl', 'logoWidth', 'logoHeight', 'brandColor'] as const;

export type ViewField = (typeof HTML_FIELDS)[number];
export type View = Readonly<Record<ViewField, string>>;

/** The fields an SMS may shorten (grapheme by grapheme, never below SMS_MIN_GRAPHEMES) to fit one segment. */
export const SMS_SHORTENABLE = ['reason', 'to'] as const satisfies readonly ViewField[];

/** One type × locale, compiled: mustache templates with the MJML already turned into HTML. */
export interface CompiledSet {
  /** The email's subject: the MJML's <mj-title>. */
  readonly subject: string;
  readonly html: string;
  readonly text: string;
  readonly pushTitle: string;
  readonly pushBody: string;
  readonly sms: string;
}

export type CompiledTemplates = Readonly<Record<EventType, Readonly<Record<Locale, CompiledSet>>>>;
/** Partials of the text alternative ({{> footer}}), per locale. */
export type TextPartials = Readonly<Record<Locale, Readonly<Record<string, string>>>>;

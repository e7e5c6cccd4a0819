/**
 * What a template can say: the named values ("view") every template in templates/ is rendered with, and the shape of
 * the compiled templates (templates.generated.ts). A view holds the type's data fields (catalogue.ts
 * dataPlaceholders: each field by its name, formatted by its kind) and the bank's fields below. Kept apart from the
 * generated module so the template compiler (tools/scripts/templates.ts) can check every placeholder before that
 * module exists. Pure.
 */
import type { Locale } from './locale.ts';

/** Names every template may use besides its type's fields. Absent values are '' (a section then shows nothing). */
export const SHORT_FIELDS = ['bank', 'when', 'supportPhone', 'supportUrl'] as const;
/** The email's text alternative may also use these. */
export const TEXT_FIELDS = [...SHORT_FIELDS, 'supportPhoneHref', 'legal'] as const;
/** The email's HTML may also use these. */
export const HTML_FIELDS = [...TEXT_FIELDS, 'logoUrl', 'logoWidth', 'logoHeight', 'brandColor'] as const;

export type BrandField = (typeof HTML_FIELDS)[number];
/** The bank's fields and the type's: a data field is a string, an enum's `<field>=<VALUE>` a flag. */
export type View = Readonly<Record<string, string | boolean>>;

/** One type × locale, compiled: mustache templates with the MJML already turned into HTML. */
export interface CompiledSet {
  /** The email's subject: the MJML's <mj-title>; '' when the type has no EMAIL. */
  readonly subject: string;
  readonly html: string;
  readonly text: string;
  readonly pushTitle: string;
  readonly pushBody: string;
  readonly sms: string;
}

export type CompiledTemplates = Readonly<Record<string, Readonly<Record<Locale, CompiledSet>>>>;
/** Partials of the text alternative ({{> footer}}), per locale. */
export type TextPartials = Readonly<Record<Locale, Readonly<Record<string, string>>>>;

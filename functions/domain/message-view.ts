/**
 * What a template can say: the named values ("view") every template in templates/ is rendered with, and the shape of
 * the compiled templates (templates.generated.ts). A view holds the type's data fields (catalogue.ts
 * dataPlaceholders: each field by its name, formatted by its kind) and the bank's fields below. Kept apart from the
 * generated module so the template compiler (tools/scripts/templates.ts) can check every placeholder before that
 * module exists. Pure.
 */
import Mustache from 'mustache';
import type { Locale } from './locale.ts';

/**
 * Names every template may use besides its type's fields. Absent values are '' (a section then shows nothing); a
 * field of the type that is '' where a template shows it outside its own section is refused (templates.ts).
 */
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

/** One type's compiled templates, by language: the module functions/domain/templates/<Type>.generated.ts. */
export type TemplateSets = Readonly<Record<Locale, CompiledSet>>;
export type CompiledTemplates = Readonly<Record<string, TemplateSets>>;
/** How each type's module is loaded: on first use (templates.generated.ts, template-sets.ts). */
export type TemplateLoaders = Readonly<Record<string, () => Promise<{ readonly SETS: TemplateSets }>>>;
/** Partials of the text alternative ({{> footer}}), per locale. */
export type TextPartials = Readonly<Record<Locale, Readonly<Record<string, string>>>>;

type Token = [string, string, number, number, Token[]?];
const bare = new Map<string, ReadonlySet<string>>();

/**
 * The names a template shows outside a section of their own (`{{name}}` not within `{{#name}}…{{/name}}` or
 * `{{#name=VALUE}}…{{/name=VALUE}}`): where an empty value would leave a blank in the message. Inside an inverted
 * section (`{{^name}}`) a name is bare too. Memoised: a template is parsed once per process.
 */
export function bareNames(template: string): ReadonlySet<string> {
  const known = bare.get(template);
  if (known !== undefined) return known;
  const names = new Set<string>();
  const walk = (tokens: readonly Token[], guards: readonly string[]) => {
    for (const [type, value, , , children] of tokens) {
      if ((type === 'name' || type === '&') && !guards.includes(value)) names.add(value);
      if (children !== undefined) walk(children, type === '#' ? [...guards, value.split('=')[0] ?? value] : guards);
    }
  };
  walk(Mustache.parse(template) as unknown as Token[], []);
  bare.set(template, names);
  return names;
}

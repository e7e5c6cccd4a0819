/**
 * The languages notifier writes in, and the negotiation of the producer's language tag to one of them. Pure (Intl is
 * the runtime's).
 *
 * The languages are data: the codes of templates/partials/footer.<code>.mjml, compiled by `npm run templates` into
 * catalogue.generated.ts (templates/README.md "Adding a language"). A code is a lower-case BCP 47 tag, and Intl
 * formats dates, times and money with it (`en` as en-US does, `ja` as ja-JP, `en-gb` as British English).
 */
import { LANGUAGES } from './catalogue.generated.ts';

export const LOCALES = LANGUAGES;
export type Locale = (typeof LANGUAGES)[number];
const KNOWN: ReadonlySet<string> = new Set(LANGUAGES);
/** One of the languages of this build (a notification written before a language was removed may hold another). */
export const isLocale = (code: unknown): code is Locale => typeof code === 'string' && KNOWN.has(code);

/**
 * The brand's default language: what an event without a locale gets, and what a language the brand has no templates
 * for falls back to. Fixed, not a setting: the payloadHash covers the negotiated locale, so changing it would turn a
 * producer's resend of an event accepted before the change into a conflict.
 */
export const DEFAULT_LOCALE: Locale = 'en';

/**
 * How a tag was read: `exact` (already one of LOCALES, or absent), `normalised` (another spelling of one of them:
 * `en-US`, `JA`, `ja_JP`, `ja-JP-u-ca-japanese`), `fallback` (a language the brand does not write, or no language tag
 * at all: the default, counted — a presentation hint never silences a notice).
 */
export type LocaleReading = { readonly locale: Locale; readonly how: 'exact' | 'normalised' | 'fallback' };

const negotiated = new Map<string, LocaleReading>();
const NEGOTIATED_LIMIT = 1024;

/**
 * BCP 47 (RFC 5646) negotiation by RFC 4647 §3.4 "Lookup": the tag is canonicalised by the runtime
 * (Intl.getCanonicalLocales: case, deprecated subtags such as `iw` → `he`), then shortened one subtag at a time from the
 * end (dropping an extension's singleton with its last subtag) until it names a locale notifier writes in.
 * Producers' other spellings with one reading are read first: `_` as the separator (POSIX and Java), a POSIX codeset or
 * modifier (`ja_JP.UTF-8`, `de_DE@euro`), Java's script marker (`sr_RS_#Latn`), surrounding spaces.
 */
export function negotiateLocale(given: unknown): LocaleReading {
  if (given === undefined) return { locale: DEFAULT_LOCALE, how: 'exact' };
  if (isLocale(given)) return { locale: given, how: 'exact' };
  if (typeof given !== 'string') return { locale: DEFAULT_LOCALE, how: 'fallback' };
  const cached = negotiated.get(given);
  if (cached !== undefined) return cached;
  const reading = lookup(given);
  if (negotiated.size < NEGOTIATED_LIMIT) negotiated.set(given, reading);
  return reading;
}

function lookup(given: string): LocaleReading {
  let canonical: string | undefined;
  try {
    canonical = Intl.getCanonicalLocales(bcp47Spelling(given))[0];
  } catch {
    // Not a language tag at all (RangeError): nothing to negotiate.
  }
  const found = canonical === undefined ? undefined : (lookupRange(canonical) ?? lookupLikely(canonical));
  return found === undefined ? { locale: DEFAULT_LOCALE, how: 'fallback' } : { locale: found, how: 'normalised' };
}

function lookupRange(tag: string): Locale | undefined {
  for (let range = tag.toLowerCase(); range !== ''; range = shorter(range)) {
    const match = LOCALES.find((l) => l === range);
    if (match !== undefined) return match;
  }
  return undefined;
}

/**
 * A language written with a script or region (`zh-hant`, `pt-br`) is also reached from the tags that imply it — Java's
 * `zh_TW`, a bare `pt` — by the likely subtags of Unicode CLDR (Intl.Locale#maximize: `zh-TW` is `zh-Hant-TW`, `pt` is
 * `pt-Latn-BR`), tried as language-script-region, then language-region. Only subtags are added: a tag whose language
 * the likely subtags would change (`und-JP` → `ja`) is not read as another language.
 */
function lookupLikely(tag: string): Locale | undefined {
  let likely: Intl.Locale;
  try {
    likely = new Intl.Locale(tag).maximize();
  } catch {
    return undefined;
  }
  if (likely.language !== new Intl.Locale(tag).language) return undefined;
  return (
    lookupRange(likely.baseName) ??
    (likely.region === undefined ? undefined : lookupRange(`${likely.language}-${likely.region}`))
  );
}

/** `ja_JP.UTF-8` → `ja-JP`; `sr_RS_#Latn` → `sr-Latn-RS`. Anything else is left for Intl to judge. */
function bcp47Spelling(given: string): string {
  const posix = given.trim().replace(/[.@].*$/, '');
  const [tag = '', script] = posix.replace(/_/g, '-').split('-#');
  if (script === undefined) return tag;
  const [language = '', ...rest] = tag.split('-').filter((s) => s !== '');
  return [language, script, ...rest].join('-');
}

/** RFC 4647 §3.4: drop the last subtag, and a singleton left at the end with it. */
function shorter(range: string): string {
  const parts = range.split('-');
  parts.pop();
  if (parts.length > 0 && (parts[parts.length - 1] as string).length === 1) parts.pop();
  return parts.join('-');
}

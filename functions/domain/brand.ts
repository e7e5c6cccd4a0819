/**
 * The bank's identity on every message: its name per locale, how to reach it, its logo and colour, the legal footer,
 * and the time zone a customer's moment is shown in when the event names none. One schema, used by the CDK settings
 * at synth (lib/settings.ts) and by the dispatch function at cold start (commons/config.ts), which receives it as one
 * environment variable of JSON (`BRAND`).
 *
 * Operator-written, so strict: a bad value stops the synth or the cold start with its path, never a silent default.
 * Pure.
 */
import * as z from 'zod/mini';
import { LOCALES, type Locale } from './locale.ts';
import { canonicalTimeZone } from './moment.ts';

/**
 * Lambda allows 4 KB for all of a function's environment variables together
 * (https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html): the brand may use half of it, in UTF-8,
 * leaving the rest for the function's other settings.
 */
export const BRAND_ENV_MAX_BYTES = 2048;

/** WCAG 2.2 success criterion 1.4.3 (contrast, minimum): normal text needs 4.5:1. */
export const MIN_CONTRAST = 4.5;

/** Text with no control, format (bidi, zero-width), separator, surrogate or noncharacter: nothing a reader cannot see. */
const VISIBLE_TEXT = /^[^\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}\p{Noncharacter_Code_Point}]*$/u;
/** WCAG 2.x contrast ratio of a #RRGGBB colour against white (https://www.w3.org/TR/WCAG22/#dfn-contrast-ratio). */
export function contrastWithWhite(hex: string): number {
  const channel = (i: number) => {
    const c = Number.parseInt(hex.slice(i, i + 2), 16) / 255;
    return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  };
  const luminance = 0.2126 * channel(1) + 0.7152 * channel(3) + 0.0722 * channel(5);
  return 1.05 / (luminance + 0.05);
}

/**
 * The time zones settings written before a language's zone was required get for `en` and `ja`. Every other language
 * names its own in the brand settings (`brand.defaultTimeZone.<code>`): no zone is guessed for a language.
 */
export const DEFAULT_TIME_ZONES: Readonly<Record<string, string>> = { en: 'UTC', ja: 'Asia/Tokyo' };

/**
 * The brand settings' schema, built when this module loads. Built in one pure function call, so a bundle that imports
 * this module without the schema (ingest's, through the functions' config) leaves it and the zod parts only it uses
 * out of its cold start.
 */
export const brandSchema = /* @__PURE__ */ (() => {
  const text = (min: number, max: number) =>
    z.string().check(
      z.minLength(min),
      z.maxLength(max),
      z.regex(VISIBLE_TEXT, 'must not contain control, format or line-separator characters'),
      z.refine((s) => s === s.trim(), 'must not start or end with a space'),
    );

  const perLocale = <T extends z.core.SomeType>(schema: T) =>
    z.strictObject(Object.fromEntries(LOCALES.map((l) => [l, schema])) as Record<Locale, T>);

  /** https only (a link in a bank's email never downgrades), printable ASCII (nothing to hide in the address). */
  const httpsUrl = z.string().check(
    z.maxLength(300, 'must be at most 300 characters'),
    z.regex(/^https:\/\/[\x21-\x7E]+$/, 'must be an https:// URL of printable ASCII characters'),
    z.refine((s) => URL.canParse(s) && new URL(s).hostname.includes('.'), 'must be an https URL with a host name'),
  );

  const HEX_COLOR = /^#[0-9A-Fa-f]{6}$/;

  const phone = z
    .string()
    .check(z.regex(/^\+?[0-9][0-9 ()-]{2,30}[0-9]$/, 'must be a phone number of digits, spaces, ( ) and -'));

  const brandColor = z.string().check(
    z.regex(HEX_COLOR, 'must be a colour as #RRGGBB'),
    z.refine(
      (c) => !HEX_COLOR.test(c) || contrastWithWhite(c) >= MIN_CONTRAST,
      `must contrast at least ${MIN_CONTRAST}:1 with white (WCAG 2.2 AA): it is the background of white text and the colour of links on white`,
    ),
  );

  const timeZone = z
    .string()
    .check(z.refine((s) => canonicalTimeZone(s) !== undefined, 'must be an IANA time zone name (e.g. Asia/Tokyo)'));

  const timeZones = z.prefault(
    z.strictObject(
      Object.fromEntries(
        LOCALES.map((l) => {
          const known = DEFAULT_TIME_ZONES[l];
          return [l, known === undefined ? timeZone : z._default(timeZone, known)];
        }),
      ) as Record<Locale, typeof timeZone>,
    ),
    // Absent: every language's known zone, and refused for a language that has none (its path named).
    {} as Record<Locale, string>,
  );

  return z.strictObject({
    /** The bank's name as customers know it: signs every SMS and push, names the email's sender, heads the email. */
    name: perLocale(text(1, 64)),
    /** Where "how to reach us" points: https only. */
    supportUrl: httpsUrl,
    /**
     * As shown ("+1 800-555-0100", "0120-123-456"); the tel: link is derived from its digits. One number for every
     * language, or one per language: a Japanese customer should not be given a US toll-free number.
     */
    supportPhone: z.union([phone, perLocale(phone)]),
    /** Optional logo in the email header, shown at width × height CSS pixels (give an image twice that size). */
    logo: z.optional(
      z.strictObject({
        url: httpsUrl,
        width: z.int().check(z.gte(16, 'must be 16 to 552 pixels'), z.lte(552, 'must be 16 to 552 pixels')),
        height: z.int().check(z.gte(16, 'must be 16 to 200 pixels'), z.lte(200, 'must be 16 to 200 pixels')),
      }),
    ),
    brandColor,
    /** The legal line(s) under every email ("Example Bank, N.A. Member FDIC."), per locale; may be empty. */
    legalFooter: perLocale(text(0, 600)),
    /** The time zone a moment is shown in when the event's recipient names none. */
    defaultTimeZone: timeZones,
  });
})();

export type Brand = z.infer<typeof brandSchema>;

/** The settings given per language: each has an entry for every language of templates/, and no other. */
const PER_LANGUAGE: ReadonlySet<string> = new Set(['name', 'supportPhone', 'legalFooter', 'defaultTimeZone']);

/**
 * Each problem as "brand.<path> <what is wrong>". zod/mini carries no message catalogue (it keeps the bundle small),
 * so the generic issues are worded here.
 */
export function brandProblems(input: unknown, issues: readonly z.core.$ZodIssue[]): string[] {
  return issues.flatMap(matchedBranch).map((issue) => {
    const path = ['brand', ...issue.path.map(String)].join('.');
    let value: unknown = input;
    for (const key of issue.path) value = (value as Record<PropertyKey, unknown> | undefined)?.[key as PropertyKey];
    if (issue.code === 'unrecognized_keys') {
      const languages = issue.path.length === 1 && PER_LANGUAGE.has(String(issue.path[0]));
      return `${path} has unknown key(s): ${issue.keys.join(', ')}${languages ? ` (the languages of templates/ are ${LOCALES.join(', ')}: a language is its templates and then its entries here)` : ''}`;
    }
    if (issue.code === 'invalid_type') {
      return value === undefined
        ? `${path} is required`
        : `${path} must be ${issue.expected === 'int' ? 'a whole number' : `a ${issue.expected}`}`;
    }
    return `${path} ${issue.message}`;
  });
}

/**
 * A value of a union (supportPhone: one number, or one per language) is judged by the branch of its own type: an
 * object missing a language is "brand.supportPhone.fr is required", not the union's bare "Invalid input".
 */
function matchedBranch(issue: z.core.$ZodIssue): z.core.$ZodIssue[] {
  if (issue.code !== 'invalid_union') return [issue];
  const ofItsType = issue.errors.find(
    (branch) => !branch.some((i) => i.code === 'invalid_type' && i.path.length === 0),
  );
  if (ofItsType === undefined) return [issue];
  return ofItsType.map((i) => ({ ...i, path: [...issue.path, ...i.path] }) as z.core.$ZodIssue);
}

/** The environment variable's value: compact JSON. */
export const brandEnvValue = (brand: Brand) => JSON.stringify(brand);

export const brandEnvBytes = (brand: Brand) => Buffer.byteLength(brandEnvValue(brand), 'utf8');

/** The support phone a customer of `locale` is given. */
export const supportPhoneFor = (brand: Brand, locale: Locale): string =>
  typeof brand.supportPhone === 'string' ? brand.supportPhone : brand.supportPhone[locale];

/** "+1 (800) 555-0100" → "tel:+18005550100" (RFC 3966 keeps only the digits and a leading +). */
export const telHref = (phone: string) => `tel:${phone.replace(/[^0-9+]/g, '')}`;

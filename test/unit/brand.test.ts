import { describe, expect, it } from 'vitest';
import { brandOf, ConfigError } from '../../functions/commons/config.ts';
import { mailbox } from '../../functions/dispatch/senders.ts';
import {
  BRAND_ENV_MAX_BYTES,
  type Brand,
  brandEnvBytes,
  brandEnvValue,
  brandProblems,
  brandSchema,
  contrastWithWhite,
  DEFAULT_TIME_ZONES,
  telHref,
} from '../../functions/domain/brand.ts';
import { LOCALES } from '../../functions/domain/locale.ts';
import { EXAMPLE_BRAND } from '../../tools/local/example-brand.ts';

/** As dispatch's cold start and the local run word them. */
const problems = (brand: unknown) => {
  const r = brandSchema.safeParse(brand);
  return r.success ? [] : brandProblems(brand, r.error.issues);
};
const withBrand = (over: Record<string, unknown>) => ({ ...EXAMPLE_BRAND, ...over });

describe('the brand: the bank identity as settings', () => {
  it('the example brand is valid, with the documented default time zones', () => {
    expect(problems(EXAMPLE_BRAND)).toEqual([]);
    const { defaultTimeZone: _, ...noZones } = EXAMPLE_BRAND;
    // Settings written before a language's zone was required: en and ja get theirs, any other language names its own.
    const unknownZones = Object.fromEntries(LOCALES.filter((l) => !(l in DEFAULT_TIME_ZONES)).map((l) => [l, 'UTC']));
    expect(brandSchema.parse({ ...noZones, defaultTimeZone: unknownZones }).defaultTimeZone).toMatchObject({
      en: 'UTC',
      ja: 'Asia/Tokyo',
    });
  });

  it('has an entry for every language of templates/, and none for a language without templates', () => {
    expect(problems(withBrand({ name: { en: 'Example Bank' } }))).toEqual(
      LOCALES.filter((l) => l !== 'en').map((l) => `brand.name.${l} is required`),
    );
    expect(problems(withBrand({ legalFooter: { ...EXAMPLE_BRAND.legalFooter, xx: 'Legal' } }))).toEqual([
      `brand.legalFooter has unknown key(s): xx (the languages of templates/ are ${LOCALES.join(', ')}: a language is its templates and then its entries here)`,
    ]);
  });

  it('a support phone: one for every language or one per language, each problem named by its path', () => {
    expect(problems(withBrand({ supportPhone: '+1 800-555-0100' }))).toEqual([]);
    expect(problems(withBrand({ supportPhone: 'call us' }))).toEqual([
      'brand.supportPhone must be a phone number of digits, spaces, ( ) and -',
    ]);
    expect(problems(withBrand({ supportPhone: { ...(EXAMPLE_BRAND.supportPhone as object), en: 'call us' } }))).toEqual(
      ['brand.supportPhone.en must be a phone number of digits, spaces, ( ) and -'],
    );
    expect(problems(withBrand({ supportPhone: { en: '+1 800-555-0100' } }))).toEqual(
      LOCALES.filter((l) => l !== 'en').map((l) => `brand.supportPhone.${l} is required`),
    );
  });

  it('needs a name for every locale, without controls or bidi characters', () => {
    expect(problems(withBrand({ name: { en: 'Example\u202EBank', ja: '銀行' } }))[0]).toMatch(
      /^brand\.name\.en must not contain control/,
    );
    expect(problems(withBrand({ name: { en: '', ja: '銀行' } }))[0]).toMatch(/^brand\.name\.en /);
    expect(problems(withBrand({ name: { en: 'B'.repeat(65), ja: '銀行' } }))[0]).toMatch(/^brand\.name\.en /);
  });

  it('links are https only', () => {
    expect(problems(withBrand({ supportUrl: 'http://bank.example/help' }))[0]).toMatch(
      /^brand\.supportUrl must be an https/,
    );
    expect(problems(withBrand({ supportUrl: 'javascript:alert(1)' }))[0]).toMatch(/^brand\.supportUrl /);
    expect(problems(withBrand({ supportUrl: 'https://bank.example/a b' }))[0]).toMatch(/^brand\.supportUrl /);
    expect(
      problems(withBrand({ logo: { url: 'http://cdn.bank.example/logo.png', width: 120, height: 32 } }))[0],
    ).toMatch(/^brand\.logo\.url /);
    expect(problems(withBrand({ logo: { url: 'https://cdn.bank.example/logo.png', width: 120, height: 32 } }))).toEqual(
      [],
    );
  });

  it('the brand colour must contrast 4.5:1 with white (WCAG 2.2 AA): white text sits on it, links are drawn in it', () => {
    expect(contrastWithWhite('#767676')).toBeGreaterThanOrEqual(4.5);
    expect(contrastWithWhite('#777777')).toBeLessThan(4.5);
    expect(contrastWithWhite('#000000')).toBeCloseTo(21, 5);
    expect(problems(withBrand({ brandColor: '#ffcc00' }))[0]).toMatch(
      /^brand\.brandColor must contrast at least 4\.5:1/,
    );
    expect(problems(withBrand({ brandColor: 'navy' }))[0]).toMatch(/^brand\.brandColor must be a colour as #RRGGBB/);
    expect(problems(withBrand({ brandColor: '#1D4ED8' }))).toEqual([]);
  });

  it('the default time zones must be IANA names', () => {
    expect(
      problems(withBrand({ defaultTimeZone: { ...EXAMPLE_BRAND.defaultTimeZone, ja: 'Japan Standard Time' } })),
    ).toEqual(['brand.defaultTimeZone.ja must be an IANA time zone name (e.g. Asia/Tokyo)']);
  });

  it('a misspelt key is an error, not silently ignored', () => {
    expect(problems(withBrand({ brandColour: '#0f4c81' }))).toEqual(['brand has unknown key(s): brandColour']);
  });

  it('travels as JSON small enough for Lambda environment variables', () => {
    expect(JSON.parse(brandEnvValue(EXAMPLE_BRAND))).toEqual(EXAMPLE_BRAND);
    expect(brandEnvBytes(EXAMPLE_BRAND)).toBeLessThan(BRAND_ENV_MAX_BYTES);
    // 600 characters of Japanese legal text per locale is 1,800 bytes of UTF-8: over the budget.
    const long: Brand = {
      ...EXAMPLE_BRAND,
      legalFooter: { ...EXAMPLE_BRAND.legalFooter, en: 'x'.repeat(600), ja: '銀'.repeat(600) },
    };
    expect(problems(long)).toEqual([]);
    expect(brandEnvBytes(long)).toBeGreaterThan(BRAND_ENV_MAX_BYTES);
  });

  it('tel: links keep only the digits and a leading +', () => {
    expect(telHref('+1 (800) 555-0100')).toBe('tel:+18005550100');
    expect(telHref('0120-123-456')).toBe('tel:0120123456');
  });
});

describe('dispatch reads BRAND once at cold start', () => {
  it('parses and validates it', () => {
    expect(brandOf(brandEnvValue(EXAMPLE_BRAND))).toEqual(EXAMPLE_BRAND);
  });

  it('names what is wrong, and never starts without one', () => {
    expect(() => brandOf(undefined)).toThrow(new ConfigError('configuration error: BRAND is required but not set'));
    expect(() => brandOf('{nope')).toThrow(/BRAND is invalid: not JSON/);
    expect(() => brandOf(JSON.stringify(withBrand({ brandColor: '#ffff00' })))).toThrow(
      /BRAND is invalid: brand\.brandColor must contrast/,
    );
  });
});

describe("the email's sender is the bank", () => {
  it('an ASCII name is quoted', () => {
    expect(mailbox('Example Bank', 'n@bank.example')).toBe('"Example Bank" <n@bank.example>');
    expect(mailbox('Harbor "Savings" \\ Co.', 'n@bank.example')).toBe(
      '"Harbor \\"Savings\\" \\\\ Co." <n@bank.example>',
    );
  });

  it('any other name goes as RFC 2047 encoded-words of at most 75 characters, whole characters each', () => {
    const name = `${'みなと銀行'.repeat(12)}🏦`;
    const source = mailbox(name, 'n@bank.example');
    const words = source.replace(/ <n@bank\.example>$/, '').split(' ');
    expect(words.length).toBeGreaterThan(1);
    for (const w of words) {
      expect(w).toMatch(/^=\?UTF-8\?B\?[A-Za-z0-9+/=]+\?=$/);
      expect(w.length).toBeLessThanOrEqual(75);
    }
    const decoded = words.map((w) => Buffer.from(w.slice(10, -2), 'base64').toString('utf8')).join('');
    expect(decoded).toBe(name);
  });
});

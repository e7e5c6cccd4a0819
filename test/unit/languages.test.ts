/**
 * A language is data: its templates (compiled by `npm run templates`) and its entries in the brand settings. Here a
 * language templates/ does not have (French) is added to a copy of templates/ as templates/README.md says, compiled by
 * the real compiler in a child process, and its generated modules stand in for the shipped ones: with no TypeScript
 * change, a producer's `fr_FR.UTF-8` is negotiated to it, the brand settings must name it, and a notice renders in it
 * with its bank name, support phone, legal text, time zone, money and dates.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it, vi } from 'vitest';
import { loadAllTemplates } from '../../functions/domain/template-sets.ts';

const compiled = await vi.hoisted(async () => {
  // vi.hoisted runs before the static imports: what it needs it imports itself.
  const { execFileSync } = await import('node:child_process');
  const { mkdtempSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const out = mkdtempSync(join(tmpdir(), 'notifier-language-'));
  // French (or German for a bank that ships French: `-`), and two languages written with a script or region. (Not
  // imported here: importing the compiler would load the generated modules before they are mocked.)
  const codes = ['-', 'pt-br', 'zh-hant'];
  execFileSync(process.execPath, ['--import', 'tsx', 'test/support/add-language.ts', out, ...codes], {
    stdio: 'inherit',
  });
  return { out };
});
vi.mock('../../functions/domain/catalogue.generated.ts', () => import(`${compiled.out}/catalogue.generated.ts`));
vi.mock('../../functions/domain/templates.generated.ts', () => import(`${compiled.out}/templates.generated.ts`));

import { type Brand, brandProblems, brandSchema } from '../../functions/domain/brand.ts';
import { LOCALES, type Locale, negotiateLocale } from '../../functions/domain/locale.ts';
import { render } from '../../functions/domain/templates.ts';
import { unshippedLanguage } from '../support/add-language.ts';

// Every notice type's templates (dispatch loads a type when it first renders one: template-sets.ts).
await loadAllTemplates();

const added = unshippedLanguage();
const code = added.code as Locale; // not a language of the shipped types: of the modules compiled above
const settings = JSON.parse(readFileSync(new URL('../../examples/settings.example.json', import.meta.url), 'utf8'));
const problems = (brand: unknown) => {
  const r = brandSchema.safeParse(brand);
  return r.success ? [] : brandProblems(brand, r.error.issues);
};

describe('a language added as data', () => {
  it('is among the languages, and a producer’s tag for it is read as it', () => {
    expect(LOCALES).toContain(code);
    expect(LOCALES).toContain('en');
    expect(negotiateLocale(code)).toEqual({ locale: code, how: 'exact' });
    expect(negotiateLocale(added.regional)).toEqual({ locale: code, how: 'normalised' });
    expect(negotiateLocale(`${code}-CH`)).toEqual({ locale: code, how: 'normalised' });
  });

  it('a language written with a script or region is read from the tags that imply it, and only from those', () => {
    expect(LOCALES).toEqual(expect.arrayContaining(['pt-br', 'zh-hant']));
    const read = (tag: string) => negotiateLocale(tag).locale;
    // CLDR's likely subtags: Taiwan and Hong Kong write Traditional Chinese, a bare `pt` is Brazilian.
    for (const tag of ['zh-Hant', 'zh-TW', 'zh_TW', 'zh-HK', 'zh-Hant-TW']) expect(read(tag), tag).toBe('zh-hant');
    for (const tag of ['pt', 'pt-BR', 'pt_BR.UTF-8']) expect(read(tag), tag).toBe('pt-br');
    // Another reading is not taken: Simplified Chinese and European Portuguese fall back to the default.
    for (const tag of ['zh', 'zh-CN', 'zh-Hans', 'pt-PT'])
      expect(negotiateLocale(tag), tag).toEqual({ locale: 'en', how: 'fallback' });
    // Likely subtags never change the language: `und-JP` is not read as Japanese.
    expect(negotiateLocale('und-JP')).toEqual({ locale: 'en', how: 'fallback' });
  });

  it('needs its entries in the brand settings, its time zone included (none is guessed for it)', () => {
    const missing = problems(settings.brand);
    for (const c of [code, 'pt-br', 'zh-hant'])
      for (const field of ['name', 'supportPhone', 'legalFooter', 'defaultTimeZone'])
        expect(missing).toContain(`brand.${field}.${c} is required`);
    expect(missing).toHaveLength(12);
  });

  it('is written with its own bank name, support phone, legal text, time zone, money and dates', () => {
    const b = settings.brand;
    const others = (value: string) => ({ 'pt-br': value, 'zh-hant': value });
    const brand: Brand = brandSchema.parse({
      ...b,
      name: { ...b.name, ...others('Banco'), [code]: added.bank },
      supportPhone: { ...b.supportPhone, ...others('+55 11 4004-0000'), [code]: added.phone },
      legalFooter: { ...b.legalFooter, ...others(''), [code]: added.legal },
      defaultTimeZone: { ...b.defaultTimeZone, ...others('America/Sao_Paulo'), [code]: added.timeZone },
    });
    const data = { transferId: 't-1', amount: '1240.5', currency: 'EUR', counterpartyName: 'Claire Dubois' };
    const input = { template: 'TransferCompleted', occurredAt: '2026-11-30T09:15:00Z', data } as const;
    const m = render({ ...input, locale: code, channel: 'EMAIL' }, brand);
    if (m.channel !== 'EMAIL') throw new Error('an email');
    expect(m.fromName).toBe(added.bank);
    expect(m.html).toContain(`lang="${code}"`);
    for (const shown of [added.money, added.date, '10:15', added.phone, added.legal]) {
      expect(m.text, shown).toContain(shown);
      expect(m.html, shown).toContain(shown);
    }
    const sms = render({ ...input, locale: code, channel: 'SMS' }, brand);
    expect(sms.channel === 'SMS' && sms.text).toContain(added.bank);
    // The shipped languages are unchanged beside it.
    const en = render({ ...input, locale: 'en', channel: 'SMS' }, brand);
    expect(en.channel === 'SMS' && en.text).toContain('€1,240.50');
  });
});

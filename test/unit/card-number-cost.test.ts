/**
 * Reading text for card numbers costs what the text is, not what a crafted text makes of it: a record's display text
 * may be 64 KB of digits and spaces, and every window of 13–19 digits in it is a candidate. Counted in look-ups of a
 * card brand (its ranges as credit-card-type keeps them, microseconds each), never timed: 64 KB of `1 2 3 …` asked 229,000 of them — three
 * seconds of ingest per field, so a batch of such records ran past the function's timeout on every redelivery and
 * held its partition.
 */
import { describe, expect, it, vi } from 'vitest';

const lookups = vi.hoisted(() => ({ count: 0 }));
// A brand look-up (card-rules.ts brandsCovering) reads every brand's patterns once: counted on Visa's. The masker
// never calls the library's own look-up (it keeps the brands' tables), so counting that would count nothing.
vi.mock('credit-card-type', async (importOriginal) => {
  type Info = { patterns: unknown[] };
  const real = (await importOriginal()) as { default: { getTypeInfo: (t: string) => Info; types: { VISA: string } } };
  const lib = real.default;
  const getTypeInfo = (type: string): Info => {
    const info = lib.getTypeInfo(type);
    if (type !== lib.types.VISA) return info;
    const patterns = [...info.patterns];
    const some = patterns.some.bind(patterns);
    patterns.some = ((...args: Parameters<typeof some>) => {
      lookups.count++;
      return some(...args);
    }) as typeof patterns.some;
    return { ...info, patterns };
  };
  return { default: Object.assign((n: string) => (lib as unknown as (n: string) => unknown)(n), lib, { getTypeInfo }) };
});

// Fresh modules: the rules the setup file loaded read the real library; these read the counted one.
vi.resetModules();
await import('../../functions/domain/card-rules.ts');
const { maskCardNumbers, maskCardNumbersInBytes } = await import('../../functions/domain/card-number.ts');
const { cleanDisplayText, NAME_MAX_GRAPHEMES } = await import('../../functions/domain/display-text.ts');

/** 64 KB of single digits and spaces, the same on every run (a linear congruential sequence). */
const digitsAndSpaces = (() => {
  let x = 42;
  return Array.from({ length: 32_768 }, () => {
    x = (x * 1_103_515_245 + 12_345) % 2 ** 31;
    return `${x % 10} `;
  }).join('');
})();
const counted = (read: () => unknown) => {
  lookups.count = 0;
  read();
  return lookups.count;
};

describe('reading a crafted text for card numbers', () => {
  it('display text is read as far as it can be shown: a 64 KB name costs what a shown one does', () => {
    const shown = counted(() => cleanDisplayText(digitsAndSpaces.slice(0, NAME_MAX_GRAPHEMES * 2), NAME_MAX_GRAPHEMES));
    expect(counted(() => cleanDisplayText(digitsAndSpaces, NAME_MAX_GRAPHEMES))).toBeLessThanOrEqual(shown);
    expect(shown).toBeLessThan(NAME_MAX_GRAPHEMES);
  });

  it('a whole record (a quarantined one’s kept copy) asks at most once per run of digits, and once for a repeated one', () => {
    expect(counted(() => maskCardNumbers(digitsAndSpaces))).toBeLessThanOrEqual(32_768 / 2);
    expect(counted(() => maskCardNumbersInBytes(Buffer.from(digitsAndSpaces)))).toBeLessThanOrEqual(32_768 / 2);
    expect(counted(() => maskCardNumbers('4 '.repeat(32_768)))).toBeLessThanOrEqual(1);
    // The count counts: a card number is one look-up.
    expect(counted(() => maskCardNumbers('4111 1111 1111 1111'))).toBe(1);
  });
});

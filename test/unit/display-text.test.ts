import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import {
  cleanDisplayText,
  isCleanDisplayText,
  MAX_CODE_POINTS_PER_GRAPHEME,
  NAME_MAX_GRAPHEMES,
} from '../../functions/domain/display-text.ts';
import { forbiddenCodePoint, isSafeDisplayText } from '../../tools/chaos/text-oracle.ts';
import { unicodeUnit } from '../support/unicode.ts';

const clean = (s: string, max = NAME_MAX_GRAPHEMES) => cleanDisplayText(s, max).text;
const graphemes = (s: string) => [...new Intl.Segmenter('und', { granularity: 'grapheme' }).segment(s)].length;

describe('display text cleaning', () => {
  it.each([
    ['CR/LF', 'Pat\r\nBcc: all@example.com', 'Pat Bcc: all@example.com'],
    ['NUL and DEL', 'a\u0000b\u007Fc', 'a b c'],
    ['C1 controls (NEL, CSI)', 'a\u0085b\u009Bc', 'a b c'],
    ['tabs and runs of spaces', ' a\t\t b  ', 'a b'],
    ['U+2028 and U+2029', 'a\u2028b\u2029c', 'a b c'],
    ['ideographic and no-break spaces', '山田\u3000太郎\u00A0様', '山田 太郎 様'],
    [
      'every bidi control',
      'a\u061Cb\u200Ec\u200Fd\u202Ae\u202Bf\u202Cg\u202Dh\u202Ei\u2066j\u2067k\u2068l\u2069m',
      'abcdefghijklm',
    ],
    ['zero-width space, BOM, soft hyphen, tags', 'a\u200Bb\uFEFFc\u00ADd\u{E0041}e', 'abcde'],
    ['lone surrogates', '\uD800a\uDFFF', '\uFFFDa\uFFFD'],
    ['noncharacters', 'a\uFFFEb\uFDD0c\u{10FFFF}', 'a\uFFFDb\uFFFDc\uFFFD'],
    ['NFC', 'Jose\u0301 Ame\u0301lie', 'José Amélie'],
  ])('%s', (_name, input, expected) => {
    expect(clean(input)).toBe(expected);
    expect(cleanDisplayText(input, NAME_MAX_GRAPHEMES).changed).toBe(true);
  });

  it('keeps ZWJ and ZWNJ (emoji sequences, Persian and Indic text)', () => {
    const family = '👨\u200D👩\u200D👧';
    expect(clean(`Family ${family}`)).toBe(`Family ${family}`);
    expect(clean('می\u200Cخواهم')).toBe('می\u200Cخواهم');
  });

  it('leaves clean text unchanged and says so', () => {
    for (const s of ['Taro Yamada', '山田 太郎', 'O\'Brien & "Sons"', '<script>', 'Ünïcödé ✓', 'Ali 🇯🇵']) {
      expect(cleanDisplayText(s, NAME_MAX_GRAPHEMES)).toEqual({ text: s, changed: false, masked: false });
    }
  });

  it('bounds the length in graphemes, with an ellipsis, never splitting a cluster', () => {
    expect(clean('x'.repeat(140))).toBe('x'.repeat(140));
    expect(clean('x'.repeat(141))).toBe(`${'x'.repeat(139)}…`);
    const flags = '🇯🇵'.repeat(200);
    const cut = clean(flags);
    expect(graphemes(cut)).toBe(140);
    expect(cut).toBe(`${'🇯🇵'.repeat(139)}…`);
    const family = '👨\u200D👩\u200D👧\u200D👦';
    expect(clean(family.repeat(150))).toBe(`${family.repeat(139)}…`);
  });

  it('no space before the ellipsis', () => {
    expect(clean(`${'a'.repeat(138)} bbb`)).toBe(`${'a'.repeat(138)}…`);
  });

  it('bounds a grapheme cluster stacked with combining marks ("Zalgo")', () => {
    const zalgo = `Z${'\u0301\u0316\u0336'.repeat(200)}algo`;
    const out = clean(zalgo);
    const first = [...new Intl.Segmenter('und', { granularity: 'grapheme' }).segment(out)][0]!.segment;
    expect(Array.from(first)).toHaveLength(MAX_CODE_POINTS_PER_GRAPHEME);
    expect(out.endsWith('algo')).toBe(true);
  });

  it('text with nothing visible left is empty (absent)', () => {
    for (const s of [
      '',
      '   ',
      '\r\n',
      '\u202E\u202C',
      '\u200D\u200C',
      '\u0301\u0302',
      '\uD800',
      '\uFFFE\uFFFF',
      '\uFFFD',
      '…',
    ]) {
      expect(clean(s), JSON.stringify(s)).toBe('');
    }
  });

  it('property: any string cleans to well-formed, control-free, bounded text, and cleaning is idempotent', () => {
    fc.assert(
      fc.property(fc.string({ unit: unicodeUnit, maxLength: 400 }), fc.integer({ min: 1, max: 200 }), (s, max) => {
        const once = cleanDisplayText(s, max).text;
        expect(isCleanDisplayText(once)).toBe(true);
        expect(graphemes(once)).toBeLessThanOrEqual(max);
        expect(once).toBe(once.normalize('NFC'));
        expect(once).toBe(once.trim());
        expect(cleanDisplayText(once, max)).toEqual({ text: once, changed: false, masked: false });
      }),
      { numRuns: 500 },
    );
  });
});

describe('the cleaner judged by an oracle of its own (tools/chaos/text-oracle.ts: code points by number, no shared expression)', () => {
  it('every forbidden code point, alone and amid text, is gone after cleaning', () => {
    const points: number[] = [];
    for (let cp = 0; cp <= 0x10ffff; cp++) {
      if (forbiddenCodePoint(String.fromCodePoint(cp)) !== undefined) points.push(cp);
    }
    // The table is what it says: controls, separators, bidi and other format characters, noncharacters, surrogates.
    expect(points.length).toBeGreaterThan(2_000);
    for (const cp of points) {
      const ch = String.fromCodePoint(cp);
      for (const input of [ch, `a${ch}b`, `${ch}山${ch}`]) {
        const out = clean(input);
        expect(forbiddenCodePoint(out), `U+${cp.toString(16).toUpperCase()} in ${JSON.stringify(input)}`).toBe(
          undefined,
        );
      }
    }
  });

  it('property: whatever the input, the cleaned text holds nothing the oracle forbids', () => {
    fc.assert(
      fc.property(fc.string({ unit: unicodeUnit, maxLength: 60 }), (input) => {
        expect(isSafeDisplayText(clean(input))).toBe(true);
      }),
      { numRuns: 2_000 },
    );
  });

  it('the oracle keeps what text needs: ZWJ and ZWNJ, marks, emoji, CJK', () => {
    expect(isSafeDisplayText('👨\u200D👩\u200D👧 می\u200Cخواهم José 山田')).toBe(true);
    expect(isSafeDisplayText('a\u202Eb')).toBe(false);
  });
});

describe('the grapheme segmenter, made when text first needs one', () => {
  it('is not made at load, nor for clean short text; once for text that must be counted, then reused', async () => {
    vi.resetModules();
    const Real = Intl.Segmenter;
    let made = 0;
    const counting = class extends Real {
      constructor(...args: ConstructorParameters<typeof Intl.Segmenter>) {
        super(...args);
        made++;
      }
    };
    const intl = Intl as unknown as { Segmenter: typeof Intl.Segmenter };
    intl.Segmenter = counting;
    try {
      const fresh = await import('../../functions/domain/display-text.ts');
      expect(made).toBe(0);
      expect(fresh.cleanDisplayText('Corner Café', 80).text).toBe('Corner Café');
      expect(made).toBe(0);
      expect(fresh.cleanDisplayText(`${'Ab '.repeat(40)}end`, 10).text).toBe('Ab Ab Ab…');
      expect(fresh.cleanDisplayText('a\u0000b', 80).text).toBe('a b');
      expect(made).toBe(1);
    } finally {
      intl.Segmenter = Real;
    }
  });
});

/**
 * Unicode for property tests: any code point, plus lone surrogates (which fast-check's 'binary' unit leaves out) and,
 * more often than chance would give them, the characters that break things: controls, separators, bidi and other
 * format characters, noncharacters, combining marks, joiners, emoji and wide spaces.
 */
import fc from 'fast-check';

export const TROUBLE = [
  '\u0000',
  '\r',
  '\n',
  '\r\n',
  '\t',
  '\u001b',
  '\u007f',
  '\u0085',
  '\u009b',
  '\u2028',
  '\u2029',
  '\u061c',
  '\u200e',
  '\u200f',
  '\u202a',
  '\u202b',
  '\u202c',
  '\u202d',
  '\u202e',
  '\u2066',
  '\u2067',
  '\u2068',
  '\u2069',
  '\u200b',
  '\u200c',
  '\u200d',
  '\ufeff',
  '\u00ad',
  '\u{e0041}',
  '\ufffe',
  '\uffff',
  '\ufdd0',
  '\u{1fffe}',
  '\u{10ffff}',
  '\ud800',
  '\udbff',
  '\udc00',
  '\udfff',
  '\u0301',
  '\u0336',
  '\u3000',
  '\u00a0',
  '👨\u200d👩\u200d👧',
  '🇯🇵',
  '山',
  '<',
  '&',
  '"',
  ' ',
] as const;

const loneSurrogate = fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c));

/** One unit of an arbitrary Unicode string (lone surrogates included). */
export const unicodeUnit = fc.oneof(
  { weight: 4, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }) },
  { weight: 3, arbitrary: fc.constantFrom(...TROUBLE) },
  { weight: 1, arbitrary: loneSurrogate },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 1 }) },
);

/** Arbitrary Unicode text, sometimes long. */
export const unicodeText = fc.oneof(
  { weight: 6, arbitrary: fc.string({ unit: unicodeUnit, maxLength: 40 }) },
  { weight: 1, arbitrary: fc.string({ unit: unicodeUnit, minLength: 150, maxLength: 600 }) },
);

/**
 * What no display text may carry, decided apart from the cleaner (functions/domain/display-text.ts): a table of code
 * points written out by number, checked one code point at a time. The chaos run and the unit tests judge the cleaner's
 * output with this, not with its own expressions — a cleaner whose expression was narrowed by mistake would
 * otherwise be judged by the same narrowed expression and pass.
 *
 * Forbidden: lone surrogates (ill-formed text), noncharacters, C0 and C1 controls and DEL (CR/LF reaching a header or
 * an SMS, NUL, ESC …), the line and paragraph separators, and the invisible format characters that reorder or hide
 * text — every bidi control, zero-width space and word joiners, BOM, soft hyphen, Mongolian vowel separator,
 * interlinear annotation controls, tag characters, Arabic number signs and other prepended format characters.
 * Allowed: ZWNJ (U+200C) and ZWJ (U+200D), which emoji sequences and Persian and Indic scripts need.
 */
const FORBIDDEN_RANGES: readonly (readonly [number, number])[] = [
  [0x0000, 0x001f], // C0 controls
  [0x007f, 0x009f], // DEL and C1 controls
  [0x00ad, 0x00ad], // soft hyphen
  [0x0600, 0x0605], // Arabic number signs (prepended format characters)
  [0x061c, 0x061c], // Arabic letter mark (bidi)
  [0x06dd, 0x06dd], // Arabic end of ayah
  [0x070f, 0x070f], // Syriac abbreviation mark
  [0x0890, 0x0891], // Arabic pound and piastre marks above
  [0x08e2, 0x08e2], // Arabic disputed end of ayah
  [0x180e, 0x180e], // Mongolian vowel separator
  [0x200b, 0x200b], // zero-width space
  [0x200e, 0x200f], // left-to-right and right-to-left marks
  [0x2028, 0x2029], // line and paragraph separators
  [0x202a, 0x202e], // bidi embeddings and overrides
  [0x2060, 0x2064], // word joiner, invisible operators
  [0x2066, 0x206f], // bidi isolates and deprecated format characters
  [0xd800, 0xdfff], // surrogates: only ever alone in a JavaScript string's code points
  [0xfdd0, 0xfdef], // noncharacters
  [0xfeff, 0xfeff], // byte order mark / zero-width no-break space
  [0xfff9, 0xfffb], // interlinear annotation controls
  [0x110bd, 0x110bd], // Kaithi number sign
  [0x110cd, 0x110cd], // Kaithi number sign above
  [0x13430, 0x1343f], // Egyptian hieroglyph format controls
  [0x1bca0, 0x1bca3], // shorthand format controls
  [0x1d173, 0x1d17a], // musical symbol format controls
  [0xe0001, 0xe0001], // language tag
  [0xe0020, 0xe007f], // tag characters
];

const isNoncharacterPlaneEnd = (cp: number) => (cp & 0xfffe) === 0xfffe; // U+xFFFE and U+xFFFF of every plane

/** The first forbidden code point of `text`, or undefined when it may be shown. */
export function forbiddenCodePoint(text: string): number | undefined {
  for (const ch of text) {
    const cp = ch.codePointAt(0) as number;
    if (isNoncharacterPlaneEnd(cp)) return cp;
    for (const [from, to] of FORBIDDEN_RANGES) if (cp >= from && cp <= to) return cp;
  }
  return undefined;
}

/** A display text (one line) is safe: nothing forbidden in it. */
export const isSafeDisplayText = (text: string) => forbiddenCodePoint(text) === undefined;

/** A multi-line body (an email's text alternative): the template's own line feeds, every line safe. */
export const isSafeMultilineText = (text: string) => text.split('\n').every(isSafeDisplayText);

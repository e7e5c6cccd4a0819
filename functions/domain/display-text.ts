/**
 * Display text from third parties (`counterpartyName`, `reason`): whoever named the other account wrote it, so it is
 * cleaned — never a reason to drop the customer's notification. Pure and total: any string in, a safe one out.
 *
 * What cleaning does, in order:
 * 1. Lone surrogates and noncharacters → U+FFFD. They stand for a character nobody can show; U+FFFD is Unicode's own
 *    substitute for ill-formed text (what every UTF-8 decoder shows), and DynamoDB refuses strings that are not
 *    well-formed UTF-16 (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/HowItWorks.NamingRulesDataTypes.html).
 * 2. Controls (C0, DEL, C1: CR, LF, NUL, ESC …), line and paragraph separators (U+2028/2029) → a space: they separate
 *    words, so a space keeps the words apart without letting a line break reach a header or an SMS.
 * 3. Format characters (\p{Cf}: bidi controls U+061C, U+200E/F, U+202A–202E, U+2066–2069, zero-width space, BOM,
 *    tag characters …) except ZWJ/ZWNJ (which emoji and Indic/Persian scripts need) → removed: they have no glyph,
 *    so removing them shows the reader exactly the visible text, in its logical order (no "Trojan Source" reordering).
 * 4. NFC normalisation, whitespace runs → one space, trimmed.
 * 5. Card numbers masked to their last four digits, IBANs to their country, check digits and last four (card-number.ts):
 *    before the cut, so no cut can leave a number's first digits too short to be read as one, and after the steps
 *    above, so no invisible character hides one. Only as far as the text can be shown and the longest such number
 *    beyond: a 64 KB name of digits and spaces is not read whole for what the cut drops anyway (reading it took
 *    seconds).
 * 6. A grapheme cluster is kept to at most 32 code points (UAX #15's Stream-Safe Text Format allows 30 non-starters
 *    in a row; "Zalgo" text stacks hundreds of marks on one letter and grapheme clusters are otherwise unbounded).
 * 7. At most `maxGraphemes` user-perceived characters (Intl.Segmenter, never splitting a cluster); longer text is cut
 *    and ends with "…".
 * Text left with no visible character (only marks, joiners or U+FFFD) is empty, and an empty text is treated as absent.
 */

/** Names are shown in subjects, push bodies and SMS: 140 characters, as the event contract always allowed. */
import { LONGEST_MASKED, maskCardNumbers } from './card-number.ts';

export const NAME_MAX_GRAPHEMES = 140;
export const REASON_MAX_GRAPHEMES = 200;
export const MAX_CODE_POINTS_PER_GRAPHEME = 32;

const ILL_FORMED = /[\p{Cs}\p{Noncharacter_Code_Point}]/gu;
const BREAKING = /[\p{Cc}\u2028\u2029]/gu;
/** Every format character except ZWNJ (U+200C) and ZWJ (U+200D). */
const INVISIBLE_FORMAT = /(?![\u200C\u200D])\p{Cf}/gu;
const WHITESPACE_RUN = /\p{White_Space}+/gu;
const VISIBLE = /[\p{L}\p{N}\p{P}\p{S}]/u;
const REPLACEMENT = '\uFFFD';
const ELLIPSIS = '…';

/**
 * Grapheme clusters, by a segmenter made on first use: the first one a process makes loads ICU's break rules (≈ 8 ms
 * of CPU), and text that is clean and short — most of it — never needs one (cleanDisplayText's common case).
 */
let segmenter: Intl.Segmenter | undefined;
function segmentsOf(text: string): Intl.Segments {
  segmenter ??= new Intl.Segmenter('und', { granularity: 'grapheme' });
  return segmenter.segment(text);
}

export interface CleanText {
  /** The text to store, hash and show; '' means "absent". */
  readonly text: string;
  /** True when cleaning changed anything, masking included (counted as DisplayTextSanitised). */
  readonly changed: boolean;
  /** True when a card number was masked (counted as CardNumbersMasked). */
  readonly masked: boolean;
}

/** Anything step 1–4 would change: ill-formed, breaking, format or non-space whitespace, a double, leading or trailing space. */
const NEEDS_CLEANING = /[\p{Cs}\p{Noncharacter_Code_Point}\p{Cc}\p{Cf}\u2028\u2029]|(?! )\p{White_Space}|^ | $| {2}/u;

export function cleanDisplayText(input: string, maxGraphemes: number): CleanText {
  // The common case, cheaply: already clean, and too short to hold more graphemes than allowed or an over-long cluster.
  if (
    input.length <= Math.min(maxGraphemes, MAX_CODE_POINTS_PER_GRAPHEME) &&
    !NEEDS_CLEANING.test(input) &&
    input.normalize('NFC') === input &&
    hasVisible(input)
  ) {
    const shown = maskCardNumbers(input);
    return { text: shown.text, changed: shown.text !== input, masked: shown.masked };
  }
  const cleaned = input
    .replace(ILL_FORMED, REPLACEMENT)
    .replace(BREAKING, ' ')
    .replace(INVISIBLE_FORMAT, '')
    .normalize('NFC')
    .replace(WHITESPACE_RUN, ' ')
    .trim();
  const shown = maskCardNumbers(leadingGraphemes(cleaned, maxGraphemes + LONGEST_MASKED));
  const text = boundGraphemes(shown.text, maxGraphemes);
  const result = hasVisible(text) ? text : '';
  return { text: result, changed: result !== input, masked: shown.masked && result !== '' };
}

/** A letter, digit, punctuation or symbol other than the substitutes cleaning itself writes (U+FFFD, "…"). */
const hasVisible = (text: string) => VISIBLE.test(text.replaceAll(REPLACEMENT, '').replaceAll(ELLIPSIS, ''));

/** The text's first `count` grapheme clusters. */
function leadingGraphemes(text: string, count: number): string {
  if (text.length <= count) return text;
  let n = 0;
  for (const { index } of segmentsOf(text)) if (n++ === count) return text.slice(0, index);
  return text;
}

function boundGraphemes(text: string, max: number): string {
  const kept: string[] = [];
  let count = 0;
  for (const { segment } of segmentsOf(text)) {
    if (++count > max) {
      // One place for the ellipsis: drop the last kept cluster and any space before the cut.
      kept.pop();
      return `${kept.join('').trimEnd()}${ELLIPSIS}`;
    }
    kept.push(boundCluster(segment));
  }
  return kept.join('');
}

function boundCluster(cluster: string): string {
  const points = Array.from(cluster);
  if (points.length <= MAX_CODE_POINTS_PER_GRAPHEME) return cluster;
  // A joiner left dangling at the cut would glue this cluster to the next one.
  return points
    .slice(0, MAX_CODE_POINTS_PER_GRAPHEME)
    .join('')
    .replace(/[\u200C\u200D]+$/u, '');
}

/** True when a string holds nothing a display text could not: what the sent-text checks of the chaos suite assert. */
export function isCleanDisplayText(text: string): boolean {
  return (
    text.isWellFormed() &&
    !/[\p{Noncharacter_Code_Point}\p{Cc}\u2028\u2029]/u.test(text) &&
    !new RegExp(INVISIBLE_FORMAT.source, 'u').test(text)
  );
}

/**
 * The same for a body of several lines (an email's plain-text alternative): its line breaks are the template's own,
 * every line must be clean. Display text can never add one: cleaning turns every line break into a space.
 */
export const isCleanMultilineText = (text: string): boolean => text.split('\n').every(isCleanDisplayText);

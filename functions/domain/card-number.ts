/**
 * Card numbers are never shown (PCI DSS v4.0 requirement 3.4.1: a PAN is masked when displayed, the BIN and the last
 * four digits at most) and never stored in the clear (3.5.1). A producer may still put one where a notice shows text —
 * the whole number in a "last four digits" field, a card number in a merchant's or a payee's name — so every value a
 * notice shows as written (identifiers and display text, docs/event.md "Card numbers") is read here, and every card
 * number in it is masked to its last four digits before it is stored, hashed or rendered.
 *
 * A card number is 13–19 digits that begin as a card brand's numbers begin, with a length that brand issues (the IIN
 * ranges of ISO/IEC 7812 as npm `credit-card-type` keeps them: Visa, Mastercard, American Express, Discover, JCB, Diners,
 * UnionPay, Maestro, Mir, Elo …; where ranges overlap, any brand whose range covers the number) and pass the Luhn check — UnionPay's without it, as its numbers need not pass. Its
 * digits are what a reader reads as digits: any script's decimal digits (full-width `４１１１` is read as 4111) and the
 * digits Unicode files as other numbers (superscript `⁴`, circled `④`: NFKC makes them one digit), with whatever shows
 * nothing between them taken as nothing (joiners, zero-width characters, variation selectors, a mark on a digit:
 * `4\u200D111` is 4111 on the screen). They are written together or in groups separated by up to three spaces or
 * dashes (`4111 1111 1111 1111`, `3782-822463-10005`), or by the dots, slashes, commas or underscores that group digits
 * too (`4111.1111.1111.1111`) — then every group of the number is separated alike, since dates and addresses are
 * written with those as well and two of them side by side (`22.01.2026 - 01.04.2026`) are not one number. Every
 * stretch of such groups holding 13–19 digits is read, so a card number beside another number
 * (`ref 12 4111 1111 1111 1111`) is found too.
 * An IBAN (ISO 13616: two letters, two check digits, its country's length, mod-97 check) is shown as banks show an
 * account in a notice: its country, its check digits and its last four characters, every other letter and digit
 * masked, its grouping kept (`DE89 **** **** **** **30 00`). Not only for the account's sake: any card number can be
 * wrapped into a valid IBAN (`DEcc 4111 1111 1111 1111 00`, the check digits computed), so an IBAN shown as written
 * would carry it. What an IBAN leaves shown is then read for card numbers as any digits are (an IBAN ending in a
 * card's first four digits, the rest of the card after it, is one card number to a reader). Not a producer's mistake:
 * reported apart from card numbers (not alarmed).
 *
 * Pure and total; linear in the text's length (no regular expression backtracks over the input).
 *
 * The card brands' ranges and the IBAN registry (card-rules.ts, about 25 KB) are consulted only for a candidate: a
 * window of 13–19 digits that passes the Luhn check or starts as UnionPay's numbers start, or an IBAN of its country's
 * length that passes the mod-97 check (card-rules.generated.ts has the lengths and UnionPay's leads). Ingest loads them
 * with the first value that holds one; reading such a value before throws CardRulesNotLoaded, never returns it as
 * written. Every other function that masks has them from its start.
 */
import type creditCardType from 'credit-card-type';
import { BRAND_LEAD, IBAN_COUNTRIES_BY_LENGTH, UNIONPAY_LEAD } from './card-rules.generated.ts';
import { RulesNotLoaded } from './rules-not-loaded.ts';

/** What masked digits are shown as: in GSM 03.38's basic alphabet, so an SMS keeps its encoding and its length. */
export const MASK = '*';

const MIN_DIGITS = 13;
const MAX_DIGITS = 19;
/** Separators between a number's groups: up to three spaces (any Unicode space) or dashes (any Unicode dash). */
const MAX_GAP = 3;
/**
 * The most characters a reader sees (grapheme clusters) that one card number can span: its digits (a mark on a digit
 * is part of its cluster) and the separators between them. Text cut after this many past the part shown cannot hide
 * the rest of a number that starts in it.
 */
export const LONGEST_CARD_NUMBER = MAX_DIGITS + (MAX_DIGITS - 1) * MAX_GAP;

const DIGIT = /\p{Nd}/u;
/** Digits Unicode files as other numbers (superscript, circled …): a digit when NFKC makes it one. */
const OTHER_NUMBER = /\p{No}/u;
const SEPARATOR = /[\p{Zs}\p{Pd}\t\n\r\f\v]/u;
/** Separators that also group dates, versions and addresses: a number's groups are then all separated alike. */
const GROUPING = /[.,/_\uFF0C\uFF0E\uFF0F\uFF3F]/u;
/** What shows nothing between two digits: marks on a digit, format characters (joiners …), variation selectors. */
const UNSEEN = /[\p{M}\p{Cf}\p{Default_Ignorable_Code_Point}]/u;
const ASCII_LETTER = /^[A-Za-z]$/;

/** One character of the input: its place (code units or bytes), and what it is to a card number. */
interface Unit {
  readonly start: number;
  readonly end: number;
  /** 0–9 for a character a reader reads as a decimal digit. */
  readonly digit?: number;
  /** The separator as written (a space, a dash, a dot …). */
  readonly separator?: string;
  /** Shows nothing between two digits: neither ends a group nor separates one. */
  readonly unseen?: boolean;
  /** An ASCII letter, as written: an IBAN's country code and many of its account numbers have them. */
  readonly letter?: string;
}

/** The value of a decimal digit: Unicode encodes each script's digits 0–9 in one contiguous range (UAX #44). */
function digitValue(cp: number): number {
  if (cp <= 0x39) return cp - 0x30;
  let zero = cp;
  while (DIGIT.test(String.fromCodePoint(zero - 1))) zero--;
  // Adjacent ranges (mathematical digits: five sets of ten) each start at 0.
  return (cp - zero) % 10;
}

function unitOf(cp: number, start: number, end: number): Unit {
  const ch = String.fromCodePoint(cp);
  if (DIGIT.test(ch)) return { start, end, digit: digitValue(cp) };
  if (OTHER_NUMBER.test(ch)) {
    const nfkc = ch.normalize('NFKC');
    const one = nfkc.codePointAt(0) as number;
    return nfkc.length === 1 && DIGIT.test(nfkc) ? { start, end, digit: digitValue(one) } : { start, end };
  }
  if (SEPARATOR.test(ch) || GROUPING.test(ch)) return { start, end, separator: ch };
  if (ASCII_LETTER.test(ch)) return { start, end, letter: ch };
  return UNSEEN.test(ch) ? { start, end, unseen: true } : { start, end };
}

const luhn = (digits: readonly number[]): boolean => {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    const d = digits[digits.length - 1 - i] as number;
    sum += i % 2 === 0 ? d : d * 2 > 9 ? d * 2 - 9 : d * 2;
  }
  return sum % 10 === 0;
};

/** A card brand's numbers are told by their first digits: at most this many (credit-card-type's longest IIN range). */
const IIN_DIGITS = 8;
export type Brand = ReturnType<typeof creditCardType>[number];

/** What decides a candidate (card-rules.ts): loaded with the first one in ingest, at the start of every other function. */
export interface CardRules {
  /** Every brand whose IIN ranges cover the first digits. */
  brandsCovering(iin: string): Brand[];
  /** UnionPay's type name: its numbers need not pass the Luhn check. */
  readonly unionPay: string;
  /** ISO 13616: the country's length and BBAN format, the mod-97 check. */
  isValidIBAN(iban: string): boolean;
}

let rules: CardRules | undefined;

/** Called by card-rules.ts when it loads, whether imported at a function's start or loaded for a candidate. */
export function provideCardRules(loaded: CardRules): void {
  rules = loaded;
}

/** The card brands' ranges and the IBAN registry, loaded once (nothing to do when they are). */
export async function loadCardRules(): Promise<void> {
  if (rules === undefined) await import('./card-rules.ts');
}

export class CardRulesNotLoaded extends RulesNotLoaded {
  override name = 'CardRulesNotLoaded';
  constructor() {
    super('the card number and IBAN rules are not loaded yet', loadCardRules);
  }
}

function cardRules(): CardRules {
  if (rules === undefined) throw new CardRulesNotLoaded();
  return rules;
}

/**
 * 13–19 digits that a brand whose ranges cover their first digits issues at their length, passing the Luhn check
 * (UnionPay's need not, where UnionPay's ranges cover them). `brandsOf` may remember the brands of first digits: the
 * windows of one text share them.
 */
export function isCardNumber(
  digits: readonly number[],
  brandsOf: (iin: string) => Brand[] = (iin) => cardRules().brandsCovering(iin),
): boolean {
  if (digits.length < MIN_DIGITS || digits.length > MAX_DIGITS) return false;
  // A number no brand's ranges cover is none, whatever it passes; only UnionPay's need not pass the Luhn check.
  const lead = `${digits[0]}${digits[1]}`;
  if (!BRAND_LEAD.test(lead)) return false;
  const valid = luhn(digits);
  if (!valid && !UNIONPAY_LEAD.test(lead)) return false;
  const brands = brandsOf(digits.slice(0, IIN_DIGITS).join('')).filter((b) => b.lengths.includes(digits.length));
  return valid ? brands.length > 0 : brands.some((b) => b.type === cardRules().unionPay);
}

/** The brands of first digits, each looked up once per text: a text of many short groups has many windows. */
function rememberedBrands(): (iin: string) => Brand[] {
  const known = new Map<string, Brand[]>();
  return (iin) => {
    let brands = known.get(iin);
    if (brands === undefined) {
      brands = cardRules().brandsCovering(iin);
      known.set(iin, brands);
    }
    return brands;
  };
}

/** A run of digits (the units' indexes), and what separates it from the run before it in its stretch. */
interface Group {
  readonly at: number[];
  readonly gapBefore: string;
}

/**
 * The indexes of the units to mask: every digit of each card number found but its last four. `hidden` holds the units
 * already masked (an IBAN's): they read as a letter does, ending a group.
 */
function unitsToMask(units: readonly Unit[], hidden: ReadonlySet<number>): Set<number> {
  const masked = new Set<number>();
  const brandsOf = rememberedBrands();
  // The groups of one stretch (maximal runs of digits, joined by short runs of separators), read as windows of
  // consecutive groups: each window of 13–19 digits whose gaps are spaces and dashes, or all alike, is a candidate.
  let groups: Group[] = [];
  const check = () => {
    for (let first = 0; first < groups.length; first++) {
      const digits: number[] = [];
      const at: number[] = [];
      let grouping = false;
      let alike = true;
      for (let last = first; last < groups.length; last++) {
        const group = groups[last] as Group;
        if (last > first) {
          grouping ||= GROUPING.test(group.gapBefore);
          alike &&= group.gapBefore === groups[first + 1]?.gapBefore;
          // A dot, slash, comma or underscore among unlike gaps: no longer one number, nor any longer window.
          if (grouping && !alike) break;
        }
        for (const i of group.at) {
          digits.push(units[i]?.digit as number);
          at.push(i);
        }
        if (digits.length > MAX_DIGITS) break;
        if (isCardNumber(digits, brandsOf)) for (const i of at.slice(0, -4)) masked.add(i);
      }
    }
    groups = [];
  };
  let run: number[] = [];
  let gap = '';
  for (let i = 0; i < units.length; i++) {
    const unit = units[i] as Unit;
    if (unit.digit !== undefined && !hidden.has(i)) {
      run.push(i);
      continue;
    }
    if (unit.unseen === true && run.length > 0) continue;
    if (run.length > 0) {
      groups.push({ at: run, gapBefore: gap });
      gap = '';
    }
    run = [];
    if (unit.unseen === true && groups.length > 0) continue;
    if (unit.separator !== undefined && groups.length > 0 && [...gap].length < MAX_GAP) gap += unit.separator;
    else {
      check();
      gap = '';
    }
  }
  if (run.length > 0) groups.push({ at: run, gapBefore: gap });
  check();
  return masked;
}

/** Each IBAN country's length in characters (ISO 13616's registry, as npm `ibantools` keeps it). */
const IBAN_LENGTHS: ReadonlyMap<string, number> = new Map(
  IBAN_COUNTRIES_BY_LENGTH.split(' ').flatMap((group) =>
    (group.slice(2).match(/../g) ?? []).map((country) => [country, Number(group.slice(0, 2))] as const),
  ),
);
/** An IBAN's country code, its check digits, and its last four characters: what is shown of it. */
const IBAN_SHOWN_HEAD = 4;
const IBAN_SHOWN_TAIL = 4;
/** The longest an IBAN can be written: at most 34 letters and digits (ISO 13616), gaps between, unseen ones aside. */
const LONGEST_IBAN = 34 + 33 * MAX_GAP;
/** The most characters a reader sees that one masked number (a card number or an IBAN) can span. */
export const LONGEST_MASKED = Math.max(LONGEST_CARD_NUMBER, LONGEST_IBAN);

/**
 * The units of every IBAN in the text to mask: each letter and digit but its first four and last four. An IBAN is its
 * country's length of letters and digits (any script's digits, as a reader reads them), written together or with up to
 * three spaces or dashes between them (printed in groups of four, or electronically), and what shows nothing anywhere;
 * valid by ISO 13616 (its country's length and BBAN format, the mod-97 check). Linear: each start is tried once, for
 * its country's one length.
 */
function ibanUnits(units: readonly Unit[]): Set<number> {
  const hidden = new Set<number>();
  // The letters and digits in order (their units, as written), and whether each follows the one before as part of
  // one word: nothing but unseen units and at most MAX_GAP spaces or dashes between them.
  const chars: string[] = [];
  const at: number[] = [];
  const joined: boolean[] = [];
  let gap = 0;
  for (let i = 0; i < units.length; i++) {
    const u = units[i] as Unit;
    const char = u.digit === undefined ? u.letter : String(u.digit);
    if (char !== undefined) {
      joined.push(gap <= MAX_GAP);
      chars.push(char);
      at.push(i);
      gap = 0;
    } else if (u.separator !== undefined && !GROUPING.test(u.separator)) gap++;
    else if (u.unseen !== true) gap = MAX_GAP + 1;
  }
  const isLetter = (k: number) => /^[A-Za-z]$/.test(chars[k] ?? '');
  const isDigit = (k: number) => /^[0-9]$/.test(chars[k] ?? '');
  /** The length of the IBAN that starts at the k-th letter or digit; 0 when none does. */
  const ibanAt = (k: number): number => {
    if (!(isLetter(k) && isLetter(k + 1) && isDigit(k + 2) && isDigit(k + 3))) return 0;
    const length = IBAN_LENGTHS.get(`${chars[k]}${chars[k + 1]}`.toUpperCase()) ?? 0;
    if (length === 0 || k + length > chars.length || !joinedFrom(joined, k + 1, k + length)) return 0;
    const electronic = chars
      .slice(k, k + length)
      .join('')
      .toUpperCase();
    // The check digits first (an id that merely starts like an IBAN fails it 96 times in 97): the registry decides.
    return mod97(electronic) === 1 && cardRules().isValidIBAN(electronic) ? length : 0;
  };
  for (let k = 0; k + 3 < chars.length; ) {
    const length = ibanAt(k);
    if (length === 0) {
      k++;
      continue;
    }
    for (let m = k + IBAN_SHOWN_HEAD; m < k + length - IBAN_SHOWN_TAIL; m++) hidden.add(at[m] as number);
    k += length;
  }
  return hidden;
}

/**
 * ISO 7064 MOD 97-10 over an IBAN in electronic form (its first four characters moved to the end, letters as 10–35): 1
 * for every valid IBAN. Only what tells a candidate: ibantools' isValidIBAN decides (it checks the same and the BBAN).
 */
function mod97(iban: string): number {
  let rest = 0;
  for (const char of iban.slice(4) + iban.slice(0, 4)) {
    const value = Number.parseInt(char, 36);
    rest = (value > 9 ? rest * 100 + value : rest * 10 + value) % 97;
  }
  return rest;
}

/** Whether every character from `from` to before `to` follows the one before it within one word. */
function joinedFrom(joined: readonly boolean[], from: number, to: number): boolean {
  for (let k = from; k < to; k++) if (joined[k] !== true) return false;
  return true;
}

/** Every unit to mask (each IBAN's middle, each card number's digits but its last four), and which kinds were found. */
function unitsToHide(units: readonly Unit[], digits: number): { at: Set<number>; card: boolean; iban: boolean } {
  const iban = ibanUnits(units);
  const card = digits < MIN_DIGITS ? new Set<number>() : unitsToMask(units, iban);
  return { at: new Set([...iban, ...card]), card: card.size > 0, iban: iban.size > 0 };
}

const DIGITS = /[\p{Nd}\p{No}]/gu;
/** Two letters and two digits, whatever shows nothing between them: where an IBAN may start. */
/** Between two characters of one IBAN what the masker reads past (ibanUnits): unseen ones, up to MAX_GAP spaces or dashes. */
const IBAN_GAP = `${UNSEEN.source}*(?:${SEPARATOR.source}${UNSEEN.source}*){0,${MAX_GAP}}`;
const IBAN_START = new RegExp(['[A-Za-z]', '[A-Za-z]', '[\\p{Nd}\\p{No}]', '[\\p{Nd}\\p{No}]'].join(IBAN_GAP), 'u');
/** Fewer digits than a card number has, and no IBAN: nothing to read (most values). */
const nothingToRead = (text: string) => (text.match(DIGITS)?.length ?? 0) < MIN_DIGITS && !IBAN_START.test(text);

export interface Shown {
  readonly text: string;
  /** A card number was masked: a producer's mistake (counted, logged and alarmed as CardNumbersMasked). */
  readonly masked: boolean;
  /** An IBAN was masked to its country, check digits and last four. */
  readonly ibanMasked: boolean;
}

/**
 * The text with every card number masked to its last four digits (`**** **** **** 1111`) and every IBAN to its
 * country, check digits and last four (`DE89 **** **** **** **30 00`), each masked character one `*`.
 */
export function maskCardNumbers(text: string): Shown {
  if (nothingToRead(text)) return { text, masked: false, ibanMasked: false };
  const units: Unit[] = [];
  for (let i = 0; i < text.length; ) {
    const cp = text.codePointAt(i) as number;
    const end = i + (cp > 0xffff ? 2 : 1);
    units.push(unitOf(cp, i, end));
    i = end;
  }
  const hide = unitsToHide(units, units.filter((u) => u.digit !== undefined).length);
  if (hide.at.size === 0) return { text, masked: false, ibanMasked: false };
  const shown = units.map((u, i) => (hide.at.has(i) ? MASK : text.slice(u.start, u.end))).join('');
  return { text: shown, masked: hide.card, ibanMasked: hide.iban };
}

/**
 * The same in a record's bytes as they arrived (a quarantined record is kept for its replay): JSON text, or Avro or
 * Protobuf whose strings are UTF-8. A JSON escape is read as the character it stands for (`\u0034` is a 4, `\/` a
 * slash). Each byte of a masked character becomes `*` (an escaped one `******`), so the length of every string, and
 * so every length prefix around it, stays as it was, and JSON text stays JSON.
 */
export function maskCardNumbersInBytes(bytes: Uint8Array): { bytes: Uint8Array; masked: boolean; ibanMasked: boolean } {
  const units: Unit[] = [];
  for (let i = 0; i < bytes.length; ) {
    const decoded = jsonEscapeAt(bytes, i) ?? utf8At(bytes, i);
    units.push(unitOf(decoded.cp, i, i + decoded.length));
    i += decoded.length;
  }
  const hide = unitsToHide(units, units.filter((u) => u.digit !== undefined).length);
  if (hide.at.size === 0) return { bytes, masked: false, ibanMasked: false };
  const out = Uint8Array.from(bytes);
  for (const i of hide.at) {
    const u = units[i] as Unit;
    out.fill(MASK.charCodeAt(0), u.start, u.end);
  }
  return { bytes: out, masked: hide.card, ibanMasked: hide.iban };
}

const BACKSLASH = 0x5c;
/** JSON's two-character escapes (RFC 8259 §7) that stand for a character a card number may hold or be grouped by. */
const SHORT_ESCAPES: Readonly<Record<string, number>> = { '/': 0x2f, t: 0x09, n: 0x0a, r: 0x0d, f: 0x0c, b: 0x08 };

const hex4 = (bytes: Uint8Array, i: number): number | undefined => {
  const text = Buffer.from(bytes.subarray(i, i + 4)).toString('latin1');
  return /^[0-9A-Fa-f]{4}$/.test(text) ? Number.parseInt(text, 16) : undefined;
};

/** The character a JSON escape at `i` stands for (a surrogate pair's as one), or undefined when none starts there. */
function jsonEscapeAt(bytes: Uint8Array, i: number): { cp: number; length: number } | undefined {
  if (bytes[i] !== BACKSLASH) return undefined;
  const next = String.fromCharCode(bytes[i + 1] ?? 0);
  // An escaped backslash is one character: the `u0034` after `\\` is text, not an escape.
  if (next === '\\') return { cp: BACKSLASH, length: 2 };
  const short = SHORT_ESCAPES[next];
  if (short !== undefined) return { cp: short, length: 2 };
  const unit = next === 'u' ? hex4(bytes, i + 2) : undefined;
  if (unit === undefined) return undefined;
  if (unit >= 0xd800 && unit <= 0xdbff && bytes[i + 6] === BACKSLASH && bytes[i + 7] === 0x75) {
    const low = hex4(bytes, i + 8);
    if (low !== undefined && low >= 0xdc00 && low <= 0xdfff) {
      return { cp: 0x10000 + ((unit - 0xd800) << 10) + (low - 0xdc00), length: 12 };
    }
  }
  return { cp: unit, length: 6 };
}

/** The code point of a well-formed UTF-8 sequence at `i`, or the byte alone (a binary format's bytes are not text). */
function utf8At(bytes: Uint8Array, i: number): { cp: number; length: number } {
  const b0 = bytes[i] as number;
  const length = b0 >= 0xf0 && b0 <= 0xf4 ? 4 : b0 >= 0xe0 ? (b0 <= 0xef ? 3 : 1) : b0 >= 0xc2 && b0 <= 0xdf ? 2 : 1;
  if (length === 1 || i + length > bytes.length) return { cp: b0 < 0x80 ? b0 : 0xfffd, length: 1 };
  let cp = b0 & (length === 2 ? 0x1f : length === 3 ? 0x0f : 0x07);
  for (let k = 1; k < length; k++) {
    const b = bytes[i + k] as number;
    if ((b & 0xc0) !== 0x80) return { cp: 0xfffd, length: 1 };
    cp = (cp << 6) | (b & 0x3f);
  }
  // Overlong forms, surrogates and values beyond U+10FFFF are not UTF-8 either (RFC 3629 §3): bytes, not a character.
  const shortest = length === 2 ? 0x80 : length === 3 ? 0x800 : 0x10000;
  if (cp < shortest || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return { cp: 0xfffd, length: 1 };
  return { cp, length };
}

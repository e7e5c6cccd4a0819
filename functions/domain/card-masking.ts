/**
 * Card numbers and IBANs masked (card-number.ts) as every record's path asks for it, without loading the rules at
 * cold start. Most values hold fewer digits than a card number has and nothing an IBAN starts with: they are answered
 * here, as they are. A value that has either is read by card-number.ts, which carries the card brands' IIN ranges
 * (credit-card-type) and the IBAN registry (ibantools), about 30 KB: loaded when a value first needs it, and kept.
 *
 * Masking is synchronous (the contract's one decoder, a quarantine item's builder): a value that needs the rules before
 * they are loaded throws CardNumberRulesNotLoaded, never returns as written; the caller loads them and reads the record
 * again (ingest/ingest-record.ts). A module that imports card-number.ts itself (the templates, the operator's replay and
 * repair, the tests) has them from its start.
 */
import { RulesNotLoaded } from './rules-not-loaded.ts';

/** What masked digits are shown as: in GSM 03.38's basic alphabet, so an SMS keeps its encoding and its length. */
export const MASK = '*';

export const MIN_DIGITS = 13;
export const MAX_DIGITS = 19;
/** Separators between a number's groups: up to three spaces (any Unicode space) or dashes (any Unicode dash). */
export const MAX_GAP = 3;
/**
 * The most characters a reader sees (grapheme clusters) that one card number can span: its digits (a mark on a digit
 * is part of its cluster) and the separators between them. Text cut after this many past the part shown cannot hide
 * the rest of a number that starts in it.
 */
export const LONGEST_CARD_NUMBER = MAX_DIGITS + (MAX_DIGITS - 1) * MAX_GAP;
/** The longest an IBAN can be written: at most 34 letters and digits (ISO 13616), gaps between, unseen ones aside. */
export const LONGEST_IBAN = 34 + 33 * MAX_GAP;
/** The most characters a reader sees that one masked number (a card number or an IBAN) can span. */
export const LONGEST_MASKED = Math.max(LONGEST_CARD_NUMBER, LONGEST_IBAN);

/** What shows nothing between two digits: marks on a digit, format characters (joiners …), variation selectors. */
export const UNSEEN = /[\p{M}\p{Cf}\p{Default_Ignorable_Code_Point}]/u;
const DIGITS = /[\p{Nd}\p{No}]/gu;
/** Two letters and two digits, whatever shows nothing between them: where an IBAN may start. */
const IBAN_START = new RegExp(
  ['[A-Za-z]', '[A-Za-z]', '[\\p{Nd}\\p{No}]', '[\\p{Nd}\\p{No}]'].join(`${UNSEEN.source}*`),
  'u',
);
/** Fewer digits than a card number has, and no IBAN: nothing to read (most values). */
export const nothingToRead = (text: string) => (text.match(DIGITS)?.length ?? 0) < MIN_DIGITS && !IBAN_START.test(text);

export interface Shown {
  readonly text: string;
  /** A card number was masked: a producer's mistake (counted, logged and alarmed as CardNumbersMasked). */
  readonly masked: boolean;
  /** An IBAN was masked to its country, check digits and last four. */
  readonly ibanMasked: boolean;
}

/** The reader card-number.ts is: it hands itself over when it loads. */
export interface CardNumberReader {
  maskCardNumbers(text: string): Shown;
  maskCardNumbersInBytes(bytes: Uint8Array): { bytes: Uint8Array; masked: boolean; ibanMasked: boolean };
}

let reader: CardNumberReader | undefined;

/** Called by card-number.ts when it loads (whether imported by a module or loaded on demand). */
export function provideCardNumberReader(loaded: CardNumberReader): void {
  reader = loaded;
}

/** The card brands' ranges and the IBAN registry, loaded once (a no-op when card-number.ts is loaded already). */
export async function loadCardNumberRules(): Promise<void> {
  if (reader === undefined) await import('./card-number.ts');
}

export class CardNumberRulesNotLoaded extends RulesNotLoaded {
  override name = 'CardNumberRulesNotLoaded';
  constructor() {
    super('the card number and IBAN rules are not loaded yet', loadCardNumberRules);
  }
}

function loadedReader(): CardNumberReader {
  if (reader === undefined) throw new CardNumberRulesNotLoaded();
  return reader;
}

/**
 * The text with every card number masked to its last four digits and every IBAN to its country, check digits and
 * last four (card-number.ts maskCardNumbers); a value with nothing to read as it is, without the rules.
 */
export function maskCardNumbers(text: string): Shown {
  if (nothingToRead(text)) return { text, masked: false, ibanMasked: false };
  return loadedReader().maskCardNumbers(text);
}

/** The same in a record's bytes as they arrived (card-number.ts maskCardNumbersInBytes): always read with the rules. */
export function maskCardNumbersInBytes(bytes: Uint8Array): { bytes: Uint8Array; masked: boolean; ibanMasked: boolean } {
  return loadedReader().maskCardNumbersInBytes(bytes);
}

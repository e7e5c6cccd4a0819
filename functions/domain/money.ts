/**
 * Money: a decimal string and an ISO 4217 currency, never a binary float. An amount is valid only with at most as many
 * fraction digits as the currency's minor unit (USD 2, JPY 0, BHD 3, CLF 4 …), and is shown digit for digit.
 *
 * Minor units come from ISO 4217 itself (npm `currency-codes`, the ISO list), not from CLDR's Intl data, which
 * differs for some currencies (Intl shows IQD, IRR, LAK, HUF, COP, MGA … with other fraction digits than ISO's). They
 * are read from the package's codes and minor units alone (iso4217.generated.ts, `npm run iso4217`), not from its
 * module, which also holds every currency's name and countries: bytes every cold start would load and never read.
 * Pure.
 */
import { ISO_4217_MINOR_UNITS, ISO_4217_PUBLISH_DATE } from './iso4217.generated.ts';
import type { Locale } from './locale.ts';

/** A rendered amount whose digits are not the amount's: refused, so no rounded figure ever reaches a customer. */
export class RenderError extends Error {
  override name = 'RenderError';
}

/**
 * ISO 4217 codes whose minor unit is "N.A." (precious metals, bond-market units, SDR, the testing and "no currency"
 * codes): not money a transfer notice can show. The package records their minor unit as 0, so they are named here.
 */
const NO_MINOR_UNIT = new Set([
  'XAG',
  'XAU',
  'XBA',
  'XBB',
  'XBC',
  'XBD',
  'XDR',
  'XPD',
  'XPT',
  'XSU',
  'XTS',
  'XUA',
  'XXX',
]);

/** ISO 4217 amendments newer than the package's list (see `ISO_4217_LIST_DATE`). Amendment 176: Caribbean guilder. */
const AMENDMENTS: Readonly<Record<string, number>> = { XCG: 2 };

const MINOR_UNITS: ReadonlyMap<string, number> = new Map([
  ...Object.entries(ISO_4217_MINOR_UNITS).filter(([code]) => !NO_MINOR_UNIT.has(code)),
  ...Object.entries(AMENDMENTS),
]);

/** The publication date of the ISO 4217 list the minor units come from. */
export const ISO_4217_LIST_DATE: string = ISO_4217_PUBLISH_DATE;

const CURRENCY_CODE = /^[A-Z]{3}$/;

/** The currency's ISO 4217 minor unit (number of fraction digits), or undefined for a code that is not money. */
export function minorUnit(currency: string): number | undefined {
  return CURRENCY_CODE.test(currency) ? MINOR_UNITS.get(currency) : undefined;
}

/** A non-negative decimal string: up to 15 integer digits (what a bank's ledger holds), no exponent, no sign. */
export const DECIMAL_AMOUNT = /^(0|[1-9]\d{0,14})(?:\.(\d{1,4}))?$/;

export type AmountCheck = { ok: true } | { ok: false; problem: string };

export function checkAmount(amount: string, currency: string): AmountCheck {
  const digits = minorUnit(currency);
  if (digits === undefined) return { ok: false, problem: 'not an ISO 4217 currency with a minor unit' };
  const match = DECIMAL_AMOUNT.exec(amount);
  if (match === null) return { ok: false, problem: 'not a decimal string (up to 15 integer digits, no exponent)' };
  const fraction = match[2] ?? '';
  if (fraction.length > digits) {
    return { ok: false, problem: `more fraction digits than ${currency}'s minor unit (${digits})` };
  }
  return { ok: true };
}

/**
 * The spellings of an amount with one reading, as producers write them, to the decimal string the contract keeps:
 * surrounding spaces, a leading `+`, leading zeros (a mainframe's fixed-width field: `+0000000012.50`), a bare
 * decimal point (`.5` → `0.5`, `5.` → `5`). The fraction digits are kept as given, so the digits shown are the same.
 * Anything else is returned as it is, for checkAmount to refuse: a sign `-`, an exponent (a binary float's formatter
 * wrote it), grouping (`1,000` reads as one thousand or as one, by country), other digits than ASCII.
 */
export function normaliseAmount(given: string): string {
  if (DECIMAL_AMOUNT.test(given)) return given;
  const m = /^\+?(\d*)(?:\.(\d*))?$/.exec(given.trim());
  if (m === null) return given;
  const [, integer = '', fraction = ''] = m;
  if (integer === '' && fraction === '') return given;
  const whole = integer.replace(/^0+(?=\d)/, '') || '0';
  return fraction === '' ? whole : `${whole}.${fraction}`;
}

/** A currency code with one reading: ISO 4217's three letters in any case, surrounding spaces trimmed (` usd` → `USD`). */
export function normaliseCurrency(given: string): string {
  const code = given.trim();
  return /^[A-Za-z]{3}$/.test(code) ? code.toUpperCase() : given;
}

/** The amount as a number of the currency means: trailing fraction zeros dropped (10.50 → 10.5, 10.0 → 10). */
export function canonicalAmount(amount: string): string {
  if (!amount.includes('.')) return amount;
  return amount.replace(/0+$/, '').replace(/\.$/, '');
}

const formats = new Map<string, Intl.NumberFormat>();

function formatFor(locale: Locale, currency: string, digits: number): Intl.NumberFormat {
  const key = `${locale}|${currency}`;
  let format = formats.get(key);
  if (format === undefined) {
    format = new Intl.NumberFormat(locale, {
      style: 'currency',
      currency,
      numberingSystem: 'latn',
      minimumFractionDigits: digits,
      maximumFractionDigits: digits,
    });
    formats.set(key, format);
  }
  return format;
}

/**
 * The amount in the locale's currency format, with exactly the currency's minor unit of fraction digits.
 * Intl.NumberFormat formats a decimal string exactly (ECMA-402 "Intl.NumberFormat v3": strings are exact decimals),
 * and the digits shown are checked against the digits given: a mismatch throws RenderError instead of sending it.
 */
export function formatAmount(amount: string, currency: string, locale: Locale): string {
  const digits = minorUnit(currency);
  const check = checkAmount(amount, currency);
  if (digits === undefined || !check.ok) {
    throw new RenderError(`amount cannot be shown for ${currency}: ${check.ok ? 'unknown currency' : check.problem}`);
  }
  const parts = formatFor(locale, currency, digits).formatToParts(amount as Intl.StringNumericLiteral);
  const [integer = '', fraction = ''] = amount.split('.');
  const expected = integer + fraction.padEnd(digits, '0');
  const shown = parts
    .filter((p) => p.type === 'integer' || p.type === 'fraction')
    .map((p) => p.value)
    .join('');
  if (shown !== expected) {
    throw new RenderError(`rendered digits differ from the amount's (${currency}, ${locale})`);
  }
  return parts.map((p) => p.value).join('');
}

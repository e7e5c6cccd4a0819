/**
 * What decides a candidate card number or IBAN (card-number.ts finds the candidates): the card brands' IIN ranges and
 * the lengths each issues (npm `credit-card-type`) and ISO 13616's registry with each country's BBAN format (npm
 * `ibantools`), about 25 KB. Ingest loads this module with the first value that holds a candidate — a run of 13–19
 * digits passing the Luhn check or in UnionPay's ranges, or an IBAN of its country's length passing the mod-97 check —
 * which most records, ids and UUIDs included, never hold. Every other function that masks imports it at its start
 * (test/tools/card-rules-loaded.test.ts).
 */
import creditCardType from 'credit-card-type';
import { isValidIBAN } from 'ibantools';
import { type Brand, provideCardRules } from './card-number.ts';

type Pattern = Brand['patterns'][number];

/** Every brand credit-card-type knows, with its IIN ranges and the lengths it issues. */
const BRANDS: readonly Brand[] = Object.values(creditCardType.types).map((type) => creditCardType.getTypeInfo(type));

/** Whether first digits lie in an IIN range: a prefix (`6011`) or a range of prefixes of one length (`[644, 649]`). */
function covers(iin: string, pattern: Pattern): boolean {
  const [low, high] = Array.isArray(pattern) ? pattern : [pattern, pattern];
  const lead = Number(iin.slice(0, String(low).length));
  return lead >= Number(low) && lead <= Number(high);
}

/**
 * Every brand whose IIN ranges cover the first digits — not only the most specific one. Ranges overlap: Maestro's
 * reaches over every number starting with 6, Elo's 627780 sits inside UnionPay's 6277, Elo's 401178 inside Visa's 4.
 * credit-card-type names the one most specific brand, the logo to show while a number is typed; a masker asks whether
 * any brand may have issued the number, so a length the most specific brand does not issue but a wider one does
 * (`6277800000000000x`, 17 digits: Elo's 16 only, Maestro's 12–19) is still a card number. A reference masked by mistake
 * shows four digits fewer; a card number shown is a PAN in the clear (PCI DSS 3.4.1), and brands add lengths before
 * a library's table has them (Visa's and Discover's 19, UnionPay's 8-series).
 */
export function brandsCovering(iin: string): Brand[] {
  return BRANDS.filter((brand) => brand.patterns.some((pattern) => covers(iin, pattern)));
}

provideCardRules({ brandsCovering, unionPay: creditCardType.types.UNIONPAY as string, isValidIBAN });

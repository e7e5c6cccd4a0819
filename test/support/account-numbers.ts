/** Card numbers and IBANs as tests write them: a Luhn check digit, an IBAN's check digits, a number in groups. */

/** The Luhn check digit that makes `body` a number passing the check. */
export const luhnDigit = (body: string): string => {
  let sum = 0;
  for (let i = 0; i < body.length; i++) {
    const d = Number(body[body.length - 1 - i]);
    sum += i % 2 === 0 ? (d * 2 > 9 ? d * 2 - 9 : d * 2) : d;
  }
  return String((10 - (sum % 10)) % 10);
};

/** An IBAN of a country and a BBAN, with ISO 13616's check digits computed. */
export function iban(country: string, bban: string): string {
  const moved = `${bban}${country}00`.replace(/[A-Z]/g, (c) => String(c.charCodeAt(0) - 55));
  const check = 98 - Number(BigInt(moved) % 97n);
  return `${country}${String(check).padStart(2, '0')}${bban}`;
}

/** The text in groups of `size`, separated by `sep`. */
export const grouped = (s: string, size = 4, sep = ' '): string =>
  s.match(new RegExp(`.{1,${size}}`, 'g'))?.join(sep) ?? s;

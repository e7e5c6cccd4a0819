/**
 * Contact points: each spelling with one reading normalised to the one address its provider takes, anything else
 * refused — and refused for its own channel only (routing.ts). Pure.
 *
 * - Email (RFC 5321 / RFC 5322 addr-spec): the local part is kept exactly as given (RFC 5321 §2.4: only the receiving
 *   host may interpret it); the domain is taken as IDNA (UTS #46 through WHATWG URL's domainToASCII: `例え.jp` →
 *   `xn--r8jz45g.jp`), because SES sends only 7-bit ASCII addresses: it has no SMTPUTF8 (RFC 6531), so a local part
 *   with non-ASCII characters is a real address SES cannot send to (UNSENDABLE_ADDRESS), not a malformed one.
 * - Phone (ITU-T E.164, written as E.123 allows, or as a tel: URI of RFC 3966): spaces, dashes, dots, parentheses and the UK-style `(0)` are read by
 *   libphonenumber-js (loaded when first needed: phone-numbers.ts); the international prefix `00` (ITU-T E.164's recommended one) or `011` (the NANP's) stands for
 *   `+`. A number without a country code is refused: it would have to be guessed from a country nobody named.
 * - Push: an SNS platform endpoint ARN, surrounding spaces trimmed.
 */
import { domainToASCII } from 'node:url';
import * as z from 'zod/mini';
import type { Channel } from './channels.ts';
import { phoneParser } from './phone-numbers.ts';

export type ContactField = 'email' | 'pushEndpointArn' | 'phoneNumber';

/** Why a contact point was refused: no reading (INVALID_CONTACT), or a reading its provider cannot send to. */
export type ContactProblem = 'INVALID_CONTACT' | 'UNSENDABLE_ADDRESS';

export type ContactReading =
  | { readonly ok: true; readonly address: string; readonly normalised: boolean }
  | { readonly ok: false; readonly problem: ContactProblem; readonly rule: string };

const refused = (problem: ContactProblem, rule: string): ContactReading => ({ ok: false, problem, rule });
const read = (address: string, given: string): ContactReading => ({
  ok: true,
  address,
  normalised: address !== given,
});

// zod's email pattern (what z.email() checks): every address accepted before other spellings were, kept byte for
// byte (and hashed so). Taken from the schema, not from z.regexes: that namespace bundles every pattern zod has.
const ZOD_EMAIL: RegExp = zodEmailPattern();
function zodEmailPattern(): RegExp {
  const pattern = z.email().def.pattern;
  if (pattern === undefined) throw new Error("zod's email schema has no pattern");
  return pattern;
}
const isAscii = (text: string) => [...text].every((c) => c.charCodeAt(0) < 0x80);
const NAME_ADDR = /^[^<>@]*<([^<>]+)>$/;
/** RFC 5322 §3.4.1 dot-atom of atext: the local parts that need no quoting. */
const DOT_ATOM = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/;
/** An LDH label (RFC 5890 §2.3.1), as domainToASCII leaves it. */
const LDH_LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
/** Text that could be a local part of someone's address, only not in ASCII: no control, format or ill-formed character. */
const VISIBLE = /^[^\p{Cc}\p{Cf}\p{Cs}\p{Z}\p{Noncharacter_Code_Point}@"\\]+$/u;

export function readEmail(given: unknown): ContactReading {
  if (typeof given !== 'string') return refused('INVALID_CONTACT', 'not a string');
  const trimmed = given.trim();
  if (trimmed.length <= 254 && ZOD_EMAIL.test(trimmed)) return read(trimmed, given);
  // One address written as RFC 5322 name-addr (`"Hanako Yamada" <hanako@example.jp>`, what .NET's MailAddress and
  // many mail libraries print) or as a mailto: URI (RFC 6068): the address is the one reading; the name is not ours.
  const text = (NAME_ADDR.exec(trimmed)?.[1] ?? trimmed).trim().replace(/^mailto:/i, '');
  if (text.length <= 254 && ZOD_EMAIL.test(text)) return read(text, given);
  const at = text.lastIndexOf('@');
  if (at <= 0 || at === text.length - 1) return refused('INVALID_CONTACT', 'not local-part@domain (RFC 5322)');
  const local = text.slice(0, at);
  const domain = asciiDomain(text.slice(at + 1));
  if (domain === undefined) return refused('INVALID_CONTACT', 'the domain is not a host name (IDNA, RFC 5890)');
  if (!DOT_ATOM.test(local)) {
    if (!isAscii(local) && VISIBLE.test(local) && local.length <= 64) {
      return refused(
        'UNSENDABLE_ADDRESS',
        'a non-ASCII local part: SES sends to 7-bit ASCII addresses only (no SMTPUTF8, RFC 6531)',
      );
    }
    return refused('INVALID_CONTACT', 'the local part is not a dot-atom (RFC 5322 §3.4.1)');
  }
  if (local.length > 64)
    return refused('INVALID_CONTACT', 'the local part is longer than 64 octets (RFC 5321 §4.5.3.1.1)');
  const address = `${local}@${domain}`;
  if (address.length > 254) return refused('INVALID_CONTACT', 'longer than 254 octets (RFC 5321 §4.5.3.1.3)');
  return read(address, given);
}

/**
 * The domain as SES takes it: an ASCII domain is kept as given (so an address spelled as before hashes as before); a
 * domain with non-ASCII characters goes through UTS #46 (domainToASCII: Punycode, lower case, full-width dots mapped).
 * At least two labels, each an LDH label, the last not all digits (RFC 3696 §2): a host, not an address literal.
 */
function asciiDomain(written: string): string | undefined {
  // A fully qualified name's trailing dot (RFC 1034 §3.1, `example.com.`) names the same host; SES wants it without.
  const domain = written.endsWith('.') && !written.endsWith('..') ? written.slice(0, -1) : written;
  const ascii = /^[\x21-\x7E]*$/.test(domain) ? domain : domainToASCII(domain);
  if (ascii === '' || ascii.length > 253) return undefined;
  const labels = ascii.toLowerCase().split('.');
  if (labels.length < 2 || !labels.every((l) => LDH_LABEL.test(l))) return undefined;
  if (/^\d+$/.test(labels[labels.length - 1] as string)) return undefined;
  return ascii;
}

/** The E.164 shape SNS takes; an address in it is kept as given (unknown country codes included, as before). */
const E164 = /^\+[1-9]\d{6,14}$/;

export function readPhoneNumber(given: unknown): ContactReading {
  if (typeof given !== 'string') return refused('INVALID_CONTACT', 'not a string');
  if (E164.test(given)) return read(given, given);
  // A tel: URI (RFC 3966) of a global number is that number: the scheme is not part of it.
  const text = given.trim().replace(/^tel:(?=\+)/i, '');
  if (E164.test(text)) return read(text, given);
  const international = /^(?:00|011)(?=\s*[1-9])/.exec(text);
  if (!text.startsWith('+') && international === null) {
    return refused(
      'INVALID_CONTACT',
      'no country code: an SMS number is +<country code><number> (E.164), never guessed',
    );
  }
  const spelled = international === null ? text : `+${text.slice(international[0].length)}`;
  // Only a number written otherwise than E.164 needs the rules (loaded on first use: phone-numbers.ts).
  const number = phoneParser()(spelled, { extract: false });
  if (number === undefined || number.ext !== undefined || !number.isPossible() || !E164.test(number.number)) {
    return refused('INVALID_CONTACT', 'not an international phone number (E.164, written as E.123 allows)');
  }
  return read(number.number, given);
}

const SNS_ENDPOINT_ARN =
  /^arn:aws(-[a-z]+)*:sns:[a-z]{2}(-[a-z]+)+-\d:\d{12}:endpoint\/[A-Z_]+\/[A-Za-z0-9._-]{1,256}\/[A-Za-z0-9-]{1,64}$/;

export function readPushEndpoint(given: unknown): ContactReading {
  if (typeof given !== 'string') return refused('INVALID_CONTACT', 'not a string');
  const text = given.trim();
  if (text.length > 512 || !SNS_ENDPOINT_ARN.test(text)) {
    return refused('INVALID_CONTACT', 'not an SNS platform endpoint ARN');
  }
  return read(text, given);
}

export const CONTACT_READERS: Readonly<Record<ContactField, (given: unknown) => ContactReading>> = {
  email: readEmail,
  pushEndpointArn: readPushEndpoint,
  phoneNumber: readPhoneNumber,
};

/** The recipient field that holds each channel's contact point. */
export const CONTACT_FIELD_OF: Readonly<Record<Channel, ContactField>> = {
  EMAIL: 'email',
  PUSH: 'pushEndpointArn',
  SMS: 'phoneNumber',
};

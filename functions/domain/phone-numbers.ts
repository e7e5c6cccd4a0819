/**
 * The phone number rules (libphonenumber-js, about 120 KB with its metadata), loaded when a record first writes a
 * number otherwise than E.164 (`+819012345678` needs no rules: contact.ts reads it as it is). A function whose producers
 * write E.164 never loads them; one that meets `+81 90-1234-5678` loads them once and keeps them.
 *
 * Reading a number is synchronous (the contract's one decoder): a reading that needs the rules before they are loaded
 * throws PhoneNumbersNotLoaded, and the caller loads them and reads the record again (ingest/ingest-record.ts
 * admitLoading); tests and tools load them before they read.
 */
import type { parsePhoneNumberFromString } from 'libphonenumber-js';
import { RulesNotLoaded } from './rules-not-loaded.ts';

let parse: typeof parsePhoneNumberFromString | undefined;

export async function loadPhoneNumbers(): Promise<void> {
  parse ??= (await import('libphonenumber-js')).parsePhoneNumberFromString;
}

export class PhoneNumbersNotLoaded extends RulesNotLoaded {
  override name = 'PhoneNumbersNotLoaded';
  constructor() {
    super('the phone number rules are not loaded yet', loadPhoneNumbers);
  }
}

/** The parser, once loaded; before, a throw the reader answers by loading it (never the record's fault). */
export function phoneParser(): typeof parsePhoneNumberFromString {
  if (parse === undefined) throw new PhoneNumbersNotLoaded();
  return parse;
}

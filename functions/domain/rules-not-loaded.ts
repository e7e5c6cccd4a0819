/**
 * Rules a pure reader needs for some values only, which a cold start does not load (the phone number rules, the card
 * number and IBAN rules): reading such a value before they are loaded throws this, never a guess. The caller loads
 * them (`load`) and reads the record again; it is never the record's fault.
 */
export class RulesNotLoaded extends Error {
  constructor(
    message: string,
    readonly load: () => Promise<void>,
  ) {
    super(message);
  }
}

/**
 * Rules a pure reader needs for some values only, which ingest's cold start does not load (the phone number rules,
 * the card brands' ranges and the IBAN registry): reading such a value before they are loaded throws this, never a
 * guess. The caller loads them (`load`) and reads the record again; it is never the record's fault, and a load that
 * fails is an infrastructure failure (the batch is redelivered), never a record shown or kept as written.
 */
export class RulesNotLoaded extends Error {
  constructor(
    message: string,
    readonly load: () => Promise<void>,
  ) {
    super(message);
  }
}

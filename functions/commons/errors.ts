/** Typed errors shared by the functions. Each carries `name` so logs and tests can tell them apart. */

/** DynamoDB could not take a write right now (conflict, throttling): safe to retry, never bad input. */
export class TransientStoreError extends Error {
  override name = 'TransientStoreError';
  constructor(
    message: string,
    readonly codes: string[],
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** AWS answered something the adapter did not expect: a bug or a contract change, surfaced loudly. */
export class UnexpectedResponseError extends Error {
  override name = 'UnexpectedResponseError';
}

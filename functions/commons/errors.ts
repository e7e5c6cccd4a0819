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

/**
 * DynamoDB refused the items built from one record (ValidationException, or a transaction cancelled with
 * ValidationError): the record's content, not the infrastructure, is the cause, so the record is quarantined instead
 * of being retried forever.
 */
export class RecordRefusedError extends Error {
  override name = 'RecordRefusedError';
}

/** Names of the errors that mean "DynamoDB will never accept these items", whoever threw them. */
export const isRecordRefusal = (error: unknown): boolean =>
  error instanceof RecordRefusedError || (error as Error | undefined)?.name === 'ValidationException';

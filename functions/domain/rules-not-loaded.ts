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

/**
 * The rules did not load. Node keeps a failed import for the life of the process (a read error or a throw while the
 * module ran is not tried again), so this environment can never read such a value: the handler reports the batch and
 * ends the environment, and Lambda redelivers the batch to a fresh one (ingest/index.ts).
 */
export class RulesLoadFailed extends Error {
  override name = 'RulesLoadFailed';
}

/** `error.load()`, its failure said as RulesLoadFailed (the cause kept). */
export async function loadRules(error: RulesNotLoaded): Promise<void> {
  try {
    await error.load();
  } catch (cause) {
    throw new RulesLoadFailed(`${error.message}, and they did not load: ${(cause as Error).message}`, { cause });
  }
}

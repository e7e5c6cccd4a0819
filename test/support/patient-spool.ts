/**
 * The dispatch handler's evidence with a wait of real time made as long as it takes, for a test about the path the
 * product takes when that wait is met. For `vi.mock`:
 *
 *   vi.mock('../../functions/dispatch/record-evidence.ts', async (importOriginal) =>
 *     (await import('../support/patient-spool.ts')).patientSpoolPuts(await importOriginal()));
 *
 * Only the wait changes; what the handler does once the put or the intent landed is the product's own code.
 */
import type * as RecordEvidence from '../../functions/dispatch/record-evidence.ts';

type Waits = Pick<ConstructorParameters<typeof RecordEvidence.InvocationEvidence>[1], 'putFirstMs' | 'intentWaitMs'>;

function patient(original: typeof RecordEvidence, waits: Waits): typeof RecordEvidence {
  class InvocationEvidence extends original.InvocationEvidence {
    constructor(...[outlets, options]: ConstructorParameters<typeof original.InvocationEvidence>) {
      super(outlets, { ...options, ...waits });
    }
  }
  return { ...original, InvocationEvidence };
}

/**
 * A spool put awaited as long as it takes. In production a send slot waits PUT_FIRST_MS (200 ms of real time) for its
 * record's put, then opens an intent and writes SENT in the slot; on a loaded 2-core CI machine a put — even a mocked
 * one — can miss that, and a test about the spooling path would leave it.
 */
export const patientSpoolPuts = (original: typeof RecordEvidence) => patient(original, { putFirstMs: 600_000 });

/**
 * The invocation's intent awaited as long as it takes. In production a provider call waits at most INTENT_WAIT_MS
 * (1 s of real time) for it, then takes it as refused and each record of the invocation goes as a batch of its own; on
 * a loaded CI machine DynamoDB Local can answer the intent later than that, and a test about one batch an invocation
 * would see one a record.
 */
export const patientIntents = (original: typeof RecordEvidence) => patient(original, { intentWaitMs: 600_000 });

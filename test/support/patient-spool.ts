/**
 * The dispatch handler's evidence with a spool put awaited as long as it takes. In production a send slot waits
 * PUT_FIRST_MS (200 ms of real time) for its record's put, then opens an intent and writes SENT in the slot; on a loaded
 * 2-core CI machine a put — even a mocked one — can miss that, and a test about the spooling path would leave it.
 * Only the wait changes; what the handler does with a put that landed is the product's own code. For `vi.mock`:
 *
 *   vi.mock('../../functions/dispatch/record-evidence.ts', async (importOriginal) =>
 *     (await import('../support/patient-spool.ts')).patientSpoolPuts(await importOriginal()));
 */
import type * as RecordEvidence from '../../functions/dispatch/record-evidence.ts';

export function patientSpoolPuts(original: typeof RecordEvidence): typeof RecordEvidence {
  class InvocationEvidence extends original.InvocationEvidence {
    constructor(...[outlets, options]: ConstructorParameters<typeof original.InvocationEvidence>) {
      super(outlets, { ...options, putFirstMs: 600_000 });
    }
  }
  return { ...original, InvocationEvidence };
}

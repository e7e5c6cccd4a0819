/**
 * A dispatch invocation's send slots (its per-invocation concurrency), as the handler and the dispatch bench run
 * records in them. A spooled send (`Recording`: its record has landed in the spool) frees its slot before its SENT
 * write lands — while fewer such SENT writes are pending than there are slots. Past that the send keeps its slot until
 * its SENT lands, so a table refusing SENT writes still holds the invocation back: never more sends awaiting their
 * SENT than twice the slots.
 */
import pLimit from 'p-limit';
import type { DispatchResult, Recording } from './dispatch-result.ts';

/** Runs a record's start in a free slot; resolves when the slot is free again: the result, or its pending SENT write. */
export type SendSlots = (start: () => Promise<DispatchResult | Recording>) => Promise<DispatchResult | Recording>;

export function sendSlots(slots: number): SendSlots {
  const limit = pLimit(slots);
  let pending = 0;
  return (start) =>
    limit(async () => {
      const r = await start();
      if (r.kind !== 'recording' || pending >= slots) return r.kind === 'recording' ? r.settled : r;
      pending++;
      void r.settled.then(
        () => pending--,
        () => pending--,
      );
      return r;
    });
}

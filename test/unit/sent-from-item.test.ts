/**
 * A dead holder's send the sweeper SENT from the message id on its item: its evidence record is kept when an index
 * names it (its invocation lived to write its batch), lost with the holder when none does, and neither when the index
 * could not be read (functions/sweeper/sent-from-item.ts).
 */
import { describe, expect, it } from 'vitest';
import type { SweepEntry } from '../../functions/stores/notification-store.ts';
import { recordsNotKept } from '../../functions/sweeper/sent-from-item.ts';

const entry = (notificationId: string) => ({ notificationId, channel: 'SMS', attempt: 1 }) as unknown as SweepEntry;
/** An index naming these notifications' records by their events; refusing every read when `refusing`. */
const index = (named: readonly string[], refusing = false) => ({
  sendsOfEvent: async (eventId: string) => {
    if (refusing) throw Object.assign(new Error('throttled'), { name: 'ProvisionedThroughputExceededException' });
    return named.filter((id) => id.startsWith(`${eventId}#`)).map((notificationId) => ({ batch: 'b', notificationId }));
  },
});

describe('the records of sends SENT from their items’ message ids', () => {
  it('one an index names is kept; one none names is lost — another channel of the same event does not keep it', async () => {
    const kept = entry('ev-1#SMS');
    const lost = entry('ev-2#SMS');
    const r = await recordsNotKept([kept, lost], index(['ev-1#SMS', 'ev-2#EMAIL']));
    expect(r).toEqual({ notKept: [lost], unchecked: [] });
  });

  it('an index that cannot be read leaves the send unchecked, never lost', async () => {
    const e = entry('ev-3#SMS');
    expect(await recordsNotKept([e], index([], true))).toEqual({ notKept: [], unchecked: [e] });
  });
});

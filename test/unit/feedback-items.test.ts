/**
 * A queue batch of SES feedback is recorded message by message (functions/feedback/record-feedback.ts
 * recordEachFeedback): one that fails is answered as failed and the others stand, so the queue hands back that one
 * message, not its 500 neighbours. A report on a send from before batches is given the evidence timeout and a gap,
 * like a batch's.
 */
import { describe, expect, it } from 'vitest';
import { evidencePrefixOf } from '../../functions/domain/evidence.ts';
import { readFeedback } from '../../functions/domain/feedback.ts';
import { type FeedbackDeps, recordEachFeedback, recordFeedback } from '../../functions/feedback/record-feedback.ts';
import { MemoryGaps, MemoryReports, MemoryStore } from '../support/evidence-memory.ts';
import { sesEvent } from '../support/ses-events.ts';

const NOW = Date.parse('2026-12-05T09:00:00Z');
const bounce = (eventId: string) =>
  readFeedback(sesEvent('Bounce', { notificationId: `${eventId}#EMAIL`, to: `${eventId}@example.com` }));

function deps(options: { store?: MemoryStore; gaps?: MemoryGaps; failing?: string } = {}): FeedbackDeps {
  let i = 0;
  return {
    store: {
      findByMessageId: async () => undefined,
      recordDelivery: async (target) => {
        if (target.notificationId === options.failing) {
          throw Object.assign(new Error('throttled'), { name: 'ProvisionedThroughputExceededException' });
        }
        return { kind: 'recorded' };
      },
      suppressAddress: async () => 'suppressed',
      recipientOf: async (target) => `${target.eventId}@example.com`,
    },
    now: () => NOW,
    sleep: async () => undefined,
    evidence: {
      store: options.store ?? new MemoryStore(),
      gaps: options.gaps ?? new MemoryGaps(),
      reports: new MemoryReports(),
      retentionDays: 3650,
      newId: () => `rep${String(i++).padStart(10, '0')}`,
      timeoutMs: 50,
    },
  };
}

describe('a queue batch of feedback, message by message', () => {
  it('one feedback the table refuses fails alone, in its place; the others are recorded with their evidence', async () => {
    const store = new MemoryStore();
    const settled = await recordEachFeedback(
      [bounce('a'), bounce('b'), bounce('c')],
      deps({ store, failing: 'b#EMAIL' }),
    );
    expect(settled.map((s) => s.ok)).toEqual([true, false, true]);
    expect(settled[1]).toMatchObject({ ok: false, error: { name: 'ProvisionedThroughputExceededException' } });
    for (const [id, reports] of [
      ['a#EMAIL', 1],
      ['b#EMAIL', 0],
      ['c#EMAIL', 1],
    ] as const) {
      expect(await store.list(evidencePrefixOf(id))).toHaveLength(reports);
    }
  });

  it('a log batch (recordFeedback) still fails whole on the first failure: its subscription retries it whole', async () => {
    await expect(recordFeedback([bounce('a'), bounce('b')], deps({ failing: 'b#EMAIL' }))).rejects.toMatchObject({
      name: 'ProvisionedThroughputExceededException',
    });
  });
});

describe('a report on a send from before batches', () => {
  it('a store that hangs is given up at the evidence timeout: the report waits as a gap, the feedback is recorded', async () => {
    const gaps = new MemoryGaps();
    const started = Date.now();
    const settled = await recordEachFeedback([bounce('old')], deps({ store: new MemoryStore('hang'), gaps }));
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(settled).toMatchObject([{ ok: true, result: { kind: 'recorded' } }]);
    expect([...gaps.gaps.keys()]).toEqual([expect.stringContaining('.feedback/')]);
  });

  it('store and table both refusing: only that feedback fails, to be retried; none is thrown for the batch', async () => {
    const settled = await recordEachFeedback(
      [bounce('old')],
      deps({ store: new MemoryStore('fail'), gaps: new MemoryGaps(true) }),
    );
    expect(settled).toMatchObject([{ ok: false, error: { name: 'EvidenceLost' } }]);
  });
});

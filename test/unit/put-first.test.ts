/**
 * A spooling invocation (few records: each put in the spool before its SENT write, no intent) whose put did not land
 * in time asks the intent then. A send whose provider accepted while that intent is still unanswered must not write
 * SENT with its record only in memory: it puts its own record first too, and waits for the intent when that put does
 * not land either (record-evidence.ts putFirst).
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { InvocationEvidence, type SendProof } from '../../functions/dispatch/record-evidence.ts';
import { sha256Hex } from '../../functions/domain/evidence-batch.ts';
import type { EvidenceIntent } from '../../functions/stores/evidence-intents.ts';
import type { SpooledRecord } from '../../functions/stores/evidence-spool.ts';
import { DISPATCH_NOW } from '../support/dispatch-deps.ts';
import { MemoryGaps, MemoryIndex, MemoryStore } from '../support/evidence-memory.ts';

const NOW = DISPATCH_NOW;

function proof(id: string): SendProof {
  const record = {
    evidenceVersion: 1,
    kind: 'SEND',
    notificationId: `ev-${id}#SMS`,
    eventId: `ev-${id}`,
    channel: 'SMS',
    userId: 'u1',
    attempt: 1,
    providerMessageId: `m-${id}`,
    acceptedAt: new Date(NOW).toISOString(),
    retainUntil: new Date(NOW + 3650 * 86_400_000).toISOString(),
  } as unknown as SendProof['record'];
  const bytes = Buffer.from(JSON.stringify(record));
  return { record, bytes, sha256: sha256Hex(bytes) };
}

/** An intent the test answers by hand, and puts that land only when `lands` says so. */
function invocation(lands: (r: SpooledRecord) => boolean) {
  const asked: EvidenceIntent[] = [];
  let answer: () => void = () => undefined;
  const answered = new Promise<void>((resolve) => {
    answer = resolve;
  });
  const puts: string[] = [];
  const batch = new InvocationEvidence(
    {
      store: new MemoryStore(),
      gaps: new MemoryGaps(),
      intents: {
        open: (i: EvidenceIntent) => {
          asked.push(i);
          return answered;
        },
        close: async () => undefined,
      },
      index: { index: new MemoryIndex(), retentionDays: 3650 },
      spool: {
        put: (records) => {
          puts.push(...records.map((r) => r.notificationId));
          return records.every(lands) ? Promise.resolve() : new Promise<void>(() => undefined);
        },
      },
    },
    { now: NOW, id: 'inv0000000000000009', dueMs: NOW + 90_000, spoolBelow: 25, putFirstMs: 50, intentWaitMs: 60_000 },
  );
  return { batch, asked, answer, puts };
}

describe('a spooling invocation whose put did not land in time', () => {
  beforeEach(() => vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] }));
  afterEach(() => vi.useRealTimers());

  it("a later send's SENT waits until its own record is put or the intent asked for the first one has landed", async () => {
    const { batch, asked, answer, puts } = invocation((r) => r.notificationId === 'ev-c#SMS');
    await batch.open(['ev-a#SMS', 'ev-b#SMS', 'ev-c#SMS']);
    // Every send passed `ready` before any intent was asked (none is, at a spooling invocation).
    for (let i = 0; i < 3; i++) expect(await batch.ready()).toBe(batch.name);
    const a = proof('a');
    const aDone = batch.putFirst(a, batch.addressOf(a, batch.name));
    await vi.advanceTimersByTimeAsync(50);
    expect(asked.map((i) => i.name)).toEqual([batch.name]);

    // B's provider accepted while the intent is unanswered, and its own put does not land: B waits for the intent.
    const b = proof('b');
    const bDone = batch.putFirst(b, batch.addressOf(b, batch.name));
    expect(bDone).toBeDefined();
    const order: string[] = [];
    void bDone?.then((spooled) => order.push(`B may write SENT (spooled: ${spooled})`));
    await vi.advanceTimersByTimeAsync(500);
    expect(order).toEqual([]);
    // C's put lands: its record is kept, its SENT need not wait for the intent.
    const c = proof('c');
    expect(await batch.putFirst(c, batch.addressOf(c, batch.name))).toBe(true);

    order.push('the intent landed');
    answer();
    expect(await bDone).toBe(false);
    expect(await aDone).toBe(false);
    expect(order).toEqual(['the intent landed', 'B may write SENT (spooled: false)']);
    expect(puts).toEqual(['ev-a#SMS', 'ev-b#SMS', 'ev-c#SMS']);
  });
});

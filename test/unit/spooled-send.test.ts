/**
 * The sweeper's look-up of an expired lease's spooled record (sweeper/spooled-send.ts): bounded and shared by the run —
 * each spool minute and partition read at most once a run, the run's records capped and its deadline kept — and a
 * record found whose SENT write fails is left for the next run, never decided by policy.
 */
import { describe, expect, it } from 'vitest';
import { EVIDENCE_VERSION } from '../../functions/domain/evidence.ts';
import { SPOOL_SHARDS, sliceBatchName } from '../../functions/domain/evidence-spool.ts';
import type { SpooledRecord } from '../../functions/stores/evidence-spool.ts';
import type { SweepEntry } from '../../functions/stores/notification-store.ts';
import {
  holderMinutes,
  SPOOL_LOOKUP_WAIT_MS,
  type SpooledSendDeps,
  spooledSends,
} from '../../functions/sweeper/spooled-send.ts';
import { MemoryIndex } from '../support/evidence-memory.ts';

const WRITTEN = Date.parse('2026-12-06T10:00:10.000Z');
const NOW = WRITTEN + 200_000;
const MINUTE = Date.parse('2026-12-06T10:00:00.000Z');

const lease = (id: string, attempt = 1, leaseUntil = NOW - 1_000): SweepEntry => ({
  pk: `EVENT#${id}`,
  sk: 'NOTIFICATION#SMS',
  notificationId: `${id}#SMS`,
  channel: 'SMS',
  status: 'SENDING',
  attempt,
  createdAt: new Date(WRITTEN - 1_000).toISOString(),
  sweepAt: NOW - 1_000,
  leaseUntil,
});
/** A lease whose end was as long ago as a cut look-up may wait: decided by policy. */
const old = (id: string) => lease(id, 1, NOW - SPOOL_LOOKUP_WAIT_MS);

/** A spooled send record of `id`'s attempt (or any other bytes: filler of a busy minute). */
function record(id: string, attempt = 1, startMs = MINUTE): SpooledRecord {
  const bytes = Buffer.from(
    JSON.stringify({
      evidenceVersion: EVIDENCE_VERSION,
      kind: 'SEND',
      notificationId: `${id}#SMS`,
      userId: `u-${id}`,
      attempt,
      providerMessageId: `m-${id}-${attempt}`,
      acceptedAt: new Date(startMs + 5_000).toISOString(),
    }),
  );
  return {
    slice: sliceBatchName(startMs, 35),
    sha256: `${id}${attempt}`.padEnd(64, '0'),
    notificationId: `${id}#SMS`,
    recordKind: 'SEND',
    bytes,
  };
}

/**
 * A spool of (minute, partition) → records, counting each partition's reads and each read by key (`keyed`: slice and
 * digest); `refuses` throws for those.
 */
function spoolOf(parts: Record<string, SpooledRecord[]>, refuses: readonly string[] = []) {
  const reads: string[] = [];
  const keyed: string[] = [];
  return {
    reads,
    keyed,
    spool: {
      async *minuteOf(startMs: number, shard: number, max: number) {
        const key = `${startMs}#${shard}`;
        reads.push(key);
        if (refuses.includes(key)) throw Object.assign(new Error('throttled'), { name: 'ThrottlingException' });
        yield* (parts[key] ?? []).slice(0, max);
      },
      async recordAt(slice: string, sha256: string) {
        keyed.push(`${slice}#${sha256}`);
        return Object.values(parts)
          .flat()
          .find((r) => r.slice === slice && r.sha256 === sha256);
      },
    },
  };
}

function lookUps(spool: SpooledSendDeps['spool'], over: Partial<SpooledSendDeps> = {}) {
  const accepted: [string, unknown][] = [];
  const deps: SpooledSendDeps = {
    notifications: {
      get: async (k) => ({ status: 'SENDING', attempt: 1, updatedAt: new Date(WRITTEN).toISOString(), ...k }) as never,
      acceptSpooled: async (e, send) => {
        accepted.push([e.notificationId, send]);
        return 'accepted';
      },
    },
    spool,
    outlets: { index: { index: new MemoryIndex(), retentionDays: 35 } },
    now: () => NOW,
    deadline: NOW + 30_000,
    maxRecords: 20_000,
    ...over,
  };
  return { run: spooledSends(deps), accepted };
}

describe("the sweeper's spool look-up of an expired lease", () => {
  it('reads each minute and partition once a run, whatever the leases, newest minute first, and stops at the minute holding the record', async () => {
    const { spool, reads } = spoolOf({
      [`${MINUTE}#3`]: [record('other'), record('a', 2), record('a', 1)],
      [`${MINUTE - 60_000}#5`]: [record('b')],
    });
    const { run, accepted } = lookUps(spool);
    expect(await run.resolve(lease('a', 1), NOW)).toBe('accepted');
    // Found in its minute: the older minutes were not read.
    expect(reads).toHaveLength(SPOOL_SHARDS);
    expect(await run.resolve(lease('b'), NOW)).toBe('accepted');
    expect(await run.resolve(lease('c'), NOW)).toBeUndefined();
    expect(await run.resolve(lease('d'), NOW)).toBeUndefined();
    // Three, four leases: still each (minute, partition) once.
    expect(reads).toHaveLength(holderMinutes(WRITTEN).length * SPOOL_SHARDS);
    expect(new Set(reads).size).toBe(reads.length);
    expect(accepted).toEqual([
      [
        'a#SMS',
        {
          providerMessageId: 'm-a-1',
          evidence: {
            batch: sliceBatchName(MINUTE, 35),
            sha256: record('a', 1).sha256,
            acceptedAt: new Date(MINUTE + 5_000).toISOString(),
            // The attempt whose send it names: the item's reference is then its own (domain/attempt-evidence.ts).
            attempt: 1,
          },
        },
      ],
      ['b#SMS', expect.objectContaining({ providerMessageId: 'm-b-1' })],
    ]);
    expect(run.lookups).toEqual({ found: 2, skipped: 0, deferred: 0, later: 0, recordsRead: 4, byKey: 0 });
  });

  it("the send found is indexed under its slice with the attempt its key names: attempt 2's, not its frozen attempt 1's beside it", async () => {
    const { spool } = spoolOf({ [`${MINUTE}#3`]: [record('a', 1), record('a', 2)] });
    const index = new MemoryIndex();
    const { run } = lookUps(spool, {
      outlets: { index: { index, retentionDays: 35 } },
      notifications: {
        get: async (k) =>
          ({ status: 'SENDING', attempt: 2, updatedAt: new Date(WRITTEN).toISOString(), ...k }) as never,
        acceptSpooled: async () => 'accepted',
      },
    });
    expect(await run.resolve(lease('a', 2), NOW)).toBe('accepted');
    expect(await index.sendsOfEvent('a')).toEqual([
      { batch: sliceBatchName(MINUTE, 35), notificationId: 'a#SMS', sha256: record('a', 2).sha256, attempt: 2 },
    ]);
  });

  it("past the run's cap on records read, a lease not found in what was read is left for the next run (deferred), which finds it; one found is SENT", async () => {
    const busy = Array.from({ length: 50 }, (_, i) => record(`filler${i}`));
    const parts = { [`${MINUTE}#0`]: [record('a')], [`${MINUTE}#1`]: busy, [`${MINUTE - 60_000}#2`]: [record('b')] };
    const { run } = lookUps(spoolOf(parts).spool, { maxRecords: 10 });
    expect(await run.resolve(lease('a'), NOW)).toBe('accepted');
    expect(await run.resolve(lease('b'), NOW)).toBe('later');
    expect(run.lookups).toMatchObject({ found: 1, deferred: 1, skipped: 0 });
    expect(run.lookups.recordsRead).toBeLessThanOrEqual(10);
    // The next run's own cap, not spent by other look-ups before b's: b is SENT from its record.
    const next = lookUps(spoolOf(parts).spool, { maxRecords: 100 });
    expect(await next.run.resolve(lease('b'), NOW + 60_000)).toBe('accepted');
  });

  it('a look-up cut short once its lease ended SPOOL_LOOKUP_WAIT_MS ago is skipped: decided by policy, counted', async () => {
    const busy = Array.from({ length: 50 }, (_, i) => record(`filler${i}`));
    const { run } = lookUps(spoolOf({ [`${MINUTE}#1`]: busy }).spool, { maxRecords: 10 });
    expect(await run.resolve(old('b'), NOW)).toBeUndefined();
    // A millisecond younger: it still waits.
    expect(await run.resolve(lease('c', 1, NOW - SPOOL_LOOKUP_WAIT_MS + 1), NOW)).toBe('later');
    expect(run.lookups).toMatchObject({ skipped: 1, deferred: 1 });
  });

  it("reads nothing past the run's deadline (deferred, then skipped once old), and a partition the table refused is not read again: skipped at once", async () => {
    const late = spoolOf({ [`${MINUTE}#0`]: [record('a')] });
    const past = lookUps(late.spool, { deadline: NOW - 1 });
    expect(await past.run.resolve(lease('a'), NOW)).toBe('later');
    expect(await past.run.resolve(old('a'), NOW)).toBeUndefined();
    expect(late.reads).toEqual([]);
    expect(past.run.lookups).toMatchObject({ deferred: 1, skipped: 1, recordsRead: 0 });

    const refused = spoolOf({}, [`${MINUTE}#2`]);
    const { run } = lookUps(refused.spool);
    expect(await run.resolve(lease('a'), NOW)).toBeUndefined();
    expect(await run.resolve(lease('b'), NOW)).toBeUndefined();
    expect(refused.reads.filter((r) => r === `${MINUTE}#2`)).toHaveLength(1);
    expect(run.lookups).toMatchObject({ skipped: 2, found: 0 });
  });

  it('a record found whose SENT write fails leaves the lease for the next run (later), never to the policy', async () => {
    const { spool } = spoolOf({ [`${MINUTE}#0`]: [record('a')] });
    const { run } = lookUps(spool);
    const failing = spooledSends({
      ...{ spool, outlets: { index: { index: new MemoryIndex(), retentionDays: 35 } } },
      notifications: {
        get: async (k) =>
          ({ status: 'SENDING', attempt: 1, updatedAt: new Date(WRITTEN).toISOString(), ...k }) as never,
        acceptSpooled: async () => {
          throw Object.assign(new Error('throttled'), { name: 'ProvisionedThroughputExceededException' });
        },
      },
      now: () => NOW,
      deadline: NOW + 30_000,
      maxRecords: 20_000,
    });
    expect(await failing.resolve(lease('a'), NOW)).toBe('later');
    expect(failing.lookups).toMatchObject({ later: 1, found: 0, skipped: 0, deferred: 0 });
    // The next run finds it again and writes SENT.
    expect(await run.resolve(lease('a'), NOW)).toBe('accepted');
  });
  it('a lease extended with the record named (slice and digest): one read by its key, no minute scanned, SENT with that record', async () => {
    const named = record('n', 1);
    const { spool, reads, keyed } = spoolOf({ [`${MINUTE}#4`]: [record('other'), named] });
    const { run, accepted } = lookUps(spool, {
      notifications: {
        get: async (k) =>
          ({
            status: 'SENDING',
            attempt: 1,
            updatedAt: new Date(WRITTEN).toISOString(),
            providerMessageId: 'm-n-1',
            evidence: { batch: named.slice, sha256: named.sha256, acceptedAt: new Date(MINUTE + 5_000).toISOString() },
            ...k,
          }) as never,
        acceptSpooled: async (e, send) => {
          accepted.push([e.notificationId, send]);
          return 'accepted';
        },
      },
    });
    expect(await run.resolve(lease('n'), NOW)).toBe('accepted');
    expect(reads).toEqual([]);
    expect(keyed).toEqual([`${named.slice}#${named.sha256}`]);
    expect(accepted).toEqual([['n#SMS', expect.objectContaining({ providerMessageId: 'm-n-1' })]]);
    expect(run.lookups).toMatchObject({ found: 1, byKey: 1, recordsRead: 0 });
  });

  it("a named key that misses, or holds another send, is looked for in the holder's minutes; a record named in a batch of its own (never spooled) is not looked for", async () => {
    const { spool, reads } = spoolOf({ [`${MINUTE}#4`]: [record('x', 2), record('y', 1)] });
    const naming = (batch: string, sha256: string) => ({
      notifications: {
        get: async (k: object) =>
          ({
            status: 'SENDING',
            attempt: 1,
            updatedAt: new Date(WRITTEN).toISOString(),
            providerMessageId: 'm-1',
            evidence: { batch, sha256, acceptedAt: new Date(MINUTE).toISOString() },
            ...k,
          }) as never,
        acceptSpooled: async () => 'accepted' as const,
      },
    });
    // Absent at its key and in the minutes: not found — SENT from the id by the caller.
    const absent = record('x', 1);
    const miss = lookUps(spool, naming(absent.slice, absent.sha256)).run;
    expect(await miss.resolve(lease('x'), NOW)).toBeUndefined();
    expect(miss.lookups).toMatchObject({ byKey: 1, recordsRead: 2, found: 0 });
    expect(reads).toHaveLength(holderMinutes(WRITTEN).length * SPOOL_SHARDS);
    // Another send's record under the key it names is not this send's: this send's is found in its minute.
    const other = record('x', 2);
    const found = lookUps(spool, naming(other.slice, other.sha256)).run;
    expect(await found.resolve(lease('y'), NOW)).toBe('accepted');
    expect(found.lookups).toMatchObject({ byKey: 1, found: 1 });
    const own = 'batches/2026-12-06/100000-dispatch-abcdef12';
    const batch = lookUps(spool, naming(own, absent.sha256)).run;
    expect(await batch.resolve(lease('x'), NOW)).toBeUndefined();
    expect(batch.lookups).toMatchObject({ byKey: 0, recordsRead: 0 });
  });

  it("after a resend, attempt 2's item still names attempt 1's record (the resend removes ids, not `evidence`): no id, so that reference is not this attempt's — attempt 2's spooled record is found in its minutes and SENT", async () => {
    const first = record('r', 1, MINUTE - 3 * 86_400_000);
    const { spool, keyed } = spoolOf({ [`${MINUTE}#2`]: [record('r', 2)], [`${first.slice}#1`]: [first] });
    for (const batch of [first.slice, 'batches/2026-12-03/100000-dispatch-abcdef12']) {
      const { run, accepted } = lookUps(spool, {
        notifications: {
          get: async (k) =>
            ({
              status: 'SENDING',
              attempt: 2,
              updatedAt: new Date(WRITTEN).toISOString(),
              evidence: { batch, sha256: first.sha256, acceptedAt: new Date(MINUTE).toISOString() },
              ...k,
            }) as never,
          acceptSpooled: async (e, send) => {
            accepted.push([e.notificationId, send]);
            return 'accepted';
          },
        },
      });
      expect(await run.resolve(lease('r', 2), NOW)).toBe('accepted');
      expect(accepted).toEqual([['r#SMS', expect.objectContaining({ providerMessageId: 'm-r-2' })]]);
    }
    expect(keyed).toEqual([]);
  });

  it("attempt 2's id beside attempt 1's reference (extended by the earlier version, or with evidence off; accepted before the resend's createdAt): that reference is not read by its key — attempt 2's record is found in its minutes and SENT", async () => {
    const first = record('r', 1, MINUTE - 3 * 86_400_000);
    const second = record('r', 2);
    const { spool, keyed } = spoolOf({ [`${MINUTE}#2`]: [second], [`${first.slice}#1`]: [first] });
    const resentAt = new Date(MINUTE - 60_000).toISOString();
    const itemNaming = (batch: string, acceptedAt: string) => ({
      notifications: {
        get: async (k: object) =>
          ({
            status: 'SENDING',
            attempt: 2,
            createdAt: resentAt,
            updatedAt: new Date(WRITTEN).toISOString(),
            providerMessageId: 'm-r-2',
            evidence: { batch, sha256: first.sha256, acceptedAt },
            ...k,
          }) as never,
        acceptSpooled: async () => 'accepted' as const,
      },
    });
    const before = new Date(MINUTE - 3 * 86_400_000 + 5_000).toISOString();
    for (const batch of [first.slice, 'batches/2026-12-03/100000-dispatch-abcdef1234567890abcd']) {
      const { run } = lookUps(spool, itemNaming(batch, before));
      expect(await run.resolve(lease('r', 2), NOW)).toBe('accepted');
      expect(run.lookups).toMatchObject({ found: 1, byKey: 0 });
    }
    expect(keyed).toEqual([]);
    // Accepted after the item's createdAt, the same reference is this attempt's: read by its key (here another send's).
    const { run } = lookUps(spool, itemNaming(first.slice, new Date(MINUTE).toISOString()));
    expect(await run.resolve(lease('r', 2), NOW)).toBe('accepted');
    expect(run.lookups).toMatchObject({ found: 1, byKey: 1 });
  });
});

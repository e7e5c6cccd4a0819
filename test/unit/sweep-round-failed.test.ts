/**
 * The due round's Query of one partition failing for a reason worth retrying (throttled, a 5xx, a timeout) fails
 * neither the run nor the other partitions, as the lease pass's does: counted, the partition left for the next run,
 * its channel's lower classes not held behind it, its expired leases still read by the lease pass. Any other error
 * (access denied, credentials DynamoDB does not know, a bug) fails the run (SweeperErrors).
 */
import { describe, expect, it } from 'vitest';
import { type SweepPartition, sweepPartition } from '../../functions/domain/keys.ts';
import type { SweepEntry, SweepStore, SweepWindow } from '../../functions/stores/notification-store.ts';
import { sweep } from '../../functions/sweeper/sweep.ts';
import { sweepDeps } from '../support/sweep-deps.ts';

const NOW = 1_800_000_000_000;
const CRITICAL = 'PENDING#EMAIL#critical#0';
const NORMAL = 'PENDING#EMAIL#1';
const entry = (id: string, over: Partial<SweepEntry> = {}): SweepEntry => ({
  pk: `EVENT#${id}`,
  sk: 'NOTIFICATION#EMAIL',
  notificationId: `${id}#EMAIL`,
  channel: 'EMAIL',
  status: 'PENDING',
  attempt: 0,
  createdAt: new Date(NOW - 3_600_000).toISOString(),
  sweepAt: NOW - 60_000,
  ...over,
});
const dueCritical = entry('due-critical');
const deadCritical = entry('dead-critical', { status: 'SENDING', attempt: 1, leaseUntil: NOW - 1 });
const dueNormal = entry('due-normal');
const entries: Record<string, SweepEntry[]> = { [CRITICAL]: [dueCritical, deadCritical], [NORMAL]: [dueNormal] };

/** One page a partition; the due round's Query of the critical partition throws `error`. */
function storeFailing(error: unknown) {
  const handled: string[] = [];
  const store = {
    findDue: async (p: SweepPartition, w: SweepWindow) => {
      const key = sweepPartition(p);
      if (key === CRITICAL) throw error;
      return { entries: (entries[key] ?? []).filter((e) => e.sweepAt <= w.until) };
    },
    findExpiredLeases: async (p: SweepPartition, now: number) => ({
      entries: (entries[sweepPartition(p)] ?? []).filter((e) => e.status === 'SENDING' && (e.leaseUntil ?? 0) < now),
    }),
    redrive: async (e: SweepEntry) => {
      handled.push(e.notificationId);
      return 'applied';
    },
    resolveExpired: async (e: SweepEntry) => {
      handled.push(e.notificationId);
      return 'applied';
    },
  } as unknown as SweepStore;
  return { store, handled };
}

const sdkError = (name: string, httpStatusCode: number) =>
  Object.assign(new Error(`${name} message`), { name, $fault: 'client', $metadata: { httpStatusCode } });

describe('a due-round Query that fails for one partition', () => {
  it.each([
    ['throttled', sdkError('ThrottlingException', 400)],
    ['a 500', Object.assign(sdkError('InternalServerError', 500), { $fault: 'server' })],
    ['a timeout', Object.assign(new Error('socket hang up'), { name: 'TimeoutError', $metadata: { attempts: 3 } })],
  ])(
    '%s: counted, the run goes on, its channel’s normal notice is re-driven, its dead claim resolved by the pass',
    async (_what, error) => {
      const { store, handled } = storeFailing(error);
      const r = await sweep(sweepDeps(store, NOW));
      expect(r.failed).toEqual([
        { partition: CRITICAL, error: `${(error as Error).name}: ${(error as Error).message}` },
      ]);
      expect(r.redriven).toEqual([dueNormal]);
      expect(r.resolvedUnknown).toEqual([deadCritical]);
      expect(handled).not.toContain(dueCritical.notificationId);
      expect(r.leasePass.failed).toEqual([]);
    },
  );

  it.each([
    ['access denied', sdkError('AccessDeniedException', 400)],
    ['credentials DynamoDB does not know', sdkError('UnrecognizedClientException', 400)],
    ['a refused request', sdkError('ValidationException', 400)],
    ['a bug', new TypeError("Cannot read properties of undefined (reading 'sweepAt')")],
  ])('%s: fails the run', async (_what, error) => {
    const { store } = storeFailing(error);
    await expect(sweep(sweepDeps(store, NOW))).rejects.toBe(error);
  });
});

/**
 * The lease-pass fixture of the walk-first tests: Q (normal#0, ten pages) holding a dead holder's lease Y, beside six
 * other partitions of ten pages, each page's start numbered `i` so a fake Query can answer by it.
 */
import { sweepPartition } from '../../functions/domain/keys.ts';
import type { SweepEntry } from '../../functions/stores/notification-store.ts';
import type { LeaseWork } from '../../functions/sweeper/lease-pass.ts';

export const NOW = 1_800_000_000_000;
export const Q: LeaseWork = { state: 'PENDING', channel: 'EMAIL', noticeClass: 'normal', shard: 0 };
export const R: LeaseWork[] = [1, 2, 3, 4, 5, 6].map((shard) => ({
  state: 'PENDING',
  channel: 'EMAIL',
  noticeClass: 'normal',
  shard,
}));
export const QK = sweepPartition(Q);
/** The start of page `i` of a partition: its sweepAt orders the pages. */
export const startOf = (key: string, i: number) => ({
  i,
  sweepKey: key,
  sweepAt: NOW - 600_000 + i,
  pk: `EVENT#p${i}`,
  sk: 'N',
});
/** Q's expired lease, at the place of page `i`. */
export const leaseOnPage = (i: number) =>
  ({
    pk: 'EVENT#y',
    sk: 'NOTIFICATION#EMAIL',
    channel: 'EMAIL',
    notificationId: 'y#EMAIL',
    status: 'SENDING',
    attempt: 1,
    createdAt: new Date(NOW).toISOString(),
    sweepAt: NOW - 600_000 + i,
    sweepKey: QK,
    leaseUntil: NOW - 1,
  }) as SweepEntry;

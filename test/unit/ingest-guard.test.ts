/**
 * The last-resort guard: should the pure admission path ever throw (a bug), or DynamoDB refuse a record's items, the
 * record is quarantined as UNPROCESSABLE with the error's name — the partition goes on, nothing is thrown.
 */
import pLimit from 'p-limit';
import { describe, expect, it, vi } from 'vitest';
import { ingestBatch } from '../../functions/ingest/ingest-batch.ts';
import { ingestRecord } from '../../functions/ingest/ingest-record.ts';
import { mskEvent } from '../../tools/local/msk.ts';
import { b64, transferEvent } from '../support/events.ts';
import { MemoryInboxStore, ValidationException } from '../support/memory-inbox-store.ts';

vi.mock('../../functions/domain/admission.ts', async (original) => {
  const real = await original<typeof import('../../functions/domain/admission.ts')>();
  return {
    ...real,
    admitRecord: (
      value: unknown,
      ...rest: Parameters<typeof real.admitRecord> extends [unknown, ...infer R] ? R : never
    ) => {
      if (typeof value === 'string' && Buffer.from(value, 'base64').toString().includes('boom')) {
        throw new TypeError('a bug that quotes the value: boom@example.com');
      }
      return real.admitRecord(value, ...rest);
    },
  };
});

const deps = (store: MemoryInboxStore) => ({
  store,
  limit: pLimit(4),
  now: () => Date.parse('2026-11-30T09:15:01Z'),
  retentionDays: 35,
  maxEventBytes: 65_536,
  maxEventAgeSeconds: 0,
  transactionAttempts: 2,
});
const source = { topic: 't', partition: 0, offset: 3 };

describe('the last-resort guard', () => {
  it('a throw from the pure path quarantines the record as UNPROCESSABLE, naming the error, never its message', async () => {
    const store = new MemoryInboxStore();
    const result = await ingestRecord({ source, value: b64('boom') }, deps(store));
    expect(result).toEqual({
      kind: 'quarantined',
      rejection: { reason: 'UNPROCESSABLE', detail: 'TypeError while admitting the record' },
      newlyQuarantined: true,
    });
    expect(store.quarantined('t', 0, 3)).toMatchObject({ reason: 'UNPROCESSABLE', raw: b64('boom') });
  });

  it('the rest of the batch goes on', async () => {
    const store = new MemoryInboxStore();
    const summary = await ingestBatch(
      mskEvent([
        { topic: 't', partition: 0, offset: 0, value: 'boom' },
        { topic: 't', partition: 0, offset: 1, value: transferEvent({ eventId: 'fine' }) },
      ]),
      deps(store),
    );
    expect(summary.failure).toBeUndefined();
    expect(summary.figures).toMatchObject({ received: 2, accepted: 1, quarantined: 1 });
  });

  it('items DynamoDB refuses (ValidationException) quarantine the record instead of blocking the partition', async () => {
    const store = new MemoryInboxStore();
    store.beforeWrite = () => {
      throw new ValidationException('Item size has exceeded the maximum allowed size');
    };
    const result = await ingestRecord({ source, value: b64(transferEvent()) }, deps(store));
    expect(result).toMatchObject({
      kind: 'quarantined',
      rejection: {
        reason: 'UNPROCESSABLE',
        detail: 'ValidationException DynamoDB refused its items',
        eventId: 'trf-2026-000123',
      },
    });
  });

  it('an infrastructure failure still throws (the batch is redelivered), it is never quarantined', async () => {
    const store = new MemoryInboxStore();
    store.beforeWrite = () => {
      throw Object.assign(new Error('socket hang up'), { name: 'TimeoutError' });
    };
    await expect(ingestRecord({ source, value: b64(transferEvent()) }, deps(store))).rejects.toThrow('socket hang up');
    expect(store.ofKind('QUARANTINE')).toEqual([]);
  });
});

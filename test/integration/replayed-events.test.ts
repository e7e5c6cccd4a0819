/**
 * Events read again after a failover, on DynamoDB Local (docs/regions.md "Events read again"): ingest in the promoted
 * region holds an event it has no inbox item for while the old region is not reconciled — a held inbox item beside
 * the old region's key, a FAILOVER_HELD successor per channel, nothing sent — and once reconciled it looks the event
 * up in the old region. Every item it writes carries its region and epoch.
 */
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import type { FenceControl } from '../../functions/domain/fence.ts';
import { DynamoInboxStore } from '../../functions/ingest/inbox-store.ts';
import { ingestBatch } from '../../functions/ingest/ingest-batch.ts';
import { OwnedInboxStore, replayRule } from '../../functions/ingest/owned-inbox-store.ts';
import type { DynamoFenceStore } from '../../functions/stores/fence-store.ts';
import { mskEvent } from '../../tools/local/msk.ts';
import { transferEvent } from '../support/events.ts';
import { type LocalTable, localFence, newLocalTable } from '../support/local-table.ts';
import { memoryBatchDeps } from '../support/memory-inbox-store.ts';

const CUT = Date.parse('2026-11-30T10:00:00Z');
const NOW = CUT + 120_000;
let recovery: LocalTable;
let old: LocalTable;
let fence: DynamoFenceStore;

beforeAll(async () => {
  [recovery, old] = await Promise.all([
    newLocalTable(inject('dynamoEndpoint')),
    newLocalTable(inject('dynamoEndpoint')),
  ]);
});

async function promoted(over: Partial<FenceControl> = {}) {
  const control: FenceControl = {
    region: 'ap-northeast-3',
    state: 'ACTIVE',
    epoch: 2,
    since: CUT,
    by: 'test',
    reason: 'failover',
    mode: 'FORCED',
    cutAt: CUT,
    predecessor: { region: 'ap-northeast-1', epoch: 1 },
    ...over,
  };
  fence = await localFence(recovery, control, () => NOW);
}

const deps = () => {
  const inner = new DynamoInboxStore(recovery.doc, recovery.tableName);
  const store = new OwnedInboxStore(inner, fence, 'ap-northeast-3', {
    secondCopy: [],
    clockMarginMs: 60_000,
    now: () => NOW,
    predecessorInboxes: (ids) => new DynamoInboxStore(old.doc, old.tableName).findTaken(ids),
  });
  return { ...memoryBatchDeps(undefined as never), store, now: () => NOW };
};

const read = (eventId: string, at: string) =>
  mskEvent([
    { topic: 'banking.transfers', partition: 0, offset: 1, value: transferEvent({ eventId, occurredAt: at }) },
  ]);

describe('events read again after a failover', () => {
  it('before the old region is reconciled, an event from before the cut with no inbox item here is held, not sent', async () => {
    await promoted();
    const summary = await ingestBatch(read('replayed-1', '2026-11-30T09:59:00Z'), deps());
    expect(summary.figures.accepted).toBe(1);
    const items = await recovery.eventItems('replayed-1');
    expect(items.map((i) => [i.sk, i.status ?? null, i.owner, i.epoch]).sort()).toEqual([
      ['INBOX#E2', null, 'ap-northeast-3', 2],
      ['NOTIFICATION#EMAIL#E2', 'FAILOVER_HELD', 'ap-northeast-3', 2],
      ['NOTIFICATION#PUSH#E2', 'FAILOVER_HELD', 'ap-northeast-3', 2],
      ['NOTIFICATION#SMS#E2', 'FAILOVER_HELD', 'ap-northeast-3', 2],
    ]);
    // Read again: a duplicate, nothing more written.
    const again = await ingestBatch(read('replayed-1', '2026-11-30T09:59:00Z'), deps());
    expect(again.figures).toMatchObject({ accepted: 0, duplicates: 1 });
  });

  it('an event that occurred after the cut and the clock margin is new, and owned by this region', async () => {
    await promoted();
    await ingestBatch(read('after-cut-1', '2026-11-30T10:01:30Z'), deps());
    const items = await recovery.eventItems('after-cut-1');
    expect(items.map((i) => [i.sk, i.status ?? null, i.owner]).sort()).toContainEqual([
      'NOTIFICATION#EMAIL',
      'PENDING',
      'ap-northeast-3',
    ]);
  });

  it('a new event of a type that supersedes keeps its series entry, owned by this region: a newer notice still replaces an older one', async () => {
    await promoted();
    const lowBalance = transferEvent({
      eventId: 'after-cut-series-1',
      type: 'LowBalance',
      occurredAt: '2026-11-30T10:01:30Z',
      recipient: { userId: 'u-series', locale: 'en' },
      data: { accountLast4: '0042', balance: '12.00', currency: 'USD' },
      channels: ['SMS'],
    });
    const event = mskEvent([{ topic: 'banking.transfers', partition: 0, offset: 1, value: lowBalance }]);
    expect((await ingestBatch(event, deps())).figures.accepted).toBe(1);
    const { Items = [] } = await recovery.doc.send(
      new ScanCommand({
        TableName: recovery.tableName,
        FilterExpression: 'kind = :k AND eventId = :e',
        ExpressionAttributeValues: { ':k': 'NOTICE_SERIES', ':e': 'after-cut-series-1' },
      }),
    );
    expect(Items).toHaveLength(1);
    expect(Items[0]).toMatchObject({ owner: 'ap-northeast-3', epoch: 2 });
  });

  it('once reconciled: looked up in the old region — there, a duplicate; held here before, a duplicate; else new', async () => {
    await promoted({
      predecessor: { region: 'ap-northeast-1', epoch: 1, reconciledAt: NOW - 1 },
      lookupUntil: NOW + 3_600_000,
    });
    const oldDeps = { ...memoryBatchDeps(undefined as never), store: new DynamoInboxStore(old.doc, old.tableName) };
    await ingestBatch(read('taken-by-old-1', '2026-11-30T09:58:00Z'), oldDeps);
    expect((await ingestBatch(read('taken-by-old-1', '2026-11-30T09:58:00Z'), deps())).figures.duplicates).toBe(1);
    expect(await recovery.eventItems('taken-by-old-1')).toEqual([]);
    expect((await ingestBatch(read('replayed-1', '2026-11-30T09:59:00Z'), deps())).figures.duplicates).toBe(1);
    expect((await ingestBatch(read('never-taken-1', '2026-11-30T09:58:00Z'), deps())).figures.accepted).toBe(1);
    expect((await recovery.eventItems('never-taken-1')).map((i) => i.sk)).toContain('NOTIFICATION#EMAIL');
  });

  it('the rule: new without a failover; held before the cut plus the margin; looked up only within lookupUntil', () => {
    const control = { cutAt: CUT, predecessor: { region: 'r', epoch: 1 } } as FenceControl;
    expect(replayRule(undefined, CUT, 60_000, NOW)).toBe('new');
    expect(replayRule(control, CUT + 59_999, 60_000, NOW)).toBe('hold');
    expect(replayRule(control, CUT + 60_000, 60_000, NOW)).toBe('new');
    expect(replayRule(control, Number.NaN, 60_000, NOW)).toBe('hold');
    const reconciled = { ...control, predecessor: { region: 'r', epoch: 1, reconciledAt: NOW }, lookupUntil: NOW + 1 };
    expect(replayRule(reconciled, CUT, 60_000, NOW)).toBe('lookup');
    expect(replayRule(reconciled, CUT, 60_000, NOW + 1)).toBe('new');
  });
});

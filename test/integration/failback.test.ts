/**
 * Events read again after a failback, on DynamoDB Local (docs/regions.md "Events read again", "Failback"): the
 * recovery region held an event it had no inbox item for (`INBOX#E2`), `ops reconcile` released it and it was sent;
 * after the switchover back, the original region reads the same record again from its own cluster. It must be a
 * duplicate — whether the held inbox item has replicated to it or is still only in the recovery region — and an event
 * held in any earlier epoch stays a duplicate after later failovers.
 */
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import type { FenceControl } from '../../functions/domain/fence.ts';
import { DynamoInboxStore } from '../../functions/ingest/inbox-store.ts';
import { ingestBatch } from '../../functions/ingest/ingest-batch.ts';
import { OwnedInboxStore } from '../../functions/ingest/owned-inbox-store.ts';
import { reconcile } from '../../functions/operator/reconcile.ts';
import { DynamoSuccessorStore } from '../../functions/stores/successor-store.ts';
import { mskEvent } from '../../tools/local/msk.ts';
import { transferEvent } from '../support/events.ts';
import { type LocalTable, localFence, newLocalTable } from '../support/local-table.ts';
import { memoryBatchDeps } from '../support/memory-inbox-store.ts';

const PRIMARY = 'ap-northeast-1';
const RECOVERY = 'ap-northeast-3';
const CUT = Date.parse('2026-11-30T10:00:00Z');
const NOW = CUT + 120_000;
const BEFORE_CUT = '2026-11-30T09:59:00Z';
let primary: LocalTable;
let recovery: LocalTable;

beforeAll(async () => {
  [primary, recovery] = await Promise.all([
    newLocalTable(inject('dynamoEndpoint')),
    newLocalTable(inject('dynamoEndpoint')),
  ]);
});

/** A region's ingest at the CONTROL given, the other region's table answering its look-ups. */
async function ingestIn(here: LocalTable, control: FenceControl, other: LocalTable) {
  const fence = await localFence(here, control, () => NOW);
  const store = new OwnedInboxStore(new DynamoInboxStore(here.doc, here.tableName), fence, control.region, {
    secondCopy: [],
    clockMarginMs: 60_000,
    now: () => NOW,
    predecessorInboxes: (ids) => new DynamoInboxStore(other.doc, other.tableName).findTaken(ids),
  });
  return (eventId: string) =>
    ingestBatch(
      mskEvent([
        {
          topic: 'banking.transfers',
          partition: 0,
          offset: 1,
          value: transferEvent({ eventId, occurredAt: BEFORE_CUT }),
        },
      ]),
      { ...memoryBatchDeps(undefined as never), store, now: () => NOW },
    );
}

const control = (region: string, epoch: number, predecessor: FenceControl['predecessor'], over = {}) =>
  ({
    region,
    state: 'ACTIVE',
    epoch,
    since: CUT,
    by: 'test',
    reason: 'drill',
    mode: 'FORCED',
    cutAt: CUT,
    predecessor,
    ...over,
  }) as FenceControl;

/** The recovery region after a failover from the primary (epoch 2), not yet reconciled: it holds what it reads. */
const failedOver = () => control(RECOVERY, 2, { region: PRIMARY, epoch: 1 });
/** The primary after the switchover back (epoch 3), the recovery region reconciled at once. */
const failedBack = () =>
  control(PRIMARY, 3, { region: RECOVERY, epoch: 2, reconciledAt: NOW - 1 }, { lookupUntil: NOW + 3_600_000 });

const keys = async (table: LocalTable, eventId: string) =>
  (await table.eventItems(eventId)).map((i) => String(i.sk)).sort();

describe('events read again after a failback', () => {
  it('an event the recovery region held, whose held inbox item has replicated here, is a duplicate in the original region', async () => {
    // The held inbox item written in the primary's table stands for its replica: both tables hold INBOX#E2.
    const readInRecovery = await ingestIn(recovery, failedOver(), primary);
    expect((await readInRecovery('held-replicated-1')).figures.accepted).toBe(1);
    const readInPrimaryAtE2 = await ingestIn(primary, failedOver(), recovery);
    expect((await readInPrimaryAtE2('held-replicated-1')).figures.accepted).toBe(1);
    const before = await keys(primary, 'held-replicated-1');

    const readAgain = await ingestIn(primary, failedBack(), recovery);
    expect((await readAgain('held-replicated-1')).figures).toMatchObject({ accepted: 0, duplicates: 1 });
    expect(await keys(primary, 'held-replicated-1')).toEqual(before);
  });

  it('an event held only in the recovery region so far is found there by the look-up: a duplicate, nothing written', async () => {
    const readInRecovery = await ingestIn(recovery, failedOver(), primary);
    expect((await readInRecovery('held-there-1')).figures.accepted).toBe(1);
    expect(await keys(recovery, 'held-there-1')).toContain('INBOX#E2');

    const readAgain = await ingestIn(primary, failedBack(), recovery);
    expect((await readAgain('held-there-1')).figures).toMatchObject({ accepted: 0, duplicates: 1 });
    expect(await primary.eventItems('held-there-1')).toEqual([]);
  });

  it('an event held in an earlier epoch stays a duplicate after a later failover holds what it reads', async () => {
    const readAtE2 = await ingestIn(recovery, failedOver(), primary);
    expect((await readAtE2('held-earlier-1')).figures.accepted).toBe(1);
    // Epoch 4: the recovery region failed over to again, its predecessor (the primary at epoch 3) not reconciled.
    const readAtE4 = await ingestIn(recovery, control(RECOVERY, 4, { region: PRIMARY, epoch: 3 }), primary);
    expect((await readAtE4('held-earlier-1')).figures).toMatchObject({ accepted: 0, duplicates: 1 });
    expect((await keys(recovery, 'held-earlier-1')).filter((sk) => sk.endsWith('#E4'))).toEqual([]);
  });

  it('an event no region took is still new in the original region after the failback', async () => {
    const readAgain = await ingestIn(primary, failedBack(), recovery);
    expect((await readAgain('never-taken-2')).figures.accepted).toBe(1);
    expect(await keys(primary, 'never-taken-2')).toContain('NOTIFICATION#EMAIL');
  });
});

describe('ops reconcile after a failback', () => {
  const side = async (region: string, table: LocalTable, at: FenceControl) => ({
    region,
    fence: await localFence(table, at, () => NOW),
    store: new DynamoSuccessorStore(table.doc, table.tableName, 4),
    intake: { enable: async () => undefined, disable: async () => undefined },
  });
  const request = {
    by: 'test',
    reason: 'failback',
    policies: { EMAIL: 'AT_MOST_ONCE', PUSH: 'AT_MOST_ONCE', SMS: 'AT_MOST_ONCE' } as const,
    secondCopy: [],
    placement: { sweepShards: 4, pendingThresholdMs: 900_000 },
    lookupMs: 3_600_000,
    settleAfterMs: 0,
  };
  const clock = { now: () => NOW, sleep: async () => undefined };

  it('does not release again an event the recovery region held, whose held inbox item has not replicated here', async () => {
    // The recovery region held the event (INBOX#E2) and released it: its successor is the notice that went out.
    const readInRecovery = await ingestIn(recovery, failedOver(), primary);
    expect((await readInRecovery('held-released-1')).figures.accepted).toBe(1);
    // The switchover back (epoch 3), not yet reconciled: the primary reads the event again and, finding no inbox item
    // of it in its replica (INBOX#E2 has not replicated yet), holds it.
    const atE3 = control(PRIMARY, 3, { region: RECOVERY, epoch: 2 });
    const readInPrimary = await ingestIn(primary, atE3, recovery);
    expect((await readInPrimary('held-released-1')).figures.accepted).toBe(1);
    expect(await keys(primary, 'held-released-1')).toEqual([
      'INBOX#E3',
      'NOTIFICATION#EMAIL#E3',
      'NOTIFICATION#PUSH#E3',
      'NOTIFICATION#SMS#E3',
    ]);

    const demoted = control(RECOVERY, 2, undefined, { state: 'FENCED', quiescentAt: NOW - 1 });
    const report = await reconcile(
      await side(RECOVERY, recovery, demoted),
      await side(PRIMARY, primary, atE3),
      request,
      clock,
    );
    // The recovery region took the event (its held inbox item): nothing proves the notice unsent, so it waits.
    expect(report).toMatchObject({ released: 0, waiting: 3 });
    const held = (await primary.eventItems('held-released-1')).filter((i) => String(i.sk).endsWith('#E3'));
    expect(held.filter((i) => i.kind === 'NOTIFICATION').map((i) => i.status)).toEqual(Array(3).fill('FAILOVER_HELD'));
  });

  it("releases what the old region never took though the active region's own held inbox item has replicated there", async () => {
    // The recovery region (epoch 2) held an event the primary never took; its INBOX#E2 replicated to the primary.
    const readInRecovery = await ingestIn(recovery, failedOver(), primary);
    expect((await readInRecovery('held-own-1')).figures.accepted).toBe(1);
    const ownHold = (await recovery.eventItems('held-own-1')).find((i) => i.sk === 'INBOX#E2');
    await primary.doc.send(new PutCommand({ TableName: primary.tableName, Item: ownHold }));

    const demoted = control(PRIMARY, 1, undefined, { state: 'FENCED', quiescentAt: NOW - 1, mode: 'INITIAL' });
    await reconcile(
      await side(PRIMARY, primary, demoted),
      await side(RECOVERY, recovery, failedOver()),
      request,
      clock,
    );
    const successors = (await recovery.eventItems('held-own-1')).filter((i) => i.kind === 'NOTIFICATION');
    expect(successors.map((i) => [i.status, i.late])).toEqual(Array(3).fill(['PENDING', true]));
  });
});

/**
 * The fence on DynamoDB Local (docs/regions.md "The fence"): a region that is not active can neither claim a
 * notification nor start a send, even while its functions still run; a region writes only items of its own epoch; and
 * the fence itself moves only from the state its writer read.
 */
import { CreateTableCommand } from '@aws-sdk/client-dynamodb';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { createFenceTableInput } from '../../functions/contracts/fence-schema.ts';
import { neverHeld } from '../../functions/dispatch/channel-breaker.ts';
import { dispatchNotification } from '../../functions/dispatch/dispatch-notification.ts';
import { FencedSender, REGION_FENCED } from '../../functions/dispatch/fenced-sender.ts';
import type { Sender } from '../../functions/dispatch/senders.ts';
import { type FenceControl, FIRST_EPOCH } from '../../functions/domain/fence.ts';
import { DynamoFenceStore, FenceMovedError } from '../../functions/stores/fence-store.ts';
import { DynamoNotificationStore } from '../../functions/stores/notification-store.ts';
import { DynamoSweepStore } from '../../functions/stores/sweep-store.ts';
import { localClient } from '../../tools/local/dynamodb-local.ts';
import { DISPATCH_BUDGET, DISPATCH_NOW, dispatchDeps, pendingNotification } from '../support/dispatch-deps.ts';
import { type LocalTable, newLocalTable } from '../support/local-table.ts';

let table: LocalTable;
let fenceTables = 0;

beforeAll(async () => {
  table = await newLocalTable(inject('dynamoEndpoint'));
});

const REGION = 'ap-northeast-1';
const active = (epoch: number, over: Partial<FenceControl> = {}): FenceControl => ({
  region: REGION,
  state: 'ACTIVE',
  epoch,
  since: DISPATCH_NOW,
  by: 'test',
  reason: 'test',
  mode: 'INITIAL',
  ...over,
});
const fenced = (epoch: number): FenceControl => ({ ...active(epoch), state: 'FENCED', mode: 'CLEAN' });

/** A fresh fence table of this region, in the given state; its clock is the test's. */
async function newFence(initial: FenceControl, clock = () => DISPATCH_NOW): Promise<DynamoFenceStore> {
  const name = `${table.tableName}-fence-${fenceTables++}`;
  const db = localClient(table.endpoint);
  await db.send(new CreateTableCommand(createFenceTableInput(name)));
  db.destroy();
  const fence = new DynamoFenceStore(table.doc, name, 4, clock);
  expect(await fence.initialise(initial)).toBe('written');
  return fence;
}

/** A PENDING email notification of a fresh event, written with the given owner and epoch (or none: a legacy item). */
async function pendingItem(epoch?: number) {
  const n = pendingNotification('EMAIL');
  const item = {
    ...n,
    pk: `${n.pk}-${Math.random().toString(36).slice(2)}`,
    ...(epoch === undefined ? {} : { owner: REGION, epoch }),
  };
  item.notificationId = `${item.pk.slice('EVENT#'.length)}#EMAIL`;
  await table.doc.send(new PutCommand({ TableName: table.tableName, Item: item }));
  return item;
}

const keyOf = (item: { pk: string; sk: string }) => ({ pk: item.pk, sk: item.sk });

const accepting = (): Sender & { sends: number } => {
  const s = {
    sends: 0,
    async send() {
      s.sends++;
      return `msg-${s.sends}`;
    },
  };
  return s;
};

describe('the claim carries the epoch', () => {
  it('a fenced region cannot claim a notification, even one of its own epoch', async () => {
    const fence = await newFence(fenced(1));
    const store = new DynamoNotificationStore(table.doc, table.tableName, undefined, fence);
    const item = await pendingItem(1);
    const r = await store.claim(keyOf(item), 'claim-1', DISPATCH_NOW, 60_000);
    expect(r.kind).toBe('taken');
    expect((await store.get(keyOf(item)))?.status).toBe('PENDING');
  });

  it('an active region claims its own epoch’s items and records the epoch it claimed at', async () => {
    const fence = await newFence(active(2));
    const store = new DynamoNotificationStore(table.doc, table.tableName, undefined, fence);
    const item = await pendingItem(2);
    const r = await store.claim(keyOf(item), 'claim-2', DISPATCH_NOW, 60_000);
    expect(r.kind).toBe('claimed');
    expect((await store.get(keyOf(item))) as unknown).toMatchObject({ status: 'SENDING', claimEpoch: 2 });
  });

  it('an active region cannot claim another epoch’s item: it is the other region’s, whatever its replica says', async () => {
    const fence = await newFence(active(2));
    const store = new DynamoNotificationStore(table.doc, table.tableName, undefined, fence);
    const older = await pendingItem(1);
    const legacy = await pendingItem(undefined);
    expect((await store.claim(keyOf(older), 'c', DISPATCH_NOW, 60_000)).kind).toBe('taken');
    expect((await store.claim(keyOf(legacy), 'c', DISPATCH_NOW, 60_000)).kind).toBe('taken');
    expect((await store.get(keyOf(older)))?.status).toBe('PENDING');
  });

  it('the first epoch owns the items written before epochs existed', async () => {
    const fence = await newFence(active(FIRST_EPOCH));
    const store = new DynamoNotificationStore(table.doc, table.tableName, undefined, fence);
    const legacy = await pendingItem(undefined);
    expect((await store.claim(keyOf(legacy), 'c', DISPATCH_NOW, 60_000)).kind).toBe('claimed');
  });

  it('the sweeper’s writes are the owner’s only: an expired lease of another epoch is not resolved here', async () => {
    const fence = await newFence(active(2));
    const store = new DynamoSweepStore(table.doc, table.tableName, undefined, fence);
    const item = await pendingItem(1);
    await table.doc.send(
      new PutCommand({
        TableName: table.tableName,
        Item: { ...item, status: 'SENDING', attempt: 1, leaseUntil: DISPATCH_NOW - 1, sweepAt: DISPATCH_NOW - 1 },
      }),
    );
    const entry = { ...item, status: 'SENDING' as const, attempt: 1, sweepAt: DISPATCH_NOW - 1 };
    expect(await store.resolveExpired(entry, 'UNKNOWN', DISPATCH_NOW, DISPATCH_NOW)).toBe('lost');
    expect(await store.expire({ ...entry, status: 'PENDING' }, DISPATCH_NOW)).toBe('lost');
    expect((await store.get(keyOf(item)))?.status).toBe('SENDING');
  });
});

describe('the send is fenced, not only the claim', () => {
  it('a region demoted between the claim and the send starts no send: the notification goes back, unsent, unspent', async () => {
    let now = DISPATCH_NOW;
    const fence = await newFence(active(1), () => now);
    const store = new DynamoNotificationStore(table.doc, table.tableName, undefined, fence);
    const item = await pendingItem(1);
    const provider = accepting();
    const refused: string[] = [];
    // The demotion lands while this record waits for its send token: after the claim, before the provider call.
    const pacer = {
      async acquire() {
        await fence.fence(fenced(1), active(1));
        now += 5_000;
        return { window: 0, rank: 0 };
      },
    };
    const sender = new FencedSender(provider, fence, (n) => refused.push(n.notificationId));
    const result = await dispatchNotification(
      { key: keyOf(item), retryAt: undefined },
      dispatchDeps({ store, sender, pacer, breaker: neverHeld, now: () => now }),
      { ...DISPATCH_BUDGET, finishBy: now + 50_000 },
    );
    expect(result).toMatchObject({ kind: 'deferred', reason: 'NOT_SENT', code: REGION_FENCED });
    expect(provider.sends).toBe(0);
    expect(refused).toEqual([item.notificationId]);
    const after = await store.get(keyOf(item));
    expect(after).toMatchObject({ status: 'PENDING', attempt: 1, deferrals: 1 });
  });

  it('a send claimed at an older epoch is refused after a promotion moved this region’s epoch on', async () => {
    const fence = await newFence(active(3));
    const sender = new FencedSender(accepting(), fence);
    const item = { ...(await pendingItem(2)), claimEpoch: 2 };
    await expect(sender.send(item, { subject: 's', body: 'b' } as never, AbortSignal.timeout(1_000))).rejects.toThrow(
      /fenced/,
    );
    const current = { ...item, claimEpoch: 3 };
    await expect(sender.send(current, { subject: 's', body: 'b' } as never, AbortSignal.timeout(1_000))).resolves.toBe(
      'msg-1',
    );
  });

  it('a region whose fence holds no shard sends nothing: no fence, no send', async () => {
    const store = new DynamoFenceStore(table.doc, 'no-such-fence-table', 4);
    await expect(store.permitsSend('x#EMAIL', 1)).rejects.toThrow();
    const sender = new FencedSender(accepting(), store);
    await expect(
      sender.send({ notificationId: 'x#EMAIL', claimEpoch: 1 } as never, {} as never, AbortSignal.timeout(1_000)),
    ).rejects.toMatchObject({ failure: 'notSent', code: 'FENCE_UNREADABLE' });
  });
});

describe('the fence moves only from the state its writer read', () => {
  it('two operators cannot both promote: the second finds the fence moved', async () => {
    const fence = await newFence(fenced(0));
    await fence.activate(active(2, { mode: 'FORCED' }), fenced(0));
    await expect(fence.activate(active(3, { mode: 'FORCED' }), fenced(0))).rejects.toBeInstanceOf(FenceMovedError);
    expect(await fence.control()).toMatchObject({ state: 'ACTIVE', epoch: 2 });
    expect(await fence.shard(3)).toEqual({ state: 'ACTIVE', epoch: 2 });
  });

  it('a promotion interrupted half-way is run again to the same end', async () => {
    const fence = await newFence(fenced(0));
    await fence.activate(active(2), fenced(0));
    await fence.activate(active(2), fenced(0)); // the re-run: every write finds its own result
    expect(await fence.claimEpoch()).toBe(2);
  });

  it('a redeploy never moves a live fence: the initial state is written only if absent', async () => {
    const fence = await newFence(active(1));
    await fence.fence(fenced(1), active(1));
    expect(await fence.initialise(active(1))).toBe('present');
    expect(await fence.claimEpoch()).toBeUndefined();
  });
});

/**
 * A failover over a backlog larger than one run of the operator function can take (docs/regions.md "Promotion and
 * demotion, step by step"), on DynamoDB Local: the fence moves and the intake is switched on in the first run, before
 * anything is listed; the successor pass goes on in pages, run after run, from where the fence notes it stopped; a run
 * killed mid-page is run again without a second successor for anything. And `--from-epoch` below the epoch the lost
 * region's heartbeat carried is refused, the fence unmoved.
 */
import { BatchWriteCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { beforeEach, describe, expect, inject, it } from 'vitest';
import { type FenceControl, heartbeatStale } from '../../functions/domain/fence.ts';
import {
  type FailoverRequest,
  type PromotionReport,
  promoteFailover,
  type RegionSide,
} from '../../functions/operator/promote.ts';
import { regionPreview } from '../../functions/operator/region-commands.ts';
import { RegionRefused } from '../../functions/operator/region-refusal.ts';
import { DynamoHeartbeat, heartbeatKey } from '../../functions/stores/heartbeat.ts';
import { DynamoSuccessorStore } from '../../functions/stores/successor-store.ts';
import { pendingNotification } from '../support/dispatch-deps.ts';
import { type LocalTable, localFence, newLocalTable } from '../support/local-table.ts';

const PRIMARY = 'ap-northeast-1';
const RECOVERY = 'ap-northeast-3';
const SHARDS = 4;
const BACKLOG = 450;

let table: LocalTable;
let side: RegionSide;
let enabled: number;
let now: number;
// Every read of the clock moves it 10 ms: a page of 100 successors takes about a second of the run's budget.
const clock = {
  now: () => {
    now += 10;
    return now;
  },
  sleep: async (ms: number) => {
    now += ms;
  },
};

const request: FailoverRequest = {
  by: 'arn:aws:sts::123456789012:assumed-role/DrOperators/alice',
  reason: 'primary lost',
  from: PRIMARY,
  fromEpoch: 1,
  secondCopy: [],
  placement: { sweepShards: SHARDS, pendingThresholdMs: 60_000 },
  budgetMs: 2_000,
};

/** The lost region's unfinished work in this replica: pending e-mails and SMS in flight, over every sweep shard. */
async function backlog(n: number): Promise<void> {
  const base = pendingNotification('EMAIL');
  const items = Array.from({ length: n }, (_, i) => {
    const eventId = `evt-${String(i).padStart(5, '0')}`;
    const inFlight = i % 5 === 0;
    const channel = inFlight ? 'SMS' : 'EMAIL';
    return {
      ...base,
      pk: `EVENT#${eventId}`,
      sk: `NOTIFICATION#${channel}`,
      eventId,
      channel,
      notificationId: `${eventId}#${channel}`,
      status: inFlight ? 'SENDING' : 'PENDING',
      sweepKey: `${inFlight ? 'SENDING' : 'PENDING'}#${channel}#${i % SHARDS}`,
      owner: PRIMARY,
      epoch: 1,
    };
  });
  for (let i = 0; i < items.length; i += 25) {
    const chunk = items.slice(i, i + 25).map((Item) => ({ PutRequest: { Item } }));
    await table.doc.send(new BatchWriteCommand({ RequestItems: { [table.tableName]: chunk } }));
  }
}

/** Each original's successors in this replica, by the original's event. */
async function successorsPerOriginal(): Promise<Map<string, number>> {
  const all = await table.allItems();
  const per = new Map<string, number>();
  for (const item of all)
    if (item.supersedes !== undefined) per.set(String(item.pk), (per.get(String(item.pk)) ?? 0) + 1);
  return per;
}

async function promoteUntilDone(s: RegionSide): Promise<PromotionReport[]> {
  const reports: PromotionReport[] = [];
  for (let run = 0; run < 50; run++) {
    const report = await promoteFailover(s, request, clock);
    reports.push(report);
    if (report.successorsDoneAt !== undefined) return reports;
  }
  throw new Error('the pass never finished');
}

beforeEach(async () => {
  now = Date.parse('2026-12-06T05:00:00Z');
  enabled = 0;
  table = await newLocalTable(inject('dynamoEndpoint'));
  const initial: FenceControl = {
    region: RECOVERY,
    state: 'FENCED',
    epoch: 0,
    since: 0,
    by: 'stack',
    reason: 'initial',
    mode: 'INITIAL',
  };
  side = {
    region: RECOVERY,
    fence: await localFence(table, initial, () => now),
    store: new DynamoSuccessorStore(table.doc, table.tableName, SHARDS),
    intake: { enable: async () => void enabled++, disable: async () => undefined },
  };
  await backlog(BACKLOG);
});

describe('promote over a backlog larger than one run', () => {
  it('moves the fence and switches the intake on in the first run, then finishes the successors over several runs, one per unfinished notice', async () => {
    const first = await promoteFailover(side, request, clock);
    expect(first).toMatchObject({ region: RECOVERY, epoch: 2 });
    expect(first.successorsDoneAt).toBeUndefined();
    expect(await side.fence.control(true)).toMatchObject({ state: 'ACTIVE', epoch: 2, mode: 'FORCED' });
    expect(enabled).toBe(1);
    const rest = await promoteUntilDone(side);
    const runs = [first, ...rest];
    expect(runs.length).toBeGreaterThanOrEqual(3);
    expect(runs.every((r) => r.epoch === 2)).toBe(true);
    const made = runs.reduce((n, r) => n + r.held + r.unknown + r.secondCopies, 0);
    expect(made).toBe(BACKLOG);
    expect(runs.reduce((n, r) => n + r.unknown, 0)).toBe(BACKLOG / 5);
    const per = await successorsPerOriginal();
    expect(per.size).toBe(BACKLOG);
    expect([...per.values()].every((n) => n === 1)).toBe(true);
    // Done: run again, it lists nothing and writes nothing.
    const again = await promoteFailover(side, request, clock);
    expect(again).toMatchObject({ held: 0, unknown: 0, alreadyThere: 0 });
    expect(again.successorsDoneAt).toBe(rest.at(-1)?.successorsDoneAt);
  });

  it('a run killed in the middle of a page is run again: no notice gets a second successor, none is missed', async () => {
    let writes = 0;
    const dying = Object.assign(Object.create(side.store), {
      create: async (s: Parameters<DynamoSuccessorStore['create']>[0]) => {
        if (++writes > 150) throw new Error('Task timed out after 180.00 seconds');
        return side.store.create(s);
      },
    }) as DynamoSuccessorStore;
    await expect(
      promoteFailover({ ...side, store: dying }, { ...request, budgetMs: undefined }, clock),
    ).rejects.toThrow(/timed out/);
    expect(await side.fence.control(true)).toMatchObject({ state: 'ACTIVE', epoch: 2 });
    const reports = await promoteUntilDone(side);
    expect(reports.reduce((n, r) => n + r.alreadyThere, 0)).toBeGreaterThan(0);
    const per = await successorsPerOriginal();
    expect(per.size).toBe(BACKLOG);
    expect([...per.values()].every((n) => n === 1)).toBe(true);
  });
});

describe("the other region's heartbeat, as this replica holds it (PeerHeartbeatStale)", () => {
  it('reads when a region last beat: the keeper publishes it stale when that is too long ago, or never', async () => {
    const heartbeat = new DynamoHeartbeat(table.doc, table.tableName);
    const lastBeat = async () => (await heartbeat.read('eu-north-1'))?.at;
    expect(await heartbeat.read('eu-north-1')).toBeUndefined();
    await heartbeat.beat('eu-north-1', now - 30_000, 4);
    expect(await heartbeat.read('eu-north-1')).toEqual({ at: now - 30_000, epoch: 4 });
    expect(heartbeatStale(await lastBeat(), now)).toBe(false);
    expect(heartbeatStale(await lastBeat(), now + 61_000)).toBe(true);
  });

  it('never lowers the epoch: a keeper that read its fence before a promotion cannot write the older epoch over its beat', async () => {
    const heartbeat = new DynamoHeartbeat(table.doc, table.tableName);
    await heartbeat.beat('eu-north-1', now, 5);
    await heartbeat.beat('eu-north-1', now + 1_000, 4);
    expect(await heartbeat.read('eu-north-1')).toEqual({ at: now, epoch: 5 });
    await heartbeat.beat('eu-north-1', now + 60_000, 5);
    expect(await heartbeat.read('eu-north-1')).toEqual({ at: now + 60_000, epoch: 5 });
  });
});

describe('the epoch a failover takes', () => {
  const beat = (region: string, epoch: number) =>
    table.doc.send(
      new PutCommand({ TableName: table.tableName, Item: { ...heartbeatKey(region), at: now, owner: region, epoch } }),
    );

  const gone = () => Promise.reject(new Error('connect ETIMEDOUT'));
  const lost = {
    region: PRIMARY,
    fence: { control: gone },
    store: { countUnfinished: gone, heartbeatEpoch: gone, lastSeenEpoch: gone },
  } as unknown as RegionSide;
  /** A PUSH notice of the lost region in sweep partition `sweepKey`, due at `sweepAt`. */
  const notice = (id: string, fields: Record<string, unknown>) => ({
    ...pendingNotification('PUSH'),
    pk: `EVENT#${id}`,
    sk: 'NOTIFICATION#PUSH',
    eventId: id,
    notificationId: `${id}#PUSH`,
    owner: PRIMARY,
    ...fields,
  });

  it('refuses --from-epoch below the lost region’s heartbeat (FROM_EPOCH_BEHIND), in the preview and on confirm, and moves nothing', async () => {
    await beat(PRIMARY, 3);
    const preview = await regionPreview(
      'promote',
      { to: RECOVERY, oldRegionUnreachable: true, fromEpoch: 1 },
      [side, lost],
      now,
    );
    expect(preview.plan.lastSeenEpochs).toMatchObject({ [RECOVERY]: { [PRIMARY]: { epoch: 3 } } });
    expect(preview.plan.unfinished).toMatchObject({ [RECOVERY]: BACKLOG, [PRIMARY]: { unreachable: /ETIMEDOUT/ } });
    expect(preview.refusal?.code).toBe('FROM_EPOCH_BEHIND');
    const refused = await promoteFailover(side, request, clock).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(RegionRefused);
    expect(refused).toMatchObject({ code: 'FROM_EPOCH_BEHIND', message: /below epoch 3/ });
    expect(await side.fence.control(true)).toMatchObject({ state: 'FENCED', epoch: 0 });
    expect(enabled).toBe(0);
  });

  it("a lost region whose heartbeat never carried its epoch here: its newest notices do, under quiet hours' and far retries' later entries — --from-epoch below it is refused, and the epoch taken is above it", async () => {
    // The lost region had been promoted to epoch 3 and wrote this notice (due at its write + the pending threshold),
    // then was lost before its keeper beat at 3. Quiet hours' held notices and a far retry of epoch 1 sit after it.
    const late = notice('evt-late', { sweepKey: 'PENDING#PUSH#1', sweepAt: now + 60_000, epoch: 3 });
    const later = Array.from({ length: 5 }, (_, i) =>
      notice(`evt-quiet-${i}`, {
        status: 'HELD',
        sweepKey: 'PENDING#PUSH#1',
        sweepAt: now + 8 * 3_600_000 + i,
        epoch: 1,
      }),
    );
    const items = [late, ...later].map((Item) => ({ PutRequest: { Item } }));
    await table.doc.send(new BatchWriteCommand({ RequestItems: { [table.tableName]: items } }));
    const preview = await regionPreview(
      'promote',
      { to: RECOVERY, oldRegionUnreachable: true, fromEpoch: 1 },
      [side, lost],
      now,
    );
    expect(preview.plan.lastSeenEpochs).toMatchObject({
      [RECOVERY]: { [PRIMARY]: { epoch: 3, notificationId: 'evt-late#PUSH' } },
    });
    expect(preview.refusal).toMatchObject({ code: 'FROM_EPOCH_BEHIND', message: /notification evt-late#PUSH/ });
    await expect(promoteFailover(side, request, clock)).rejects.toMatchObject({ code: 'FROM_EPOCH_BEHIND' });
    expect(await side.fence.control(true)).toMatchObject({ state: 'FENCED', epoch: 0 });
    const report = await promoteFailover(side, { ...request, fromEpoch: 3, budgetMs: undefined }, clock);
    expect(report).toMatchObject({ epoch: 4, aheadOfEpoch: 0 });
  });

  it("quiet hours' notices whose window opened between the loss and the promotion (held still: no sweeper released them) do not hide the lost region's newest notice", async () => {
    const lostAt = now - 40 * 60_000;
    const late = notice('evt-late', { sweepKey: 'PENDING#PUSH#1', sweepAt: lostAt + 900_000, epoch: 2 });
    // A zone's quiet hours open at one instant: 150 held notices at one sweepAt, more than a page evaluates.
    const opened = Array.from({ length: 150 }, (_, i) =>
      notice(`evt-quiet-${i}`, { status: 'HELD', sweepKey: 'PENDING#PUSH#1', sweepAt: now - 10 * 60_000, epoch: 1 }),
    );
    const items = [late, ...opened].map((Item) => ({ PutRequest: { Item } }));
    for (let i = 0; i < items.length; i += 25) {
      await table.doc.send(new BatchWriteCommand({ RequestItems: { [table.tableName]: items.slice(i, i + 25) } }));
    }
    expect(await side.store.lastSeenEpoch(PRIMARY, now)).toMatchObject({ epoch: 2, notificationId: 'evt-late#PUSH' });
  });

  it('a promotion beats at its new epoch at once: the other replica has it before the keeper’s next minute', async () => {
    const report = await promoteFailover(side, { ...request, budgetMs: undefined }, clock);
    expect(await side.store.heartbeatEpoch(RECOVERY)).toMatchObject({ epoch: report.epoch });
  });

  it("the lost region's own promotion's successors (its HELD partitions) carry its epoch: a promotion from it takes one above", async () => {
    await table.doc.send(
      new PutCommand({
        TableName: table.tableName,
        Item: notice('evt-inherited', {
          sk: 'NOTIFICATION#PUSH#E2',
          notificationId: 'evt-inherited#PUSH#E2',
          status: 'FAILOVER_HELD',
          supersedes: 'NOTIFICATION#PUSH',
          sweepKey: 'HELD#PUSH#0',
          sweepAt: now - 30_000,
          epoch: 2,
        }),
      }),
    );
    expect(await side.store.lastSeenEpoch(PRIMARY, now)).toMatchObject({ epoch: 2 });
    await expect(promoteFailover(side, request, clock)).rejects.toMatchObject({ code: 'FROM_EPOCH_BEHIND' });
    expect(await promoteFailover(side, { ...request, fromEpoch: 2, budgetMs: undefined }, clock)).toMatchObject({
      epoch: 3,
    });
  });

  it('takes an epoch above every one this replica has seen: after a failback, a second failover is above the old region’s heartbeat', async () => {
    await beat(PRIMARY, 3);
    await beat(RECOVERY, 2);
    const report = await promoteFailover(side, { ...request, fromEpoch: 3, budgetMs: undefined }, clock);
    expect(report).toMatchObject({ epoch: 4 });
    expect(report.successorsDoneAt).toBeDefined();
    const sample = await table.doc.send(
      new QueryCommand({
        TableName: table.tableName,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': 'EVENT#evt-00001' },
      }),
    );
    expect(sample.Items?.find((i) => i.supersedes !== undefined)).toMatchObject({ owner: RECOVERY, epoch: 4 });
  });
});

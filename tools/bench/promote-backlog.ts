/**
 * A failover over a backlog (docs/regions.md "Promotion and demotion, step by step"), on DynamoDB Local with the real
 * fence and successor stores: `n` unfinished notices of the lost region in the promoted region's replica (four in five
 * pending, one in five in flight), then `ops promote` as the operator function runs it, in runs of at most 15 s (the
 * operator API's budget), run again until its successor pass is done. Reports when the fence moved (the first run,
 * before anything is listed), how many runs it took, and the pass's wall time and rate.
 */
import { randomUUID } from 'node:crypto';
import { CreateTableCommand } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { createFenceTableInput } from '../../functions/contracts/fence-schema.ts';
import { DEFAULT_SWEEP_PLACEMENT } from '../../functions/domain/sweep-index.ts';
import { regions } from '../../functions/operator/index.ts';
import { DynamoFenceStore } from '../../functions/stores/fence-store.ts';
import { DynamoSuccessorStore } from '../../functions/stores/successor-store.ts';
import { createTable, localClient } from '../local/dynamodb-local.ts';
import { seedItems } from './seed.ts';

export interface PromoteFigures {
  readonly backlog: number;
  /** From the confirm's start to the fence ACTIVE (and the intake switched on). */
  readonly fenceMovedMs: number;
  readonly runs: number;
  /** From the first run's start to the last successor written. */
  readonly passMs: number;
  readonly successorsPerSecond: number;
}

const RUN_BUDGET_MS = 15_000;

export async function measurePromote(endpoint: string, backlog: number): Promise<PromoteFigures> {
  const table = `promote-${randomUUID().slice(0, 6)}`;
  await createTable(endpoint, table);
  const db = localClient(endpoint);
  await db.send(new CreateTableCommand(createFenceTableInput(`${table}-fence`)));
  const doc = DynamoDBDocumentClient.from(db, { marshallOptions: { removeUndefinedValues: true } });
  const shards = DEFAULT_SWEEP_PLACEMENT.sweepShards;
  const fence = new DynamoFenceStore(doc, `${table}-fence`, 4);
  const region = 'ap-northeast-3';
  await fence.initialise({
    region,
    state: 'FENCED',
    epoch: 0,
    since: 0,
    by: 'bench',
    reason: 'bench',
    mode: 'INITIAL',
  });
  await seedItems(
    doc,
    table,
    Array.from({ length: backlog }, (_, i) => unfinished(i, shards)),
  );
  const side: regions.RegionSide = {
    region,
    fence,
    store: new DynamoSuccessorStore(doc, table, shards),
    intake: { enable: async () => undefined, disable: async () => undefined },
  };
  const clock = { now: Date.now, sleep: (ms: number) => new Promise<void>((r) => setTimeout(r, ms)) };
  const request: regions.FailoverRequest = {
    by: 'bench',
    reason: 'bench',
    from: 'ap-northeast-1',
    fromEpoch: 1,
    secondCopy: [],
    placement: DEFAULT_SWEEP_PLACEMENT,
    budgetMs: RUN_BUDGET_MS,
  };
  const started = Date.now();
  let runs = 0;
  let fenceMovedMs = 0;
  for (;;) {
    const report = await regions.promoteFailover(side, request, clock);
    runs++;
    if (runs === 1) fenceMovedMs = report.activeAt - report.startedAt;
    if (report.successorsDoneAt !== undefined) break;
  }
  const passMs = Date.now() - started;
  db.destroy();
  return { backlog, fenceMovedMs, runs, passMs, successorsPerSecond: Math.round((backlog / passMs) * 1000) };
}

/** The lost region's notice `i`, as its replica holds it: pending, or (one in five) in flight. */
function unfinished(i: number, shards: number) {
  const eventId = `bench-${i}`;
  const sending = i % 5 === 0;
  const channel = sending ? 'SMS' : 'EMAIL';
  const state = sending ? 'SENDING' : 'PENDING';
  const at = Date.parse('2026-12-06T04:55:00Z');
  return {
    pk: `EVENT#${eventId}`,
    sk: `NOTIFICATION#${channel}`,
    kind: 'NOTIFICATION',
    notificationId: `${eventId}#${channel}`,
    eventId,
    channel,
    recipient: sending ? '+81312345678' : 'hanako@example.com',
    userId: `u-${i}`,
    locale: 'ja',
    template: 'TransferCompleted',
    data: { transferId: `t-${i}`, amount: '10000', currency: 'JPY', counterpartyName: 'Taro Yamada' },
    occurredAt: new Date(at).toISOString(),
    status: state,
    attempt: sending ? 1 : 0,
    createdAt: new Date(at).toISOString(),
    updatedAt: new Date(at).toISOString(),
    expiresAt: Math.floor(at / 1000) + 35 * 86_400,
    sweepKey: `${state}#${channel}#${i % shards}`,
    sweepAt: at,
    owner: 'ap-northeast-1',
    epoch: 1,
  };
}

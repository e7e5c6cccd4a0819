/**
 * The deployed ingest handler in a stage with two regions: told its fence by FENCE_TABLE_NAME (as lib/regional.ts
 * sets it), it writes this region as the owner and its epoch on every item while the region is active, and writes
 * nothing while it is fenced — never reporting success, so the mapping commits no offset. On DynamoDB Local.
 */
import { CreateTableCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { createFenceTableInput } from '../../functions/contracts/fence-schema.ts';
import { DynamoFenceStore } from '../../functions/stores/fence-store.ts';
import { localClient } from '../../tools/local/dynamodb-local.ts';
import { mskEvent } from '../../tools/local/msk.ts';
import { transferEvent } from '../support/events.ts';
import { type LocalTable, newLocalTable } from '../support/local-table.ts';

let table: LocalTable;
let fence: DynamoFenceStore;
let handler: (event: unknown, context: unknown) => Promise<void>;
const REGION = 'ap-northeast-1';
const context = { getRemainingTimeInMillis: () => 1_000 };

beforeAll(async () => {
  table = await newLocalTable(inject('dynamoEndpoint'));
  const fenceTable = `${table.tableName}-fence`;
  const db = localClient(table.endpoint);
  await db.send(new CreateTableCommand(createFenceTableInput(fenceTable)));
  db.destroy();
  fence = new DynamoFenceStore(table.doc, fenceTable, 4);
  await fence.initialise({
    region: REGION,
    state: 'ACTIVE',
    epoch: 1,
    since: 0,
    by: 'stack',
    reason: 'initial',
    mode: 'INITIAL',
  });
  Object.assign(process.env, {
    AWS_ENDPOINT_URL_DYNAMODB: table.endpoint,
    TABLE_NAME: table.tableName,
    AWS_REGION: REGION,
    FENCE_TABLE_NAME: fenceTable,
    FENCE_SHARDS: '4',
  });
  ({ handler } = (await import('../../functions/ingest/index.ts')) as unknown as { handler: typeof handler });
});

const eventOf = (eventId: string, offset: number) =>
  mskEvent([{ topic: 'banking.transfers', partition: 3, offset, value: transferEvent({ eventId }) }]);

afterAll(() => {
  vi.useRealTimers();
});

describe('the deployed ingest, told its fence', () => {
  it('writes this region as the owner, and its epoch, on the inbox item and every notification', async () => {
    await handler(eventOf('owned-here', 1), context);
    const items = await table.eventItems('owned-here');
    expect(items.length).toBeGreaterThan(1);
    for (const item of items) expect(item).toMatchObject({ owner: REGION, epoch: 1 });
  });

  it('writes nothing while this region is fenced, and fails the batch rather than report it taken', async () => {
    const control = await fence.control(true);
    await fence.fence(
      {
        ...(control as NonNullable<typeof control>),
        state: 'FENCED',
        since: 1,
        by: 'test',
        reason: 'demoted',
        mode: 'CLEAN',
      },
      control,
    );
    // Past the second the claim may trust a cached CONTROL (fence-store.ts): the clock moves, nobody sleeps.
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() + 2_000);
    await expect(handler(eventOf('while-fenced', 2), context)).rejects.toThrow(/fenced/);
    expect(await table.eventItems('while-fenced')).toEqual([]);
  });
});

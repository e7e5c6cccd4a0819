import { LambdaClient, UpdateEventSourceMappingCommand } from '@aws-sdk/client-lambda';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it } from 'vitest';
import type { RegionFence } from '../../functions/commons/region-fence.ts';
import type { FenceControl } from '../../functions/domain/fence.ts';
import type { DynamoFenceStore } from '../../functions/stores/fence-store.ts';
import { keepRegion } from '../../functions/sweeper/keep-region.ts';

const ddb = mockClient(DynamoDBDocumentClient);
const lambda = mockClient(LambdaClient);
afterEach(() => {
  ddb.reset();
  lambda.reset();
});

const control = (region: string, epoch: number, state: 'ACTIVE' | 'FENCED' = 'ACTIVE'): FenceControl => ({
  region,
  state,
  epoch,
  since: 0,
  by: region,
  reason: 'TEST',
  mode: 'CLEAN',
});

/** This region's fence, ACTIVE at epoch 1 until the keeper fences it; the other region's table in the mock. */
function fenceAt(ingestMappingId: string | undefined): RegionFence {
  let own = control('ap-northeast-3', 1);
  const store = {
    control: async () => own,
    fence: async (next: FenceControl) => {
      own = next;
    },
  } as unknown as DynamoFenceStore;
  return {
    region: 'ap-northeast-3',
    store,
    clockMarginMs: 0,
    other: { region: 'ap-northeast-1', fenceTable: 'other-fence', tableName: undefined },
    ingestMappingId,
    lookupTimeoutMs: 1_000,
  };
}

describe("the sweeper's keeper in a stage with two regions", () => {
  it('stops its own ingest mapping through Lambda when it sees the other region active at a higher epoch', async () => {
    ddb.onAnyCommand().resolves({});
    ddb
      .on(GetCommand, { TableName: 'other-fence' })
      .resolves({ Item: { pk: 'CONTROL', ...control('ap-northeast-1', 2) } });
    lambda.on(UpdateEventSourceMappingCommand).resolves({});

    expect(await keepRegion(fenceAt('mapping-1'), 'notifier-test')).toBe(false);

    expect(lambda.commandCalls(UpdateEventSourceMappingCommand).map((c) => c.args[0].input)).toEqual([
      { UUID: 'mapping-1', Enabled: false },
    ]);
  });

  it('calls Lambda for nothing while the other region is not ahead of it', async () => {
    ddb.onAnyCommand().resolves({});
    ddb
      .on(GetCommand, { TableName: 'other-fence' })
      .resolves({ Item: { pk: 'CONTROL', ...control('ap-northeast-1', 1, 'FENCED') } });

    expect(await keepRegion(fenceAt('mapping-1'), 'notifier-test')).toBe(true);

    expect(lambda.calls()).toHaveLength(0);
  });
});

/**
 * `ops promote`, `demote` and `reconcile` on a deployed stage find both regions in one stack's outputs (either region's
 * stack: the other may be lost), never in local defaults, and refuse truthfully when the outputs are not there.
 */
import { CloudFormationClient, DescribeStacksCommand, type Output } from '@aws-sdk/client-cloudformation';
import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { main } from '../../tools/ops/cli.ts';
import { readDeployedRegions } from '../../tools/ops/region-outputs.ts';
import { StackOutputsError } from '../../tools/ops/stack-outputs.ts';
import { documentClientMock } from '../support/aws-mocks.ts';

const cfn = mockClient(CloudFormationClient);
const ddb = documentClientMock();

/** The recovery stack of stage "prod" as CloudFormation describes it, with these outputs changed or removed. */
function recoveryStack(change: Record<string, string | undefined> = {}) {
  const outputs: Record<string, string | undefined> = {
    TableName: 'notifier-prod-notifications',
    RegionName: 'eu-central-1',
    RegionKind: 'recovery',
    FenceTableName: 'notifier-prod-recovery-fence',
    FenceShards: '6',
    SweepShards: '16',
    PeerRegionName: 'eu-west-1',
    PeerStackName: 'notifier-prod',
    PeerFenceTableName: 'notifier-prod-fence',
    ...change,
  };
  const Outputs: Output[] = Object.entries(outputs)
    .filter(([, v]) => v !== undefined)
    .map(([OutputKey, OutputValue]) => ({ OutputKey, OutputValue }));
  return {
    Stacks: [
      {
        StackName: 'notifier-prod-recovery',
        StackStatus: 'UPDATE_COMPLETE' as const,
        Outputs,
        CreationTime: new Date(),
      },
    ],
  };
}

beforeEach(() => {
  cfn.reset();
  ddb.reset();
});

describe("a deployed stage's two regions, from one stack's outputs", () => {
  it("the recovery stack names both regions, both fence tables and the counts: nothing is the tool's default", async () => {
    cfn.on(DescribeStacksCommand, { StackName: 'notifier-prod-recovery' }).resolves(recoveryStack());
    const regions = await readDeployedRegions(new CloudFormationClient({}), 'notifier-prod-recovery');
    expect(regions).toEqual({
      stackName: 'notifier-prod-recovery',
      kind: 'recovery',
      tableName: 'notifier-prod-notifications',
      fenceShards: 6,
      sweepShards: 16,
      primary: { region: 'eu-west-1', fenceTableName: 'notifier-prod-fence' },
      recovery: { region: 'eu-central-1', fenceTableName: 'notifier-prod-recovery-fence' },
    });
  });

  it('a stack not deployed (or asked in the wrong region) is refused, saying where it was asked', async () => {
    const missing = Object.assign(new Error('Stack with id notifier-prod does not exist'), { name: 'ValidationError' });
    cfn.on(DescribeStacksCommand).rejects(missing);
    const read = readDeployedRegions(new CloudFormationClient({}), 'notifier-prod');
    await expect(read).rejects.toThrow(StackOutputsError);
    await expect(read).rejects.toThrow(/stack "notifier-prod" not found.*asked in us-east-1.*AWS_REGION/);
  });

  it('a stage in one region, and a stack deployed before these outputs, are refused by name', async () => {
    const oneRegion = Object.fromEntries(
      [
        'RegionName',
        'RegionKind',
        'FenceTableName',
        'FenceShards',
        'SweepShards',
        'PeerRegionName',
        'PeerStackName',
        'PeerFenceTableName',
      ].map((k) => [k, undefined]),
    );
    cfn
      .on(DescribeStacksCommand)
      .resolvesOnce(recoveryStack(oneRegion))
      .resolvesOnce(recoveryStack({ SweepShards: undefined, PeerStackName: undefined }));
    const client = new CloudFormationClient({});
    await expect(readDeployedRegions(client, 'notifier-prod')).rejects.toThrow(
      /is a stage in one region: it has no fence/,
    );
    await expect(readDeployedRegions(client, 'notifier-prod')).rejects.toThrow(
      /lacks the outputs SweepShards, PeerStackName: deploy the current version/,
    );
  });

  it('outputs it cannot read (a shard count that is not a count) are refused, never guessed', async () => {
    cfn.on(DescribeStacksCommand).resolves(recoveryStack({ FenceShards: 'four' }));
    await expect(readDeployedRegions(new CloudFormationClient({}), 'notifier-prod')).rejects.toThrow(
      /FenceShards "four"/,
    );
  });
});

describe('ops demote --stage on a deployed stage', () => {
  it('reads the fences named by the outputs, shows what it would do and refuses to act, whatever --confirm says', async () => {
    cfn
      .on(DescribeStacksCommand, { StackName: 'notifier-prod' })
      .resolves(recoveryStack({ RegionKind: 'primary', RegionName: 'eu-west-1', PeerRegionName: 'eu-central-1' }));
    ddb.on(GetCommand).resolves({ Item: { pk: 'CONTROL', state: 'ACTIVE', epoch: 1 } });
    ddb.on(QueryCommand).resolves({ Items: [] });
    let out = '';
    const argv = ['demote', '--region', 'eu-west-1', '--stage', 'prod', '--reason', 'drill', '--confirm'];
    const code = await main(argv, (t) => {
      out += t;
    });
    expect(code).toBe(3);
    const shown = JSON.parse(out);
    expect(shown.stage).toEqual({ stack: 'notifier-prod', primary: 'eu-west-1', recovery: 'eu-central-1' });
    expect(shown.refused).toMatch(/acting on a deployed stage is not built.*nothing was changed/);
    const fences = ddb.commandCalls(GetCommand).map((c) => c.args[0].input.TableName);
    expect(new Set(fences)).toEqual(new Set(['notifier-prod-recovery-fence', 'notifier-prod-fence']));
    // The sweep index read in each of the deployed 16 partitions, not the local default's 8.
    const queried = JSON.stringify(
      ddb.commandCalls(QueryCommand).map((c) => c.args[0].input.ExpressionAttributeValues),
    );
    expect(queried).toMatch(/#15"/);
  });

  it('a deployed stage and local endpoints together are refused: one place to act on', async () => {
    await expect(
      main(['demote', '--region', 'x', '--stage', 'prod', '--primary-endpoint', 'http://127.0.0.1:1'], () => undefined),
    ).rejects.toThrow(/say where once/);
  });
});

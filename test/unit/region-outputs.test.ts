/**
 * `ops promote`, `demote` and `reconcile` on a deployed stage find both regions in one stack's outputs (either region's
 * stack: the other may be lost), never in local defaults, and refuse truthfully when the outputs are not there. What
 * they then do on a deployed stage is test/tools/ops-regions-deployed.test.ts.
 */
import { CloudFormationClient, DescribeStacksCommand, type Output } from '@aws-sdk/client-cloudformation';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { main } from '../../tools/ops/cli.ts';
import { readDeployedRegions } from '../../tools/ops/region-outputs.ts';
import { StackOutputsError } from '../../tools/ops/stack-outputs.ts';

const cfn = mockClient(CloudFormationClient);

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
    OperatorApiUrl: 'https://abc123.execute-api.eu-central-1.amazonaws.com/ops/',
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
      operatorApiUrl: 'https://abc123.execute-api.eu-central-1.amazonaws.com/ops/',
      peerStackName: 'notifier-prod',
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
  it('a deployed stage and local endpoints together are refused: one place to act on', async () => {
    await expect(
      main(
        ['demote', '--region', 'eu-west-1', '--stage', 'prod', '--primary-endpoint', 'http://127.0.0.1:1'],
        () => undefined,
      ),
    ).rejects.toThrow(/say where once/);
  });
});

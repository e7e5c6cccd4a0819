/**
 * Where a deployed stage in two regions is, for `ops promote`, `demote` and `reconcile`: read from one of its two
 * stacks' outputs (lib/stack-outputs.ts REGION_STACK_OUTPUTS), never assumed. Either stack names both regions, both
 * fence tables and the shard count, so the region still answering is enough when the other is lost.
 */
import type { CloudFormationClient } from '@aws-sdk/client-cloudformation';
import { REGION_STACK_OUTPUTS, type RegionStackOutputName } from '../../lib/stack-outputs.ts';
import { StackOutputsError, stackOutputValues } from './stack-outputs.ts';

/** One region of the stage as its stack's outputs describe it. */
export interface DeployedRegion {
  readonly region: string;
  readonly fenceTableName: string;
}

export interface DeployedRegions {
  /** The stack read, and which side it is. */
  readonly stackName: string;
  readonly kind: 'primary' | 'recovery';
  /** The global table: one name in both regions. */
  readonly tableName: string;
  readonly fenceShards: number;
  readonly sweepShards: number;
  readonly primary: DeployedRegion;
  readonly recovery: DeployedRegion;
  /** The operator API of the stack read: the region commands for its own region go there. */
  readonly operatorApiUrl: string;
  /** The other region's stack: its operator API acts for the other region. */
  readonly peerStackName: string;
}

const NAMES = Object.keys(REGION_STACK_OUTPUTS) as RegionStackOutputName[];

/**
 * The stage's two regions from `stackName`'s outputs. Refuses, naming what is missing: a stack not deployed (or not
 * in the region asked), a stage in one region (no fence), or a stack deployed before these outputs existed.
 */
export async function readDeployedRegions(
  cloudFormation: CloudFormationClient,
  stackName: string,
): Promise<DeployedRegions> {
  const where = await cloudFormation.config.region();
  let read: Awaited<ReturnType<typeof stackOutputValues>>;
  try {
    read = await stackOutputValues(cloudFormation, stackName);
  } catch (error) {
    if (!(error instanceof StackOutputsError)) throw error;
    throw new StackOutputsError(
      `${error.message} (asked in ${where}: each stack is in its own region, so set AWS_REGION to it, or name the other region's stack with --stack)`,
    );
  }
  const { status, values } = read;
  const missing = [...NAMES, 'TableName', 'OperatorApiUrl'].filter((n) => !values.get(n));
  if (missing.length > 0) {
    const oneRegion = !values.get('FenceTableName') && values.get('TableName');
    throw new StackOutputsError(
      oneRegion
        ? `stack "${stackName}" (${status}) is a stage in one region: it has no fence, and there is no other region to promote`
        : `stack "${stackName}" (${status}) lacks the outputs ${missing.join(', ')}: deploy the current version of both regions' stacks first`,
    );
  }
  const value = (n: string) => values.get(n) as string;
  const kind = value('RegionKind');
  const [shards, sweepShards] = [Number(value('FenceShards')), Number(value('SweepShards'))];
  const count = (n: number) => Number.isInteger(n) && n >= 1;
  if ((kind !== 'primary' && kind !== 'recovery') || !count(shards) || !count(sweepShards)) {
    throw new StackOutputsError(
      `stack "${stackName}" has outputs this tool cannot read (RegionKind "${kind}", FenceShards "${value('FenceShards')}", SweepShards "${value('SweepShards')}"): is it a notifier stack of this version?`,
    );
  }
  const own = { region: value('RegionName'), fenceTableName: value('FenceTableName') };
  const peer = { region: value('PeerRegionName'), fenceTableName: value('PeerFenceTableName') };
  return {
    stackName,
    kind,
    tableName: value('TableName'),
    fenceShards: shards,
    sweepShards,
    primary: kind === 'primary' ? own : peer,
    recovery: kind === 'primary' ? peer : own,
    operatorApiUrl: value('OperatorApiUrl'),
    peerStackName: value('PeerStackName'),
  };
}

/**
 * The region commands on a deployed stage (docs/regions.md "Runbook"): sent to the operator API of the region the
 * command acts in — promote's `--to`, demote's `--region`, reconcile's active region —, signed with the operator's own
 * credentials, so the operator function there acts with its own role and audits the caller AWS verified
 * (functions/operator/region-routes.ts). The stack named tells both regions; when the command acts in the other
 * region, that region's stack (its output PeerStackName) is read there for its API. A failover names the recovery
 * region's stack and acts there: nothing of the lost region is asked.
 *
 * Demote and reconcile wait out Lambda timeouts (minutes); API Gateway answers within 29 s. The function answers
 * `runAgainAt` instead of waiting longer, and this runs the same confirmed command again from then (each run audited)
 * until the report is final.
 */
import { CloudFormationClient } from '@aws-sdk/client-cloudformation';
import type { AwsCredentialIdentityProvider } from '@smithy/types';
import {
  namedRegion,
  OperatorError,
  type RegionCommand,
  type RegionRequest,
  type regions,
} from '../../functions/operator/index.ts';
import { stackNameOf } from '../../lib/settings.ts';
import { UsageError } from '../local/cli.ts';
import { OPS_EXIT } from './command.ts';
import { OperatorApiError, operatorApiCall } from './operator-client.ts';
import { type DeployedRegions, readDeployedRegions } from './region-outputs.ts';
import { stackOutputValues } from './stack-outputs.ts';

export interface RegionApiDeps {
  /** How the operator API is reached (a test's stand-in; by default the network). */
  readonly fetch?: typeof fetch;
  readonly credentials?: AwsCredentialIdentityProvider;
  /** CloudFormation in a region (by default: AWS_REGION's for the stack named, the region's own for its peer). */
  readonly cloudFormation?: (region?: string) => CloudFormationClient;
}

interface Where {
  readonly stage?: string | boolean | undefined;
  readonly stack?: string | boolean | undefined;
  readonly 'primary-endpoint'?: string | boolean | undefined;
  readonly 'recovery-endpoint'?: string | boolean | undefined;
  readonly 'primary-table'?: string | boolean | undefined;
  readonly 'recovery-table'?: string | boolean | undefined;
}

const cloudFormationOf = (deps: RegionApiDeps, region?: string) =>
  deps.cloudFormation?.(region) ?? new CloudFormationClient(region === undefined ? {} : { region });

/** The deployed stage's regions, from its stack's outputs; undefined when the command names local endpoints. */
export async function deployedRegions(v: Where, deps: RegionApiDeps): Promise<DeployedRegions | undefined> {
  const { stage, stack } = v;
  if (stage === undefined && stack === undefined) return undefined;
  const local = (['primary-endpoint', 'recovery-endpoint', 'primary-table', 'recovery-table'] as const).filter(
    (k) => v[k] !== undefined,
  );
  if ((stage !== undefined && stack !== undefined) || local.length > 0) {
    throw new UsageError('say where once: --stage or --stack for a deployed stage, or the local endpoints');
  }
  const name = typeof stack === 'string' ? stack : stackNameOf(String(stage));
  const cloudFormation = cloudFormationOf(deps);
  try {
    return await readDeployedRegions(cloudFormation, name);
  } finally {
    cloudFormation.destroy();
  }
}

/** The operator API of the region the command acts in: the stack's own, or its peer's, read in the peer's region. */
async function operatorApiOf(d: DeployedRegions, acting: string, deps: RegionApiDeps): Promise<string> {
  const own = d.kind === 'primary' ? d.primary.region : d.recovery.region;
  if (acting === own) return d.operatorApiUrl;
  const cloudFormation = cloudFormationOf(deps, acting);
  try {
    const { values } = await stackOutputValues(cloudFormation, d.peerStackName);
    const url = values.get('OperatorApiUrl');
    if (url === undefined) throw new UsageError(`stack "${d.peerStackName}" in ${acting} names no OperatorApiUrl`);
    return url;
  } finally {
    cloudFormation.destroy();
  }
}

/** Runs of one confirmed command at most: demote waits about 3 minutes, reconcile about 2, 15 s a run. */
const MAX_RUNS = 30;
/** After the instant the function named, this much more: its clock and this machine's may differ. */
const RUN_AGAIN_MARGIN_MS = 2_000;

export async function actDeployed(
  name: RegionCommand,
  request: RegionRequest[RegionCommand],
  reason: string | undefined,
  d: DeployedRegions,
  io: { readonly show: (doc: object) => void; readonly clock: regions.Clock; readonly deps: RegionApiDeps },
): Promise<number> {
  const regions = [d.primary.region, d.recovery.region];
  const named = namedRegion(request);
  if (!regions.includes(named)) throw new UsageError(`name one of the two regions: ${regions.join(', ')}`);
  const acting = name === 'reconcile' ? (regions.find((r) => r !== named) as string) : named;
  const url = await operatorApiOf(d, acting, io.deps);
  const call = operatorApiCall({
    url,
    region: acting,
    ...(io.deps.fetch === undefined ? {} : { fetch: io.deps.fetch }),
    ...(io.deps.credentials === undefined ? {} : { credentials: io.deps.credentials }),
  });
  const stage = { stack: d.stackName, primary: d.primary.region, recovery: d.recovery.region, actsIn: acting };
  let confirming = false;
  try {
    const preview = await call('POST', `regions/${name}/preview`, request);
    if (reason === undefined) {
      io.show({
        command: name,
        stage,
        wouldDo: preview.plan,
        ...(preview.wouldRefuse === undefined
          ? { toAct: 'add --reason "…" --confirm' }
          : { refused: preview.wouldRefuse }),
      });
      return OPS_EXIT.REFUSED;
    }
    let runs = 0;
    confirming = true;
    for (;;) {
      runs++;
      const answer = await call('POST', `regions/${name}/confirm`, { request, reason });
      const again = answer.runAgainAt as number | undefined;
      if (again === undefined || runs >= MAX_RUNS) return reported(name, stage, answer.outcome, runs, io.show);
      await io.clock.sleep(Math.max(0, again - io.clock.now()) + RUN_AGAIN_MARGIN_MS);
    }
  } catch (error) {
    if (error instanceof OperatorError) {
      io.show({ command: name, stage, refused: error.refusal });
      return OPS_EXIT.REFUSED;
    }
    if (error instanceof OperatorApiError && error.status === 504) {
      io.show({
        command: name,
        stage,
        unknown: confirming
          ? `${error.message}. API Gateway stopped waiting after 29 s; the operator function may still be acting, audited. Each step is idempotent: run the same command again to see where it stands (npm run ops -- audit shows its outcome).`
          : `${error.message}. API Gateway stopped waiting after 29 s for the preview, which reads only: nothing was done. Run the same command again.`,
      });
      return OPS_EXIT.FAILED;
    }
    throw error;
  }
}

/** The final report; a mapping that could not be switched is said first, with what to do, and exits 1. */
function reported(name: string, stage: object, outcome: object, runs: number, show: (doc: object) => void): number {
  const intake = (outcome as { intake?: regions.IntakeReport }).intake;
  const failed = intake?.failed;
  show({
    command: name,
    stage,
    ...(failed === undefined
      ? {}
      : {
          attention: `done, but the ingest mapping ${intake?.mapping} was not switched ${intake?.enabled ? 'on' : 'off'} (${failed.error}): ${failed.doByHand}`,
        }),
    outcome,
    runs,
  });
  return failed === undefined ? OPS_EXIT.OK : OPS_EXIT.FAILED;
}

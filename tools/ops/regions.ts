/**
 * `npm run ops -- promote | demote | reconcile`: the operator's commands for two regions (docs/regions.md "Runbook").
 * Each shows first what it would do and exits 3; with --reason and --confirm it acts, audited (its record before,
 * its outcome after), and prints its report. The work is the product's (functions/operator/promote.ts, reconcile.ts).
 *
 * Where: a deployed stage (`--stage`, or `--stack` for the recovery region's stack when the primary's region is
 * lost), every name, region and count from that stack's outputs (tools/ops/region-outputs.ts); or, locally, two
 * DynamoDB endpoints and tables, one per region (`--primary-endpoint`, `--primary-table`, `--recovery-endpoint`,
 * `--recovery-table`; each region's fence table is `<table>-fence`). On a deployed stage the commands show what they
 * would do and refuse to act: an action is audited in the evidence store and writes items, which only the stage's
 * operator function may (the evidence bucket's and the table's guards), and no operator API route runs these yet.
 */
import { CloudFormationClient } from '@aws-sdk/client-cloudformation';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DEFAULT_CHANNEL_POLICIES } from '../../functions/domain/delivery-policy.ts';
import { type FenceControl, fenceShardCount } from '../../functions/domain/fence.ts';
import { DEFAULT_SWEEP_PLACEMENT } from '../../functions/domain/sweep-index.ts';
import { regions } from '../../functions/operator/index.ts';
import { EvidenceAuditLog } from '../../functions/stores/audit-log.ts';
import { FileEvidenceStore } from '../../functions/stores/evidence-store.ts';
import { CONTROL_CACHE_MS, DynamoFenceStore } from '../../functions/stores/fence-store.ts';
import { DynamoSuccessorStore } from '../../functions/stores/successor-store.ts';
import { stackNameOf } from '../../lib/settings.ts';
import { parseCommandLine, UsageError } from '../local/cli.ts';
import { UNRECORDED_RUN_EVIDENCE } from '../local/run-dir.ts';
import { OPS_EXIT } from './command.ts';
import { localIdentity } from './connect.ts';
import { type DeployedRegions, readDeployedRegions } from './region-outputs.ts';

export const REGION_COMMANDS = ['promote', 'demote', 'reconcile'] as const;

const OPTIONS = {
  to: { type: 'string' },
  region: { type: 'string' },
  from: { type: 'string' },
  'from-epoch': { type: 'string' },
  'old-region-unreachable': { type: 'boolean', default: false },
  cut: { type: 'string' },
  stage: { type: 'string' },
  stack: { type: 'string' },
  primary: { type: 'string', default: 'ap-northeast-1' },
  recovery: { type: 'string', default: 'ap-northeast-3' },
  'primary-endpoint': { type: 'string' },
  'primary-table': { type: 'string' },
  'recovery-endpoint': { type: 'string' },
  'recovery-table': { type: 'string' },
  'evidence-dir': { type: 'string' },
  reason: { type: 'string' },
  confirm: { type: 'boolean', default: false },
  json: { type: 'boolean', default: false },
} as const;

const USAGE = `
Usage: npm run ops -- promote --to <region> --old-region-unreachable --from-epoch <n> [--cut <ISO time>] <where> [--reason "…" --confirm]
       npm run ops -- demote --region <region> <where> [--reason "…" --confirm]
       npm run ops -- reconcile --from <old region> <where> [--reason "…" --confirm]

  <where>  --stage S (the stack notifier-S, asked in AWS_REGION) or --stack NAME (notifier-S-recovery, when the
           primary's region is lost): regions, tables and counts from its outputs. Shows only: acting on a
           deployed stage is not built (it needs the operator function, which alone may audit and write items).
           Locally: --primary-endpoint URL --primary-table T --recovery-endpoint URL --recovery-table T
           [--primary ap-northeast-1] [--recovery ap-northeast-3] [--evidence-dir DIR]

Without --confirm: what it would do, and exit 3. With --reason and --confirm: done, audited, reported.
`;

type Values = { readonly [K in keyof typeof OPTIONS]?: string | boolean };

const INGEST_TIMEOUT_MS = 120_000;
const DISPATCH_TIMEOUT_MS = 60_000;

const REAL_CLOCK: regions.Clock = { now: Date.now, sleep: (ms: number) => new Promise<void>((r) => setTimeout(r, ms)) };

export async function regionsMain(
  argv: string[],
  print: (text: string) => void,
  clock: regions.Clock = REAL_CLOCK,
): Promise<number> {
  const { values, positionals } = parseCommandLine({ usage: USAGE, allowPositionals: true, options: OPTIONS }, argv);
  const [name] = positionals;
  const v = values as Values;
  const deployed = await deployedRegions(v);
  const sides = deployed === undefined ? connectRegions(v) : connectDeployed(deployed);
  const side = (region: string | boolean | undefined) => {
    const found = sides.find((s) => s.region === region);
    if (found === undefined)
      throw new UsageError(`name one of the two regions: ${sides.map((s) => s.region).join(', ')}`);
    return found;
  };
  const show = (doc: object) => print(`${JSON.stringify(doc, null, 2)}\n`);
  const { plan, refusal } = await planOf(name, v, side, sides);
  const refused = refusal && { code: refusal.code, message: refusal.message };
  if (deployed !== undefined) {
    show({
      command: name,
      stage: { stack: deployed.stackName, primary: deployed.primary.region, recovery: deployed.recovery.region },
      wouldDo: plan,
      ...(refused === undefined ? {} : { wouldRefuse: refused }),
      refused:
        'acting on a deployed stage is not built: the action must be audited in the evidence store and write items, which only the stage operator function may (docs/regions.md "Runbook"); nothing was changed',
    });
    return OPS_EXIT.REFUSED;
  }
  if (!v.confirm || typeof v.reason !== 'string' || v.reason.trim() === '') {
    // The confirm asks the same rule of the fences: a preview never invites what the confirm would refuse.
    show({
      command: name,
      wouldDo: plan,
      ...(refused === undefined ? { toAct: 'add --reason "…" --confirm' } : { refused }),
    });
    return OPS_EXIT.REFUSED;
  }
  try {
    show(await act(name, v, side, sides, plan, clock));
  } catch (error) {
    // Audited REFUSED (regions.audited); said as the preview says it, and exit 3.
    if (!(error instanceof regions.RegionRefused)) throw error;
    show({ command: name, refused: { code: error.code, message: error.message } });
    return OPS_EXIT.REFUSED;
  }
  return OPS_EXIT.OK;
}

/** The confirmed command, audited: its record before, its outcome (done, refused or failed) after. */
async function act(
  name: string | undefined,
  v: Values,
  side: (r: string | boolean | undefined) => regions.RegionSide,
  sides: readonly regions.RegionSide[],
  plan: Record<string, unknown>,
  clock: regions.Clock,
): Promise<object> {
  const audit = new EvidenceAuditLog(new FileEvidenceStore(String(v['evidence-dir'] ?? UNRECORDED_RUN_EVIDENCE)));
  // Who acts: this machine's login, as the local operator commands record it (no name typed on the command line).
  const identity = localIdentity();
  const by = identity.principal;
  const reason = String(v.reason);
  const step = <T extends object>(
    action: 'PROMOTE' | 'DEMOTE' | 'RECONCILE',
    target: string,
    perform: () => Promise<T>,
  ) => regions.audited(audit, clock.now, { action, by: identity, reason, target, plan, perform });
  if (name === 'promote') {
    const to = side(v.to);
    const from = sides.find((s) => s !== to) as regions.RegionSide;
    const request = {
      by,
      reason,
      from: from.region,
      fromEpoch: Number(v['from-epoch']),
      ...(typeof v.cut === 'string' ? { cutAt: Date.parse(v.cut) } : {}),
      secondCopy: [],
      placement: DEFAULT_SWEEP_PLACEMENT,
    };
    return step('PROMOTE', to.region, () => regions.promoteFailover(to, request, clock));
  } else if (name === 'demote') {
    const request = { by, reason, ingestTimeoutMs: INGEST_TIMEOUT_MS, dispatchTimeoutMs: DISPATCH_TIMEOUT_MS };
    return step('DEMOTE', side(v.region).region, () => regions.demote(side(v.region), request, clock));
  }
  const from = side(v.from);
  const to = sides.find((s) => s !== from) as regions.RegionSide;
  const request = {
    by,
    reason,
    policies: DEFAULT_CHANNEL_POLICIES,
    secondCopy: [],
    placement: DEFAULT_SWEEP_PLACEMENT,
    lookupMs: 3_600_000,
    settleAfterMs: INGEST_TIMEOUT_MS + CONTROL_CACHE_MS,
  };
  return step('RECONCILE', from.region, () => regions.reconcile(from, to, request, clock));
}

/**
 * What the command would do: both fences as they are, and what is unfinished in each replica; and the refusal the
 * confirm would give, by the same rule, where the fences it needs answered.
 */
async function planOf(
  name: string | undefined,
  v: Values,
  side: (r: string | boolean | undefined) => regions.RegionSide,
  sides: readonly regions.RegionSide[],
): Promise<{ plan: Record<string, unknown>; refusal?: regions.RegionRefused }> {
  if (name === 'promote') {
    if (v['old-region-unreachable'] !== true) {
      throw new UsageError('only a failover is built yet: say --old-region-unreachable (docs/regions.md "Failover")');
    }
    if (!Number.isInteger(Number(v['from-epoch']))) throw new UsageError('--from-epoch: the old region’s epoch');
    side(v.to);
  } else if (name === 'demote') side(v.region);
  else if (name === 'reconcile') side(v.from);
  else throw new UsageError(`unknown command ${String(name)}`);
  // A region that does not answer is shown so, not a failure of the preview: a failover is for a region lost.
  const orUnreachable = async <T>(read: () => Promise<T>) =>
    read().catch((error: Error) => ({ unreachable: `${error.name}: ${error.message}` }));
  const fences = await Promise.all(
    sides.map(async (s) => [s.region, await orUnreachable(() => s.fence.control(true))] as const),
  );
  const unfinished = await Promise.all(
    sides.map(async (s) => {
      const count = async () => {
        let n = 0;
        for await (const _ of s.store.unfinished()) n++;
        return n;
      };
      return [s.region, await orUnreachable(count)] as const;
    }),
  );
  const plan = { fences: Object.fromEntries(fences), unfinished: Object.fromEntries(unfinished) };
  const fenceOf = (region: string) => {
    const read = fences.find(([r]) => r === region)?.[1];
    return read !== undefined && 'unreachable' in read ? 'unreachable' : read;
  };
  const other = (region: string) => sides.find((s) => s.region !== region)?.region ?? '';
  const refusal = refusalOf(name, v, fenceOf, other);
  return refusal === undefined ? { plan } : { plan, refusal };
}

function refusalOf(
  name: string | undefined,
  v: Values,
  fenceOf: (region: string) => FenceControl | undefined | 'unreachable',
  other: (region: string) => string,
): regions.RegionRefused | undefined {
  const region = String(name === 'promote' ? v.to : name === 'demote' ? v.region : v.from);
  const own = fenceOf(region);
  // A fence that did not answer cannot be judged here; the confirm reads it again and refuses then if it must.
  if (own === 'unreachable') return undefined;
  if (name === 'promote') return regions.promoteRefusal(region, own, other(region));
  if (name === 'demote') return regions.demoteRefusal(region, own);
  const active = fenceOf(other(region));
  return active === 'unreachable' ? undefined : regions.reconcileRefusal(region, other(region), own, active);
}

/** The deployed stage's regions, from its stack's outputs; undefined when the command names local endpoints. */
async function deployedRegions(v: Values): Promise<DeployedRegions | undefined> {
  const { stage, stack } = v;
  if (stage === undefined && stack === undefined) return undefined;
  const local = (['primary-endpoint', 'recovery-endpoint', 'primary-table', 'recovery-table'] as const).filter(
    (k) => v[k] !== undefined,
  );
  if ((stage !== undefined && stack !== undefined) || local.length > 0) {
    throw new UsageError('say where once: --stage or --stack for a deployed stage, or the local endpoints');
  }
  const name = typeof stack === 'string' ? stack : stackNameOf(String(stage));
  const cloudFormation = new CloudFormationClient({});
  try {
    return await readDeployedRegions(cloudFormation, name);
  } finally {
    cloudFormation.destroy();
  }
}

/** Each region's replica and fence, read with this machine's AWS credentials in that region. */
function connectDeployed(d: DeployedRegions): regions.RegionSide[] {
  return [d.primary, d.recovery].map((side) => {
    const doc = DynamoDBDocumentClient.from(new DynamoDBClient({ region: side.region }), {
      marshallOptions: { removeUndefinedValues: true },
    });
    return {
      region: side.region,
      fence: new DynamoFenceStore(doc, side.fenceTableName, d.fenceShards),
      store: new DynamoSuccessorStore(doc, d.tableName, d.sweepShards),
      intake: {
        enable: async () => refuseIntake(),
        disable: async () => refuseIntake(),
      },
    };
  });
}

const refuseIntake = (): never => {
  throw new Error("switching a deployed stage's ingest mapping is not built: ops refuses to act on a deployed stage");
};

function connectRegions(v: Values): regions.RegionSide[] {
  return (['primary', 'recovery'] as const).map((which) => {
    const endpoint = v[`${which}-endpoint`];
    const table = v[`${which}-table`];
    if (typeof endpoint !== 'string' || typeof table !== 'string') {
      throw new UsageError(`say where the ${which} region is: --${which}-endpoint URL --${which}-table NAME`);
    }
    const doc = DynamoDBDocumentClient.from(
      new DynamoDBClient({
        endpoint,
        region: 'us-east-1',
        credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      }),
      { marshallOptions: { removeUndefinedValues: true } },
    );
    return {
      region: String(v[which]),
      fence: new DynamoFenceStore(doc, `${table}-fence`, fenceShardCount(0)),
      store: new DynamoSuccessorStore(doc, table, DEFAULT_SWEEP_PLACEMENT.sweepShards),
      // Locally there is no event source mapping to switch; a deployed stage's is switched by the stack's outputs.
      intake: { enable: async () => undefined, disable: async () => undefined },
    };
  });
}

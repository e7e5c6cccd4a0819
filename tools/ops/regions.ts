/**
 * `npm run ops -- promote | demote | reconcile`: the operator's commands for two regions (docs/regions.md "Runbook").
 * Each shows first what it would do and exits 3; with --reason and --confirm it acts, audited (its record before,
 * its outcome after), and prints its report. The work is the product's (functions/operator/region-commands.ts).
 *
 * Where: a deployed stage (`--stage`, or `--stack` for the recovery region's stack when the primary's region is
 * lost), every name and region from that stack's outputs (tools/ops/region-outputs.ts); the command goes to the
 * operator API of the region it acts in — promote's, demote's, reconcile's active region — signed with the operator's
 * own credentials, and the operator function there acts and audits (tools/ops/region-api.ts). Or, locally, two
 * DynamoDB endpoints and tables, one per region (`--primary-endpoint`, `--primary-table`, `--recovery-endpoint`,
 * `--recovery-table`; each region's fence table is `<table>-fence`), acted on in this process.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DEFAULT_CHANNEL_POLICIES } from '../../functions/domain/delivery-policy.ts';
import { fenceShardCount } from '../../functions/domain/fence.ts';
import { DEFAULT_SWEEP_PLACEMENT } from '../../functions/domain/sweep-index.ts';
import {
  isRegionCommand,
  parseRegionRequest,
  REGION_COMMANDS,
  type RegionCommand,
  type RegionCommandSettings,
  type RegionRequest,
  regionConfirm,
  regionPreview,
  regions,
  scopeProblem,
} from '../../functions/operator/index.ts';
import { EvidenceAuditLog } from '../../functions/stores/audit-log.ts';
import { FileEvidenceStore } from '../../functions/stores/evidence-store.ts';
import { CONTROL_CACHE_MS, DynamoFenceStore } from '../../functions/stores/fence-store.ts';
import { DynamoSuccessorStore } from '../../functions/stores/successor-store.ts';
import { parseCommandLine, UsageError } from '../local/cli.ts';
import { UNRECORDED_RUN_EVIDENCE } from '../local/run-dir.ts';
import { OPS_EXIT } from './command.ts';
import { localIdentity } from './connect.ts';
import { actDeployed, deployedRegions, type RegionApiDeps } from './region-api.ts';

export { REGION_COMMANDS };

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
           primary's region is lost): the regions from its outputs; the command is sent, signed with your AWS
           credentials, to the operator API of the region it acts in (promote: --to; demote: --region;
           reconcile: the active region), whose operator function acts and audits it.
           Locally: --primary-endpoint URL --primary-table T --recovery-endpoint URL --recovery-table T
           [--primary ap-northeast-1] [--recovery ap-northeast-3] [--evidence-dir DIR]

Without --confirm: what it would do, and exit 3. With --reason and --confirm: done, audited, reported (exit 1 when
the region's ingest mapping could not be switched: the report says what to do by hand).
`;

type Values = { readonly [K in keyof typeof OPTIONS]?: string | boolean };

const INGEST_TIMEOUT_MS = 120_000;

/** Locally: the deployed functions' timeouts, the default placement, no second copies. */
const LOCAL_SETTINGS: RegionCommandSettings = {
  ingestTimeoutMs: INGEST_TIMEOUT_MS,
  dispatchTimeoutMs: 60_000,
  settleAfterMs: INGEST_TIMEOUT_MS + CONTROL_CACHE_MS,
  lookupMs: 3_600_000,
  placement: DEFAULT_SWEEP_PLACEMENT,
  secondCopy: [],
  policies: DEFAULT_CHANNEL_POLICIES,
};

const REAL_CLOCK: regions.Clock = { now: Date.now, sleep: (ms: number) => new Promise<void>((r) => setTimeout(r, ms)) };

export async function regionsMain(
  argv: string[],
  print: (text: string) => void,
  clock: regions.Clock = REAL_CLOCK,
  deps: RegionApiDeps = {},
): Promise<number> {
  const { values, positionals } = parseCommandLine({ usage: USAGE, allowPositionals: true, options: OPTIONS }, argv);
  const [name] = positionals;
  const v = values as Values;
  if (!isRegionCommand(name)) throw new UsageError(`unknown command ${String(name)}`);
  const request = requestOf(name, v);
  const show = (doc: object) => print(`${JSON.stringify(doc, null, 2)}\n`);
  const deployed = await deployedRegions(v, deps);
  const given = typeof v.reason === 'string' && v.reason.trim() !== '';
  // --confirm alone would only preview: say what is missing rather than act as if it were not asked.
  if (v.confirm === true && !given)
    throw new UsageError(`${name} --confirm needs --reason "…": say why (the audit keeps it)`);
  const reason = given && v.confirm === true ? (v.reason as string) : undefined;
  if (deployed !== undefined) return actDeployed(name, request, reason, deployed, { show, clock, deps });
  const sides = connectRegions(v);
  const problem = scopeProblem(name, request, { sides });
  if (problem !== undefined) throw new UsageError(problem);
  const { plan, refusal } = await regionPreview(name, request, sides, clock.now());
  const refused = refusal && { code: refusal.code, message: refusal.message };
  if (reason === undefined) {
    // The confirm asks the same rule of the fences: a preview never invites what the confirm would refuse.
    show({
      command: name,
      wouldDo: plan,
      ...(refused === undefined ? { toAct: 'add --reason "…" --confirm' } : { refused }),
    });
    return OPS_EXIT.REFUSED;
  }
  const audit = new EvidenceAuditLog(new FileEvidenceStore(String(v['evidence-dir'] ?? UNRECORDED_RUN_EVIDENCE)));
  try {
    // Who acts: this machine's login, as the local operator commands record it (no name typed on the command line).
    const by = localIdentity();
    show(await regionConfirm(name, request, sides, { by, reason, plan, audit, clock, settings: LOCAL_SETTINGS }));
  } catch (error) {
    // Audited REFUSED (regions.audited); said as the preview says it, and exit 3.
    if (!(error instanceof regions.RegionRefused)) throw error;
    show({ command: name, refused: { code: error.code, message: error.message } });
    return OPS_EXIT.REFUSED;
  }
  return OPS_EXIT.OK;
}

/** The command line's words as the command's request (functions/operator/region-commands.ts), checked as it is. */
function requestOf(name: RegionCommand, v: Values): RegionRequest[RegionCommand] {
  let body: Record<string, unknown>;
  if (name === 'promote') {
    if (v['old-region-unreachable'] !== true) {
      throw new UsageError('only a failover is built yet: say --old-region-unreachable (docs/regions.md "Failover")');
    }
    const fromEpoch = Number(v['from-epoch']);
    if (v['from-epoch'] === undefined || !Number.isInteger(fromEpoch)) {
      throw new UsageError('--from-epoch: the old region’s epoch');
    }
    const cut = typeof v.cut === 'string' ? Date.parse(v.cut) : undefined;
    if (cut !== undefined && Number.isNaN(cut)) throw new UsageError(`--cut: an ISO time, got "${String(v.cut)}"`);
    body = {
      to: v.to,
      oldRegionUnreachable: true,
      fromEpoch,
      ...(cut === undefined ? {} : { cutAt: new Date(cut).toISOString() }),
    };
  } else body = name === 'demote' ? { region: v.region } : { from: v.from };
  const parsed = parseRegionRequest(name, body);
  if (!parsed.ok) throw new UsageError(`${name}: ${parsed.problem}`);
  return parsed.request;
}

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
      // Locally there is no event source mapping to switch; a deployed region's operator switches its own.
      intake: { enable: async () => undefined, disable: async () => undefined },
    };
  });
}

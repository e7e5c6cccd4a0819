/**
 * The region commands over HTTP (docs/regions.md "Runbook"), beside the actions' routes (routes.ts): a route of their
 * own, because they are not an action on one customer's notice. The actions' preview fingerprints what it read and the
 * confirm refuses when that changed — a region's fence and backlog change every second of an incident, and a promotion
 * refused as CHANGED is a failover that does not happen; and they act on two regions' fences and replicas, not on the
 * operator's ports. Who may call these routes the operator API's resource policy says (settings
 * `regionCommandPrincipals`, lib/operator-api.ts), and no second approver is asked (docs/regions.md "Who may promote").
 *
 *   POST /regions/{promote|demote|reconcile}/preview   body: the request          → 200 { plan, wouldRefuse? }
 *   POST /regions/{promote|demote|reconcile}/confirm   body: { request, reason }  → 200 { outcome, runAgainAt? }
 *
 * A refusal answers { ok: false, refusal: { code, message } }: 400 INVALID (the request, the reason, or a region not
 * this operator's to act in), 404 (a stage in one region), 409 ALREADY_ACTIVE, FROM_EPOCH_BEHIND, NOT_DEMOTED,
 * NOT_SUCCESSOR, NO_FENCE.
 */
import type { VerifiedIdentity } from '../domain/identity.ts';
import { refusal } from '../domain/refusal.ts';
import type { AuditLog } from '../stores/audit-log.ts';
import type { Clock, RegionSide } from './promote.ts';
import {
  isRegionCommand,
  parseRegionRequest,
  REGION_COMMANDS,
  type RegionCommand,
  type RegionCommandScope,
  type RegionCommandSettings,
  RegionRefused,
  regionConfirm,
  regionPreview,
  runAgainAt,
  scopeProblem,
} from './region-commands.ts';
import type { HttpAnswer, HttpRequest } from './routes.ts';

export interface RegionCommands {
  /** The stage's two regions as the confirm reaches them; `acting` is this operator's own region. */
  readonly scope: RegionCommandScope & { readonly acting: string };
  /** The same regions as the preview reads them: the other region asked once, briefly (it may be lost). */
  readonly glance: readonly RegionSide[];
  readonly audit: AuditLog;
  readonly clock: Clock;
  readonly settings: RegionCommandSettings;
}

const invalid = (message: string): HttpAnswer => ({
  status: 400,
  body: { ok: false, refusal: refusal('INVALID', message) },
});

/** Answers a request under /regions; undefined for any other path (the actions' routes answer those). */
export async function answerRegions(
  commands: RegionCommands | undefined,
  identity: VerifiedIdentity,
  r: HttpRequest,
): Promise<HttpAnswer | undefined> {
  const parts = r.path.split('/').filter((p) => p !== '');
  if (parts[0] !== 'regions') return undefined;
  const [, command, step] = parts;
  if (commands === undefined) {
    const message = 'this stage runs in one region: it has no region commands';
    return { status: 404, body: { ok: false, refusal: refusal('NOT_FOUND', message) } };
  }
  if (r.method !== 'POST' || parts.length !== 3 || (step !== 'preview' && step !== 'confirm')) {
    return { status: 404, body: { ok: false, refusal: refusal('NOT_FOUND', `no route ${r.method} ${r.path}`) } };
  }
  if (!isRegionCommand(command)) return invalid(`no region command ${command}: one of ${REGION_COMMANDS.join(', ')}`);
  const body = (typeof r.body === 'object' && r.body !== null ? r.body : {}) as Record<string, unknown>;
  const reason = typeof body.reason === 'string' ? body.reason : '';
  // A confirm refused before the command runs is still someone's attempt to move a region: audited with its caller.
  const refuse = async (message: string) => {
    if (step === 'confirm') await auditRefused(commands, identity, command, reason, message);
    return invalid(message);
  };
  const parsed = parseRegionRequest(command, step === 'preview' ? r.body : body.request);
  if (!parsed.ok) return refuse(`${command}: ${parsed.problem}`);
  const problem = scopeProblem(command, parsed.request, commands.scope);
  if (problem !== undefined) return refuse(problem);
  const { plan, refusal: wouldRefuse } = await regionPreview(
    command,
    parsed.request,
    commands.glance,
    commands.clock.now(),
  );
  const refused = wouldRefuse && { code: wouldRefuse.code, message: wouldRefuse.message };
  if (step === 'preview') {
    return { status: 200, body: { ok: true, command, acting: commands.scope.acting, plan, wouldRefuse: refused } };
  }
  if (reason.trim() === '') return refuse('say why: every region command needs a reason');
  try {
    const outcome = await regionConfirm(command, parsed.request, commands.scope.sides, {
      by: identity,
      reason,
      plan,
      audit: commands.audit,
      clock: commands.clock,
      settings: commands.settings,
    });
    const again = runAgainAt(outcome);
    return { status: 200, body: { ok: true, outcome, ...(again === undefined ? {} : { runAgainAt: again }) } };
  } catch (error) {
    if (!(error instanceof RegionRefused)) throw error;
    return { status: 409, body: { ok: false, refusal: { code: error.code, message: error.message } } };
  }
}

/** A confirm refused INVALID before its command ran: its record (the caller, the region it was sent to) and outcome. */
async function auditRefused(
  commands: RegionCommands,
  by: VerifiedIdentity,
  command: RegionCommand,
  reason: string,
  message: string,
): Promise<void> {
  const now = commands.clock.now();
  const action = command.toUpperCase() as 'PROMOTE' | 'DEMOTE' | 'RECONCILE';
  const details = { surface: 'operator API', acting: commands.scope.acting };
  const entry = await commands.audit.record({ action, by, reason, target: commands.scope.acting, details }, now);
  await commands.audit.recordOutcome(
    entry.key,
    { result: 'REFUSED', details: { code: 'INVALID', message } },
    commands.clock.now(),
  );
}

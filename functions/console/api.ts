/**
 * The console's API, one answer per route (functions/contracts/console-routes.ts): check the caller may, read the
 * request body, call the operator's use case, answer JSON. Every refusal says why in words a person reads: not signed
 * in (401), not allowed (403), a request that names nothing (400), nothing by that id (404), an action the system
 * refuses (409, with the operator's refusal code and message).
 */
import * as z from 'zod/mini';
import type { ApiRoute, ApiRouteName } from '../contracts/console-routes.ts';
import type { NoticeCard, PreviewAnswer, ProposalsAnswer } from '../contracts/console-views.ts';
import type { ApprovalPolicy, Proposal } from '../domain/approval.ts';
import type { AuditAction, AuditStep } from '../domain/audit.ts';
import { sameIdentity, type VerifiedIdentity } from '../domain/identity.ts';
import { parseNotificationId } from '../domain/keys.ts';
import { refusal } from '../domain/refusal.ts';
import { OperatorError } from '../operator/action.ts';
import { asCaller, type Operations, type ProposalView } from '../operator/operations.ts';
import type { OperatorPorts } from '../operator/ports.ts';
import { refusalAnswer } from '../operator/routes.ts';
import { OUT_OF_DATE } from '../stores/event-store.ts';
import type { Caller } from './caller.ts';
import { decisionRefusalWords, personName, whoApproves } from './proposal-words.ts';
import {
  auditTrail,
  CURSOR_MAX_CHARS,
  cursorOf,
  customerPage,
  eventPage,
  handedOver,
  isUnknown,
  noticeCard,
  refusalWords,
  sentMessages,
} from './views.ts';
import { CHANNEL_WORDS, resendShown } from './words.ts';

export interface ApiAnswer {
  readonly status: number;
  readonly body: unknown;
}

/** What the console's API acts through: the operator's reads and the operations every operator surface calls. */
export interface ConsoleDeps {
  readonly ports: OperatorPorts;
  readonly ops: Operations;
}

/** How far back the console reads the audit trail of a customer. */
export const AUDIT_DAYS = 90;
const DAY_MS = 86_400_000;

const id = (max: number) => z.string().check(z.minLength(1), z.maxLength(max));
/**
 * Scripts written without spaces between words (Japanese, Chinese, Thai): there a few words are a few characters, and
 * counting spaces would refuse every reason a Japanese support desk writes.
 */
const UNSPACED_SCRIPT = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}]/u;
const fewWords = (v: string) =>
  UNSPACED_SCRIPT.test(v) ? [...v].length >= 4 : v.length >= 8 && v.split(/\s+/).length >= 2;
/** A reason a colleague or an auditor can read later: a few words (a case number helps), never "x" or "ok". */
const reason = z
  .string()
  .check(
    z.trim(),
    z.minLength(1, 'say why'),
    z.maxLength(1000),
    z.refine(fewWords, 'say why in a few words (a case number helps)'),
  );
const notificationId = id(200).check(z.refine((v) => parseNotificationId(v) !== undefined, 'not a notice id'));
/** A resend as the console asks for one: a second copy names the provider's message id it knowingly repeats. */
const resendRequest = { notificationId, despiteAccepted: z.optional(id(200)) };

const BODIES = {
  me: z.unknown(),
  customer: z.object({ userId: id(128), older: z.optional(id(CURSOR_MAX_CHARS * 2)) }),
  event: z.object({ eventId: id(128) }),
  notice: z.object({ notificationId }),
  reveal: z.object({ notificationId, reason }),
  proposals: z.object({ userId: z.optional(id(128)) }),
  preview: z.object(resendRequest),
  propose: z.object({ ...resendRequest, reason, fingerprint: z.optional(id(200)) }),
  decide: z.object({ proposalId: id(100), decision: z.enum(['APPROVE', 'REJECT']), reason }),
  withdraw: z.object({ proposalId: id(100), reason }),
} satisfies Record<ApiRouteName, z.ZodMiniType>;

type Body<N extends ApiRouteName> = z.infer<(typeof BODIES)[N]>;
type Handlers = { [N in ApiRouteName]: (body: Body<N>, caller: Caller, deps: ConsoleDeps) => Promise<ApiAnswer> };

const okJson = (body: unknown): ApiAnswer => ({ status: 200, body });
const problem = (status: number, message: string, code?: string): ApiAnswer => ({
  status,
  body: { error: { message, ...(code === undefined ? {} : { code }) } },
});

/** The identity the authorizer verified, as the operations and the audit take it. */
export const identityOf = (caller: Caller): VerifiedIdentity => ({
  principal: caller.principal,
  verifiedBy: caller.verifiedBy,
  person: caller.person,
  display: caller.name,
});
const as = (caller: Caller, deps: ConsoleDeps) => asCaller(deps.ops, identityOf(caller));
const channelOf = (notificationId: string) => parseNotificationId(notificationId)?.channel;
const resendOf = (b: { notificationId: string; despiteAccepted?: string | undefined }) => ({
  notificationId: b.notificationId,
  ...(b.despiteAccepted === undefined ? {} : { despiteAccepted: b.despiteAccepted }),
});

const HANDLERS: Handlers = {
  me: async (_body, caller) => okJson({ name: caller.name, roles: caller.roles, can: caller.can }),
  customer: async ({ userId, older }, _caller, { ports }) => {
    const cursor = older === undefined ? undefined : cursorOf(userId, older);
    const page = older !== undefined && cursor === undefined ? OUT_OF_DATE : await customerPage(ports, userId, cursor);
    // Another customer's cursor, an edited one, or one whose place in the list is gone (an event erased since).
    if (page === OUT_OF_DATE) return problem(400, 'This list is out of date: look the customer up again.', 'INVALID');
    if (cursor === undefined && isUnknown(page)) {
      return problem(404, `No customer ${userId} has any notice we still hold.`, 'NOT_FOUND');
    }
    // What was done by hand about the customer heads the first page; an older page adds its own notices' rows.
    const targets = new Set([
      ...(cursor === undefined ? [userId] : []),
      ...page.notices.map((n) => n.notificationId),
      ...page.silent.map((s) => s.eventId),
    ]);
    const now = new Map(page.notices.map((n) => [n.notificationId, n.outcome.headline]));
    return okJson({ ...page, audit: await auditTrail(ports, targets, sinceDays(ports, AUDIT_DAYS), now) });
  },
  event: async ({ eventId }, _caller, { ports }) => {
    const page = await eventPage(ports, eventId);
    if (isUnknown(page)) {
      return problem(
        404,
        `We have not received an event with this id (${eventId}), or it is older than we keep events — or it is one we could not read at all (its id unreadable): engineers can check the unreadable records of that day. Check the id.`,
        'NOT_FOUND',
      );
    }
    return okJson(page);
  },
  notice: async ({ notificationId }, _caller, { ports }) => {
    const ref = parseNotificationId(notificationId);
    const view = await ports.events.read(ref?.eventId ?? '');
    const item = view.notifications.find((n) => n.notificationId === notificationId);
    const userId = String(view.inbox?.userId ?? item?.userId ?? '');
    const { sent, unfound } = await sentMessages(ports, notificationId, userId === '' ? undefined : userId);
    if (item === undefined && sent.length === 0 && unfound.length === 0) {
      return problem(404, `No notice ${notificationId} is held.`, 'NOT_FOUND');
    }
    const type = String(view.inbox?.type ?? item?.template ?? '');
    const occurredAt = String(view.inbox?.occurredAt ?? item?.occurredAt ?? '');
    const targets = new Set([notificationId, ref?.eventId ?? '']);
    const card = item === undefined ? null : noticeCard(item, type, occurredAt);
    const now = new Map(card === null ? [] : [[notificationId, card.outcome.headline]]);
    const audit = await auditTrail(ports, targets, sinceDays(ports, AUDIT_DAYS), now);
    return okJson({ card, sent, unfound, handedOver: handedOver(item), audit });
  },
  // Done at once by the caller (the policy may want a second identity for it: then it is refused, and says so).
  reveal: async ({ notificationId, reason }, caller, deps) => {
    const shown = await as(caller, deps).confirm('REVEAL', { notificationId }, reason);
    return okJson({ notificationId: shown.notificationId, channel: shown.channel, contact: shown.contact });
  },
  proposals: async ({ userId }, caller, deps) => {
    const pending = await as(caller, deps).proposals({
      status: 'PENDING',
      ...(userId === undefined ? {} : { userId }),
    });
    // Only what the console may decide; each with its notice as it is now: one read per proposal, and few wait.
    const rows = pending.filter((p) => CONSOLE_ACTIONS.has(p.action)).map(async (p) => withCard(p, caller, deps));
    return okJson({ proposals: await Promise.all(rows) } satisfies ProposalsAnswer);
  },
  preview: async (body, caller, deps) => {
    const answer = await as(caller, deps).preview('RESEND', resendOf(body));
    const preview: PreviewAnswer = answer.ok
      ? { ok: true, fingerprint: answer.fingerprint, what: resendWords(answer.shown) }
      : { ok: false, code: answer.refusal.code, message: refusalWords(answer.refusal, channelOf(body.notificationId)) };
    return okJson(preview);
  },
  // Every resend from the console is proposed, whatever the policy says of resends: support staff act on a
  // customer's messages from a web page, and a second person approves what is sent (docs/console.md).
  propose: async ({ reason, fingerprint, ...request }, caller, deps) => {
    const p = await as(caller, deps).propose('RESEND', resendOf(request), reason, fingerprint);
    return { status: 201, body: { proposal: await withCard(p, caller, deps) } };
  },
  decide: async ({ proposalId, decision, reason }, caller, deps) => {
    const asked = await deps.ports.proposals.get(proposalId);
    if (asked === undefined) return noSuchProposal(proposalId, decision, reason, caller, deps);
    if (!CONSOLE_ACTIONS.has(asked.action)) return notHere(asked, decision, reason, caller, deps);
    const ops = as(caller, deps);
    if (decision === 'REJECT')
      return okJson({ proposal: await withCard(await ops.reject(proposalId, reason), caller, deps) });
    const { proposal } = await ops.approve(proposalId, reason);
    return okJson({ proposal: await withCard(proposal, caller, deps), outcome: proposal.outcome?.result ?? null });
  },
  // The proposer closes their own open proposal (the operations' reject, as `ops reject` does): audited as a REJECT by
  // its proposer. Another person's is refused, audited: that is a decision, an approver's to make.
  withdraw: async ({ proposalId, reason }, caller, deps) => {
    const asked = await deps.ports.proposals.get(proposalId);
    if (asked === undefined) return noSuchProposal(proposalId, 'REJECT', reason, caller, deps);
    if (!CONSOLE_ACTIONS.has(asked.action)) return notHere(asked, 'REJECT', reason, caller, deps);
    if (!sameIdentity(asked.proposedBy, identityOf(caller))) {
      const message = 'This is not your proposal: only its proposer withdraws it; an approver rejects it.';
      const attempt = {
        action: asked.action,
        step: 'REJECT' as const,
        target: asked.target,
        reason,
        proposal: asked.id,
      };
      await auditRefusal(deps.ports, caller, attempt, { code: 'NOT_YOURS', message });
      return problem(403, message, 'NOT_YOURS');
    }
    return okJson({ proposal: await withCard(await as(caller, deps).reject(proposalId, reason), caller, deps) });
  },
};

/** A proposal's row with its notice as it is now (the contact masked, its state), as the proposals list shows it. */
const withCard = async (p: ProposalView, caller: Caller, deps: ConsoleDeps) =>
  proposalRow(p, caller, deps.ops.policy, await noticeOf(deps.ports, p.target));

/** What a resend would do, from what its preview shows. */
function resendWords(shown: Record<string, unknown>): string {
  const second = typeof shown.despiteAccepted === 'string';
  return second
    ? 'The provider accepted it before: sending it again gives the customer a second copy.'
    : `It is ${String(shown.fromStatus ?? 'not sent')}: sending it again tries once more, to the same contact point.`;
}

/**
 * The actions the console proposes and decides: a resend. Repairs (a contact an operator types), suppression lifts,
 * erasures and the rest need an engineer's judgement and are decided in the operator CLI — the console refuses them,
 * audited, whoever holds the approver role.
 */
export const CONSOLE_ACTIONS: ReadonlySet<AuditAction> = new Set<AuditAction>(['RESEND']);

/** A decision or withdrawal naming no proposal: refused, audited (someone tried an id: an auditor wants to know). */
async function noSuchProposal(
  id: string,
  step: 'APPROVE' | 'REJECT',
  reason: string,
  caller: Caller,
  { ports }: ConsoleDeps,
): Promise<ApiAnswer> {
  const why = refusal('NOT_FOUND', decisionRefusalWords(refusal('NOT_FOUND', `no proposal ${id}`)));
  await auditRefusal(ports, caller, { action: 'RESEND', step, target: id, reason, proposal: id }, why);
  return problem(404, why.message, why.code);
}

/** A decision on a proposal the console may not decide: refused, and the refusal audited with who tried and why. */
async function notHere(
  p: Proposal,
  decision: 'APPROVE' | 'REJECT',
  reason: string,
  caller: Caller,
  { ports }: ConsoleDeps,
): Promise<ApiAnswer> {
  const why = refusal(
    'NOT_HERE',
    `${p.action} is not decided in the support console: an engineer approves this in the operator CLI`,
  );
  await auditRefusal(
    ports,
    caller,
    { action: p.action, step: decision, target: p.target, reason, proposal: p.id },
    why,
  );
  return problem(403, why.message, why.code);
}

/** What a refused console request tried to do, as its audit record names it. */
interface Attempt {
  readonly action: AuditAction;
  readonly step: AuditStep;
  readonly target: string;
  readonly reason: string;
  readonly proposal?: string;
}

/** A refusal before the operations (not this surface, not this role), audited: its record and its REFUSED outcome. */
async function auditRefusal(
  ports: OperatorPorts,
  caller: Caller,
  attempt: Attempt,
  why: { readonly code: string; readonly message: string },
): Promise<void> {
  const entry = await ports.audit.record(
    {
      action: attempt.action,
      step: attempt.step,
      by: identityOf(caller),
      reason: attempt.reason,
      target: attempt.target,
      ...(attempt.proposal === undefined ? {} : { proposal: attempt.proposal }),
      details: { surface: 'support console', roles: [...caller.roles] },
    },
    ports.now(),
  );
  await ports.audit.recordOutcome(entry.key, { result: 'REFUSED', details: { ...why } }, ports.now());
}

/**
 * What an acting request a person's role may not make tried to do — a reveal, a proposal, a decision — for its audit
 * record (someone tried: the interesting refusal to an auditor); undefined for the routes that only read.
 */
async function attemptOf(name: ApiRouteName, json: unknown, deps: ConsoleDeps): Promise<Attempt | undefined> {
  const body = (typeof json === 'object' && json !== null ? json : {}) as Record<string, unknown>;
  const text = (v: unknown) => (typeof v === 'string' ? v.slice(0, 1000) : '');
  switch (name) {
    case 'reveal':
      return { action: 'REVEAL', step: 'CONFIRM', target: text(body.notificationId), reason: text(body.reason) };
    case 'propose':
      return { action: 'RESEND', step: 'PROPOSE', target: text(body.notificationId), reason: text(body.reason) };
    case 'decide':
    case 'withdraw': {
      const id = text(body.proposalId);
      const p = id === '' ? undefined : await deps.ports.proposals.get(id).catch(() => undefined);
      const step = body.decision === 'REJECT' || name === 'withdraw' ? 'REJECT' : 'APPROVE';
      return { action: p?.action ?? 'RESEND', step, target: p?.target ?? id, reason: text(body.reason), proposal: id };
    }
    default:
      return undefined;
  }
}

/** The notice a notification id names, as a card (masked, its state now), or undefined when the event is gone. */
async function noticeOf(ports: OperatorPorts, notificationId: string): Promise<NoticeCard | undefined> {
  const view = await ports.events.read(parseNotificationId(notificationId)?.eventId ?? '');
  const item = view.notifications.find((n) => n.notificationId === notificationId);
  if (item === undefined) return undefined;
  return noticeCard(item, String(view.inbox?.type ?? item.template ?? ''), String(view.inbox?.occurredAt ?? ''));
}

export function proposalRow(
  p: ProposalView,
  caller: Caller,
  policy: Pick<ApprovalPolicy, 'identityCenterUserNameIsEmail'>,
  card?: NoticeCard,
): ProposalsAnswer['proposals'][number] {
  const mine = sameIdentity(p.proposedBy, identityOf(caller));
  const notice = card?.notice ?? 'Notice';
  const channel = parseNotificationId(p.target)?.channel;
  const words = p.action === 'RESEND' ? 'Send again' : p.action;
  return {
    id: p.id,
    what: `${words}: ${notice}${channel === undefined ? '' : ` · ${CHANNEL_WORDS[channel]?.one ?? channel}`}`,
    shown: channel === undefined ? '' : resendShown(channel, p.shown, card?.to ?? '(unknown)'),
    now: card === undefined ? 'No longer held' : `${card.outcome.headline}: ${card.outcome.detail}`,
    eventId: parseNotificationId(p.target)?.eventId ?? '',
    userId: p.userId ?? null,
    notificationId: p.target,
    proposedBy: personName(p.proposedBy),
    proposedAt: p.proposedAt,
    approveBy: p.approveBy,
    reason: p.reason,
    status: p.status,
    mine,
    cannotApprove: mine ? null : whoApproves(p, identityOf(caller), policy),
  };
}

const sinceDays = (ports: Pick<OperatorPorts, 'now'>, days: number) =>
  new Date(ports.now() - days * DAY_MS).toISOString();

/** What the audit records as who acted: the verified principal, with the name people read. */
export const actorName = (caller: Caller) => `${caller.name} <${caller.principal}>`;

/** One API request: the route it matched, the caller the authorizer vouched for, and its JSON body. */
export async function answerApi(
  route: ApiRoute,
  caller: Caller | undefined,
  rawBody: string | null | undefined,
  deps: ConsoleDeps,
): Promise<ApiAnswer> {
  if (caller === undefined) return problem(401, 'Sign in first.');
  const name = route.name as ApiRouteName;
  let json: unknown = {};
  try {
    json = rawBody === null || rawBody === undefined || rawBody === '' ? {} : JSON.parse(rawBody);
  } catch {
    json = undefined;
  }
  if (!caller.can.includes(route.needs)) {
    const message =
      name === 'withdraw'
        ? 'Your account may not withdraw a proposal: an approver rejects it instead.'
        : `Your account may not ${VERBS[route.needs]}. Ask for the role that may.`;
    const attempt = await attemptOf(name, json, deps);
    if (attempt !== undefined) await auditRefusal(deps.ports, caller, attempt, { code: 'FORBIDDEN', message });
    return problem(403, message, 'FORBIDDEN');
  }
  const parsed = json === undefined ? undefined : BODIES[name].safeParse(json);
  if (parsed === undefined || !parsed.success) {
    const first = parsed?.error.issues[0];
    const message =
      parsed === undefined
        ? 'The request is not JSON.'
        : `${first?.path.join('.') || 'the request'}: ${first?.message ?? 'invalid'}`;
    // An acting request refused for its body (a reason of one word, no id) is audited like any refusal: someone tried.
    const attempt = await attemptOf(name, json, deps);
    if (attempt !== undefined) await auditRefusal(deps.ports, caller, attempt, { code: 'INVALID', message });
    return problem(400, message, 'INVALID');
  }
  try {
    return await (HANDLERS[name] as (b: unknown, c: Caller, d: ConsoleDeps) => Promise<ApiAnswer>)(
      parsed.data,
      caller,
      deps,
    );
  } catch (error) {
    if (!(error instanceof OperatorError)) throw error;
    const { code, message } = error.refusal;
    // A proposal refused says why in the words the preview uses (never the command line's flags or "the customer has
    // it" for a text whose delivery failed).
    const asked = parsed.data as { notificationId?: string; proposalId?: string };
    const words =
      name === 'propose'
        ? refusalWords(error.refusal, channelOf(asked.notificationId ?? ''))
        : name === 'decide' || name === 'withdraw'
          ? decisionRefusalWords(error.refusal, await proposalAsked(deps, asked.proposalId))
          : message;
    return problem(refusalAnswer(error.refusal).status, words, code);
  }
}

/** The proposal a refused decision named, for its words (a suppression says which channel; a decided one, how). */
const proposalAsked = async (deps: ConsoleDeps, id: string | undefined) =>
  id === undefined ? undefined : await deps.ports.proposals.get(id).catch(() => undefined);

const VERBS: Readonly<Record<ApiRoute['needs'], string>> = {
  read: 'look customers up',
  reveal: 'show contact details in full',
  propose: 'propose a resend',
  decide: 'approve or reject proposals',
};

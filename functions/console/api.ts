/**
 * The console's API, one answer per route (functions/contracts/console-routes.ts): check the caller may, read the
 * request body, call the operator's use case, answer JSON. Every refusal says why in words a person reads: not signed
 * in (401), not allowed (403), a request that names nothing (400), nothing by that id (404), an action the system
 * refuses (409, with the operator's refusal code and message).
 */
import * as z from 'zod/mini';
import type { ApiRoute, ApiRouteName } from '../contracts/console-routes.ts';
import type { PreviewAnswer, ProposalsAnswer } from '../contracts/console-views.ts';
import { sameIdentity, type VerifiedIdentity } from '../domain/identity.ts';
import { parseNotificationId } from '../domain/keys.ts';
import { OperatorError } from '../operator/action.ts';
import { asCaller, type Operations, type ProposalView } from '../operator/operations.ts';
import type { OperatorPorts } from '../operator/ports.ts';
import { refusalAnswer } from '../operator/routes.ts';
import type { Caller } from './caller.ts';
import { auditTrail, customerPage, eventPage, noticeCard, sentMessages } from './views.ts';
import { CHANNEL_WORDS, noticeName } from './words.ts';

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
const reason = z.string().check(z.trim(), z.minLength(1, 'say why'), z.maxLength(1000));
const notificationId = id(200).check(z.refine((v) => parseNotificationId(v) !== undefined, 'not a notice id'));
/** A resend as the console asks for one: a second copy names the provider's message id it knowingly repeats. */
const resendRequest = { notificationId, despiteAccepted: z.optional(id(200)) };

const BODIES = {
  me: z.unknown(),
  customer: z.object({ userId: id(128) }),
  event: z.object({ eventId: id(128) }),
  notice: z.object({ notificationId }),
  reveal: z.object({ notificationId, reason }),
  proposals: z.object({ userId: z.optional(id(128)) }),
  preview: z.object(resendRequest),
  propose: z.object({ ...resendRequest, reason, fingerprint: z.optional(id(200)) }),
  decide: z.object({ proposalId: id(100), decision: z.enum(['APPROVE', 'REJECT']), reason }),
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
  display: caller.name,
});
const as = (caller: Caller, deps: ConsoleDeps) => asCaller(deps.ops, identityOf(caller));
const resendOf = (b: { notificationId: string; despiteAccepted?: string | undefined }) => ({
  notificationId: b.notificationId,
  ...(b.despiteAccepted === undefined ? {} : { despiteAccepted: b.despiteAccepted }),
});

const HANDLERS: Handlers = {
  me: async (_body, caller) => okJson({ name: caller.name, roles: caller.roles, can: caller.can }),
  customer: async ({ userId }, _caller, { ports }) => {
    const page = await customerPage(ports, userId);
    if (page.notices.length === 0 && page.silent.length === 0) {
      return problem(404, `No customer ${userId} has any notice we still hold.`, 'NOT_FOUND');
    }
    const targets = new Set([
      userId,
      ...page.notices.map((n) => n.notificationId),
      ...page.silent.map((s) => s.eventId),
    ]);
    return okJson({ ...page, audit: await auditTrail(ports, targets, sinceDays(ports, AUDIT_DAYS)) });
  },
  event: async ({ eventId }, _caller, { ports }) => {
    const page = await eventPage(ports, eventId);
    if (page.notices.length === 0 && page.silent.length === 0) {
      return problem(404, `No event ${eventId} is held (it may have expired).`, 'NOT_FOUND');
    }
    return okJson(page);
  },
  notice: async ({ notificationId }, _caller, { ports }) => {
    const ref = parseNotificationId(notificationId);
    const view = await ports.events.read(ref?.eventId ?? '');
    const item = view.notifications.find((n) => n.notificationId === notificationId);
    const userId = String(view.inbox?.userId ?? item?.userId ?? '');
    const sent = await sentMessages(ports, notificationId, userId === '' ? undefined : userId);
    if (item === undefined && sent.length === 0) {
      return problem(404, `No notice ${notificationId} is held.`, 'NOT_FOUND');
    }
    const type = String(view.inbox?.type ?? item?.template ?? '');
    const occurredAt = String(view.inbox?.occurredAt ?? item?.occurredAt ?? '');
    const targets = new Set([notificationId, ref?.eventId ?? '']);
    return okJson({
      card: item === undefined ? null : noticeCard(item, type, occurredAt),
      sent,
      audit: await auditTrail(ports, targets, sinceDays(ports, AUDIT_DAYS)),
    });
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
    // Named as the customer knows them ("Transfer completed"): one read per proposal, and few wait at a time.
    const rows = pending.map(async (p) => proposalRow(p, caller, await noticeTypeOf(deps.ports, p.target)));
    return okJson({ proposals: await Promise.all(rows) } satisfies ProposalsAnswer);
  },
  preview: async (body, caller, deps) => {
    const answer = await as(caller, deps).preview('RESEND', resendOf(body));
    const preview: PreviewAnswer = answer.ok
      ? { ok: true, fingerprint: answer.fingerprint, what: resendWords(answer.shown) }
      : { ok: false, code: answer.refusal.code, message: answer.refusal.message };
    return okJson(preview);
  },
  // Every resend from the console is proposed, whatever the policy says of resends: support staff act on a
  // customer's messages from a web page, and a second person approves what is sent (docs/console.md).
  propose: async ({ reason, fingerprint, ...request }, caller, deps) => {
    const p = await as(caller, deps).propose('RESEND', resendOf(request), reason, fingerprint);
    return { status: 201, body: { proposal: proposalRow(p, caller) } };
  },
  decide: async ({ proposalId, decision, reason }, caller, deps) => {
    const ops = as(caller, deps);
    if (decision === 'REJECT') return okJson({ proposal: proposalRow(await ops.reject(proposalId, reason), caller) });
    const { proposal } = await ops.approve(proposalId, reason);
    return okJson({ proposal: proposalRow(proposal, caller), outcome: proposal.outcome?.result ?? null });
  },
};

/** What a resend would do, from what its preview shows. */
function resendWords(shown: Record<string, unknown>): string {
  const second = typeof shown.despiteAccepted === 'string';
  return second
    ? 'The provider accepted it before: sending it again gives the customer a second copy.'
    : `It is ${String(shown.fromStatus ?? 'not sent')}: sending it again tries once more, to the same contact point.`;
}

/** The kind of notice a notification id names (its event's type), or undefined when the event is gone. */
async function noticeTypeOf(ports: OperatorPorts, notificationId: string): Promise<string | undefined> {
  const view = await ports.events.read(parseNotificationId(notificationId)?.eventId ?? '');
  const type = view.inbox?.type ?? view.notifications[0]?.template;
  return typeof type === 'string' ? type : undefined;
}

export function proposalRow(p: ProposalView, caller: Caller, type?: string): ProposalsAnswer['proposals'][number] {
  const notice = type === undefined ? 'Notice' : noticeName(type);
  const channel = parseNotificationId(p.target)?.channel;
  const words = p.action === 'RESEND' ? 'Send again' : p.action;
  return {
    id: p.id,
    what: `${words}: ${notice}${channel === undefined ? '' : ` · ${CHANNEL_WORDS[channel]?.one ?? channel}`}`,
    userId: p.userId ?? null,
    notificationId: p.target,
    proposedBy: p.proposedBy.display ?? p.proposedBy.principal,
    proposedAt: p.proposedAt,
    approveBy: p.approveBy,
    reason: p.reason,
    status: p.status,
    mine: sameIdentity(p.proposedBy, identityOf(caller)),
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
  if (!caller.can.includes(route.needs)) {
    return problem(403, `Your account may not ${VERBS[route.needs]}. Ask for the role that may.`, 'FORBIDDEN');
  }
  const name = route.name as ApiRouteName;
  let json: unknown = {};
  try {
    json = rawBody === null || rawBody === undefined || rawBody === '' ? {} : JSON.parse(rawBody);
  } catch {
    return problem(400, 'The request is not JSON.', 'INVALID');
  }
  const parsed = BODIES[name].safeParse(json);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    return problem(400, `${first?.path.join('.') || 'the request'}: ${first?.message ?? 'invalid'}`, 'INVALID');
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
    return problem(refusalAnswer(error.refusal).status, message, code);
  }
}

const VERBS: Readonly<Record<ApiRoute['needs'], string>> = {
  read: 'look customers up',
  reveal: 'show contact details in full',
  propose: 'propose a resend',
  decide: 'approve or reject proposals',
};

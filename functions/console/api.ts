/**
 * The console's API, one answer per route (functions/contracts/console-routes.ts): check the caller may, read the
 * request body, call the operator's use case, answer JSON. Every refusal says why in words a person reads: not signed
 * in (401), not allowed (403), a request that names nothing (400), nothing by that id (404), an action the system
 * refuses (409, with the operator's refusal code and message).
 */
import * as z from 'zod/mini';
import type { ApiRoute, ApiRouteName } from '../contracts/console-routes.ts';
import { parseNotificationId } from '../domain/keys.ts';
import { apply, OperatorError } from '../operator/action.ts';
import type { OperatorPorts } from '../operator/ports.ts';
import { reveal } from '../operator/reveal.ts';
import type { Caller } from './caller.ts';
import { auditTrail, customerPage, eventPage, noticeCard, sentMessages } from './views.ts';

export interface ApiAnswer {
  readonly status: number;
  readonly body: unknown;
}

/** How far back the console reads the audit trail of a customer. */
export const AUDIT_DAYS = 90;
const DAY_MS = 86_400_000;

const id = (max: number) => z.string().check(z.minLength(1), z.maxLength(max));
const reason = z.string().check(z.minLength(1), z.maxLength(1000), z.trim());
const notificationId = id(200).check(z.refine((v) => parseNotificationId(v) !== undefined, 'not a notice id'));

const BODIES = {
  me: z.unknown(),
  customer: z.object({ userId: id(128) }),
  customerEvidence: z.object({ userId: id(128) }),
  event: z.object({ eventId: id(128) }),
  notice: z.object({ notificationId }),
  reveal: z.object({ notificationId, reason }),
  proposals: z.object({ userId: z.optional(id(128)) }),
  propose: z.object({ notificationId, reason }),
  decide: z.object({ proposalId: id(100), decision: z.enum(['APPROVE', 'REJECT']), reason }),
} satisfies Record<ApiRouteName, z.ZodMiniType>;

type Body<N extends ApiRouteName> = z.infer<(typeof BODIES)[N]>;
type Handlers = { [N in ApiRouteName]: (body: Body<N>, caller: Caller, ports: OperatorPorts) => Promise<ApiAnswer> };

const okJson = (body: unknown): ApiAnswer => ({ status: 200, body });
const problem = (status: number, message: string, code?: string): ApiAnswer => ({
  status,
  body: { error: { message, ...(code === undefined ? {} : { code }) } },
});

const HANDLERS: Handlers = {
  me: async (_body, caller) => okJson({ name: caller.name, roles: caller.roles, can: caller.can }),
  customer: async ({ userId }, _caller, ports) => {
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
  customerEvidence: async () => problem(501, 'Not available yet.'),
  event: async ({ eventId }, _caller, ports) => {
    const page = await eventPage(ports, eventId);
    if (page.notices.length === 0 && page.silent.length === 0) {
      return problem(404, `No event ${eventId} is held (it may have expired).`, 'NOT_FOUND');
    }
    return okJson(page);
  },
  notice: async ({ notificationId }, _caller, ports) => {
    const ref = parseNotificationId(notificationId);
    const view = await ports.events.read(ref?.eventId ?? '');
    const item = view.notifications.find((n) => n.notificationId === notificationId);
    const sent = await sentMessages(ports, notificationId);
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
  reveal: async ({ notificationId, reason }, caller, ports) => {
    const revealed = await apply(reveal, ports, { notificationId }, { by: actorName(caller), reason });
    return okJson(revealed);
  },
  proposals: async () => okJson({ proposals: [] }),
  propose: async () => problem(501, 'Proposals are not available yet.'),
  decide: async () => problem(501, 'Proposals are not available yet.'),
};

const sinceDays = (ports: Pick<OperatorPorts, 'now'>, days: number) =>
  new Date(ports.now() - days * DAY_MS).toISOString();

/** What the audit records as who acted: the verified principal, with the name people read. */
export const actorName = (caller: Caller) => `${caller.name} <${caller.principal}>`;

/** One API request: the route it matched, the caller the authorizer vouched for, and its JSON body. */
export async function answerApi(
  route: ApiRoute,
  caller: Caller | undefined,
  rawBody: string | null | undefined,
  ports: OperatorPorts,
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
    return await (HANDLERS[name] as (b: unknown, c: Caller, p: OperatorPorts) => Promise<ApiAnswer>)(
      parsed.data,
      caller,
      ports,
    );
  } catch (error) {
    if (!(error instanceof OperatorError)) throw error;
    const { code, message } = error.refusal;
    return problem(code === 'NOT_FOUND' ? 404 : code === 'INVALID' ? 400 : 409, message, code);
  }
}

const VERBS: Readonly<Record<ApiRoute['needs'], string>> = {
  read: 'look customers up',
  reveal: 'show contact details in full',
  propose: 'propose a resend',
  decide: 'approve or reject proposals',
};

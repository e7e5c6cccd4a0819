/**
 * The requests of the operator's actions as any transport receives them — JSON from the operator API, the console,
 * a stored proposal — checked before an action reads anything: a request that is not one of these shapes is refused
 * as INVALID with what is wrong, never half-read.
 */
import * as z from 'zod/mini';
import type { OperatorActionName } from '../domain/audit.ts';
import { CHANNELS } from '../domain/channels.ts';

const text = z.string().check(z.minLength(1), z.maxLength(2048));
/** A corrected event, as the producer would publish it: bounded like the largest record ingest reads. */
const corrected = z.string().check(z.minLength(2), z.maxLength(1_000_000));
const userId = z.object({ userId: text });

/** Each action's request. */
export const REQUEST_SCHEMAS = {
  RESEND: z.object({
    notificationId: text,
    despiteAccepted: z.optional(text),
    expected: z.optional(z.object({ status: text, attempt: z.number().check(z.int(), z.gte(0)) })),
  }),
  REPAIR: z.object({ eventId: text, corrected }),
  REPLAY: z.object({ ids: z.array(text).check(z.minLength(1), z.maxLength(1000)), corrected: z.optional(corrected) }),
  REPLAY_BATCHES: z.object({ sinceIso: z.optional(z.iso.datetime()) }),
  SUPPRESSION_LIFT: z.object({
    channel: z.enum(CHANNELS),
    addressHash: z.string().check(z.regex(/^[0-9a-f]{64}$/, 'must be 64 lower-case hex characters')),
  }),
  EXPORT: userId,
  ERASE: userId,
  REVEAL: z.object({ notificationId: text }),
  RELEASE_HELD: z.object({ notificationId: text }),
  SETTLE_HELD: z.object({ notificationId: text, sentBefore: z.optional(text) }),
} as const satisfies Record<OperatorActionName, z.ZodMiniType>;

/** The request as its action takes it, or the words that say what is wrong with it. */
export function parseRequest<N extends OperatorActionName>(
  action: N,
  body: unknown,
): { ok: true; request: z.infer<(typeof REQUEST_SCHEMAS)[N]> } | { ok: false; problem: string } {
  const parsed = (REQUEST_SCHEMAS[action] as z.ZodMiniType).safeParse(body);
  if (parsed.success) return { ok: true, request: parsed.data as z.infer<(typeof REQUEST_SCHEMAS)[N]> };
  const problem = parsed.error.issues
    .map((i) => `${i.path.length === 0 ? 'the request' : i.path.join('.')}: ${i.message}`)
    .join('; ');
  return { ok: false, problem };
}

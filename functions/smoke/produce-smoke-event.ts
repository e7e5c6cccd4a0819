/**
 * Use case: put one smoke event on the topic, as a producer of the bank would (tools/ops/smoke.ts follows it from there).
 *
 * Input: the contacts the operator gave (email, and optionally a phone number and a push endpoint of their own).
 * Output: the event's id and where Kafka put it.
 * Steps: check the contacts (strict: this function writes to the bank's topic, so it writes nothing but the smoke
 * event), refuse any that is not the SES mailbox simulator or one the settings list (domain/smoke-contacts.ts), build
 * the event (domain/smoke.ts), produce it keyed by its eventId.
 */
import * as z from 'zod/mini';
import { SES_SIMULATOR_SUCCESS, type SmokeContacts, smokeEvent } from '../domain/smoke.ts';
import { E164, SNS_ENDPOINT_ARN, smokeContactRefusal } from '../domain/smoke-contacts.ts';
import type { Produced, RecordProducer } from './kafka-producer.ts';

const contactsSchema = z.strictObject({
  email: z.optional(z.email().check(z.maxLength(254))),
  phone: z.optional(z.string().check(z.regex(E164, 'must be an E.164 number'))),
  pushEndpointArn: z.optional(z.string().check(z.regex(SNS_ENDPOINT_ARN, 'must be an SNS endpoint ARN'))),
});

export class SmokeRequestError extends Error {
  override name = 'SmokeRequestError';
}

export interface SmokeProduced extends Produced {
  readonly eventId: string;
}

export async function produceSmokeEvent(
  request: unknown,
  deps: {
    producer: RecordProducer;
    topic: string;
    /** The settings' smokeContacts: beside the SES mailbox simulator, the only contact points it sends to. */
    allowed: readonly string[];
    now: () => number;
    nonce: () => string;
  },
): Promise<SmokeProduced> {
  const parsed = contactsSchema.safeParse(request ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new SmokeRequestError(`${issue?.path.join('.') || 'request'}: ${issue?.message ?? 'invalid'}`);
  }
  const refusal = smokeContactRefusal(parsed.data, deps.allowed);
  if (refusal !== undefined) throw new SmokeRequestError(refusal);
  const contacts: SmokeContacts = {
    email: parsed.data.email ?? SES_SIMULATOR_SUCCESS,
    ...(parsed.data.phone === undefined ? {} : { phone: parsed.data.phone }),
    ...(parsed.data.pushEndpointArn === undefined ? {} : { pushEndpointArn: parsed.data.pushEndpointArn }),
  };
  const event = smokeEvent(deps.now(), contacts, deps.nonce());
  const produced = await deps.producer.produce(deps.topic, event.eventId, JSON.stringify(event));
  return { eventId: event.eventId, ...produced };
}

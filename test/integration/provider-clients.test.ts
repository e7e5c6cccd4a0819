/**
 * The SES and SNS clients the dispatch handler builds (functions/dispatch/provider-clients.ts), against local providers
 * that accept a message and then lose the reply: a 500 after the accept, or the connection reset after the request was
 * written. Neither provider takes an idempotency key, so an SDK retry here is a second copy in the customer's inbox:
 * the message must reach the provider exactly once and the outcome must be "unknown", never retried by the SDK.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProviderClients } from '../../functions/dispatch/provider-clients.ts';
import { SendError } from '../../functions/dispatch/send-error.ts';
import { ProviderSender } from '../../functions/dispatch/senders.ts';
import type { Channel } from '../../functions/domain/channels.ts';
import { buildNotification } from '../../functions/domain/notification.ts';
import { loadAllTemplates } from '../../functions/domain/template-sets.ts';
import { render } from '../../functions/domain/templates.ts';
import { EXAMPLE_BRAND } from '../../tools/local/example-brand.ts';
import {
  type Fault,
  type ProviderEndpoint,
  type SesEndpoint,
  startSesEndpoint,
  startSnsEndpoint,
} from '../../tools/local/providers.ts';
import { decodeTransfer, PUSH_ARN, transferEvent } from '../support/events.ts';

// Every notice type's templates (dispatch loads a type when it first renders one: template-sets.ts).
await loadAllTemplates();

let ses: SesEndpoint;
let sns: ProviderEndpoint;
let clients: ReturnType<typeof createProviderClients>;
let sender: ProviderSender;

beforeAll(async () => {
  ses = await startSesEndpoint();
  sns = await startSnsEndpoint();
  // The endpoints reach the clients the way they do in the handler: through the SDK's own environment variables.
  process.env.AWS_ENDPOINT_URL_SES = ses.url;
  process.env.AWS_ENDPOINT_URL_SNS = sns.url;
  clients = createProviderClients({ connectTimeoutMs: 1_000 });
  sender = new ProviderSender(clients.ses, clients.sns, { senderEmail: 'notifications@example.com' });
});
afterAll(async () => {
  await ses?.stop();
  await sns?.stop();
});

const ADDRESS: Record<Channel, string> = { EMAIL: 'hanako@example.com', PUSH: PUSH_ARN, SMS: '+819012345678' };

function notification(eventId: string, channel: Channel) {
  const d = decodeTransfer(transferEvent({ eventId }));
  const n = buildNotification(d.event, channel, ADDRESS[channel], Date.now(), { retentionDays: 35 });
  const message = render(
    {
      template: n.template,
      locale: n.locale,
      channel,
      data: n.data,
      occurredAt: n.occurredAt,
      timeZone: n.timeZone,
    },
    EXAMPLE_BRAND,
  );
  return { n, message };
}

/** Sends one notification through the handler's clients with `fault` on its first call; the provider's count of it. */
async function sendUnder(channel: Channel, fault: Fault, eventId: string) {
  const endpoint = channel === 'EMAIL' ? ses : sns;
  const before = endpoint.sends.length;
  endpoint.fault = () => fault;
  const { n, message } = notification(eventId, channel);
  const outcome = await sender.send(n, message, AbortSignal.timeout(10_000)).then(
    (id) => ({ sent: id }),
    (error: unknown) => ({ error }),
  );
  endpoint.fault = () => 'ok';
  return { outcome, accepted: endpoint.sends.length - before };
}

describe('the provider clients never retry a send', () => {
  it('are built with one attempt: no SDK retry of a send', async () => {
    expect(await clients.ses.config.maxAttempts()).toBe(1);
    expect(await clients.sns.config.maxAttempts()).toBe(1);
  });

  for (const channel of ['EMAIL', 'PUSH', 'SMS'] as const) {
    for (const fault of ['acceptThen500', 'acceptThenReset'] as const) {
      it(`${channel}: accepted, then ${fault === 'acceptThen500' ? 'a 500' : 'a reset connection'} — exactly one send, outcome unknown`, async () => {
        const { outcome, accepted } = await sendUnder(channel, fault, `pc-${channel}-${fault}`);
        expect(accepted).toBe(1);
        expect('error' in outcome && outcome.error).toBeInstanceOf(SendError);
        expect((outcome as { error: SendError }).error.failure).toBe('unknown');
      });
    }
  }

  it('an ordinary send is accepted once, with its message id', async () => {
    const { outcome, accepted } = await sendUnder('EMAIL', 'ok', 'pc-ok');
    expect(accepted).toBe(1);
    expect(outcome).toEqual({ sent: expect.any(String) });
  });
});

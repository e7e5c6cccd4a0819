/**
 * The smoke check's synthetic event (tools/ops/smoke.ts, functions/smoke/): valid by the event contract, recognisable by its
 * eventId and its userId, one notification per contact given. By default one EMAIL to the SES mailbox simulator, which
 * accepts mail even in the SES sandbox, reaches no one, and answers with a Delivery event. Pure.
 */

/** SES mailbox simulator: accepted as delivered, works in the sandbox, reaches no inbox. */
export const SES_SIMULATOR_SUCCESS = 'success@simulator.amazonses.com';
export const SMOKE_USER_ID = 'notifier-smoke';

export interface SmokeContacts {
  readonly email: string;
  /** E.164: adds SMS. */
  readonly phone?: string;
  /** An SNS platform endpoint ARN: adds PUSH. */
  readonly pushEndpointArn?: string;
}

export function smokeEvent(now: number, contacts: SmokeContacts, nonce: string) {
  const stamp = new Date(now)
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
  return {
    eventId: `smoke-${stamp}-${nonce}`,
    type: 'TransferCompleted',
    occurredAt: new Date(now).toISOString(),
    recipient: {
      userId: SMOKE_USER_ID,
      locale: 'en',
      email: contacts.email,
      ...(contacts.phone === undefined ? {} : { phoneNumber: contacts.phone }),
      ...(contacts.pushEndpointArn === undefined ? {} : { pushEndpointArn: contacts.pushEndpointArn }),
    },
    data: { transferId: `smoke-${nonce}`, amount: '1.00', currency: 'USD', counterpartyName: 'notifier smoke check' },
    channels: [
      'EMAIL',
      ...(contacts.pushEndpointArn === undefined ? [] : ['PUSH']),
      ...(contacts.phone === undefined ? [] : ['SMS']),
    ],
  };
}

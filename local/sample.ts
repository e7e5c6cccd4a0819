/**
 * The built-in scenario of `npm start`: transfers for en and ja customers across every channel, a redelivered batch,
 * a producer resend, a same-id conflict and malformed records. One Kafka record value per entry, in offset order.
 */
const ARN = 'arn:aws:sns:ap-northeast-1:123456789012:endpoint/APNS/bank-app/0f9c1d2e-3b4a-5c6d-7e8f-9a0b1c2d3e4f';
const ARN_GCM = 'arn:aws:sns:ap-northeast-1:123456789012:endpoint/GCM/bank-app/9a8b7c6d-5e4f-3a2b-1c0d-e9f8a7b6c5d4';

const en = (eventId: string, over: Record<string, unknown> = {}) => ({
  eventId,
  type: 'TransferCompleted',
  occurredAt: '2026-11-30T09:15:00Z',
  recipient: {
    userId: 'u-7',
    locale: 'en',
    email: 'alex@example.com',
    pushEndpointArn: ARN_GCM,
    phoneNumber: '+14155550123',
  },
  data: { transferId: 't-1001', amount: '12.50', currency: 'USD', counterpartyName: 'Jordan Lee' },
  ...over,
});

const ja = (eventId: string, over: Record<string, unknown> = {}) => ({
  eventId,
  type: 'TransferCompleted',
  occurredAt: '2026-11-30T09:16:00Z',
  recipient: {
    userId: 'u-42',
    locale: 'ja',
    email: 'hanako@example.com',
    pushEndpointArn: ARN,
    phoneNumber: '+819012345678',
  },
  data: { transferId: 't-99', amount: '10000', currency: 'JPY', counterpartyName: '山田 太郎' },
  ...over,
});

export interface Scenario {
  /** Kafka record values, delivered byte for byte. */
  readonly values: string[];
  readonly batchSize: number;
  /** Batches (by index) delivered a second time after they succeeded: a rebalance redelivering them. */
  readonly redeliverBatches: number[];
}

export function sampleScenario(): Scenario {
  const values = [
    en('demo-en-1'),
    ja('demo-ja-1'),
    en('demo-en-2', {
      type: 'TransferFailed',
      data: {
        transferId: 't-1002',
        amount: '2500.00',
        currency: 'USD',
        counterpartyName: 'Acme <Corp>',
        reason: 'insufficient funds',
      },
      channels: ['EMAIL', 'PUSH'],
    }),
    ja('demo-ja-2', { recipient: { userId: 'u-43', locale: 'ja', email: 'jiro@example.com' } }),
    // A producer resend of demo-en-1 at a new offset: same event, same bytes.
    en('demo-en-1'),
    // The same eventId reused with a different amount: EVENT_ID_CONFLICT, the original is kept.
    ja('demo-ja-1', { data: { transferId: 't-99', amount: '99999', currency: 'JPY' } }),
  ].map((e) => JSON.stringify(e));
  values.push('{"eventId":"demo-broken","type":"TransferCompleted",'); // truncated JSON
  values.push(JSON.stringify(en('demo-float', { data: { transferId: 't-3', amount: 12.5, currency: 'USD' } })));
  return { values, batchSize: 4, redeliverBatches: [0] };
}

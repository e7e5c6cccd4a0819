/** Event factories for tests: a valid event per docs/event.md, overridable field by field. */
import { type DecodedTransfer, decodeRecordValue, isTransfer } from '../../functions/domain/event/decode.ts';
export interface EventOverrides {
  eventId?: string;
  type?: string;
  recipient?: Record<string, unknown>;
  data?: Record<string, unknown>;
  channels?: string[];
  [key: string]: unknown;
}

export const PUSH_ARN =
  'arn:aws:sns:ap-northeast-1:123456789012:endpoint/APNS/bank-app/0f9c1d2e-3b4a-5c6d-7e8f-9a0b1c2d3e4f';

export function transferEvent(overrides: EventOverrides = {}): Record<string, unknown> {
  const { recipient, data, ...rest } = overrides;
  return {
    eventId: 'trf-2026-000123',
    type: 'TransferCompleted',
    occurredAt: '2026-11-30T09:15:00Z',
    recipient: {
      userId: 'u-42',
      locale: 'ja',
      email: 'hanako@example.com',
      pushEndpointArn: PUSH_ARN,
      phoneNumber: '+819012345678',
      ...recipient,
    },
    data: { transferId: 't-99', amount: '10000', currency: 'JPY', counterpartyName: 'Taro Yamada', ...data },
    ...rest,
  };
}

export const b64 = (value: string | object | Buffer) =>
  (Buffer.isBuffer(value) ? value : Buffer.from(typeof value === 'string' ? value : JSON.stringify(value))).toString(
    'base64',
  );

/** A PreferencesUpdated event: the customer's whole opt-out set. */
export function preferencesEvent(
  eventId: string,
  occurredAt: string,
  optOut: unknown[],
  userId = 'u-42',
): Record<string, unknown> {
  return { eventId, type: 'PreferencesUpdated', occurredAt, recipient: { userId }, data: { optOut } };
}

/**
 * A transfer event through the one decoder ingest uses (event/decode.ts decodeRecordValue), as its JSON text: the decoded
 * transfer, or an Error naming the rejection.
 */
export function decodeTransfer(value: object | string): DecodedTransfer {
  const d = decodeRecordValue(b64(value), 65_536);
  if (!d.ok) throw new Error(`rejected: ${d.rejection.reason} ${d.rejection.detail}`);
  if (!isTransfer(d)) throw new Error('not a transfer event');
  return d;
}

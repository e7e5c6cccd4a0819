/**
 * The bench's workload: bank events of every channel set, batches as the MSK mapping delivers them, duplicates
 * spread evenly through the stream; and the sizes of the items the code builds for them, as DynamoDB counts them.
 */
import type { MSKEvent } from 'aws-lambda';
import type { Channel } from '../../functions/domain/channels.ts';
import { decodeRecordValue, isTransfer } from '../../functions/domain/event/decode.ts';
import { buildInbox, buildNotification } from '../../functions/domain/notification.ts';
import { contactFor } from '../../functions/domain/routing.ts';
import { mskEvent } from '../local/msk.ts';
import { itemBytes } from './billing.ts';

export const log = (m: string) => process.stderr.write(`[bench] ${m}\n`);
export const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
export const round2 = (n: number) => Math.round(n * 100) / 100;
/** The stack's INGEST_CONCURRENCY. */
export const INGEST_CONCURRENCY = 16;

const CHANNEL_SETS = [['EMAIL'], ['EMAIL', 'PUSH'], ['EMAIL', 'PUSH', 'SMS']];
export function eventValue(eventId: string, i: number) {
  return {
    eventId,
    type: i % 5 === 0 ? 'TransferFailed' : 'TransferCompleted',
    occurredAt: '2026-11-30T09:15:00Z',
    recipient: {
      userId: `u-${i}`,
      locale: i % 2 ? 'ja' : 'en',
      email: `user${i}@example.com`,
      pushEndpointArn: `arn:aws:sns:ap-northeast-1:123456789012:endpoint/APNS/bank-app/0f9c1d2e-3b4a-5c6d-7e8f-${String(i).padStart(12, '0')}`,
      phoneNumber: `+8190${String(10_000_000 + i).slice(-8)}`,
    },
    data: {
      transferId: `t-${i}`,
      // JPY has no minor unit (ISO 4217): a whole amount.
      amount: String(1000 + i),
      currency: 'JPY',
      counterpartyName: 'Taro Yamada',
      reason: 'insufficient funds',
    },
    channels: CHANNEL_SETS[i % 3],
  };
}
/** A one-time code's channels (templates/OneTimePasscode/definition.json). */
const OTP_CHANNELS: readonly Channel[] = ['SMS', 'PUSH'];

/** Events per customer in the complete cost's runs: a customer gets several notices a month, not one. */
export const EVENTS_PER_CUSTOMER = 5;

/**
 * The complete cost's workload: the bench's transfers over customers who each have EVENTS_PER_CUSTOMER of them, and
 * in the mix one event in ten a one-time code (critical, a secret, to SMS and push) — a bank's SMS is mostly codes.
 * `channel` forces one channel (its run alone; a one-time code has no email, so that run has none).
 */
export function bankEventValue(eventId: string, i: number, events: number, channel?: Channel) {
  const e = eventValue(eventId, i);
  const customers = Math.max(1, Math.ceil(events / EVENTS_PER_CUSTOMER));
  const recipient = { ...e.recipient, userId: `u-${i % customers}` };
  if (i % 10 === 9 && OTP_CHANNELS.some((c) => channel === undefined || c === channel)) {
    return {
      ...e,
      type: 'OneTimePasscode',
      recipient,
      data: { code: String(100_000 + ((i * 7_919) % 900_000)), purpose: i % 20 === 9 ? 'SIGN_IN' : 'PAYMENT' },
      channels: channel === undefined ? [...OTP_CHANNELS] : [channel],
    };
  }
  return { ...e, recipient, ...(channel === undefined ? {} : { channels: [channel] }) };
}

/**
 * n records, `dupShare` of which are events ingested before (`seed`, delivered first and not measured): redeliveries
 * and resends, spread evenly through the stream. At 100% the measured batches are the seed's batches again: a batch
 * redelivered whole.
 */
export function workload(prefix: string, n: number, dupShare: number): { seed: MSKEvent[]; batches: MSKEvent[] } {
  const dups = Math.round(n * dupShare);
  const seedValues = Array.from({ length: dups }, (_, i) => eventValue(`${prefix}-seen-${i}`, i));
  const values: object[] = [];
  let seen = 0;
  for (let i = 0; i < n; i++) {
    const dup = Math.floor(((i + 1) * dups) / n) > Math.floor((i * dups) / n);
    values.push(dup ? (seedValues[seen++] as object) : eventValue(`${prefix}-${i}`, i));
  }
  return { seed: batchesOf(seedValues), batches: batchesOf(values) };
}
export function batchesOf(values: object[]): MSKEvent[] {
  const batches: MSKEvent[] = [];
  for (let i = 0; i < values.length; i += 100) {
    batches.push(
      mskEvent(values.slice(i, i + 100).map((value, j) => ({ topic: 'bench', partition: 0, offset: i + j, value }))),
    );
  }
  return batches;
}

/** The workload's channels: 1, 2 or 3 per event in turn, EMAIL in every one, SMS in a third. */
export const WORKLOAD_MIX = {
  channelsPerEvent: 2,
  channelMix: { EMAIL: 1 / 2, PUSH: 1 / 3, SMS: 1 / 6 },
} as const;

/** The sizes of the items the code builds for a typical bench event, as DynamoDB counts them. */
export const SIZES = (() => {
  const value = eventValue('size-sample-000123', 1);
  const d = decodeRecordValue(Buffer.from(JSON.stringify(value)).toString('base64'), 65_536);
  if (!isTransfer(d)) throw new Error('bench event invalid');
  const now = Date.now();
  const source = { topic: 'bench', partition: 0, offset: 123_456 };
  const inbox = buildInbox(d.event, `v1:${'0'.repeat(64)}`, ['EMAIL', 'PUSH'], source, now, { retentionDays: 35 });
  const notifications = (['EMAIL', 'PUSH', 'SMS'] as const).map((c) =>
    itemBytes(
      buildNotification(d.event, c, contactFor(d.event.recipient, c) as string, now, { retentionDays: 35 }) as never,
    ),
  );
  return {
    inboxBytes: itemBytes(inbox as never),
    notificationBytes: Math.max(...notifications),
    eventBytes: Buffer.byteLength(JSON.stringify(value)),
  };
})();

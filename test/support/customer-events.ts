/**
 * A customer's events as the table holds them, written straight to DynamoDB Local for the console's paging tests:
 * accepted events (an inbox item on the byUser index and a notice per channel) and records ingest quarantined.
 */
import { BatchWriteCommand } from '@aws-sdk/lib-dynamodb';
import { eventPk, INBOX_SK, userKeyOf } from '../../functions/domain/keys.ts';
import { buildQuarantine } from '../../functions/domain/notification.ts';
import { DynamoInboxStore } from '../../functions/ingest/inbox-store.ts';
import type { LocalTable } from './local-table.ts';

const CONTACTS: Record<string, string> = {
  EMAIL: 'ops@business.example',
  SMS: '+14155550182',
  PUSH: 'arn:aws:sns:eu-west-1:123456789012:endpoint/APNS/app/0a1b2c',
};

/** An accepted event of `userId` at `occurredAt`: its inbox item and a notice per channel, SENT and delivered or FAILED. */
export function acceptedEvent(
  userId: string,
  eventId: string,
  occurredAt: string,
  notices: { readonly channels: readonly string[]; readonly failed: boolean } = { channels: ['EMAIL'], failed: false },
): Record<string, unknown>[] {
  const common = { pk: eventPk(eventId), eventId, occurredAt };
  const outcome = notices.failed
    ? { status: 'FAILED', attempt: 3, lastError: 'RETRIES_EXHAUSTED' }
    : { status: 'SENT', providerMessageId: `m-${eventId}`, deliveryStatus: 'DELIVERED' };
  return [
    { ...common, sk: INBOX_SK, kind: 'INBOX', type: 'TransferCompleted', userKey: userKeyOf(userId) },
    ...notices.channels.map((channel) => ({
      ...common,
      sk: `NOTIFICATION#${channel}`,
      kind: 'NOTIFICATION',
      notificationId: `${eventId}#${channel}`,
      channel,
      userId,
      recipient: CONTACTS[channel],
      ...outcome,
      template: 'TransferCompleted',
      data: { transferId: `t-${eventId}` },
    })),
  ];
}

/** Items put 25 to a request. */
export async function putAll(table: LocalTable, items: readonly Record<string, unknown>[]): Promise<void> {
  for (let i = 0; i < items.length; i += 25) {
    const batch = items.slice(i, i + 25).map((Item) => ({ PutRequest: { Item } }));
    await table.doc.send(new BatchWriteCommand({ RequestItems: { [table.tableName]: batch } }));
  }
}

/** A record of `eventId` naming `userId` that ingest quarantined at `at` (ms), from Kafka offset `offset`. */
export async function quarantinedRecord(
  table: LocalTable,
  record: { readonly userId: string; readonly eventId: string; readonly at: number; readonly offset: number },
): Promise<void> {
  const { userId, eventId, at, offset } = record;
  const value = Buffer.from(JSON.stringify({ eventId, recipient: { userId } })).toString('base64');
  const source = { topic: 'banking.transfers', partition: 0, offset };
  const item = buildQuarantine({ reason: 'INVALID_JSON', detail: 'no JSON', eventId }, value, source, at, {
    retentionDays: 35,
  });
  item.userId = userId;
  await new DynamoInboxStore(table.doc, table.tableName).quarantine(item);
}

/**
 * DynamoDB adapter for ingest: the one TransactWriteItems per event, and quarantine writes.
 * It reads what DynamoDB answered and turns it into domain outcomes; anything else is thrown, typed.
 */
import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { type DynamoDBDocumentClient, PutCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { RecordRefusedError, TransientStoreError, UnexpectedResponseError } from '../commons/errors.ts';
import type { PreferencesItem } from '../domain/audience.ts';
import type { InboxItem, NotificationItem, QuarantineItem } from '../domain/notification.ts';

export type RecordOutcome =
  /** Inbox and every notification were written, in one transaction. */
  | { kind: 'created' }
  /** The inbox item already exists: this event was processed before. `payloadHash` is the stored one. */
  | { kind: 'inboxExists'; payloadHash: string | undefined }
  /** No inbox, yet a notification with this (eventId, channel) exists: the key constraint caught it (defense in depth). */
  | { kind: 'notificationExists' };

/** What became of a preferences event: applied with its inbox, a duplicate, or recorded as STALE without applying. */
export type PreferencesOutcome =
  | { kind: 'created' }
  | { kind: 'inboxExists'; payloadHash: string | undefined }
  | { kind: 'stale' };

export interface InboxStore {
  recordEvent(inbox: InboxItem, notifications: NotificationItem[]): Promise<RecordOutcome>;
  /**
   * Inbox + the preferences item in one transaction, the item only if this event is newer than the one in force.
   * An older event is still recorded in the inbox (`staleInbox`), so a redelivery of it is a duplicate.
   */
  recordPreferences(inbox: InboxItem, staleInbox: InboxItem, prefs: PreferencesItem): Promise<PreferencesOutcome>;
  /** Returns false when a quarantine item for this record already exists (a redelivered bad record). */
  quarantine(item: QuarantineItem): Promise<boolean>;
}

/** Cancellation reasons that mean "try again", never "bad input". */
export const TRANSIENT_CANCELLATION_CODES = new Set([
  'TransactionConflict',
  'ThrottlingError',
  'ProvisionedThroughputExceeded',
]);

const ifAbsent = 'attribute_not_exists(pk)';

export class DynamoInboxStore implements InboxStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async recordEvent(inbox: InboxItem, notifications: NotificationItem[]): Promise<RecordOutcome> {
    try {
      await this.client.send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Put: {
                TableName: this.tableName,
                Item: inbox,
                ConditionExpression: ifAbsent,
                ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
              },
            },
            ...notifications.map((item) => ({
              Put: { TableName: this.tableName, Item: item, ConditionExpression: ifAbsent },
            })),
          ],
        }),
      );
      return { kind: 'created' };
    } catch (error) {
      if (
        !(error instanceof TransactionCanceledException) &&
        (error as Error)?.name !== 'TransactionCanceledException'
      ) {
        throw error;
      }
      return classifyCancellation(error as TransactionCanceledException);
    }
  }

  async recordPreferences(
    inbox: InboxItem,
    staleInbox: InboxItem,
    prefs: PreferencesItem,
  ): Promise<PreferencesOutcome> {
    try {
      await this.client.send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Put: {
                TableName: this.tableName,
                Item: inbox,
                ConditionExpression: ifAbsent,
                ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
              },
            },
            {
              Put: {
                TableName: this.tableName,
                Item: prefs,
                // Newest occurredAt wins; on a tie the greater eventId, so every arrival order ends the same.
                ConditionExpression:
                  'attribute_not_exists(pk) OR occurredAtMs < :at OR (occurredAtMs = :at AND eventId < :id)',
                ExpressionAttributeValues: { ':at': prefs.occurredAtMs, ':id': prefs.eventId },
              },
            },
          ],
        }),
      );
      return { kind: 'created' };
    } catch (error) {
      if ((error as Error)?.name !== 'TransactionCanceledException') throw error;
      const outcome = classifyCancellation(error as TransactionCanceledException);
      // Index 1 failed its condition alone: a newer update is in force. Recorded in the inbox, not applied.
      if (outcome.kind !== 'notificationExists') return outcome;
    }
    try {
      await this.client.send(
        new PutCommand({
          TableName: this.tableName,
          Item: staleInbox,
          ConditionExpression: ifAbsent,
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return { kind: 'stale' };
    } catch (error) {
      if ((error as Error)?.name !== 'ConditionalCheckFailedException') throw error;
      const item = (error as { Item?: Record<string, unknown> }).Item;
      return { kind: 'inboxExists', payloadHash: item === undefined ? undefined : storedHash(item) };
    }
  }

  async quarantine(item: QuarantineItem): Promise<boolean> {
    try {
      await this.client.send(new PutCommand({ TableName: this.tableName, Item: item, ConditionExpression: ifAbsent }));
      return true;
    } catch (error) {
      if ((error as Error)?.name === 'ConditionalCheckFailedException') return false;
      throw error;
    }
  }
}

/** Index 0 of the transaction is the inbox Put, 1..n the notifications (the order recordEvent builds). */
export function classifyCancellation(error: TransactionCanceledException): RecordOutcome {
  const codes = (error.CancellationReasons ?? []).map((r) => r.Code ?? 'None');
  const transient = codes.filter((c) => TRANSIENT_CANCELLATION_CODES.has(c));
  if (transient.length > 0) {
    throw new TransientStoreError(`transaction cancelled: ${codes.join(',')}`, transient, { cause: error });
  }
  const inbox = error.CancellationReasons?.[0];
  if (inbox?.Code === 'ConditionalCheckFailed') {
    const stored = inbox.Item === undefined ? undefined : storedHash(inbox.Item);
    return { kind: 'inboxExists', payloadHash: stored };
  }
  if (codes.slice(1).includes('ConditionalCheckFailed')) return { kind: 'notificationExists' };
  // ValidationError: an item of this record is one DynamoDB will never store (too large, ill-formed …).
  if (codes.includes('ValidationError')) {
    throw new RecordRefusedError(`transaction cancelled: ${codes.join(',')}`, { cause: error });
  }
  throw new UnexpectedResponseError(
    `transaction cancelled for an unexpected reason: ${codes.join(',') || 'none given'}`,
    {
      cause: error,
    },
  );
}

/** The SDK hands cancellation items back in wire format (lib-dynamodb does not unmarshall errors). */
function storedHash(item: Record<string, unknown>): string | undefined {
  const value = item.payloadHash;
  if (typeof value === 'string') return value;
  const plain = unmarshall(item as Parameters<typeof unmarshall>[0]);
  return typeof plain.payloadHash === 'string' ? plain.payloadHash : undefined;
}

import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBRecord } from 'aws-lambda';
import type { NotificationKey } from '../commons/notification-store.ts';

/** The notification a record asks us to send, or undefined for anything else (checked again in code). */
export function dispatchable(
  record: DynamoDBRecord,
): { key: NotificationKey; notificationId: string; retryAt: number | undefined } | undefined {
  if (record.eventName !== 'INSERT' && record.eventName !== 'MODIFY') return undefined;
  const image = record.dynamodb?.NewImage;
  if (image === undefined) return undefined;
  const item = unmarshall(image as Record<string, AttributeValue>);
  if (item.kind !== 'NOTIFICATION' || item.status !== 'PENDING') return undefined;
  return {
    key: { pk: String(item.pk), sk: String(item.sk) },
    // The image holds the id the item was written with: read, never re-derived from the key.
    notificationId: String(item.notificationId),
    retryAt: typeof item.retryAt === 'number' ? item.retryAt : undefined,
  };
}

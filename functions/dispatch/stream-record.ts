import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBRecord } from 'aws-lambda';
import { classOf, NOTICE_CLASSES } from '../domain/catalogue.ts';
import type { NotificationKey } from '../stores/notification-store.ts';

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

/**
 * The batch's records critical first, then normal, then bulk, in stream order within a class (a stable sort): the
 * invocation's send slots go to critical notices before normal and bulk ones that may each wait for a token at a
 * saturated quota. Batch item failures are reported by sequence number, so the stream's checkpoint is the same
 * whatever order the records ran in. A record that is no notification (or names no known type) keeps its place among
 * the normal ones.
 */
export function criticalFirst(records: readonly DynamoDBRecord[]): DynamoDBRecord[] {
  const rank = (r: DynamoDBRecord) => {
    const template = r.dynamodb?.NewImage?.template?.S;
    return NOTICE_CLASSES.indexOf(template === undefined ? 'normal' : classOf(template));
  };
  return [...records].sort((a, b) => rank(a) - rank(b));
}

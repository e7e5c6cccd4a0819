/**
 * DynamoDB adapter for delivery feedback on notification items (domain/feedback.ts): the notification a provider's
 * message id belongs to (the sparse providerMessage index), and the feedback recorded on it when it describes the send
 * the item records. Read, decide (deliveryVerdict, pure), then one UpdateItem conditional on what was read, so a
 * concurrent feedback, a mark or a resend in between makes it decide again; the state machine's attributes (status,
 * updatedAt, attempt) are never written.
 */
import { type DynamoDBDocumentClient, GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { TransientStoreError } from '../commons/errors.ts';
import { TABLE_SCHEMA } from '../contracts/table-schema.ts';
import { attemptEvidence } from '../domain/attempt-evidence.ts';
import { type DeliveryState, deliveryVerdict, type Feedback, type FeedbackTarget } from '../domain/feedback.ts';
import {
  eventPk,
  notificationIdOf,
  notificationOfEarlierSendKey,
  notificationOfKey,
  notificationSk,
} from '../domain/keys.ts';
import { MESSAGE_ID_ATTRIBUTES, messageIdIs, messageIdOf } from '../domain/message-id.ts';
import type { NotificationItem } from '../domain/notification.ts';
import { isConditionFailure } from '../stores/condition-failure.ts';

/** What recording a feedback did. */
export type DeliveryRecorded = 'recorded' | 'unchanged' | 'otherSend' | 'noNotification';

/**
 * What recording a feedback did, and the evidence batch of the send's record as the item showed it then (`evidence.batch`,
 * written with SENT) while the item records this send: where the report's evidence goes. Learnt from the write's own
 * answer or the read it decided on — never a read of its own (a strongly consistent read per report was its cost).
 */
export interface DeliveryOutcome {
  readonly kind: DeliveryRecorded;
  /** Undefined for a send from before batches, an earlier send (a resend took it off the item), or an item gone. */
  readonly sendBatch?: string;
}

/**
 * The batch of the send `messageId` names, from a notification item (or the part of it read). Only this attempt's
 * reference: one a resend left from an earlier attempt (domain/attempt-evidence.ts) names another send's batch.
 */
const sendBatchOf = (item: Record<string, unknown> | undefined, messageId: string): string | undefined => {
  if (item === undefined || messageIdOf(item) !== messageId) return undefined;
  const batch = attemptEvidence(item as Pick<NotificationItem, 'evidence' | 'createdAt' | 'attempt'>)?.batch;
  return typeof batch === 'string' ? batch : undefined;
};
const outcome = (kind: DeliveryRecorded, sendBatch: string | undefined): DeliveryOutcome =>
  sendBatch === undefined ? { kind } : { kind, sendBatch };

/** How often a feedback decides again when the item moved under it before it gives up (and is retried). */
const ATTEMPTS = 4;

/** The attributes a verdict reads, as the condition of the write that follows it: "unchanged since read". */
const GUARDED = [...MESSAGE_ID_ATTRIBUTES, 'deliveryMessageId', 'deliveryRank', 'deliveryAtMs'] as const;

export class DynamoDeliveryStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  /**
   * The notification that recorded this provider message id — on the item, or as an earlier send a resend took off
   * it — or undefined (not ours, or not recorded yet). SNS's only: an email's id is not on the index (message-id.ts),
   * and an SES report is found by its tag (a report without it is not ours, feedback.ts).
   */
  async findByMessageId(messageId: string): Promise<FeedbackTarget | undefined> {
    const index = TABLE_SCHEMA.messageIndex;
    const r = await this.client.send(
      new QueryCommand({
        TableName: this.tableName,
        IndexName: index.indexName,
        KeyConditionExpression: '#m = :m',
        ExpressionAttributeNames: { '#m': index.partitionKey },
        ExpressionAttributeValues: { ':m': messageId },
        Limit: 2,
      }),
    );
    // The notification itself, or an earlier send of it an operator's resend took off the item (keys.ts).
    const ref = (r.Items ?? [])
      .map((i) => ({ pk: String(i.pk), sk: String(i.sk) }))
      .map((key) => notificationOfKey(key) ?? notificationOfEarlierSendKey(key))
      .find((found) => found !== undefined);
    return ref === undefined ? undefined : { notificationId: notificationIdOf(ref.eventId, ref.channel), ...ref };
  }

  /** The address the notification was sent to (its `recipient`), or undefined when the item is gone or erased. */
  async recipientOf(target: FeedbackTarget): Promise<string | undefined> {
    const r = await this.client.send(
      new GetCommand({
        TableName: this.tableName,
        Key: { pk: eventPk(target.eventId), sk: notificationSk(target.channel) },
        ConsistentRead: true,
        ProjectionExpression: 'recipient',
      }),
    );
    const recipient = r.Item?.recipient;
    return typeof recipient === 'string' && recipient !== '' ? recipient : undefined;
  }

  async recordDelivery(target: FeedbackTarget, f: Feedback): Promise<DeliveryOutcome> {
    const key = { pk: eventPk(target.eventId), sk: notificationSk(target.channel) };
    // The common case in one write: feedback about the send the item records, newer than what it holds. Exactly the
    // cases deliveryVerdict applies with a recorded send; anything else is read and decided below. The item it
    // answers with (no read units: a write's return values are free) names the send's evidence batch.
    try {
      const r = await this.client.send(
        new UpdateCommand({ ...this.writeIfOwnSendAndNewer(key, f), ReturnValues: 'ALL_NEW' }),
      );
      return outcome('recorded', sendBatchOf(r.Attributes, f.messageId));
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
    for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
      const read = await this.client.send(
        new GetCommand({
          TableName: this.tableName,
          Key: key,
          ConsistentRead: true,
          ProjectionExpression: `pk, ${GUARDED.join(', ')}, manualResends, evidence, attempt, createdAt`,
        }),
      );
      const item = read.Item as (DeliveryState & Record<string, unknown>) | undefined;
      if (item === undefined) return { kind: 'noNotification' };
      const verdict = deliveryVerdict(item, f);
      const batch = sendBatchOf(item, f.messageId);
      if (verdict === 'otherSend') return outcome('otherSend', batch);
      if (verdict === 'notNewer') return outcome('unchanged', batch);
      try {
        // Unchanged since read (its condition): the batch read is the item's.
        await this.client.send(new UpdateCommand(this.writeIfUnchanged(key, item, f)));
        return outcome('recorded', batch);
      } catch (error) {
        if (!isConditionFailure(error)) throw error;
        // Moved since read (another feedback, a mark, a resend), or gone: decide again on what it is now.
      }
    }
    throw new TransientStoreError(`feedback for ${target.notificationId} kept meeting concurrent changes`, [
      'ConditionalCheckFailedException',
    ]);
  }

  /** Feedback about the send the item records, newer than what it holds: exactly where deliveryVerdict applies it. */
  private writeIfOwnSendAndNewer(key: { pk: string; sk: string }, f: Feedback) {
    return {
      ...this.write(key, f),
      ConditionExpression: `${messageIdIs(':mid')} AND (attribute_not_exists(deliveryMessageId) OR deliveryMessageId = :mid) AND (attribute_not_exists(deliveryRank) OR deliveryRank < :rank OR (deliveryRank = :rank AND deliveryAtMs < :atMs))`,
    };
  }

  /** The decision was taken on what was read: write only if none of it changed since. */
  private writeIfUnchanged(
    key: { pk: string; sk: string },
    item: DeliveryState & Record<string, unknown>,
    f: Feedback,
  ) {
    const write = this.write(key, f);
    const values = write.ExpressionAttributeValues;
    const conditions = ['attribute_exists(pk)'];
    GUARDED.forEach((name, i) => {
      if (item[name] === undefined) conditions.push(`attribute_not_exists(${name})`);
      else {
        conditions.push(`${name} = :g${i}`);
        values[`:g${i}`] = item[name];
      }
    });
    const resends = item.manualResends?.length;
    if (resends === undefined) conditions.push('attribute_not_exists(manualResends)');
    else {
      conditions.push('size(manualResends) = :resends');
      values[':resends'] = resends;
    }
    return { ...write, ConditionExpression: conditions.join(' AND ') };
  }

  /** The feedback's attributes on the item (the condition is the caller's). */
  private write(key: { pk: string; sk: string }, f: Feedback) {
    const values: Record<string, unknown> = {
      ':status': f.status,
      ':rank': f.rank,
      ':at': f.at,
      ':atMs': f.atMs,
      ':mid': f.messageId,
    };
    const set = [
      'deliveryStatus = :status',
      'deliveryRank = :rank',
      'deliveryAt = :at',
      'deliveryAtMs = :atMs',
      'deliveryMessageId = :mid',
    ];
    const remove: string[] = [];
    const optional = (attribute: string, placeholder: string, value: string | undefined) => {
      if (value === undefined) remove.push(attribute);
      else {
        set.push(`${attribute} = ${placeholder}`);
        values[placeholder] = value;
      }
    };
    optional('bounceType', ':bt', f.bounceType);
    optional('bounceSubType', ':bst', f.bounceType === undefined ? undefined : (f.bounceSubType ?? 'Unknown'));
    optional('deliveryResponse', ':response', f.providerResponse);
    return {
      TableName: this.tableName,
      Key: key,
      UpdateExpression: `SET ${set.join(', ')}${remove.length === 0 ? '' : ` REMOVE ${remove.join(', ')}`}`,
      ExpressionAttributeValues: values,
    };
  }
}

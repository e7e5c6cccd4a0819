/**
 * DynamoDB adapter for the notification state machine (DESIGN.md "Dispatch"). Every transition is one conditional
 * UpdateItem; `attempt` is the fencing token, so a stale holder can never overwrite a newer one.
 *
 * A conditional update whose reply was lost is retried by the SDK and then fails its own condition. Each transition
 * therefore re-reads the item on ConditionalCheckFailed and reports `applied` when the item already shows exactly
 * this transition (same status, same attempt, same claimId): commit-then-timeout is not mistaken for a lost race.
 */
import {
  type DynamoDBDocumentClient,
  GetCommand,
  type NativeAttributeValue,
  QueryCommand,
  UpdateCommand,
  type UpdateCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { TABLE_SCHEMA } from '../../lib/table-schema.ts';
import {
  type NotificationItem,
  type NotificationStatus,
  notificationIdOfKey,
  type SweepState,
  sweepKey,
} from '../domain/notification.ts';
import { UnexpectedResponseError } from './errors.ts';

export interface NotificationKey {
  readonly pk: string;
  readonly sk: string;
}

export type Transition = 'applied' | 'lost';

export interface SweepEntry extends NotificationKey {
  readonly notificationId: string;
  readonly channel: NotificationItem['channel'];
  readonly status: NotificationStatus;
  readonly attempt: number;
  readonly sweepAt: number;
  readonly leaseUntil?: number;
}

export interface NotificationStore {
  get(key: NotificationKey): Promise<NotificationItem | undefined>;
  /** PENDING → SENDING, attempt+1, lease. Undefined when another holder has it or it is no longer PENDING. */
  claim(key: NotificationKey, claimId: string, now: number, leaseMs: number): Promise<NotificationItem | undefined>;
  markSent(item: NotificationItem, providerMessageId: string, now: number): Promise<Transition>;
  markFailed(item: NotificationItem, reason: string, now: number): Promise<Transition>;
  markUnknown(item: NotificationItem, reason: string, now: number): Promise<Transition>;
  /** SENDING → PENDING: a retry. The MODIFY this writes is the retry's one trigger. */
  release(item: NotificationItem, reason: string, retryAt: number, now: number): Promise<Transition>;
  /** Sweep index: items of one state and shard whose sweepAt is at or before `before`. */
  findDue(state: SweepState, shard: number, before: number, limit: number): Promise<SweepEntry[]>;
  /** PENDING → PENDING, only if untouched since the sweeper saw it: a fresh stream record re-drives it. */
  redrive(entry: SweepEntry, now: number): Promise<Transition>;
  /** SENDING with an expired lease → UNKNOWN or PENDING, only if nobody moved it since the sweeper saw it. */
  resolveExpired(entry: SweepEntry, to: 'UNKNOWN' | 'PENDING', now: number): Promise<Transition>;
}

const isConditionFailure = (error: unknown) => (error as Error)?.name === 'ConditionalCheckFailedException';

export class DynamoNotificationStore implements NotificationStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async get(key: NotificationKey): Promise<NotificationItem | undefined> {
    const r = await this.client.send(new GetCommand({ TableName: this.tableName, Key: key, ConsistentRead: true }));
    return r.Item as NotificationItem | undefined;
  }

  async claim(key: NotificationKey, claimId: string, now: number, leaseMs: number) {
    const leaseUntil = now + leaseMs;
    try {
      const r = await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: key,
          ConditionExpression: '#status = :pending',
          UpdateExpression:
            'SET #status = :sending, attempt = attempt + :one, leaseUntil = :lease, claimId = :claim, updatedAt = :now, sweepKey = :sweepKey, sweepAt = :lease REMOVE retryAt',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: {
            ':pending': 'PENDING',
            ':sending': 'SENDING',
            ':one': 1,
            ':lease': leaseUntil,
            ':claim': claimId,
            ':now': new Date(now).toISOString(),
            ':sweepKey': sweepKey('SENDING', notificationIdOfKey(key.pk, key.sk)),
          },
          ReturnValues: 'ALL_NEW',
        }),
      );
      if (r.Attributes === undefined) throw new UnexpectedResponseError('claim returned no attributes');
      return r.Attributes as NotificationItem;
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      const current = await this.get(key);
      // Our own claim committed and its reply was lost: it is ours.
      if (current?.status === 'SENDING' && (current as { claimId?: string }).claimId === claimId) return current;
      return undefined;
    }
  }

  markSent(item: NotificationItem, providerMessageId: string, now: number) {
    return this.finish(item, 'SENT', now, { providerMessageId });
  }

  markFailed(item: NotificationItem, reason: string, now: number) {
    return this.finish(item, 'FAILED', now, { lastError: reason });
  }

  markUnknown(item: NotificationItem, reason: string, now: number) {
    return this.finish(item, 'UNKNOWN', now, { lastError: reason });
  }

  /** SENDING → a terminal status; the item leaves the sweep index. */
  private async finish(
    item: NotificationItem,
    to: 'SENT' | 'FAILED' | 'UNKNOWN',
    now: number,
    set: Record<string, NativeAttributeValue>,
  ): Promise<Transition> {
    const names = Object.keys(set);
    return this.transition(item, to, {
      UpdateExpression: `SET #status = :to, updatedAt = :now, ${names.map((n) => `${n} = :${n}`).join(', ')} REMOVE sweepKey, sweepAt, leaseUntil`,
      values: Object.fromEntries(names.map((n) => [`:${n}`, set[n]])),
      now,
    });
  }

  release(item: NotificationItem, reason: string, retryAt: number, now: number) {
    return this.transition(item, 'PENDING', {
      UpdateExpression:
        'SET #status = :to, updatedAt = :now, lastError = :reason, retryAt = :retryAt, sweepKey = :sweepKey, sweepAt = :nowMs REMOVE leaseUntil',
      values: {
        ':reason': reason,
        ':retryAt': retryAt,
        ':sweepKey': sweepKey('PENDING', item.notificationId),
        ':nowMs': now,
      },
      now,
    });
  }

  /** Conditional on SENDING with the holder's attempt: the fencing token. */
  private async transition(
    item: NotificationItem,
    to: NotificationStatus,
    update: { UpdateExpression: string; values: Record<string, NativeAttributeValue>; now: number },
  ): Promise<Transition> {
    const key = { pk: item.pk, sk: item.sk };
    const result = await this.conditionalUpdate({
      TableName: this.tableName,
      Key: key,
      ConditionExpression: '#status = :sending AND attempt = :attempt',
      UpdateExpression: update.UpdateExpression,
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: {
        ':sending': 'SENDING',
        ':attempt': item.attempt,
        ':to': to,
        ':now': new Date(update.now).toISOString(),
        ...update.values,
      },
    });
    if (result === 'applied') return result;
    const current = await this.get(key);
    const ours = current?.attempt === item.attempt && current.updatedAt === new Date(update.now).toISOString();
    return ours && current?.status === to ? 'applied' : 'lost';
  }

  /** One conditional UpdateItem: `lost` when its condition failed, anything else thrown. */
  private async conditionalUpdate(input: UpdateCommandInput): Promise<Transition> {
    try {
      await this.client.send(new UpdateCommand(input));
      return 'applied';
    } catch (error) {
      if (isConditionFailure(error)) return 'lost';
      throw error;
    }
  }

  async findDue(state: SweepState, shard: number, before: number, limit: number): Promise<SweepEntry[]> {
    const index = TABLE_SCHEMA.sweepIndex;
    const r = await this.client.send(
      new QueryCommand({
        TableName: this.tableName,
        IndexName: index.indexName,
        KeyConditionExpression: '#key = :key AND #at <= :before',
        ExpressionAttributeNames: { '#key': index.partitionKey, '#at': index.sortKey },
        ExpressionAttributeValues: { ':key': `${state}#${shard}`, ':before': before },
        Limit: limit,
      }),
    );
    return (r.Items ?? []) as SweepEntry[];
  }

  redrive(entry: SweepEntry, now: number): Promise<Transition> {
    return this.conditionalUpdate({
      TableName: this.tableName,
      Key: { pk: entry.pk, sk: entry.sk },
      ConditionExpression: '#status = :pending AND sweepAt = :seen',
      UpdateExpression:
        'SET redrives = if_not_exists(redrives, :zero) + :one, sweepAt = :now, updatedAt = :iso REMOVE retryAt',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: {
        ':pending': 'PENDING',
        ':seen': entry.sweepAt,
        ':zero': 0,
        ':one': 1,
        ':now': now,
        ':iso': new Date(now).toISOString(),
      },
    });
  }

  resolveExpired(entry: SweepEntry, to: 'UNKNOWN' | 'PENDING', now: number): Promise<Transition> {
    const update =
      to === 'UNKNOWN'
        ? 'SET #status = :to, lastError = :reason, updatedAt = :iso REMOVE sweepKey, sweepAt, leaseUntil'
        : 'SET #status = :to, lastError = :reason, updatedAt = :iso, sweepKey = :pendingKey, sweepAt = :now REMOVE leaseUntil';
    return this.conditionalUpdate({
      TableName: this.tableName,
      Key: { pk: entry.pk, sk: entry.sk },
      ConditionExpression: '#status = :sending AND attempt = :attempt AND leaseUntil < :now',
      UpdateExpression: update,
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: {
        ':sending': 'SENDING',
        ':attempt': entry.attempt,
        ':now': now,
        ':to': to,
        ':reason': 'LEASE_EXPIRED',
        ':iso': new Date(now).toISOString(),
        ...(to === 'PENDING' ? { ':pendingKey': sweepKey('PENDING', entry.notificationId) } : {}),
      },
    });
  }
}

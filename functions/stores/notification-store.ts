/**
 * DynamoDB adapter for the notification state machine (docs/dispatch.md "The state machine"). Every transition is one
 * conditional UpdateItem; `attempt` is the fencing token, so a stale holder can never overwrite a newer one. A
 * conditional update whose reply was lost is retried by the SDK and then fails its own condition. Every transition —
 * dispatch's and the sweeper's — therefore re-reads the item on ConditionalCheckFailed and reports `applied` when the
 * item already shows exactly this transition (same status, attempt, and the updatedAt it wrote): a commit-then-timeout
 * is not mistaken for a lost race, and an UNKNOWN the sweeper wrote still raises its alarm.
 */
import {
  type DynamoDBDocumentClient,
  GetCommand,
  type NativeAttributeValue,
  UpdateCommand,
  type UpdateCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { UnexpectedResponseError } from '../commons/errors.ts';
import { notificationOfKey } from '../domain/keys.ts';
import { messageIdAttribute, messageIdOf, NO_MESSAGE_ID } from '../domain/message-id.ts';
import { type NotificationItem, pendingSweepKey } from '../domain/notification.ts';
import type { NotificationStatus } from '../domain/state-machine.ts';
import { moveCondition } from '../domain/state-machine.ts';
import { SWEEP_SHARDS } from '../domain/sweep-index.ts';
import { isConditionFailure, refusedItem } from './condition-failure.ts';
import type { FenceGate } from './fence-store.ts';
import type {
  ClaimResult,
  NotificationKey,
  NotificationStore,
  Release,
  SentEvidence,
  Transition,
  UnsentEnd,
} from './notification-port.ts';
import { ownedCondition } from './owned-condition.ts';

export type {
  ClaimResult,
  NotificationKey,
  NotificationStore,
  Release,
  Resolution,
  SentEvidence,
  SweepEntry,
  SweepPage,
  SweepStore,
  SweepWindow,
  Transition,
  UnsentEnd,
} from './notification-port.ts';

/** A secret is sent, never kept: every write that ends a notification removes it (domain/secrets.ts). */
export const FORGET_SECRETS = 'secrets';

export const iso = (ms: number) => new Date(ms).toISOString();

export class DynamoNotificationStore implements NotificationStore {
  constructor(
    protected readonly client: DynamoDBDocumentClient,
    protected readonly tableName: string,
    /** Shards of the sweep index the keys this store writes are spread over (the stack's, from its peak). */
    protected readonly sweepShards = SWEEP_SHARDS,
    /** Two regions: the claim and the sweeper's writes need the item's epoch to be this region's (owned-condition.ts). */
    private readonly fence?: Pick<FenceGate, 'claimEpoch'>,
  ) {}

  async get(key: NotificationKey): Promise<NotificationItem | undefined> {
    const r = await this.client.send(new GetCommand({ TableName: this.tableName, Key: key, ConsistentRead: true }));
    return r.Item as NotificationItem | undefined;
  }

  async claim(key: NotificationKey, claimId: string, now: number, leaseMs: number): Promise<ClaimResult> {
    const leaseUntil = now + leaseMs;
    if (notificationOfKey(key) === undefined) {
      throw new UnexpectedResponseError(`not a notification's key: ${key.pk} ${key.sk}`);
    }
    const claimed = moveCondition('PENDING', 'SENDING');
    const owned = await ownedCondition(this.fence);
    if (owned === 'fenced') return { kind: 'taken' };
    try {
      const r = await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: key,
          ConditionExpression: `${claimed.expression} AND (attribute_not_exists(retryAt) OR retryAt <= :nowMs)${owned.expression}`,
          // sweepKey and sweepAt stay as they are: a new index key would cost the sweep index a delete and a put. The
          // item waits in its PENDING partition at its PENDING sweepAt (at most the pending threshold ahead), where the
          // sweeper's lease pass finds it by the projected status and leaseUntil once its lease has expired.
          UpdateExpression: `SET #status = :sending, attempt = attempt + :one, leaseUntil = :lease, claimId = :claim, updatedAt = :now${owned.claimEpoch} REMOVE retryAt`,
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: {
            ...claimed.values,
            ':sending': 'SENDING',
            ':one': 1,
            ':nowMs': now,
            ':lease': leaseUntil,
            ':claim': claimId,
            ':now': iso(now),
            ...owned.values,
          },
          ReturnValues: 'ALL_NEW',
          // A refused claim (the other trigger's critical notice, a duplicate record) answers with the item as it is:
          // decided on that, without a read of its own.
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      if (r.Attributes === undefined) throw new UnexpectedResponseError('claim returned no attributes');
      return { kind: 'claimed', item: r.Attributes as NotificationItem };
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      // No item in the answer (none stored, or an endpoint that does not return it): read it, consistently.
      const refused = refusedItem(error) as NotificationItem | undefined;
      const current = refused ?? (await this.get(key));
      // Our own claim committed and its reply was lost: it is ours.
      if (current?.status === 'SENDING' && (current as { claimId?: string }).claimId === claimId) {
        return { kind: 'claimed', item: current };
      }
      if (current?.status === 'PENDING' && typeof current.retryAt === 'number' && current.retryAt > now) {
        return { kind: 'notDue', retryAt: current.retryAt };
      }
      return { kind: 'taken' };
    }
  }

  markSent(
    item: NotificationItem,
    providerMessageId: string,
    now: number,
    evidence?: SentEvidence,
    record?: Uint8Array,
  ) {
    // An email's id outside the providerMessage index (message-id.ts): its reports find it by its SES tag.
    return this.finish(item, 'SENT', now, {
      [messageIdAttribute(item.channel)]: providerMessageId,
      ...(evidence === undefined ? {} : { evidence }),
      ...(record === undefined ? {} : { evidenceRecord: record }),
    });
  }

  markFailed(item: NotificationItem, reason: string, now: number) {
    return this.finish(item, 'FAILED', now, { lastError: reason });
  }

  markUnknown(item: NotificationItem, reason: string, now: number) {
    return this.finish(item, 'UNKNOWN', now, { lastError: reason });
  }

  async markSuppressed(key: NotificationKey, reason: string, now: number): Promise<Transition> {
    const move = moveCondition('PENDING', 'SUPPRESSED');
    const result = await this.conditionalUpdate({
      TableName: this.tableName,
      Key: key,
      ConditionExpression: move.expression,
      UpdateExpression: `SET #status = :to, suppressedReason = :reason, updatedAt = :now REMOVE sweepKey, sweepAt, retryAt, leaseUntil, ${FORGET_SECRETS}`,
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: { ...move.values, ':to': 'SUPPRESSED', ':reason': reason, ':now': iso(now) },
    });
    if (result === 'applied') return result;
    // Our own write committed and its reply was lost (the SDK's retry then failed the condition)?
    const current = await this.get(key);
    return current?.status === 'SUPPRESSED' && current.updatedAt === iso(now) ? 'applied' : 'lost';
  }

  suppress(item: NotificationItem, reason: string, now: number) {
    return this.finish(item, 'SUPPRESSED', now, { suppressedReason: reason });
  }

  extendLease(item: NotificationItem, leaseUntil: number, now: number, messageId?: string, evidence?: SentEvidence) {
    // The evidence only with the id: the sweeper's SENT from that id keeps it (sweep-store.ts acceptExpired), naming the record.
    const named = evidence ? ', evidence = :evidence' : '';
    const accepted =
      messageId === undefined ? '' : `, ${messageIdAttribute(item.channel)} = :providerMessageId${named}`;
    return this.transition(item, 'SENDING', {
      // leaseUntil only: the sweeper reads the lease from the index's projection, wherever the item sits in it.
      UpdateExpression: `SET #status = :to, updatedAt = :now, leaseUntil = :lease${accepted}`,
      values: {
        ':lease': leaseUntil,
        ...(messageId === undefined
          ? {}
          : { ':providerMessageId': messageId, ...(evidence && { ':evidence': evidence }) }),
      },
      now,
    });
  }

  async recordLateAcceptance(item: NotificationItem, providerMessageId: string, now: number): Promise<Transition> {
    const key = { pk: item.pk, sk: item.sk };
    const result = await this.heldUpdate({
      TableName: this.tableName,
      Key: key,
      ConditionExpression: `#status = :unknown AND attempt = :attempt AND ${NO_MESSAGE_ID}`,
      // Not updatedAt: the sweeper's own re-read of its UNKNOWN compares it.
      UpdateExpression: `SET ${messageIdAttribute(item.channel)} = :mid, acceptedLateAt = :now`,
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: {
        ':unknown': 'UNKNOWN',
        ':attempt': item.attempt,
        ':mid': providerMessageId,
        ':now': iso(now),
      },
    });
    if (result === 'applied') return result;
    const current = await this.get(key);
    return current?.status === 'UNKNOWN' &&
      current.attempt === item.attempt &&
      messageIdOf(current) === providerMessageId
      ? 'applied'
      : 'lost';
  }

  hold(item: NotificationItem, until: number, zone: string, now: number) {
    return this.transition(item, 'HELD', {
      UpdateExpression:
        'SET #status = :to, updatedAt = :now, heldUntil = :heldUntil, heldZone = :zone, sweepKey = :sweepKey, sweepAt = :until, deferrals = if_not_exists(deferrals, :zero) + :one REMOVE leaseUntil, retryAt',
      values: {
        ':heldUntil': iso(until),
        ':zone': zone,
        ':until': until,
        ':sweepKey': pendingSweepKey(item.template, item.channel, item.notificationId, this.sweepShards),
        ':zero': 0,
        ':one': 1,
      },
      now,
    });
  }

  endUnsent(item: NotificationItem, end: UnsentEnd, now: number) {
    const { status, ...facts } = end;
    return this.finish(item, status, now, facts);
  }

  /** SENDING → a terminal status; the item leaves the sweep index, and a secret it held is forgotten. */
  private async finish(
    item: NotificationItem,
    to: 'SENT' | 'FAILED' | 'UNKNOWN' | 'SUPPRESSED' | UnsentEnd['status'],
    now: number,
    set: Record<string, NativeAttributeValue>,
  ): Promise<Transition> {
    const names = Object.keys(set);
    return this.transition(item, to, {
      // The claim's id goes too: it only recognises a claim whose reply was lost, and it is 43 bytes of every item.
      UpdateExpression: `SET #status = :to, updatedAt = :now, ${names.map((n) => `${n} = :${n}`).join(', ')} REMOVE sweepKey, sweepAt, leaseUntil, claimId, ${FORGET_SECRETS}`,
      values: Object.fromEntries(names.map((n) => [`:${n}`, set[n]])),
      now,
    });
  }

  release(item: NotificationItem, r: Release, now: number) {
    const deferral = r.deferral ? ', deferrals = if_not_exists(deferrals, :zero) + :one' : '';
    return this.transition(item, 'PENDING', {
      UpdateExpression: `SET #status = :to, updatedAt = :now, lastError = :reason, retryAt = :retryAt, sweepKey = :sweepKey, sweepAt = :sweepAt${deferral} REMOVE leaseUntil`,
      values: {
        ':reason': r.reason,
        ':retryAt': r.retryAt,
        ':sweepAt': r.sweepAt,
        ':sweepKey': pendingSweepKey(item.template, item.channel, item.notificationId, this.sweepShards),
        ...(r.deferral ? { ':zero': 0, ':one': 1 } : {}),
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
    const move = moveCondition('SENDING', to);
    const result = await this.heldUpdate({
      TableName: this.tableName,
      Key: key,
      ConditionExpression: `${move.expression} AND attempt = :attempt`,
      UpdateExpression: update.UpdateExpression,
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: {
        ...move.values,
        ':attempt': item.attempt,
        ':to': to,
        ':now': iso(update.now),
        ...update.values,
      },
    });
    if (result === 'applied') return result;
    return this.wroteItself(key, to, item.attempt, update.now);
  }

  /**
   * After a failed condition: did our own write commit (its reply lost, the SDK's retry then failing the condition)?
   * Yes when the item shows the status we wrote, with the attempt we saw and the updatedAt we wrote.
   */
  protected async wroteItself(
    key: NotificationKey,
    to: NotificationStatus,
    attempt: number,
    now: number,
  ): Promise<Transition> {
    const current = await this.get(key);
    return current?.status === to && current.attempt === attempt && current.updatedAt === iso(now) ? 'applied' : 'lost';
  }

  /** A write without a claim (the sweeper's, a suppression): in two regions, only to an item of this region's epoch. */
  protected async conditionalUpdate(input: UpdateCommandInput): Promise<Transition> {
    const owned = await ownedCondition(this.fence);
    if (owned === 'fenced') return 'lost';
    input.ConditionExpression = `${input.ConditionExpression}${owned.expression}`;
    input.ExpressionAttributeValues = { ...input.ExpressionAttributeValues, ...owned.values };
    return this.heldUpdate(input);
  }

  /** One conditional UpdateItem: `lost` when its condition failed, anything else thrown. A holder's is fenced on its attempt. */
  private async heldUpdate(input: UpdateCommandInput): Promise<Transition> {
    try {
      await this.client.send(new UpdateCommand(input));
      return 'applied';
    } catch (error) {
      if (isConditionFailure(error)) return 'lost';
      throw error;
    }
  }
}

/**
 * The sweeper's own reads of the sweep index and transitions of the notification state machine (docs/dispatch.md
 * "The state machine"), on what it found there, without a claim: a subclass of dispatch's store (notification-store.ts,
 * whose conditional writes and re-reads they share), so that dispatch's bundle does not carry them
 * (test/tools/bundle-budget.test.ts).
 */
import { attemptEvidence } from '../domain/attempt-evidence.ts';
import { messageIdAttribute, messageIdIs, messageIdOf, NO_MESSAGE_ID } from '../domain/message-id.ts';
import { pendingSweepKey } from '../domain/notification.ts';
import { moveCondition } from '../domain/state-machine.ts';
import type {
  NotificationKey,
  Resolution,
  SentEvidence,
  SweepEntry,
  SweepStore,
  Transition,
} from './notification-port.ts';
import { DynamoNotificationStore, FORGET_SECRETS, iso } from './notification-store.ts';
import { duePage, expiredLeasePage } from './sweep-pages.ts';

export class DynamoSweepStore extends DynamoNotificationStore implements SweepStore {
  // The sweep index's reads (sweep-pages.ts).
  findDue: SweepStore['findDue'] = (partition, window, limit, startKey) =>
    duePage(this.client, this.tableName, partition, window, limit, startKey);
  findExpiredLeases: SweepStore['findExpiredLeases'] = (partition, now, until, startKey) =>
    expiredLeasePage(this.client, this.tableName, partition, now, until, startKey);

  async releaseHeld(entry: SweepEntry, now: number, nextSweepAt: number): Promise<Transition> {
    const key = { pk: entry.pk, sk: entry.sk };
    const move = moveCondition('HELD', 'PENDING');
    const result = await this.conditionalUpdate({
      TableName: this.tableName,
      Key: key,
      ConditionExpression: `${move.expression} AND sweepAt = :seen`,
      UpdateExpression:
        'SET #status = :pending, releasedAt = :iso, firstCreatedAt = if_not_exists(firstCreatedAt, createdAt), createdAt = :iso, updatedAt = :iso, sweepAt = :next',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: {
        ...move.values,
        ':pending': 'PENDING',
        ':seen': entry.sweepAt,
        ':next': nextSweepAt,
        ':iso': iso(now),
      },
    });
    return result === 'applied' ? result : this.wroteItself(key, 'PENDING', entry.attempt, now);
  }

  async redrive(entry: SweepEntry, now: number, nextSweepAt: number): Promise<Transition> {
    const key = { pk: entry.pk, sk: entry.sk };
    const move = moveCondition('PENDING', 'PENDING');
    const result = await this.conditionalUpdate({
      TableName: this.tableName,
      Key: key,
      ConditionExpression: `${move.expression} AND sweepAt = :seen`,
      UpdateExpression:
        'SET redrives = if_not_exists(redrives, :zero) + :one, sweepAt = :next, updatedAt = :iso REMOVE retryAt',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: {
        ...move.values,
        ':seen': entry.sweepAt,
        ':zero': 0,
        ':one': 1,
        ':next': nextSweepAt,
        ':iso': iso(now),
      },
    });
    return result === 'applied' ? result : this.wroteItself(key, 'PENDING', entry.attempt, now);
  }

  async resolveExpired(
    entry: SweepEntry,
    to: 'UNKNOWN' | 'PENDING',
    now: number,
    nextSweepAt: number,
  ): Promise<Resolution> {
    const key = { pk: entry.pk, sk: entry.sk };
    const update =
      to === 'UNKNOWN'
        ? `SET #status = :to, lastError = :reason, updatedAt = :iso REMOVE sweepKey, sweepAt, leaseUntil, ${FORGET_SECRETS}`
        : 'SET #status = :to, lastError = :reason, updatedAt = :iso, sweepKey = :pendingKey, sweepAt = :next REMOVE leaseUntil';
    // A claim leaves the item in its PENDING partition, whose key carries its class: it goes back to PENDING there.
    // An item claimed by an earlier deploy sits under a SENDING key; the index does not project the type, so that
    // one (rare — a holder that crashed, on an at-least-once channel) reads its item for it. A missing item fails the
    // condition below whatever key it names.
    const pendingKey =
      to !== 'PENDING'
        ? undefined
        : entry.sweepKey?.startsWith('PENDING#')
          ? entry.sweepKey
          : pendingSweepKey(
              (await this.get(key))?.template ?? '',
              entry.channel,
              entry.notificationId,
              this.sweepShards,
            );
    const move = moveCondition('SENDING', to);
    const result = await this.conditionalUpdate({
      TableName: this.tableName,
      Key: key,
      // Not when the holder recorded the provider's acceptance on the item: that send is known, see below.
      ConditionExpression: `${move.expression} AND attempt = :attempt AND leaseUntil < :now AND ${NO_MESSAGE_ID}`,
      UpdateExpression: update,
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: {
        ...move.values,
        ':attempt': entry.attempt,
        ':now': now,
        ':to': to,
        ':reason': 'LEASE_EXPIRED',
        ':iso': iso(now),
        ...(to === 'PENDING'
          ? {
              ':pendingKey': pendingKey,
              ':next': nextSweepAt,
            }
          : {}),
      },
    });
    if (result === 'applied') return result;
    const current = await this.get(key);
    if (current?.status === to && current.attempt === entry.attempt && current.updatedAt === iso(now)) return 'applied';
    const acceptance = current === undefined ? undefined : messageIdOf(current);
    if (
      current?.status !== 'SENDING' ||
      current.attempt !== entry.attempt ||
      typeof acceptance !== 'string' ||
      (current.leaseUntil ?? 0) >= now
    ) {
      return 'lost';
    }
    // An earlier attempt's reference beside this id is removed (domain/attempt-evidence.ts); an extension fails it.
    const stale = attemptEvidence(current) !== current.evidence;
    return this.acceptExpired(key, entry.attempt, acceptance, now, undefined, stale);
  }

  /** SENT for an expired lease whose holder spooled its send's record and died (sweeper/spooled-send.ts). */
  acceptSpooled(entry: SweepEntry, send: { providerMessageId: string; evidence: SentEvidence }, now: number) {
    return this.acceptExpired({ pk: entry.pk, sk: entry.sk }, entry.attempt, send.providerMessageId, now, {
      id: messageIdAttribute(entry.channel),
      evidence: send.evidence,
    });
  }

  /** SENT for an expired lease whose holder recorded the acceptance on the item (its evidence kept), or spooled it. */
  private async acceptExpired(
    key: NotificationKey,
    attempt: number,
    providerMessageId: string,
    now: number,
    fromRecord?: { id: string; evidence: SentEvidence },
    staleEvidence = false,
  ): Promise<Resolution> {
    const move = moveCondition('SENDING', 'SENT');
    const onItem = fromRecord ? '' : ` AND ${messageIdIs(':mid')}`;
    const written = fromRecord ? `, ${fromRecord.id} = :mid, evidence = :evidence` : '';
    const result = await this.conditionalUpdate({
      TableName: this.tableName,
      Key: key,
      ConditionExpression: `${move.expression} AND attempt = :attempt AND leaseUntil < :now${onItem}`,
      UpdateExpression: `SET #status = :sent, updatedAt = :iso${written} REMOVE sweepKey, sweepAt, leaseUntil, ${FORGET_SECRETS}${staleEvidence ? ', evidence' : ''}`,
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: {
        ...move.values,
        ':sent': 'SENT',
        ':attempt': attempt,
        ':now': now,
        ':mid': providerMessageId,
        ':iso': iso(now),
        ...(fromRecord && { ':evidence': fromRecord.evidence }),
      },
    });
    if (result === 'applied') return 'accepted';
    return (await this.wroteItself(key, 'SENT', attempt, now)) === 'applied' ? 'accepted' : 'lost';
  }

  async expire(entry: SweepEntry, now: number): Promise<Transition> {
    const key = { pk: entry.pk, sk: entry.sk };
    const move = moveCondition('PENDING', 'FAILED');
    const result = await this.conditionalUpdate({
      TableName: this.tableName,
      Key: key,
      ConditionExpression: `${move.expression} AND sweepAt = :seen`,
      UpdateExpression: `SET #status = :failed, lastError = :reason, updatedAt = :iso REMOVE sweepKey, sweepAt, retryAt, leaseUntil, ${FORGET_SECRETS}`,
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: {
        ...move.values,
        ':failed': 'FAILED',
        ':seen': entry.sweepAt,
        ':reason': 'EXPIRED',
        ':iso': iso(now),
      },
    });
    return result === 'applied' ? result : this.wroteItself(key, 'FAILED', entry.attempt, now);
  }
}

/**
 * DynamoDB adapter of an event's partition as an operator reads and changes it: the inbox item and the notifications
 * of one event (one Query), a customer's events through the sparse byUser index, the refused notifications — and the
 * operator's writes on them: a resend (docs/operations.md "The operator CLI") and an erasure
 * (docs/evidence-and-privacy.md "Erasure policy"). Each write is one conditional request: it does what was decided
 * on the item as read, or nothing, and says which.
 */
import { type DynamoDBDocumentClient, PutCommand, UpdateCommand, type UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import { TABLE_SCHEMA } from '../contracts/table-schema.ts';
import type { Channel } from '../domain/channels.ts';
import { ERASED_USER } from '../domain/erasure.ts';
import type { VerifiedIdentity } from '../domain/identity.ts';
import { eventIdOfPk, eventPk, INBOX_SK, userKeyOf } from '../domain/keys.ts';
import { MESSAGE_ID_ATTRIBUTES, messageIdIs, NO_MESSAGE_ID } from '../domain/message-id.ts';
import { buildEarlierSend, pendingSweepKey } from '../domain/notification.ts';
import { quarantinedUserKeyOf } from '../domain/quarantine-ref.ts';
import { manualResendRecord, type ResentItem } from '../domain/resend.ts';
import { REDACTED } from '../domain/secrets.ts';
import { moveCondition, type NotificationStatus, TERMINAL_STATUSES } from '../domain/state-machine.ts';
import { isConditionFailure } from './condition-failure.ts';
import type { Transition } from './notification-store.ts';
import { queryAll, queryItems } from './paged-query.ts';
import { type IncidentWindow, queryIncidents } from './quarantine-store.ts';
import { type OUT_OF_DATE, type UserEventsCursor, type UserEventsPage, userEventsPage } from './user-events-page.ts';

export { OUT_OF_DATE, type UserEventsCursor, type UserEventsPage } from './user-events-page.ts';

/** An item as the table holds it: the operator shows every attribute, known or not. */
export type StoredItem = Record<string, unknown>;

/** Everything the table holds about one event. */
export interface EventView {
  readonly eventId: string;
  readonly inbox: StoredItem | undefined;
  readonly notifications: StoredItem[];
  /** References of records meant to be this event that ingest quarantined (domain/quarantine-ref.ts). */
  readonly quarantined?: StoredItem[];
}

export type RefusedFilter = IncidentWindow;

/** The notification a resend puts back to PENDING, as it was read. */
export interface ResendTarget extends ResentItem {
  readonly pk: string;
  readonly sk: string;
  readonly eventId: string;
  readonly channel: Channel;
  readonly notificationId: string;
  readonly template?: unknown;
  readonly expiresAt?: unknown;
}

export interface EventStore {
  /** The inbox item and every notification of the event, read consistently. */
  read(eventId: string): Promise<EventView>;
  /** The customer's events, newest first, through the byUser index: one Query per page, never a scan. */
  eventIdsOfUser(userId: string): Promise<string[]>;
  /** The events of the customer's records that ingest quarantined, newest first (the byUser index, their own key). */
  quarantinedEventIdsOfUser(userId: string): Promise<string[]>;
  /**
   * One page of the customer's events — accepted and quarantined — newest first, each once, read: at most `limit`, and
   * where more are older, the cursor that continues after the last one (user-events-page.ts); OUT_OF_DATE when the
   * cursor names no entry of this customer's.
   */
  userEventsPage(
    userId: string,
    limit: number,
    older?: UserEventsCursor,
  ): Promise<UserEventsPage<EventView> | typeof OUT_OF_DATE>;
  /** REFUSED notifications created at or after `sinceIso` (and of `reason`), erased ones left out, in no order. */
  listRefused(filter: RefusedFilter): Promise<StoredItem[]>;
  /**
   * FAILED, UNKNOWN or (its acceptance named) SENT → PENDING for one more send, recorded on the item. `lost` when the
   * item moved since it was read — its status or attempt, an acceptance or an erasure landing meanwhile.
   */
  resend(
    item: ResendTarget,
    resend: { readonly by: VerifiedIdentity; readonly reason: string; readonly accepted: string | undefined },
    now: number,
  ): Promise<{ readonly result: Transition; readonly item?: StoredItem }>;
  /** A finished notification of `userId` loses its address, data and user id; `lost` when it is not (or no longer). */
  erase(notification: { readonly pk: string; readonly sk: string }, userId: string, at: string): Promise<Transition>;
  /**
   * The event leaves the customer's byUser index (its inbox item keeps its eventId and payload hash); false when it
   * has no inbox item (any more).
   */
  unlist(eventId: string, at: string): Promise<boolean>;
}

/** Statuses an erasure may touch: the notification is over. PENDING and SENDING must still be sent. */
const FINISHED: readonly NotificationStatus[] = TERMINAL_STATUSES;

/**
 * A notification as an operator may see it: a secret still kept for its send (a one-time code, until the notification
 * ends) is never shown, exported or put back — its field names stay, each value REDACTED (domain/secrets.ts). The
 * gzipped bytes a SENT write keeps for the sweeper's rebuild (`evidenceRecord`) are left out: as JSON they are a map
 * of hundreds of byte values, and the record itself is shown from the evidence store (`ops evidence`).
 */
function withSecretsRedacted(item: StoredItem): StoredItem {
  const { evidenceRecord: _kept, ...shown } = item;
  const secrets = shown.secrets;
  if (secrets === undefined || secrets === null || typeof secrets !== 'object') return shown;
  return { ...shown, secrets: Object.fromEntries(Object.keys(secrets).map((name) => [name, REDACTED])) };
}

export class DynamoEventStore implements EventStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async read(eventId: string): Promise<EventView> {
    const items = (
      (await queryAll(this.client, {
        TableName: this.tableName,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': eventPk(eventId) },
        ConsistentRead: true,
      })) as StoredItem[]
    ).map(withSecretsRedacted);
    return {
      eventId,
      inbox: items.find((i) => i.sk === INBOX_SK),
      notifications: items.filter((i) => i.kind === 'NOTIFICATION'),
      quarantined: items.filter((i) => i.kind === 'QUARANTINE_REF'),
    };
  }

  eventIdsOfUser(userId: string): Promise<string[]> {
    return this.eventIdsUnder(userKeyOf(userId));
  }

  async quarantinedEventIdsOfUser(userId: string): Promise<string[]> {
    return [...new Set(await this.eventIdsUnder(quarantinedUserKeyOf(userId)))];
  }

  userEventsPage(
    userId: string,
    limit: number,
    older?: UserEventsCursor,
  ): Promise<UserEventsPage<EventView> | typeof OUT_OF_DATE> {
    return userEventsPage(this.client, this.tableName, (id) => this.read(id), userId, limit, older);
  }

  private async eventIdsUnder(userKey: string): Promise<string[]> {
    const ids: string[] = [];
    for await (const i of queryItems(this.client, {
      TableName: this.tableName,
      IndexName: TABLE_SCHEMA.userIndex.indexName,
      KeyConditionExpression: '#u = :u',
      ExpressionAttributeNames: { '#u': TABLE_SCHEMA.userIndex.partitionKey },
      ExpressionAttributeValues: { ':u': userKey },
      ScanIndexForward: false,
    })) {
      const eventId = eventIdOfPk(String(i.pk));
      if (eventId !== undefined) ids.push(eventId);
    }
    return ids;
  }

  async listRefused(filter: RefusedFilter): Promise<StoredItem[]> {
    // Still REFUSED (a repair also takes it out of the index) and not erased: nothing can repair an erased one.
    const found = await queryIncidents(this.client, this.tableName, 'REFUSED', filter, {
      expression: '#status = :refused AND attribute_not_exists(erasedAt)',
      values: { ':refused': 'REFUSED' },
      names: { '#status': 'status' },
    });
    return found as StoredItem[];
  }

  async resend(
    item: ResendTarget,
    resend: { readonly by: VerifiedIdentity; readonly reason: string; readonly accepted: string | undefined },
    now: number,
  ): Promise<{ result: Transition; item?: StoredItem }> {
    const { accepted } = resend;
    const move = moveCondition(String(item.status) as NotificationStatus, 'PENDING', 'operator');
    const iso = new Date(now).toISOString();
    if (accepted !== undefined) {
      // First, the send this resend takes off the item stays findable by its message id: a late report about it (a
      // dead number) is still ours. Harmless if the resend below is refused: it names the same notification.
      await this.client.send(
        new PutCommand({ TableName: this.tableName, Item: buildEarlierSend(item, accepted, now) }),
      );
    }
    const record = manualResendRecord(item, resend.by, resend.reason, iso, accepted !== undefined);
    const written = await this.conditional({
      TableName: this.tableName,
      Key: { pk: item.pk, sk: item.sk },
      // Nothing moved since the read — nor did a provider's acceptance land on the item, nor an erasure, meanwhile.
      ConditionExpression: `${move.expression} AND attempt = :attempt AND attribute_not_exists(erasedAt) AND ${
        accepted === undefined ? NO_MESSAGE_ID : messageIdIs(':accepted')
      }`,
      // Its budget and its maximum age start again (deferrals catch up with attempt, createdAt moves to now;
      // firstCreatedAt keeps the original): the operator decided this send is wanted now.
      UpdateExpression: `SET #status = :pending, updatedAt = :iso, deferrals = :attempt, firstCreatedAt = if_not_exists(firstCreatedAt, createdAt), createdAt = :iso, sweepKey = :sweepKey, sweepAt = :sweepAt, manualResends = list_append(if_not_exists(manualResends, :empty), :record) REMOVE lastError, ${MESSAGE_ID_ATTRIBUTES.join(', ')}, retryAt, leaseUntil, claimId, deliveryStatus, deliveryRank, deliveryAt, deliveryAtMs, deliveryMessageId, deliveryResponse, bounceType, bounceSubType`,
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: {
        ...move.values,
        ':attempt': item.attempt,
        ':pending': 'PENDING',
        ':iso': iso,
        ':sweepKey': pendingSweepKey(String(item.template), item.channel, item.notificationId),
        // Due for the sweeper a minute from now, should the stream record never reach dispatch.
        ':sweepAt': now + 60_000,
        ':empty': [],
        ':record': [record],
        ...(accepted === undefined ? {} : { ':accepted': accepted }),
      },
      ReturnValues: 'ALL_NEW',
    });
    return written === undefined ? { result: 'lost' } : { result: 'applied', item: written };
  }

  async erase(notification: { pk: string; sk: string }, userId: string, at: string): Promise<Transition> {
    const written = await this.conditional({
      TableName: this.tableName,
      Key: { pk: notification.pk, sk: notification.sk },
      UpdateExpression:
        'SET recipient = :empty, #data = :nothing, userId = :erased, erasedAt = :at REMOVE evidenceRecord',
      // Only while it is finished and still this customer's: a resend racing the erasure keeps its address.
      ConditionExpression: `#status IN (${FINISHED.map((_, i) => `:s${i}`).join(', ')}) AND userId = :user`,
      ExpressionAttributeNames: { '#data': 'data', '#status': 'status' },
      ExpressionAttributeValues: {
        ':empty': '',
        ':nothing': {},
        ':erased': ERASED_USER,
        ':at': at,
        ':user': userId,
        ...Object.fromEntries(FINISHED.map((s, i) => [`:s${i}`, s])),
      },
    });
    return written === undefined ? 'lost' : 'applied';
  }

  async unlist(eventId: string, at: string): Promise<boolean> {
    const written = await this.conditional({
      TableName: this.tableName,
      Key: { pk: eventPk(eventId), sk: INBOX_SK },
      ConditionExpression: 'attribute_exists(pk)',
      UpdateExpression: 'REMOVE userKey SET erasedAt = :at',
      ExpressionAttributeValues: { ':at': at },
    });
    return written !== undefined;
  }

  /** One conditional UpdateItem: the item after it, or undefined when its condition failed; anything else thrown. */
  private async conditional(input: UpdateCommandInput): Promise<StoredItem | undefined> {
    try {
      const r = await this.client.send(new UpdateCommand({ ReturnValues: 'ALL_NEW', ...input }));
      return (r.Attributes ?? {}) as StoredItem;
    } catch (error) {
      if (isConditionFailure(error)) return undefined;
      throw error;
    }
  }
}

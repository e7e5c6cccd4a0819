/**
 * DynamoDB adapter of the audience: suppression items and the check dispatch makes last before it sends
 * (domain/audience.ts has the keys and the rule); delivery feedback on notification items is
 * feedback/delivery-store.ts. Every write is conditional and idempotent:
 * feedback and its retries arrive at least once and in any order.
 */
import { randomUUID } from 'node:crypto';
import {
  type DynamoDBDocumentClient,
  GetCommand,
  type NativeAttributeValue,
  QueryCommand,
  UpdateCommand,
  type UpdateCommandInput,
} from '@aws-sdk/lib-dynamodb';
import {
  addressHash,
  type PreferencesItem,
  type SuppressedReason,
  type SuppressionItem,
  suppressedReason,
} from '../domain/audience.ts';
import type { Channel } from '../domain/channels.ts';
import type { EventType } from '../domain/event/contract.ts';
import type { SuppressionCause } from '../domain/feedback.ts';
import type { VerifiedIdentity } from '../domain/identity.ts';
import { PREFS_SK, prefsPk, SUPPRESSION_SHARDS, suppressionPk } from '../domain/keys.ts';
import { isConditionFailure } from './condition-failure.ts';
import type { NotificationKey } from './notification-store.ts';

/** What dispatch knows of a notification from its stream record, before any read. */
export interface Addressee {
  readonly channel: Channel;
  readonly recipient: string;
  readonly userId: string;
  readonly template: EventType;
}

/** Dispatch's port: may this notification still be sent? (Ending it SUPPRESSED is the notification store's.) */
export interface AudienceGate {
  /** The reason it must not be sent, or undefined. */
  check(addressee: Addressee): Promise<SuppressedReason | undefined>;
}

export type SuppressionRecorded = 'suppressed' | 'alreadySuppressed' | 'liftedSince';

/** What became of a customer's preferences when their data was erased. */
export type PreferencesForgotten = 'deleted' | 'kept' | 'none';

/** The audience as a whole: dispatch's gate, the feedback function's suppressions, and the operator's reads and writes. */
export interface AudienceStore extends AudienceGate {
  suppressAddress(
    channel: Channel,
    address: string,
    cause: SuppressionCause,
    notificationId: string,
    at: string,
  ): Promise<SuppressionRecorded>;
  lift(channel: Channel, hash: string, by: VerifiedIdentity, now: number, reason: string): Promise<boolean>;
  list(channel: Channel): Promise<SuppressionItem[]>;
  /** The suppression item of an address hash, active or lifted, or undefined. */
  suppression(channel: Channel, hash: string): Promise<SuppressionItem | undefined>;
  preferences(userId: string): Promise<PreferencesItem | undefined>;
  /**
   * Forgets a customer's preferences when they opt out of nothing (`deleted`): what they chose goes, and a tombstone
   * keeps only the watermark — the instant and eventId of the update in force — so a late, older PreferencesUpdated
   * (a redelivery, a replay) is refused by ingest's ordering condition instead of writing them again. Keeps them when
   * they hold an opt-out (`kept`: honouring the objection needs the record of it) — also one written meanwhile.
   */
  forgetPreferences(userId: string, at: string): Promise<PreferencesForgotten>;
}

const iso = (ms: number) => new Date(ms).toISOString();

const suppressionKey = (channel: Channel, hash: string) => ({ pk: suppressionPk(channel, hash), sk: hash });

export class DynamoAudienceStore implements AudienceStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async check(a: Addressee): Promise<SuppressedReason | undefined> {
    // Both reads at once: one round trip of latency. Consistent, so a suppression written a moment ago counts.
    const [suppression, prefs] = await Promise.all([
      this.get<SuppressionItem>(suppressionKey(a.channel, addressHash(a.channel, a.recipient))),
      this.get<PreferencesItem>({ pk: prefsPk(a.userId), sk: PREFS_SK }),
    ]);
    return suppressedReason(a, suppression, prefs);
  }

  /**
   * Suppresses an address for a channel. The first report stays (`since`, `cause`); an address lifted after this
   * feedback happened is not suppressed again by it (a duplicate of the old bounce), one lifted before it is. Any
   * channel (email feedback, SMS opt-outs and push endpoint failures alike): the key is the channel's.
   *
   * A write whose reply was lost (committed, then the SDK's retry failed the condition) is recognised by the
   * `writeId` it left on the item, so it counts as `suppressed` — not as a duplicate of itself.
   */
  async suppressAddress(
    channel: Channel,
    address: string,
    cause: SuppressionCause,
    notificationId: string,
    at: string,
  ): Promise<SuppressionRecorded> {
    const key = suppressionKey(channel, addressHash(channel, address));
    const writeId = randomUUID();
    const applied = await this.conditional({
      TableName: this.tableName,
      Key: key,
      ConditionExpression: 'attribute_not_exists(pk) OR (#state = :lifted AND liftedAt < :at)',
      UpdateExpression:
        'SET kind = :kind, channel = :channel, #state = :active, cause = :cause, since = :at, notificationId = :nid, writeId = :wid REMOVE liftedAt, liftedBy, liftedVerifiedBy',
      ExpressionAttributeNames: { '#state': 'state' },
      ExpressionAttributeValues: {
        ':kind': 'SUPPRESSION',
        ':channel': channel,
        ':active': 'ACTIVE',
        ':lifted': 'LIFTED',
        ':cause': cause,
        ':at': at,
        ':nid': notificationId,
        ':wid': writeId,
      },
    });
    if (applied) return 'suppressed';
    const current = await this.get<SuppressionItem & { writeId?: string }>(key);
    if (current?.writeId === writeId) return 'suppressed';
    return current?.state === 'LIFTED' ? 'liftedSince' : 'alreadySuppressed';
  }

  /**
   * ACTIVE → LIFTED (kept, with who and when). False when there was no active suppression. A lift whose reply was
   * lost is recognised by the time and operator it wrote.
   */
  async lift(channel: Channel, hash: string, by: VerifiedIdentity, now: number, reason: string): Promise<boolean> {
    const key = suppressionKey(channel, hash);
    const lifted = await this.conditional({
      TableName: this.tableName,
      Key: key,
      ConditionExpression: '#state = :active',
      UpdateExpression:
        'SET #state = :lifted, liftedAt = :now, liftedBy = :by, liftedVerifiedBy = :via, liftReason = :reason',
      ExpressionAttributeNames: { '#state': 'state' },
      ExpressionAttributeValues: {
        ':active': 'ACTIVE',
        ':lifted': 'LIFTED',
        ':now': iso(now),
        ':by': by.principal,
        ':via': by.verifiedBy,
        ':reason': reason,
      },
    });
    if (lifted) return true;
    const current = await this.get<SuppressionItem>(key);
    return current?.state === 'LIFTED' && current.liftedAt === iso(now) && current.liftedBy === by.principal;
  }

  /** Every suppression of a channel (its 16 partitions, each paged). */
  async list(channel: Channel): Promise<SuppressionItem[]> {
    const items: SuppressionItem[] = [];
    for (const shard of SUPPRESSION_SHARDS) {
      let start: Record<string, NativeAttributeValue> | undefined;
      do {
        const r = await this.client.send(
          new QueryCommand({
            TableName: this.tableName,
            KeyConditionExpression: 'pk = :pk',
            ExpressionAttributeValues: { ':pk': suppressionPk(channel, shard) },
            ...(start === undefined ? {} : { ExclusiveStartKey: start }),
          }),
        );
        items.push(...((r.Items ?? []) as SuppressionItem[]));
        start = r.LastEvaluatedKey;
      } while (start !== undefined);
    }
    return items;
  }

  suppression(channel: Channel, hash: string): Promise<SuppressionItem | undefined> {
    return this.get<SuppressionItem>(suppressionKey(channel, hash));
  }

  preferences(userId: string): Promise<PreferencesItem | undefined> {
    return this.get<PreferencesItem>({ pk: prefsPk(userId), sk: PREFS_SK });
  }

  async forgetPreferences(userId: string, at: string): Promise<PreferencesForgotten> {
    const prefs = await this.preferences(userId);
    if (prefs === undefined || prefs.erasedAt !== undefined) return 'none';
    const forgotten = await this.conditional({
      TableName: this.tableName,
      Key: { pk: prefsPk(userId), sk: PREFS_SK },
      ConditionExpression: 'attribute_exists(pk) AND (attribute_not_exists(optOut) OR size(optOut) = :none)',
      // The watermark stays (occurredAtMs, eventId: ingest's ordering condition); everything the customer chose goes.
      UpdateExpression: 'SET optOut = :empty, erasedAt = :at, updatedAt = :at REMOVE userId, occurredAt',
      ExpressionAttributeValues: { ':none': 0, ':empty': [], ':at': at },
    });
    return forgotten ? 'deleted' : 'kept';
  }

  private async get<T>(key: NotificationKey): Promise<T | undefined> {
    const r = await this.client.send(new GetCommand({ TableName: this.tableName, Key: key, ConsistentRead: true }));
    return r.Item as T | undefined;
  }

  /** One conditional UpdateItem: false when its condition failed, anything else thrown. */
  private async conditional(input: UpdateCommandInput): Promise<boolean> {
    try {
      await this.client.send(new UpdateCommand(input));
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }
}

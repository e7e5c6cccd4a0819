/**
 * DynamoDB adapter for ingest: the one TransactWriteItems per event, and quarantine writes.
 * It reads what DynamoDB answered and turns it into domain outcomes; anything else is thrown, typed.
 */

import { randomUUID } from 'node:crypto';
import type { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import {
  BatchGetCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  TransactWriteCommand,
} from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { RecordRefusedError, TransientStoreError, UnexpectedResponseError } from '../commons/errors.ts';
import { backoffMs, sleep as realSleep } from '../commons/retry.ts';
import type { PreferencesItem } from '../domain/audience.ts';
import type { Channel } from '../domain/channels.ts';
import { isErased } from '../domain/erasure.ts';
import { eventIdOfPk, eventPk, INBOX_SK, notificationIdOf, notificationSk } from '../domain/keys.ts';
import {
  type InboxItem,
  type NotificationItem,
  pendingSweepKey,
  type QuarantineItem,
  type SeriesEntryItem,
} from '../domain/notification.ts';
import { buildQuarantineRef } from '../domain/quarantine-ref.ts';
import { moveCondition } from '../domain/state-machine.ts';
import {
  CONDITION_FAILED_REASON,
  cancellationCodes,
  isConditionFailure,
  isTransactionCancelled,
} from '../stores/condition-failure.ts';
import type {
  ChannelRepair,
  InboxStore,
  KnownEvents,
  KnownInbox,
  PreferencesOutcome,
  RecordOutcome,
  RepairOutcome,
  StoredInbox,
} from './inbox-port.ts';

/** The fields of an inbox item a settle reads (ProjectionExpression), and the item read as a KnownInbox. */
const KNOWN_FIELDS = 'payloadHash, channels, refusedChannels, repairHash, repairedHashes';
function knownInbox(item: Record<string, unknown>): KnownInbox {
  return {
    payloadHash: typeof item.payloadHash === 'string' ? item.payloadHash : undefined,
    complete: true,
    channels: Array.isArray(item.channels) ? (item.channels as Channel[]) : [],
    ...(Array.isArray(item.refusedChannels) ? { refusedChannels: item.refusedChannels as Channel[] } : {}),
    ...(typeof item.repairHash === 'string' ? { repairHash: item.repairHash } : {}),
    ...(item.repairedHashes instanceof Set ? { repairedHashes: item.repairedHashes as Set<string> } : {}),
  };
}

export const TRANSIENT_CANCELLATION_CODES = new Set([
  'TransactionConflict',
  'ThrottlingError',
  'ProvisionedThroughputExceeded',
]);

const ifAbsent = 'attribute_not_exists(pk)';

/** BatchGetItem reads at most 100 keys per request. */
export const BATCH_GET_MAX_KEYS = 100;

export interface LookupOptions {
  /** Requests per chunk: the first and the retries of UnprocessedKeys (throttled or over the response limit). */
  readonly attempts?: number;
  readonly baseMs?: number;
  readonly sleep?: (ms: number) => Promise<void>;
}

export class DynamoInboxStore implements InboxStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly lookup: LookupOptions = {},
  ) {}

  async findInboxes(eventIds: readonly string[]): Promise<KnownEvents> {
    // BatchGetItem refuses a request that names one key twice: a batch may hold an eventId several times.
    const unique = [...new Set(eventIds)];
    const chunks: string[][] = [];
    for (let i = 0; i < unique.length; i += BATCH_GET_MAX_KEYS) chunks.push(unique.slice(i, i + BATCH_GET_MAX_KEYS));
    const known = new Map<string, KnownInbox>();
    await Promise.all(chunks.map((chunk) => this.readChunk(chunk, known)));
    return known;
  }

  private async readChunk(eventIds: string[], known: Map<string, KnownInbox>): Promise<void> {
    const attempts = this.lookup.attempts ?? 4;
    const wait = this.lookup.sleep ?? realSleep;
    let keys: Record<string, unknown>[] = eventIds.map((id) => ({ pk: eventPk(id), sk: INBOX_SK }));
    for (let attempt = 1; keys.length > 0 && attempt <= attempts; attempt++) {
      if (attempt > 1) await wait(backoffMs(attempt, this.lookup.baseMs ?? 25, 1_000));
      const r = await this.client.send(
        new BatchGetCommand({
          RequestItems: {
            [this.tableName]: {
              Keys: keys,
              // Strongly consistent: an inbox item written a moment ago by the previous delivery must be seen.
              ConsistentRead: true,
              ProjectionExpression: `pk, ${KNOWN_FIELDS}`,
            },
          },
        }),
      );
      for (const item of r.Responses?.[this.tableName] ?? []) {
        const eventId = typeof item.pk === 'string' ? eventIdOfPk(item.pk) : undefined;
        if (eventId === undefined) {
          throw new UnexpectedResponseError('BatchGetItem returned an item that is not an inbox item');
        }
        known.set(eventId, knownInbox(item));
      }
      keys = (r.UnprocessedKeys?.[this.tableName]?.Keys ?? []) as Record<string, unknown>[];
    }
  }

  async findTaken(eventIds: readonly string[]): Promise<KnownEvents> {
    const known = new Map<string, KnownInbox>();
    await Promise.all(
      [...new Set(eventIds)].map(async (eventId) => {
        const items = await this.inboxItems(eventId);
        const inbox = items.find((i) => i.sk === INBOX_SK);
        const held = items[0];
        if (inbox !== undefined) known.set(eventId, knownInbox(inbox));
        else if (held !== undefined)
          known.set(eventId, { payloadHash: typeof held.payloadHash === 'string' ? held.payloadHash : undefined });
      }),
    );
    return known;
  }

  /**
   * The event's inbox items of every kind — `INBOX` and every held `INBOX#E<n>` — by one strongly consistent Query on
   * its partition (pk, sk and what a settle reads): no list of epochs to keep, whichever epoch held the event.
   */
  async inboxItems(eventId: string): Promise<Record<string, unknown>[]> {
    const r = await this.client.send(
      new QueryCommand({
        TableName: this.tableName,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :inbox)',
        ExpressionAttributeValues: { ':pk': eventPk(eventId), ':inbox': INBOX_SK },
        ConsistentRead: true,
        ProjectionExpression: `pk, sk, ${KNOWN_FIELDS}`,
      }),
    );
    return r.Items ?? [];
  }

  /** The inbox item's Put, first in every transaction: only if absent, and the stored item back when it is not. */
  private inboxPut(inbox: InboxItem) {
    return {
      Put: {
        TableName: this.tableName,
        Item: inbox,
        ConditionExpression: ifAbsent,
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const,
      },
    };
  }

  async recordEvent(
    inbox: InboxItem,
    notifications: NotificationItem[],
    series?: SeriesEntryItem,
  ): Promise<RecordOutcome> {
    try {
      await this.client.send(
        new TransactWriteCommand({
          TransactItems: [
            this.inboxPut(inbox),
            ...notifications.map((item) => ({
              Put: { TableName: this.tableName, Item: item, ConditionExpression: ifAbsent },
            })),
            ...(series === undefined ? [] : [{ Put: { TableName: this.tableName, Item: series } }]),
          ],
        }),
      );
      return { kind: 'created' };
    } catch (error) {
      if (!isTransactionCancelled(error)) throw error;
      return classifyCancellation(error);
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
            this.inboxPut(inbox),
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
      if (!isTransactionCancelled(error)) throw error;
      const outcome = classifyCancellation(error);
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
      if (!isConditionFailure(error)) throw error;
      const item = (error as { Item?: Record<string, unknown> }).Item;
      return { kind: 'inboxExists', payloadHash: item === undefined ? undefined : storedHash(item) };
    }
  }

  async readInbox(eventId: string): Promise<StoredInbox | undefined> {
    const r = await this.client.send(
      new GetCommand({
        TableName: this.tableName,
        Key: { pk: eventPk(eventId), sk: INBOX_SK },
        ConsistentRead: true,
        ProjectionExpression: KNOWN_FIELDS,
      }),
    );
    const item = r.Item;
    if (item === undefined) return undefined;
    const { channels = [], ...known } = knownInbox(item);
    return { ...known, channels };
  }

  async repairChannels(repair: ChannelRepair): Promise<RepairOutcome> {
    const iso = new Date(repair.now).toISOString();
    const pk = eventPk(repair.eventId);
    const still = repair.refusedChannels.length > 0 && repair.repairHash !== undefined;
    const inbox = {
      Update: {
        TableName: this.tableName,
        Key: { pk, sk: INBOX_SK },
        ConditionExpression: 'repairHash = :expected',
        UpdateExpression: `SET channels = :channels${still ? ', refusedChannels = :refused, repairHash = :repairHash' : ''} ADD repairedHashes :hash${still ? '' : ' REMOVE refusedChannels, repairHash'}`,
        ExpressionAttributeValues: {
          ':expected': repair.expected.repairHash,
          ':channels': repair.channels,
          ':hash': new Set([repair.payloadHash]),
          ...(still ? { ':refused': repair.refusedChannels, ':repairHash': repair.repairHash } : {}),
        },
      },
    };
    const repairMove = moveCondition('REFUSED', 'PENDING');
    const notifications = repair.repairs.map(({ channel, recipient }) => ({
      Update: {
        TableName: this.tableName,
        Key: { pk, sk: notificationSk(channel) },
        // An erased notification is never repaired: its customer's opt-outs could no longer be read for it.
        ConditionExpression: `${repairMove.expression} AND attribute_not_exists(erasedAt)`,
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const,
        // createdAt starts again (the sweeper's maximum age counts from it); firstCreatedAt keeps the original.
        UpdateExpression:
          'SET #status = :pending, recipient = :recipient, updatedAt = :iso, repairedAt = :iso, firstCreatedAt = if_not_exists(firstCreatedAt, createdAt), createdAt = :iso, sweepKey = :sweepKey, sweepAt = :sweepAt REMOVE refusedReason, refusedDetail, incidentKey, incidentAt',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: {
          ...repairMove.values,
          ':pending': 'PENDING',
          ':recipient': recipient,
          ':iso': iso,
          ':sweepKey': pendingSweepKey(
            repair.type,
            channel,
            notificationIdOf(repair.eventId, channel),
            repair.placement.sweepShards,
          ),
          ':sweepAt': repair.now + repair.placement.pendingThresholdMs,
        },
      },
    }));
    try {
      await this.client.send(new TransactWriteCommand({ TransactItems: [inbox, ...notifications] }));
      return 'repaired';
    } catch (error) {
      if (!isTransactionCancelled(error)) throw error;
      const codes = cancellationCodes(error);
      const transient = codes.filter((c) => TRANSIENT_CANCELLATION_CODES.has(c));
      if (transient.length > 0) {
        throw new TransientStoreError(`repair cancelled: ${codes.join(',')}`, transient, { cause: error });
      }
      const erased = (error.CancellationReasons ?? [])
        .slice(1)
        .some((r) => r.Code === CONDITION_FAILED_REASON && r.Item !== undefined && isErased(plainItem(r.Item)));
      if (erased) return 'erased';
      if (codes.includes(CONDITION_FAILED_REASON)) return 'changed';
      if (codes.includes('ValidationError')) {
        throw new RecordRefusedError(`repair cancelled: ${codes.join(',')}`, { cause: error });
      }
      throw new UnexpectedResponseError(
        `repair cancelled for an unexpected reason: ${codes.join(',') || 'none given'}`,
        {
          cause: error,
        },
      );
    }
  }

  /**
   * A put that may have committed with its reply lost: the SDK retries it, and the retry fails its own condition. The
   * item then carries this write's `writeId` — the existing item DynamoDB returns with the failed condition says so —
   * and the record is newly quarantined, not a redelivery: the figures count it once, as what it was.
   */
  async quarantine(item: QuarantineItem): Promise<boolean> {
    const newly = await this.putQuarantine(item);
    // Its reference in the event's partition, on every delivery: a redelivery after a lost reference writes it then.
    const ref = buildQuarantineRef(item);
    if (ref !== undefined) await this.client.send(new PutCommand({ TableName: this.tableName, Item: ref }));
    return newly;
  }

  private async putQuarantine(item: QuarantineItem): Promise<boolean> {
    const writeId = randomUUID();
    try {
      await this.client.send(
        new PutCommand({
          TableName: this.tableName,
          Item: { ...item, writeId },
          ConditionExpression: ifAbsent,
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return true;
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      const existing = (error as { Item?: Record<string, unknown> }).Item;
      return existing !== undefined && attributeText(existing, 'writeId') === writeId;
    }
  }
}

/** Index 0 of the transaction is the inbox Put, 1..n the notifications, then the series entry (recordEvent's order). */
export function classifyCancellation(error: TransactionCanceledException): RecordOutcome {
  const codes = cancellationCodes(error);
  const transient = codes.filter((c) => TRANSIENT_CANCELLATION_CODES.has(c));
  if (transient.length > 0) {
    throw new TransientStoreError(`transaction cancelled: ${codes.join(',')}`, transient, { cause: error });
  }
  const inbox = error.CancellationReasons?.[0];
  if (inbox?.Code === CONDITION_FAILED_REASON) {
    if (inbox.Item === undefined) return { kind: 'inboxExists', payloadHash: undefined };
    // The stored item, ALL_OLD: what settling this record needs, without another read.
    const stored = knownInbox(plainItem(inbox.Item));
    return { kind: 'inboxExists', payloadHash: storedHash(inbox.Item), stored };
  }
  if (codes.slice(1).includes(CONDITION_FAILED_REASON)) return { kind: 'notificationExists' };
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

/** A cancellation's item as plain values, whether the SDK handed it back in wire format or not. */
function plainItem(item: Record<string, unknown>): Record<string, unknown> {
  try {
    return unmarshall(item as Parameters<typeof unmarshall>[0]);
  } catch {
    return item;
  }
}

/** The SDK hands cancellation items back in wire format (lib-dynamodb does not unmarshall errors). */
function storedHash(item: Record<string, unknown>): string | undefined {
  return attributeText(item, 'payloadHash');
}

/** A string attribute of an item DynamoDB returned with an error, plain or in wire format. */
function attributeText(item: Record<string, unknown>, name: string): string | undefined {
  const value = item[name];
  if (typeof value === 'string') return value;
  const plain = unmarshall(item as Parameters<typeof unmarshall>[0]);
  return typeof plain[name] === 'string' ? plain[name] : undefined;
}

/**
 * DynamoDB adapter of the quarantine as the operator sees it: the records ingest refused, each under
 * `QUARANTINE#<topic>#<partition>#<offset>` with its reason and the value as received (functions/domain/keys.ts),
 * and the mark a replay leaves on one it fed back through ingest.
 */
import {
  type DynamoDBDocumentClient,
  GetCommand,
  type NativeAttributeValue,
  QueryCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { TABLE_SCHEMA } from '../contracts/table-schema.ts';
import {
  type IncidentKind,
  incidentKeysBetween,
  type KafkaSource,
  QUARANTINE_SK,
  quarantinePk,
} from '../domain/keys.ts';
import type { QuarantineItem } from '../domain/notification.ts';
import { isConditionFailure } from './condition-failure.ts';

/** A quarantine item as stored, with the time a replay accepted it when one did. */
export type QuarantinedRecord = QuarantineItem & { readonly replayedAt?: string };

/** A look-up window (the incident index reads each day's keys from `sinceIso` to `untilIso`) and a reason. */
export interface IncidentWindow {
  readonly sinceIso: string;
  readonly untilIso: string;
  readonly reason?: string;
}
export type QuarantineFilter = IncidentWindow;

export interface QuarantineStore {
  get(source: KafkaSource): Promise<QuarantinedRecord | undefined>;
  /** Every quarantined record received in the window (and of `reason`), in no order: the incident index, no scan. */
  list(filter: QuarantineFilter): Promise<QuarantinedRecord[]>;
  /** Marks a record a replay fed back and ingest accepted; false when there is no such record. */
  markReplayed(source: KafkaSource, at: string): Promise<boolean>;
}

export class DynamoQuarantineStore implements QuarantineStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async get(source: KafkaSource): Promise<QuarantinedRecord | undefined> {
    const r = await this.client.send(
      new GetCommand({
        TableName: this.tableName,
        Key: { pk: quarantinePk(source), sk: QUARANTINE_SK },
        ConsistentRead: true,
      }),
    );
    return r.Item as QuarantinedRecord | undefined;
  }

  async list(filter: QuarantineFilter): Promise<QuarantinedRecord[]> {
    const found = await queryIncidents(this.client, this.tableName, 'QUARANTINED', filter);
    return found as unknown as QuarantinedRecord[];
  }

  async markReplayed(source: KafkaSource, at: string): Promise<boolean> {
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk: quarantinePk(source), sk: QUARANTINE_SK },
          ConditionExpression: 'attribute_exists(pk)',
          UpdateExpression: 'SET replayedAt = :at',
          ExpressionAttributeValues: { ':at': at },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }
}

/**
 * The items of `kind` in the window, from the incident index (TABLE_SCHEMA.incidentIndex): each day's shards, every
 * page, `reason` (and any `filter`) applied by DynamoDB to what the keys already narrowed. Never a scan.
 */
export async function queryIncidents(
  client: DynamoDBDocumentClient,
  tableName: string,
  kind: IncidentKind,
  window: IncidentWindow,
  filter?: {
    readonly expression: string;
    readonly values: Record<string, NativeAttributeValue>;
    readonly names?: Record<string, string>;
  },
): Promise<Record<string, unknown>[]> {
  // A window that ends before it starts holds nothing (and BETWEEN would be refused).
  if (window.sinceIso > window.untilIso) return [];
  const index = TABLE_SCHEMA.incidentIndex;
  const reasonAttribute = kind === 'QUARANTINED' ? 'reason' : 'refusedReason';
  const conditions = [
    ...(window.reason === undefined ? [] : [`${reasonAttribute} = :reason`]),
    ...(filter === undefined ? [] : [filter.expression]),
  ];
  const items: Record<string, unknown>[] = [];
  for (const key of incidentKeysBetween(kind, window.sinceIso, window.untilIso)) {
    let start: Record<string, NativeAttributeValue> | undefined;
    do {
      const page = await client.send(
        new QueryCommand({
          TableName: tableName,
          IndexName: index.indexName,
          KeyConditionExpression: '#key = :key AND #at BETWEEN :since AND :until',
          ExpressionAttributeNames: { '#key': index.partitionKey, '#at': index.sortKey, ...filter?.names },
          ExpressionAttributeValues: {
            ':key': key,
            ':since': window.sinceIso,
            ':until': window.untilIso,
            ...(window.reason === undefined ? {} : { ':reason': window.reason }),
            ...filter?.values,
          },
          ...(conditions.length === 0 ? {} : { FilterExpression: conditions.join(' AND ') }),
          ...(start === undefined ? {} : { ExclusiveStartKey: start }),
        }),
      );
      items.push(...((page.Items ?? []) as Record<string, unknown>[]));
      start = page.LastEvaluatedKey;
    } while (start !== undefined);
  }
  return items;
}

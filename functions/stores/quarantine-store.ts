/**
 * DynamoDB adapter of the quarantine as the operator sees it: the records ingest refused, each under
 * `QUARANTINE#<topic>#<partition>#<offset>` with its reason and the value as received (functions/domain/keys.ts),
 * and the mark a replay leaves on one it fed back through ingest.
 */
import {
  type DynamoDBDocumentClient,
  GetCommand,
  type NativeAttributeValue,
  ScanCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { type KafkaSource, QUARANTINE_SK, quarantinePk } from '../domain/keys.ts';
import type { QuarantineItem } from '../domain/notification.ts';
import { isConditionFailure } from './condition-failure.ts';

/** A quarantine item as stored, with the time a replay accepted it when one did. */
export type QuarantinedRecord = QuarantineItem & { readonly replayedAt?: string };

export interface QuarantineFilter {
  readonly sinceIso?: string;
  readonly reason?: string;
}

export interface QuarantineStore {
  get(source: KafkaSource): Promise<QuarantinedRecord | undefined>;
  /** Every quarantined record received at or after `sinceIso` (and of `reason`), in no order. */
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
    const conditions = ['kind = :q'];
    const values: Record<string, NativeAttributeValue> = { ':q': 'QUARANTINE' };
    if (filter.sinceIso !== undefined) {
      conditions.push('receivedAt >= :since');
      values[':since'] = filter.sinceIso;
    }
    if (filter.reason !== undefined) {
      conditions.push('reason = :reason');
      values[':reason'] = filter.reason;
    }
    // A Scan with a filter: quarantine items are few (each one raised an alarm), and only an operator lists them.
    return (await scanWhere(this.client, this.tableName, conditions, values)) as unknown as QuarantinedRecord[];
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

/** Every item matching the conditions (ANDed), all pages: for an operator's lists of rare items, never a Lambda's. */
export async function scanWhere(
  client: DynamoDBDocumentClient,
  tableName: string,
  conditions: readonly string[],
  values: Record<string, NativeAttributeValue>,
  names?: Record<string, string>,
): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let start: Record<string, NativeAttributeValue> | undefined;
  do {
    const page = await client.send(
      new ScanCommand({
        TableName: tableName,
        FilterExpression: conditions.join(' AND '),
        ExpressionAttributeValues: values,
        ...(names === undefined ? {} : { ExpressionAttributeNames: names }),
        ...(start === undefined ? {} : { ExclusiveStartKey: start }),
      }),
    );
    items.push(...((page.Items ?? []) as Record<string, unknown>[]));
    start = page.LastEvaluatedKey;
  } while (start !== undefined);
  return items;
}

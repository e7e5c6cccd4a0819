/** A fresh table on the integration run's DynamoDB Local, with helpers to read what an operator would see. */
import { randomUUID } from 'node:crypto';
import { CreateTableCommand } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { localEvidenceIndexTableName } from '../../functions/contracts/evidence-index-schema.ts';
import { localEvidenceSpoolTableName } from '../../functions/contracts/evidence-spool-schema.ts';
import { createFenceTableInput } from '../../functions/contracts/fence-schema.ts';
import type { FenceControl } from '../../functions/domain/fence.ts';
import { DynamoFenceStore } from '../../functions/stores/fence-store.ts';
import { createTable, localClient, scanAll } from '../../tools/local/dynamodb-local.ts';

export interface LocalTable {
  readonly tableName: string;
  /** The evidence index's own table beside it (tools/local/dynamodb-local.ts createTable makes both). */
  readonly evidenceIndexTableName: string;
  /** The evidence spool's own table beside it (createTable makes it too). */
  readonly evidenceSpoolTableName: string;
  readonly endpoint: string;
  readonly doc: DynamoDBDocumentClient;
  /** One Query on pk = EVENT#<id>: everything about one event. */
  eventItems(eventId: string): Promise<Record<string, unknown>[]>;
  /** One Query of an index (TABLE_SCHEMA's) on its partition key: the entries it holds under `key`. */
  indexItems(index: { indexName: string; partitionKey: string }, key: string): Promise<Record<string, unknown>[]>;
  allItems(): Promise<Record<string, unknown>[]>;
}

export async function newLocalTable(endpoint: string): Promise<LocalTable> {
  const tableName = `notifier-${randomUUID().slice(0, 8)}`;
  await createTable(endpoint, tableName);
  const doc = DynamoDBDocumentClient.from(localClient(endpoint), { marshallOptions: { removeUndefinedValues: true } });
  return {
    tableName,
    evidenceIndexTableName: localEvidenceIndexTableName(tableName),
    evidenceSpoolTableName: localEvidenceSpoolTableName(tableName),
    endpoint,
    doc,
    async eventItems(eventId) {
      const r = await doc.send(
        new QueryCommand({
          TableName: tableName,
          KeyConditionExpression: 'pk = :pk',
          ExpressionAttributeValues: { ':pk': `EVENT#${eventId}` },
          ConsistentRead: true,
        }),
      );
      return r.Items ?? [];
    },
    async indexItems(index, key) {
      const r = await doc.send(
        new QueryCommand({
          TableName: tableName,
          IndexName: index.indexName,
          KeyConditionExpression: '#k = :k',
          ExpressionAttributeNames: { '#k': index.partitionKey },
          ExpressionAttributeValues: { ':k': key },
        }),
      );
      return r.Items ?? [];
    },
    allItems: () => scanAll(endpoint, tableName),
  };
}

let fences = 0;

/** A new fence table beside `table`, its CONTROL (and shards) initialised to `control`, read at the clock `now`. */
export async function localFence(
  table: LocalTable,
  control: FenceControl,
  now: () => number,
): Promise<DynamoFenceStore> {
  const name = `${table.tableName}-fence-${fences++}`;
  const db = localClient(table.endpoint);
  await db.send(new CreateTableCommand(createFenceTableInput(name)));
  db.destroy();
  const fence = new DynamoFenceStore(table.doc, name, 4, now);
  await fence.initialise(control);
  return fence;
}

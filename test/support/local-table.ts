/** A fresh table on the integration run's DynamoDB Local, with helpers to read what an operator would see. */
import { randomUUID } from 'node:crypto';
import { DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { localEvidenceIndexTableName } from '../../functions/contracts/evidence-index-schema.ts';
import { createTable, localClient, scanAll } from '../../tools/local/dynamodb-local.ts';

export interface LocalTable {
  readonly tableName: string;
  /** The evidence index's own table beside it (tools/local/dynamodb-local.ts createTable makes both). */
  readonly evidenceIndexTableName: string;
  readonly endpoint: string;
  readonly doc: DynamoDBDocumentClient;
  /** One Query on pk = EVENT#<id>: everything about one event. */
  eventItems(eventId: string): Promise<Record<string, unknown>[]>;
  allItems(): Promise<Record<string, unknown>[]>;
}

export async function newLocalTable(endpoint: string): Promise<LocalTable> {
  const tableName = `notifier-${randomUUID().slice(0, 8)}`;
  await createTable(endpoint, tableName);
  const doc = DynamoDBDocumentClient.from(localClient(endpoint), { marshallOptions: { removeUndefinedValues: true } });
  return {
    tableName,
    evidenceIndexTableName: localEvidenceIndexTableName(tableName),
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
    allItems: () => scanAll(endpoint, tableName),
  };
}

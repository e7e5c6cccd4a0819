/**
 * Fills a bench table on DynamoDB Local with the items a measurement starts from — a backlog of notifications, as the
 * pipeline would have left them — 25 a request, a few requests at a time, until every item is written. The one place
 * a tool writes items of the product's shape, and only into a table the bench created: what the product itself
 * writes, it writes through its own code.
 */
import { BatchWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import pLimit from 'p-limit';

export async function seedItems(
  doc: DynamoDBDocumentClient,
  tableName: string,
  items: readonly object[],
  concurrency = 8,
): Promise<void> {
  const limit = pLimit(concurrency);
  await Promise.all(
    Array.from({ length: Math.ceil(items.length / 25) }, (_, b) =>
      limit(async () => {
        let batch = items.slice(b * 25, b * 25 + 25).map((Item) => ({ PutRequest: { Item } }));
        while (batch.length > 0) {
          const r = await doc.send(new BatchWriteCommand({ RequestItems: { [tableName]: batch } }));
          batch = (r.UnprocessedItems?.[tableName] ?? []) as typeof batch;
        }
      }),
    ),
  );
}

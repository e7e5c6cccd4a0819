/**
 * One Query, every page: the loop over LastEvaluatedKey each store would otherwise write again. `max` stops after that
 * many items (each page asks only for what is still wanted), so a bounded read never pages a partition to its end.
 */
import {
  type DynamoDBDocumentClient,
  type NativeAttributeValue,
  QueryCommand,
  type QueryCommandInput,
} from '@aws-sdk/lib-dynamodb';

export type Item = Record<string, NativeAttributeValue>;

export type QueryInput = Omit<QueryCommandInput, 'ExclusiveStartKey' | 'Limit'>;

/** The items of a Query, page after page, up to `max` (all without it). Stop early by leaving the loop. */
export async function* queryItems(
  client: DynamoDBDocumentClient,
  input: QueryInput,
  max?: number,
): AsyncGenerator<Item> {
  let start: Item | undefined;
  let seen = 0;
  do {
    const page = await client.send(
      new QueryCommand({
        ...input,
        ...(max === undefined ? {} : { Limit: Math.max(1, max - seen) }),
        ...(start === undefined ? {} : { ExclusiveStartKey: start }),
      }),
    );
    for (const item of page.Items ?? []) {
      seen++;
      yield item;
    }
    start = page.LastEvaluatedKey;
  } while (start !== undefined && (max === undefined || seen < max));
}

/** Every item of a Query (all its pages). */
export async function queryAll(client: DynamoDBDocumentClient, input: QueryInput): Promise<Item[]> {
  const items: Item[] = [];
  for await (const item of queryItems(client, input)) items.push(item);
  return items;
}

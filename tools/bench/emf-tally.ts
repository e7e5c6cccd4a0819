/**
 * The metric (EMF) documents of the complete cost run, by the function that wrote them. A document says nothing of its
 * function (every one carries the same namespace and `service`), so the probe (cost-probe.ts, in `npm start`'s process)
 * attributes each to the function whose code was running when it was written: the first frame of its stack under
 * functions/<function>/ (Powertools writes synchronously, from the handler's `publishMetrics` or the `countBy` that
 * wrote it at once). An invocation closes with one document (commons/powertools.ts publishMetrics): its plain counts,
 * its first summed dimension set and its listing (the ids of what it did, once a record) together; each further
 * dimension set (a second channel) is a document of its own. Per function it keeps the closing documents apart from
 * those further sets, the sets the closing ones carried, the listing entries' bytes, and the records the sets summed
 * (a set's largest count). cost-at-rate.ts prices them at the rate's invocations and records.
 */

import { LOG_LISTINGS, type LogListing } from '../../functions/contracts/telemetry.ts';

/** One function's metric documents in the run. */
export interface EmfTally {
  /**
   * Documents with plain counts (`service` their only dimension) or a listing: the invocations' closing documents
   * (and a plain count written at once), their bytes without the listing's entries.
   */
  plain: { docs: number; bytes: number };
  /** Documents of a dimension set of their own, and the records they summed (each document's largest count). */
  sets: { docs: number; bytes: number; records: number };
  /** The dimension sets the closing documents carried, and the records they summed. */
  merged: { sets: number; records: number };
  /** The listing entries' bytes (once a record, whatever the batching). */
  entryBytes: number;
  /** The invocations the documents name (`function_request_id`): the run's log attributes them to no function. */
  requestIds: string[];
}

/** The function a stack is in: its first frame under functions/ingest, dispatch, feedback or sweeper. */
export function functionOfStack(stack: string | undefined): string | undefined {
  return /\/functions\/(ingest|dispatch|feedback|sweeper)\//.exec(stack ?? '')?.[1];
}

interface Directive {
  Namespace: string;
  Dimensions: string[][];
  Metrics: { Name: string }[];
}
interface EmfDocument {
  _aws: { CloudWatchMetrics: Directive[] };
  [key: string]: unknown;
}

/** A directive of plain counts: `service` its only dimension. */
const isPlain = (d: Directive) => d.Dimensions.flat().every((k) => k === 'service');

/** The largest count of the directives' metrics in `doc` (the records a summed set counted); 0 when none. */
function largestCount(doc: EmfDocument, directives: readonly Directive[]): number {
  const values = directives
    .flatMap((d) => d.Metrics)
    .flatMap(({ Name }) => (Array.isArray(doc[Name]) ? (doc[Name] as number[]) : [Number(doc[Name])]));
  return Math.max(1, ...values.filter(Number.isFinite));
}

/** Adds one written line to `tallies` under `fn` when it is an EMF document (its bytes with the newline). */
export function tallyEmf(tallies: Record<string, EmfTally>, fn: string, line: string): void {
  if (!line.startsWith('{"_aws"')) return;
  let doc: EmfDocument;
  try {
    doc = JSON.parse(line) as EmfDocument;
  } catch {
    return;
  }
  const directives = doc._aws.CloudWatchMetrics;
  const bytes = Buffer.byteLength(line) + 1;
  tallies[fn] ??= {
    plain: { docs: 0, bytes: 0 },
    sets: { docs: 0, bytes: 0, records: 0 },
    merged: { sets: 0, records: 0 },
    entryBytes: 0,
    requestIds: [],
  };
  const t = tallies[fn];
  const id = doc.function_request_id;
  if (typeof id === 'string' && !t.requestIds.includes(id)) t.requestIds.push(id);
  const key = LOG_LISTINGS[doc.message as LogListing] as string | undefined;
  const entries = key === undefined || doc[key] === undefined ? 0 : Buffer.byteLength(JSON.stringify(doc[key]));
  const sets = directives.filter((d) => !isPlain(d));
  if (sets.length < directives.length || key !== undefined) {
    t.plain.docs++;
    t.plain.bytes += bytes - entries;
    t.entryBytes += entries;
    if (sets.length > 0) {
      t.merged.sets++;
      t.merged.records += largestCount(doc, sets);
    }
    return;
  }
  t.sets.docs++;
  t.sets.bytes += bytes;
  t.sets.records += largestCount(doc, sets);
}

/**
 * The bytes (with the newline) of each directive of an EMF line written as a document of its own, as Powertools
 * writes one: its time, its directive, `service` and its dimensions and values; no listing. What "one metric line"
 * weighs whatever notifier puts together in a line (the floor prices one an invocation, floor-at-rate.ts).
 */
export function directiveDocumentBytes(line: string): number[] {
  const doc = JSON.parse(line) as EmfDocument & { _aws: { Timestamp?: number } };
  return doc._aws.CloudWatchMetrics.map((d) => {
    const alone: Record<string, unknown> = { _aws: { Timestamp: doc._aws.Timestamp, CloudWatchMetrics: [d] } };
    for (const k of d.Dimensions.flat()) alone[k] = doc[k];
    for (const { Name } of d.Metrics) alone[Name] = doc[Name];
    return Buffer.byteLength(JSON.stringify(alone)) + 1;
  });
}

/**
 * What one plain count (`name`: 1) adds to a closing document, as Powertools writes a directive (the same namespace
 * and dimension as a plain directive the run wrote): the directive and the value, with their commas. What a spooling
 * dispatch invocation adds (EvidenceSpooled), which the run, whose batches are full, never wrote.
 */
export function oneCountDirectiveBytes(sample: string, name: string): number {
  const doc = JSON.parse(sample) as EmfDocument;
  const plain = doc._aws.CloudWatchMetrics.find(isPlain);
  if (plain === undefined) return 0;
  const directive = { ...plain, Metrics: [{ Name: name, Unit: 'Count' }] };
  return Buffer.byteLength(JSON.stringify(directive)) + 1 + Buffer.byteLength(`${JSON.stringify(name)}:1`) + 1;
}

/**
 * Tallies the EMF documents written to standard output from now on by the function whose code writes them. The
 * local run replaces `process.stdout.write` after this is installed (tools/local/emf.ts, which keeps what it read for
 * its own report): the property is an accessor that wraps whatever is assigned, so the handlers' writes are tallied
 * through the replacement and the report's still reach standard output; a nested write is tallied once.
 */
export function tallyStdout(tallies: Record<string, EmfTally>, samples: string[]): void {
  const wrappers = new WeakSet<object>();
  let depth = 0;
  const wrap = (write: typeof process.stdout.write): typeof process.stdout.write => {
    if (wrappers.has(write)) return write;
    const wrapped = function (this: unknown, chunk: string | Uint8Array, ...rest: unknown[]) {
      const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
      if (depth === 0 && text.includes('{"_aws"')) {
        const limit = Error.stackTraceLimit;
        Error.stackTraceLimit = 80;
        const fn = functionOfStack(new Error().stack) ?? 'outside functions/';
        Error.stackTraceLimit = limit;
        for (const line of text.split('\n')) {
          tallyEmf(tallies, fn, line);
          if (samples.length === 0 && line.startsWith('{"_aws"') && line.includes('"Dimensions":[["service"]]'))
            samples.push(line);
        }
      }
      depth++;
      try {
        return (write as (...a: unknown[]) => boolean).call(process.stdout, chunk, ...rest);
      } finally {
        depth--;
      }
    } as typeof process.stdout.write;
    wrappers.add(wrapped);
    return wrapped;
  };
  let current = wrap(process.stdout.write);
  Object.defineProperty(process.stdout, 'write', {
    configurable: true,
    get: () => current,
    set: (f: typeof process.stdout.write) => {
      current = wrap(f);
    },
  });
}

/**
 * The metric (EMF) documents of the complete cost run, by the function that wrote them. A document says nothing of its
 * function (every one carries the same namespace and `service`), so the probe (cost-probe.ts, in `npm start`'s process)
 * attributes each to the function whose code was running when it was written: the first frame of its stack under
 * functions/<function>/ (Powertools writes synchronously, from the handler's `publishMetrics` or the `countBy` that
 * wrote it at once). Per function it keeps the documents without dimensions of their own (the plain counts, one an
 * invocation) apart from those with (a channel's sends: one per dimension set an invocation), and how many records
 * those summed (a document's largest count). cost-at-rate.ts prices both at the rate's invocations and records.
 */

/** One function's metric documents in the run. */
export interface EmfTally {
  /** Documents with `service` as their only dimension: the invocation's plain counts. */
  plain: { docs: number; bytes: number };
  /** Documents of a dimension set of their own, and the records they summed (each document's largest count). */
  sets: { docs: number; bytes: number; records: number };
}

/** The function a stack is in: its first frame under functions/ingest, dispatch, feedback or sweeper. */
export function functionOfStack(stack: string | undefined): string | undefined {
  return /\/functions\/(ingest|dispatch|feedback|sweeper)\//.exec(stack ?? '')?.[1];
}

interface EmfDocument {
  _aws: { CloudWatchMetrics: { Dimensions: string[][]; Metrics: { Name: string }[] }[] };
  [key: string]: unknown;
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
  const dims = new Set(directives.flatMap((d) => d.Dimensions.flat()));
  const bytes = Buffer.byteLength(line) + 1;
  tallies[fn] ??= { plain: { docs: 0, bytes: 0 }, sets: { docs: 0, bytes: 0, records: 0 } };
  const t = tallies[fn];
  if ([...dims].every((d) => d === 'service')) {
    t.plain.docs++;
    t.plain.bytes += bytes;
    return;
  }
  const values = directives
    .flatMap((d) => d.Metrics)
    .flatMap(({ Name }) => (Array.isArray(doc[Name]) ? (doc[Name] as number[]) : [Number(doc[Name])]));
  t.sets.docs++;
  t.sets.bytes += bytes;
  t.sets.records += Math.max(1, ...values.filter(Number.isFinite));
}

/**
 * A plain document of one count (`name`: 1) as Powertools writes it, made from one the run wrote (the same namespace,
 * dimension and time's digits): its bytes with the newline. What a spooling dispatch invocation adds (EvidenceSpooled),
 * which the run, whose batches are full, never wrote.
 */
export function oneCountDocumentBytes(sample: string, name: string): number {
  const doc = JSON.parse(sample) as EmfDocument;
  const [first] = doc._aws.CloudWatchMetrics;
  if (first === undefined) return 0;
  const one: Record<string, unknown> = {
    _aws: { ...doc._aws, CloudWatchMetrics: [{ ...first, Metrics: [{ Name: name, Unit: 'Count' }] }] },
  };
  for (const d of first.Dimensions.flat()) one[d] = doc[d];
  one[name] = 1;
  return Buffer.byteLength(JSON.stringify(one)) + 1;
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

/**
 * Keeps standard output for the run's summary: every line the handlers write (Powertools JSON logs and EMF metrics)
 * goes to standard error instead — or, given a `sink` (the local run's log file), there — and the EMF metric values
 * are summed as CloudWatch would. With a sink, what the handlers write on standard error (Powertools' WARN and ERROR
 * lines) and process warnings (the SDK's Node.js support notice) go there too; `writeStderr` still reaches the
 * terminal, for the command's own progress and messages.
 */
export interface CapturedOutput {
  readonly metrics: Record<string, number>;
  writeStdout(text: string): void;
  writeStderr(text: string): void;
  restore(): void;
}

type Write = (chunk: string | Uint8Array, ...rest: unknown[]) => boolean;

export function captureOutput(sink?: (text: string) => void): CapturedOutput {
  const originalStdout = process.stdout.write;
  const originalStderr = process.stderr.write;
  const originalEmitWarning = process.emitWarning;
  const stdout = originalStdout.bind(process.stdout) as Write;
  const stderr = originalStderr.bind(process.stderr) as Write;
  const metrics: Record<string, number> = {};
  let partial = '';
  const tally = (line: string) => {
    if (!line.startsWith('{"_aws"')) return;
    try {
      const doc = JSON.parse(line) as Record<string, unknown> & {
        _aws: { CloudWatchMetrics: { Metrics: { Name: string }[] }[] };
      };
      for (const { Name } of doc._aws.CloudWatchMetrics.flatMap((d) => d.Metrics)) {
        const v = doc[Name];
        const values = Array.isArray(v) ? (v as number[]) : [v as number];
        metrics[Name] = (metrics[Name] ?? 0) + values.reduce((a, b) => a + b, 0);
      }
    } catch {
      // not an EMF document after all: it is only a log line
    }
  };
  const text = (chunk: string | Uint8Array) =>
    typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
  process.stdout.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    const lines = (partial + text(chunk)).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) tally(line);
    // Looked up at each call, not bound once: whoever wraps standard error later (the chaos world keeps every
    // handler line for its PII scan) still sees the handlers' lines.
    if (sink === undefined) return (process.stderr.write as Write)(chunk, ...rest);
    sink(text(chunk));
    return true;
  }) as typeof process.stdout.write;
  if (sink !== undefined) {
    process.stderr.write = ((chunk: string | Uint8Array) => {
      sink(text(chunk));
      return true;
    }) as typeof process.stderr.write;
    process.emitWarning = ((warning: string | Error, ...rest: unknown[]) => {
      const type =
        typeof rest[0] === 'string' ? rest[0] : ((rest[0] as { type?: string } | undefined)?.type ?? 'Warning');
      sink(`${typeof warning === 'string' ? `${type}: ${warning}` : `${warning.name}: ${warning.message}`}\n`);
    }) as typeof process.emitWarning;
  }
  return {
    metrics,
    writeStdout: (t) => void stdout(t),
    writeStderr: (t) => void stderr(t),
    restore: () => {
      process.stdout.write = originalStdout;
      process.stderr.write = originalStderr;
      process.emitWarning = originalEmitWarning;
    },
  };
}

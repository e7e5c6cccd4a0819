/**
 * Keeps standard output for the run's summary: every line the handlers write (Powertools JSON logs and EMF metrics)
 * goes to standard error instead, and the EMF metric values are summed as CloudWatch would.
 */
export interface CapturedOutput {
  readonly metrics: Record<string, number>;
  writeStdout(text: string): void;
  restore(): void;
}

export function captureOutput(): CapturedOutput {
  const original = process.stdout.write.bind(process.stdout);
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
  process.stdout.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    const text = partial + (typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
    const lines = text.split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) tally(line);
    return (process.stderr.write as (c: string | Uint8Array, ...r: unknown[]) => boolean)(chunk, ...rest);
  }) as typeof process.stdout.write;
  return {
    metrics,
    writeStdout: (text) => void original(text),
    restore: () => {
      process.stdout.write = original;
    },
  };
}

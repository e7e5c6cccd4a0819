/**
 * The whole pipeline end to end, as `npm start -- --events FILE` runs it: the command itself, in a child
 * process, on generated files of two sizes, with DynamoDB Local on disk as a large file's run has it. Reports the
 * rate (events/s and sends/s from the first record to converged, the run's own clock) and the peak resident memory
 * of the run's Node process and of DynamoDB Local, sampled from /proc. The same rate at both sizes, and the same
 * peaks, is what "a large file streams and runs at the pipeline's speed" means; a leak or a slowdown with the
 * table's size shows up as the larger run's figure drifting from the smaller one's.
 */
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { productEnv } from './product-env.ts';

export interface PipelineRun {
  readonly events: number;
  readonly notifications: number;
  readonly storage: 'memory' | 'disk';
  readonly seconds: number;
  readonly eventsPerSec: number;
  readonly sendsPerSec: number;
  readonly peakRssMb: { readonly node: number; readonly dynamodbLocal: number };
  /** The largest DynamoDB Local's data directory grew to, on disk (0 in memory): where the table went instead. */
  readonly peakDataMb: number;
  readonly exitCode: number;
}

/** pid → [parent pid, command line] for every process on the machine (Linux /proc). */
function processTable(): Map<number, { ppid: number; cmd: string; rssKb: number }> {
  const table = new Map<number, { ppid: number; cmd: string; rssKb: number }>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const status = readFileSync(`/proc/${entry}/status`, 'utf8');
      const ppid = Number(/^PPid:\s+(\d+)/m.exec(status)?.[1] ?? 0);
      const rssKb = Number(/^VmRSS:\s+(\d+)/m.exec(status)?.[1] ?? 0);
      const cmd = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replaceAll('\0', ' ');
      table.set(Number(entry), { ppid, cmd, rssKb });
    } catch {
      // the process ended while it was read
    }
  }
  return table;
}

/** Resident memory of the run, in KB: DynamoDB Local (the Java child) and the run's Node process (npm's not counted). */
function treeRss(root: number): { node: number; java: number } {
  const table = processTable();
  const sum = { node: 0, java: 0 };
  for (const [pid, p] of table) {
    let ancestor: number | undefined = pid;
    while (ancestor !== undefined && ancestor > 1 && ancestor !== root) ancestor = table.get(ancestor)?.ppid;
    if (ancestor !== root) continue;
    if (p.cmd.includes('DynamoDBLocal.jar')) sum.java += p.rssKb;
    else if (p.cmd.includes('tools/local/run.ts')) sum.node += p.rssKb;
  }
  return sum;
}

/** Bytes in a directory (flat: DynamoDB Local keeps one SQLite file and its journal); 0 once it is gone. */
function dirBytes(dir: string): number {
  try {
    return readdirSync(dir).reduce((sum, f) => sum + statSync(join(dir, f)).size, 0);
  } catch {
    return 0;
  }
}

/** One `npm start` of `values` as a JSON Lines file: the command as a user runs it, its Node options included. */
export async function runPipeline(
  repo: string,
  dir: string,
  values: readonly object[],
  storage: 'memory' | 'disk',
): Promise<PipelineRun> {
  const file = join(dir, `pipeline-${values.length}.jsonl`);
  writeFileSync(file, `${values.map((v) => JSON.stringify(v)).join('\n')}\n`);
  const child = spawn('npm', ['start', '--silent', '--', '--events', file, '--json', '--dynamodb-storage', storage], {
    cwd: repo,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: productEnv(),
  });
  let stdout = '';
  let stderr = '';
  let dataDir: string | undefined;
  child.stdout.on('data', (c) => {
    stdout += String(c);
  });
  child.stderr.on('data', (c) => {
    stderr = (stderr + String(c)).slice(-4000);
    dataDir ??= /on disk in (\S+?),/.exec(stderr)?.[1];
  });
  const peak = { node: 0, java: 0, data: 0 };
  const sampler = setInterval(() => {
    if (child.pid === undefined) return;
    const now = treeRss(child.pid);
    peak.node = Math.max(peak.node, now.node);
    peak.java = Math.max(peak.java, now.java);
    if (dataDir !== undefined) peak.data = Math.max(peak.data, dirBytes(dataDir));
  }, 500);
  const exitCode = await new Promise<number>((resolve) => child.once('exit', (code) => resolve(code ?? 1)));
  clearInterval(sampler);
  if (exitCode !== 0) throw new Error(`npm start exited ${exitCode}: ${stderr.trim().slice(-1000)}`);
  const report = JSON.parse(stdout) as {
    events: { delivered: number };
    notifications: { created: number; sent: number };
    pacing: { seconds: number };
  };
  const seconds = report.pacing.seconds;
  return {
    events: report.events.delivered,
    notifications: report.notifications.created,
    storage,
    seconds,
    eventsPerSec: Math.round(report.events.delivered / seconds),
    sendsPerSec: Math.round(report.notifications.sent / seconds),
    peakRssMb: { node: Math.round(peak.node / 1024), dynamodbLocal: Math.round(peak.java / 1024) },
    peakDataMb: Math.round(peak.data / 1024 / 1024),
    exitCode,
  };
}

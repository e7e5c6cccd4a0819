/**
 * `npm start -- --json --keep` as a browser test starts it: a child process whose report is read once it is
 * complete (the run then stays up until it is stopped), with its standard error kept for the test to read.
 */
import { type ChildProcess, spawn } from 'node:child_process';

export interface KeptRun<R> {
  readonly child: ChildProcess;
  readonly report: R;
  readonly stderr: () => string;
  /** The run's exit code, once it exits. */
  readonly exited: Promise<number | null>;
}

export async function startKeptRun<R>(args: readonly string[]): Promise<KeptRun<R>> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'tools/local/run.ts', ...args, '--json', '--keep'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let stdout = '';
  let stderr = '';
  child.stderr?.on('data', (c) => {
    stderr += c;
  });
  // --keep prints the report, then stays up: the report is complete once it parses.
  const report = await new Promise<R>((resolve, reject) => {
    child.stdout?.on('data', (c) => {
      stdout += c;
      try {
        resolve(JSON.parse(stdout) as R);
      } catch {
        // not complete yet
      }
    });
    child.once('exit', () => reject(new Error(`the run ended: ${stderr}`)));
  });
  return { child, report, stderr: () => stderr, exited };
}

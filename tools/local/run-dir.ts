/**
 * Each local run's own folder, `.local/runs/<started>/`: its log file (`run.log`), its evidence (`evidence/`, the same
 * keys and bytes the stack's bucket would hold) and `run.json`, naming the DynamoDB Local it ran on. A run's evidence
 * is its own: a demo run twice never shows one email sent twice. The ops CLI finds a run's folder by the endpoint it
 * is pointed at (`--endpoint`), also after that run ended.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const LOCAL = join(import.meta.dirname, '..', '..', '.local');
const RUNS = join(LOCAL, 'runs');

export interface RunDir {
  readonly dir: string;
  readonly logPath: string;
  readonly evidenceDir: string;
}

const runDirAt = (dir: string): RunDir => ({
  dir,
  logPath: join(dir, 'run.log'),
  evidenceDir: join(dir, 'evidence'),
});

/** A new folder for a run starting now. */
export function newRunDir(now: Date = new Date()): RunDir {
  const dir = join(RUNS, `${now.toISOString().replace(/[:.]/g, '-')}-${process.pid}`);
  mkdirSync(join(dir, 'evidence'), { recursive: true });
  return runDirAt(dir);
}

/** Names the DynamoDB Local (and table) the run is on, so the ops CLI can find the run from the endpoint. */
export function recordRun(run: RunDir, on: { readonly endpoint: string; readonly tableName: string }): void {
  writeFileSync(join(run.dir, 'run.json'), `${JSON.stringify(on)}\n`);
}

/** The newest run that ran on `endpoint` (newest first by its folder's name), or undefined. */
export function runOn(endpoint: string): RunDir | undefined {
  if (!existsSync(RUNS)) return undefined;
  for (const name of readdirSync(RUNS).sort().reverse()) {
    const manifest = join(RUNS, name, 'run.json');
    if (!existsSync(manifest)) continue;
    try {
      if ((JSON.parse(readFileSync(manifest, 'utf8')) as { endpoint?: string }).endpoint === endpoint) {
        return runDirAt(join(RUNS, name));
      }
    } catch {
      // a manifest being written or cut short: not this run
    }
  }
  return undefined;
}

/** Where the ops CLI keeps evidence and audit records for a DynamoDB Local no local run recorded (one started by hand). */
export const UNRECORDED_RUN_EVIDENCE = join(LOCAL, 'evidence');

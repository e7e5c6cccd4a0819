/**
 * One set of command-line conventions for every command of this repository (`npm start`, `npm run chaos`,
 * `npm run bench`, `npm run ops`):
 *
 * - `--help` / `-h` prints the usage on standard output and exits 0.
 * - A usage error (unknown flag, bad value, missing file, busy port) prints one line on standard error and exits 2.
 *   Never a stack trace: `NOTIFIER_DEBUG=1` adds it for a developer.
 * - A failure at run time exits 1 (each command documents the finer codes it adds).
 * - SIGINT, SIGTERM and SIGHUP abort the run (the command prints what it has and stops what it started), a broken pipe
 *   on standard output stops it quietly; a second signal stops at once. Whatever was started is stopped on every exit.
 */
import { createServer } from 'node:net';
import { type ParseArgsConfig, parseArgs } from 'node:util';
import { loadCardRules } from '../../functions/domain/card-number.ts';
import { loadPhoneNumbers } from '../../functions/domain/phone-numbers.ts';

export class UsageError extends Error {
  override name = 'UsageError';
}

/** Exit codes shared by every command (README "Exit codes"). */
export const EXIT = {
  OK: 0,
  FAILED: 1,
  USAGE: 2,
  /** 128 + the signal's number, as a shell reports a process a signal ended. */
  SIGHUP: 129,
  SIGINT: 130,
  SIGPIPE: 141,
  SIGTERM: 143,
} as const;

export interface CommandSpec<O extends NonNullable<ParseArgsConfig['options']>> {
  /** The usage text `--help` prints: the first line is the synopsis. */
  readonly usage: string;
  readonly options: O;
  readonly allowPositionals?: boolean;
}

/**
 * Parses `argv` strictly. `--help` prints the usage and exits 0; a parse error becomes a UsageError naming the flag.
 */
export function parseCommandLine<O extends NonNullable<ParseArgsConfig['options']>>(
  spec: CommandSpec<O>,
  argv: string[],
) {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(`${spec.usage.trim()}\n`);
    process.exit(EXIT.OK);
  }
  try {
    return parseArgs({
      args: argv,
      options: spec.options,
      strict: true,
      allowPositionals: spec.allowPositionals ?? false,
    });
  } catch (error) {
    // node:util's parse errors carry codes ERR_PARSE_ARGS_*: they are the user's, not ours.
    if (String((error as NodeJS.ErrnoException).code ?? '').startsWith('ERR_PARSE_ARGS')) {
      throw new UsageError(`${(error as Error).message.split('\n')[0]} (see --help)`);
    }
    throw error;
  }
}

/** An integer option ≥ min, or undefined when absent; anything else is a usage error naming the flag. */
export function intOption(name: string, value: string | undefined, min: number, max = Number.MAX_SAFE_INTEGER) {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (value.trim() === '' || !Number.isInteger(n) || n < min || n > max) {
    throw new UsageError(
      `--${name} must be an integer ${max === Number.MAX_SAFE_INTEGER ? `≥ ${min}` : `from ${min} to ${max}`}, got "${value}"`,
    );
  }
  return n;
}

/**
 * Checks, before anything starts, that every port the user named is free (and named once). Listening without a host
 * binds every interface, so a port held on 127.0.0.1, 0.0.0.0 or :: is seen as busy.
 */
export async function assertPortsFree(ports: Record<string, number | undefined>): Promise<void> {
  const seen = new Map<number, string>();
  for (const [flag, port] of Object.entries(ports)) {
    if (port === undefined) continue;
    if (port > 65_535) throw new UsageError(`--${flag} ${port} is not a TCP port (1–65535)`);
    const other = seen.get(port);
    if (other !== undefined) throw new UsageError(`--${flag} and --${other} both name port ${port}`);
    seen.set(port, flag);
    await new Promise<void>((resolve, reject) => {
      const server = createServer();
      server.once('error', (error: NodeJS.ErrnoException) =>
        reject(
          error.code === 'EADDRINUSE'
            ? new UsageError(`--${flag} ${port} is already in use by another process`)
            : error.code === 'EACCES'
              ? new UsageError(`--${flag} ${port} needs privileges this user lacks`)
              : error,
        ),
      );
      server.listen(port, () => server.close(() => resolve()));
    });
  }
}

type Cleanup = () => void | Promise<void>;
const cleanups: Cleanup[] = [];

/** Registers something to stop when the command ends, however it ends; returns the function that unregisters it. */
export function onExit(cleanup: Cleanup): () => void {
  cleanups.push(cleanup);
  return () => {
    const i = cleanups.indexOf(cleanup);
    if (i >= 0) cleanups.splice(i, 1);
  };
}

async function runCleanups(): Promise<void> {
  for (const cleanup of cleanups.splice(0).reverse()) {
    try {
      await cleanup();
    } catch {
      // stopping is best effort: the next one still runs
    }
  }
}

const SIGNAL_EXIT = { SIGINT: EXIT.SIGINT, SIGTERM: EXIT.SIGTERM, SIGHUP: EXIT.SIGHUP } as const;
type StopSignal = keyof typeof SIGNAL_EXIT;

/**
 * Runs a command's main function under the conventions above. `main` receives an AbortSignal that fires on
 * SIGINT/SIGTERM/SIGHUP or a broken pipe (its `reason` is the signal's name, or 'EPIPE'): a long run checks it, stops
 * early and reports what it has. If main does not heed the abort within `graceMs` — it has not returned, nor said it
 * heard (`heard()`: it stopped its work and is reporting) — or a second signal comes, everything registered with
 * onExit is stopped and the process exits with the signal's code. The process ends once, after every cleanup: a
 * second way to the end (a signal, the grace) while the first is stopping things waits for it, never cuts it short.
 */
export function runCommand(
  name: string,
  main: (signal: AbortSignal, heard: () => void) => Promise<number>,
  graceMs = 10_000,
): void {
  const controller = new AbortController();
  let exitCode: number | undefined;
  let grace: NodeJS.Timeout | undefined;
  let ending: Promise<void> | undefined;
  /** `message` is written after the cleanups: one of them hands standard error back from the run's log file. */
  const finish = (code: number, message?: string): Promise<void> => {
    ending ??= (async () => {
      clearTimeout(grace);
      // Should a cleanup never finish and the event loop empty, Node still exits with this code, not 0.
      process.exitCode = code;
      await runCleanups();
      if (message !== undefined) process.stderr.write(message);
      process.exit(code);
    })();
    return ending;
  };
  const stop = (reason: StopSignal | 'EPIPE') => {
    const code = reason === 'EPIPE' ? EXIT.SIGPIPE : SIGNAL_EXIT[reason];
    if (controller.signal.aborted) return void finish(exitCode ?? code);
    exitCode = code;
    controller.abort(reason);
    grace = setTimeout(() => void finish(code), graceMs).unref();
  };
  const heard = () => clearTimeout(grace);
  for (const signal of Object.keys(SIGNAL_EXIT) as StopSignal[]) process.on(signal, () => stop(signal));
  // Node prints every process warning as a paragraph; the AWS SDK's notice that its 2027 versions need Node 22 is
  // not the operator's business at each command. Other warnings keep one line each.
  process.removeAllListeners('warning');
  process.on('warning', (warning) => {
    if (/NodeVersionSupportWarning/.test(warning.message) && !process.env.NOTIFIER_DEBUG) return;
    process.stderr.write(`${name}: ${warning.name}: ${warning.message.split('\n')[0]}\n`);
  });
  // A reader that went away (`npm start -- --json | head`): nothing more can be said on standard output.
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') stop('EPIPE');
  });
  // A tool reads producers' spellings of phone numbers, and masks card numbers and IBANs, with the contract's own
  // decoder: their rules first (ingest loads them only when a record needs them: functions/domain/phone-numbers.ts,
  // card-number.ts).
  Promise.all([loadPhoneNumbers(), loadCardRules()])
    .then(() => main(controller.signal, heard))
    .then(
      // main decides its code, even after an abort: it reports what it has and says how it ended.
      (code) => finish(code),
      (error: Error) => {
        const usage = error instanceof UsageError || error.name === 'UsageError';
        const detail = process.env.NOTIFIER_DEBUG ? `\n${error.stack}` : '';
        return finish(
          usage ? EXIT.USAGE : (exitCode ?? EXIT.FAILED),
          `${name}: ${usage ? '' : `${error.name}: `}${error.message}${detail}\n`,
        );
      },
    );
}

/**
 * The command-line conventions every command follows (tools/local/cli.ts), tried as a newcomer would: --help, usage errors
 * before anything starts, standard input, a quiet standard output, and nothing left running when a run is killed.
 */
import { type ChildProcess, execFile, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { connect, createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const tsx = (script: string, args: string[], input?: string) =>
  new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = execFile(
      process.execPath,
      ['--import', 'tsx', script, ...args],
      { timeout: 120_000, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) =>
        resolve({ code: error ? ((error as { code?: number }).code ?? null) : 0, stdout, stderr }),
    );
    if (input !== undefined) child.stdin?.end(input);
  });

const dir = mkdtempSync(join(tmpdir(), 'notifier-cli-'));
const file = (name: string, text: string) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};

/** Whether a DynamoDB Local started with `-port P` is still running. */
const javaOnPort = (port: string) =>
  execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' })
    .split('\n')
    .some((line) => line.includes('DynamoDBLocal.jar') && line.includes(`-port ${port}`));
const portOpen = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });

describe('--help and usage errors', () => {
  it.each([
    ['tools/local/run.ts', /^Usage: npm start/],
    ['tools/chaos/run.ts', /^Usage: npm run chaos/],
    ['tools/bench/run.ts', /^Usage: npm run bench/],
    ['tools/ops/cli.ts', /^Usage: npm run ops/],
  ])('%s --help prints its usage on standard output and exits 0', async (script, usage) => {
    const r = await tsx(script, ['--help']);
    expect(r.code).toBe(0);
    expect(r.stdout.trimStart()).toMatch(usage);
    expect(r.stdout).toContain('Exit codes');
  });

  it.each([
    ['tools/scripts/templates.ts', /^Usage: npm run templates/],
    ['tools/scripts/schema.ts', /^Usage: npm run schema/],
    ['tools/scripts/wire-schemas.ts', /^Usage: npm run schema:wire/],
    ['tools/scripts/screenshots.ts', /^Usage: npm run screenshots/],
    ['tools/ops/smoke.ts', /^usage: npm run smoke/],
  ])('%s --help prints its usage, exits 0 and does nothing else', async (script, usage) => {
    const r = await tsx(script, ['--help']);
    expect(r.code).toBe(0);
    expect(r.stdout.trimStart()).toMatch(usage);
    expect(r.stdout).not.toMatch(/wrote|screenshots: /);
  });

  it('the real `npm start` line (its Node options: the heap bound) starts the run', async () => {
    const r = await new Promise<{ code: number; stdout: string }>((resolve) =>
      execFile('npm', ['start', '--silent', '--', '--help'], (error, stdout) =>
        resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout }),
      ),
    );
    expect(r.code).toBe(0);
    expect(r.stdout.trimStart()).toMatch(/^Usage: npm start/);
  });

  it.each(['tools/local/run.ts', 'tools/chaos/run.ts', 'tools/bench/run.ts'])(
    '%s: an unknown flag or a bad value exits 2 with one line',
    async (script) => {
      for (const args of [
        ['--frobnicate'],
        ['--events', 'many'],
        ...(script === 'tools/bench/run.ts' ? [['--quota', '--pipeline']] : []),
      ]) {
        const r = await tsx(script, args);
        expect(r.code, args.join(' ')).toBe(2);
        expect(r.stderr.trim().split('\n'), r.stderr).toHaveLength(1);
        expect(r.stderr).not.toMatch(/\n\s+at /);
      }
    },
  );

  describe('npm start, before anything starts', () => {
    let busy: Server;
    let busyPort: number;
    beforeAll(async () => {
      busy = createServer();
      await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', () => resolve()));
      busyPort = (busy.address() as { port: number }).port;
    });
    afterAll(() => new Promise<void>((resolve) => busy.close(() => resolve())));

    it.each([
      [['--events', join(dir, 'missing.jsonl')], /no such file/],
      [['--events', dir], /is a directory/],
      [() => ['--events', file('empty.jsonl', '')], /is empty/],
      [() => ['--events', file('pretty.json', '{\n  "eventId": "x"\n}\n')], /pretty-printed JSON.*jq -c/],
      [() => ['--events', file('array.json', '[{"eventId":"x"}]\n')], /JSON array.*jq -c '\.\[\]'/],
      [() => ['--viewer-port', String(busyPort)], /--viewer-port \d+ is already in use/],
      [() => ['--dynamodb-port', String(busyPort)], /--dynamodb-port \d+ is already in use/],
      [['--ses-port', '18999', '--sns-port', '18999'], /both name port 18999/],
      [['--outbox-port', '70000'], /--outbox-port must be an integer from 1 to 65535/],
      [['--dynamodb-storage', 'tape'], /--dynamodb-storage must be memory, disk or auto/],
      [['--registry', dir], /--registry .*: no readable registry.json/],
    ])('%o → exit 2: %s', async (args, message) => {
      const r = await tsx('tools/local/run.ts', typeof args === 'function' ? args() : args);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(message);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stdout).toBe('');
    });
  });
});

describe('npm start runs quietly', () => {
  it('--events - reads standard input; standard output is exactly the JSON report, the handler logs go to the log file', async () => {
    const input = readFileSync('examples/events.jsonl', 'utf8') + readFileSync('examples/bad-input.jsonl', 'utf8');
    const r = await tsx('tools/local/run.ts', ['--events', '-', '--json'], input);
    const report = JSON.parse(r.stdout);
    expect(r.code).toBe(0);
    expect(report.notifications).toEqual({
      created: 13,
      sent: 13,
      failed: 0,
      unknown: 0,
      suppressed: 0,
      refused: 0,
      repaired: 0,
      held: 0,
      expired: 0,
      superseded: 0,
      throttled: 0,
    });
    expect(report.quarantine).toHaveLength(14);
    expect(report.quarantine[0]).toEqual({
      reason: 'INVALID_JSON',
      detail: 'value is not valid JSON',
      eventId: null,
      offset: 7,
    });
    // No handler JSON line and no SDK warning on the terminal: they are in the log file the report names.
    expect(r.stderr).not.toMatch(/^\{/m);
    expect(r.stderr).not.toContain('NodeVersionSupportWarning');
    // The run's own folder: its log file and its evidence, apart from every other run's.
    expect(report.run).toMatch(/^\.local\/runs\/[^/]+$/);
    expect(report.log).toBe(`${report.run}/run.log`);
    expect(readFileSync(report.log, 'utf8')).toContain('"_aws"');
    expect(report.evidence.dir).toBe(`${report.run}/evidence`);
    // Its evidence in batches, one object per dispatch invocation (docs/evidence-and-privacy.md).
    const days = readdirSync(join(report.evidence.dir, 'batches'));
    const batches = days.flatMap((day) => readdirSync(join(report.evidence.dir, 'batches', day)));
    expect(batches.filter((name) => name.endsWith('.jsonl.gz')).length).toBeGreaterThan(0);
  });
});

describe('nothing outlives the run', () => {
  const big = () =>
    file(
      'big.jsonl',
      Array.from({ length: 3000 }, (_, i) =>
        readFileSync('examples/events.jsonl', 'utf8')
          .split('\n')
          [i % 7]!.replace(/"eventId":"([^"]+)"/, `"eventId":"$1-${i}"`),
      ).join('\n'),
    );

  /**
   * Starts a run (by default node itself; `npm` as a process manager would); resolves once it says it is `ready`:
   * DynamoDB Local is up (by default), or the records are being delivered.
   */
  const start = async (args: string[], via: 'node' | 'npm' = 'node', ready = /DynamoDB Local http/) => {
    const child: ChildProcess =
      via === 'npm'
        ? spawn('npm', ['start', '--', ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
        : spawn(process.execPath, ['--import', 'tsx', 'tools/local/run.ts', ...args], {
            stdio: ['ignore', 'pipe', 'pipe'],
          });
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (c) => {
      stdout += c;
    });
    // 'close', not 'exit': 'exit' may come before the last of standard output has been read from the pipe (on a busy
    // machine the partial summary arrived after it), 'close' only once the child's pipes are drained.
    const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
    const port = await new Promise<string>((resolve, reject) => {
      child.stderr?.on('data', (c) => {
        stderr += c;
        const m = /DynamoDB Local http:\/\/127\.0\.0\.1:(\d+)/.exec(stderr);
        if (m?.[1] && ready.test(stderr)) resolve(m[1]);
      });
      child.once('exit', () => reject(new Error(`run ended before it started: ${stderr}`)));
    });
    return { child, port, exited, out: () => stdout, err: () => stderr };
  };

  it('SIGTERM mid-run: the partial summary, exit 143, and DynamoDB Local is gone, with its data on disk', async () => {
    const args = ['--events', big(), '--json', '--dynamodb-storage', 'disk'];
    // Mid-run: once the run says it is delivering the records, however long its set-up took on a busy machine.
    const { child, port, exited, out, err } = await start(args, 'node', /delivering the records/);
    expect(javaOnPort(port)).toBe(true);
    const dataDir = /on disk in (\S+?),/.exec(err())?.[1] ?? '';
    expect(existsSync(dataDir), err()).toBe(true);
    child.kill('SIGTERM');
    expect(await exited).toBe(143);
    const report = JSON.parse(out());
    expect(report.interrupted).toBe(true);
    expect(report.recordsRead).toBeLessThan(3000);
    expect(javaOnPort(port)).toBe(false);
    expect(await portOpen(Number(port))).toBe(false);
    expect(existsSync(dataDir)).toBe(false);
  });

  it('a run that fails (DynamoDB Local killed under it) says why on the terminal, not in its log file, and exits 1', async () => {
    const { port, exited, err } = await start(['--events', big(), '--json']);
    const java = execFileSync('ps', ['-eo', 'pid,args'], { encoding: 'utf8' })
      .split('\n')
      .find((line) => line.includes('DynamoDBLocal.jar') && line.includes(`-port ${port}`));
    process.kill(Number(java?.trim().split(/\s+/)[0]), 'SIGKILL');
    expect(await exited).toBe(1);
    const last = err().trim().split('\n').at(-1) ?? '';
    expect(last).toMatch(/^notifier: \w+/);
    expect(last).not.toMatch(/^\s+at /);
  });

  it("SIGTERM to npm start's own npm process, with --keep, ends the run and DynamoDB Local", async () => {
    // A process manager or `kill` signals the npm process, not its child: npm passes SIGTERM on, and the script execs
    // node so no shell stands between them to swallow it.
    const { child, port, exited } = await start(['--events', 'examples/events.jsonl', '--keep'], 'npm');
    expect(javaOnPort(port)).toBe(true);
    child.kill('SIGTERM');
    await exited;
    // npm may end before the run it signalled has stopped what it started: wait for the run's own process to end (it
    // exits only once its cleanups are done), then nothing of it may be left.
    const runs = () =>
      execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' })
        .split('\n')
        .filter((l) => l.includes('tools/local/run.ts') && l.includes('--keep') && l.includes('examples/events.jsonl'));
    await expect.poll(runs, { timeout: 60_000, interval: 200 }).toEqual([]);
    expect(javaOnPort(port)).toBe(false);
  });

  it('SIGHUP, and a reader that closed the pipe, stop DynamoDB Local too', async () => {
    const hup = await start(['--events', big(), '--json']);
    hup.child.kill('SIGHUP');
    expect(await hup.exited).toBe(129);
    expect(javaOnPort(hup.port)).toBe(false);

    const pipe = await start(['--events', big(), '--json']);
    pipe.child.stdout?.destroy();
    pipe.child.kill('SIGINT');
    expect([130, 141]).toContain(await pipe.exited);
    expect(javaOnPort(pipe.port)).toBe(false);
  });

  it('a second signal while the first one is stopping things waits for them: the process ends once, after every cleanup', async () => {
    const marker = join(dir, 'cleaned');
    const child = spawn(process.execPath, ['--import', 'tsx', 'test/support/slow-cleanup-command.ts', marker], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    const said = (line: string) =>
      new Promise<void>((resolve) => {
        const check = () => (stderr.includes(line) ? resolve() : undefined);
        child.stderr?.on('data', (c) => {
          stderr += c;
          check();
        });
        check();
      });
    // 'close', not 'exit': 'exit' may come before the last of standard output has been read from the pipe (on a busy
    // machine the partial summary arrived after it), 'close' only once the child's pipes are drained.
    const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
    await said('ready');
    // Its main never returns: the grace ends it, and the cleanup starts.
    child.kill('SIGTERM');
    await said('cleaning');
    child.kill('SIGTERM');
    expect(await exited).toBe(143);
    expect(readFileSync(marker, 'utf8')).toBe('cleaned');
  });
});

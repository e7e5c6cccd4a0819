/** `npm start`'s command-line contract: runs the real pipeline on a small file and reports what was sent. */
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { transferEvent } from '../support/events.ts';

const run = promisify(execFile);
const cli = (args: string[]) =>
  run(process.execPath, ['--import', 'tsx', 'local/run.ts', ...args], {
    timeout: 120_000,
    maxBuffer: 64 * 1024 * 1024,
  });

describe('npm start', () => {
  it('runs a JSONL file through the whole pipeline and prints one JSON report', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'notifier-'));
    const file = join(dir, 'events.jsonl');
    const good = JSON.stringify(transferEvent({ eventId: 'cli-1', channels: ['EMAIL', 'SMS'] }));
    const lines = [
      good,
      JSON.stringify(
        transferEvent({
          eventId: 'cli-2',
          recipient: { locale: 'en', pushEndpointArn: undefined, phoneNumber: undefined },
          data: { amount: '12.50', currency: 'USD', counterpartyName: '<b>Bob</b>' },
        }),
      ),
      'this is not json',
      good, // a producer resend
      JSON.stringify(transferEvent({ eventId: 'cli-1', channels: ['EMAIL', 'SMS'], data: { amount: '1' } })), // conflict
    ];
    writeFileSync(file, `${lines.join('\n')}\n`);
    const { stdout } = await cli(['--events', file, '--json', '--batch-size', '2', '--redeliver', '2']);
    const report = JSON.parse(stdout);
    // 5 records × 3 deliveries. Duplicates: 2 redeliveries each of cli-1 and cli-2, and all 3 of the resend; a bad
    // record's redeliveries find their quarantine item and count once.
    expect(report.events).toEqual({ delivered: 15, accepted: 2, duplicates: 7, conflicts: 1, quarantined: 1 });
    expect(report.notifications).toEqual({ created: 3, sent: 3, failed: 0, unknown: 0 });
    expect(report.sends.map((s: { notificationId: string }) => s.notificationId).sort()).toEqual([
      'cli-1#EMAIL',
      'cli-1#SMS',
      'cli-2#EMAIL',
    ]);
    const email = report.sends.find((s: { notificationId: string }) => s.notificationId === 'cli-2#EMAIL');
    expect(email).toMatchObject({
      eventId: 'cli-2',
      channel: 'EMAIL',
      to: 'hanako@example.com',
      subject: 'Your transfer is complete',
    });
    expect(email.html).toContain('&lt;b&gt;Bob&lt;/b&gt;');
    expect(email.text).toContain('$12.50');
    expect(report.quarantine).toEqual([
      { reason: 'INVALID_JSON', eventId: null, offset: 2 },
      { reason: 'EVENT_ID_CONFLICT', eventId: 'cli-1', offset: 4 },
    ]);
  });

  it('--ses-rate / --sns-rate: a burst over the account quota is paced and every notification is sent once', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'notifier-'));
    const file = join(dir, 'burst.jsonl');
    const lines = Array.from({ length: 40 }, (_, i) =>
      JSON.stringify(
        transferEvent({
          eventId: `burst-${i}`,
          recipient: { email: `c${i}@example.com`, pushEndpointArn: undefined, phoneNumber: undefined },
          channels: ['EMAIL'],
        }),
      ),
    );
    lines.push(JSON.stringify(transferEvent({ eventId: 'burst-sms', channels: ['SMS'] })));
    writeFileSync(file, `${lines.join('\n')}\n`);
    const { stdout } = await cli(['--events', file, '--json', '--ses-rate', '20', '--sns-rate', '20']);
    const report = JSON.parse(stdout);
    expect(report.notifications).toEqual({ created: 41, sent: 41, failed: 0, unknown: 0 });
    const ids = report.sends.map((s: { notificationId: string }) => s.notificationId);
    expect(new Set(ids).size).toBe(41);
    expect(ids).toHaveLength(41);
    // Whatever the provider throttled was deferred and sent later, never dropped or failed.
    expect(report.pacing.deferred).toBeGreaterThanOrEqual(report.pacing.providerThrottled.SES);
  });

  it('exits non-zero with a clear message for a missing file', async () => {
    await expect(cli(['--events', '/nonexistent/events.jsonl'])).rejects.toMatchObject({
      code: 2,
      stderr: expect.stringContaining('cannot read --events file "/nonexistent/events.jsonl": ENOENT'),
    });
  });

  it('exits non-zero with a clear message when a port is in use', async () => {
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', () => r()));
    const port = (blocker.address() as { port: number }).port;
    try {
      await expect(cli(['--sns-port', String(port)])).rejects.toMatchObject({
        code: 2,
        stderr: expect.stringContaining('a port is already in use'),
      });
    } finally {
      blocker.close();
    }
  });
});

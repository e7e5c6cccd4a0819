/** `npm start`'s command-line contract: runs the real pipeline on a small file and reports what was sent. */
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { isSafeDisplayText, isSafeMultilineText } from '../../tools/chaos/text-oracle.ts';
import { SAMPLE_CODES } from '../../tools/local/sample.ts';
import { transferEvent } from '../support/events.ts';

const run = promisify(execFile);
const cli = (args: string[]) =>
  run(process.execPath, ['--import', 'tsx', 'tools/local/run.ts', ...args], {
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
    // 5 records × 3 deliveries. Duplicates: 2 redeliveries each of cli-1 and cli-2, and all 3 of the resend; the
    // redeliveries of the bad record and of the conflict find their quarantine item: re-quarantined, 2 each.
    expect(report.events).toEqual({
      delivered: 15,
      accepted: 2,
      duplicates: 7,
      conflicts: 1,
      quarantined: 1,
      requarantined: 4,
      failed: 0,
      withoutNotifications: 0,
      tooOld: 0,
      displayTextSanitised: 0,
      cardNumbersMasked: 0,
      withRefusedChannels: 0,
      spellingsNormalised: 0,
      localeFallbacks: 0,
      timeZoneFallbacks: 0,
      repairs: 0,
    });
    expect(report.reconciled).toBe(true);
    expect(report.notifications).toEqual({
      created: 3,
      sent: 3,
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
      { reason: 'INVALID_JSON', detail: 'value is not valid JSON', eventId: null, offset: 2 },
      { reason: 'EVENT_ID_CONFLICT', detail: expect.stringContaining('payloadHash'), eventId: 'cli-1', offset: 4 },
    ]);
  });

  it('--ses-rate / --sns-rate: a burst over the account quota is paced and every notification is sent once', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'notifier-'));
    const file = join(dir, 'burst.jsonl');
    const lines = Array.from({ length: 40 }, (_, i) =>
      JSON.stringify(
        transferEvent({
          eventId: `burst-${i}`,
          // Forty customers: one customer's forty transfer notices in a minute would meet its flood guard.
          recipient: {
            userId: `c-${i}`,
            email: `c${i}@example.com`,
            pushEndpointArn: undefined,
            phoneNumber: undefined,
          },
          channels: ['EMAIL'],
        }),
      ),
    );
    lines.push(JSON.stringify(transferEvent({ eventId: 'burst-sms', channels: ['SMS'] })));
    writeFileSync(file, `${lines.join('\n')}\n`);
    const { stdout } = await cli(['--events', file, '--json', '--ses-rate', '20', '--sns-rate', '20']);
    const report = JSON.parse(stdout);
    expect(report.notifications).toEqual({
      created: 41,
      sent: 41,
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
    const ids = report.sends.map((s: { notificationId: string }) => s.notificationId);
    expect(new Set(ids).size).toBe(41);
    expect(ids).toHaveLength(41);
    // Whatever the provider throttled was deferred and sent later, never dropped or failed.
    expect(report.pacing.deferred).toBeGreaterThanOrEqual(report.pacing.providerThrottled.SES);
  });

  it('examples/adversarial.jsonl (the measured list of hostile inputs): converges, each valid notification sent once with clean text and the exact amount, exactly the bad records quarantined', async () => {
    // Every event in the file is dated 2026-11-30 except adv-stale (2020-01-01): a max age from 2025 on splits them,
    // whatever day the test runs.
    const maxAge = Math.floor((Date.now() - Date.parse('2025-01-01T00:00:00Z')) / 1000);
    const { stdout } = await cli([
      '--events',
      'examples/adversarial.jsonl',
      '--json',
      '--redeliver',
      '3',
      '--max-event-age',
      String(maxAge),
    ]);
    const report = JSON.parse(stdout);
    // 23 records, delivered 4× at once (--redeliver 3).
    expect(report.events).toEqual({
      delivered: 92,
      accepted: 14,
      duplicates: 46,
      conflicts: 1,
      quarantined: 7,
      requarantined: 24,
      failed: 0,
      withoutNotifications: 1,
      tooOld: 1,
      displayTextSanitised: 8,
      cardNumbersMasked: 0,
      withRefusedChannels: 0,
      spellingsNormalised: 0,
      localeFallbacks: 0,
      timeZoneFallbacks: 0,
      repairs: 0,
    });
    expect(report.reconciled).toBe(true);
    // Each record's detail says what was wrong (checked non-empty here; its wording is the decoder's).
    for (const q of report.quarantine) expect(q.detail).toMatch(/\S/);
    expect(report.quarantine.map(({ detail: _, ...q }: { detail: string }) => q)).toEqual([
      { reason: 'INVALID_EVENT_ID', eventId: null, offset: 2 },
      { reason: 'SCHEMA_VIOLATION', eventId: 'adv-surrogate-user', offset: 3 },
      { reason: 'SCHEMA_VIOLATION', eventId: 'adv-surrogate-transfer', offset: 4 },
      { reason: 'INVALID_CONTACT', eventId: 'adv-surrogate-email', offset: 5 },
      { reason: 'INVALID_AMOUNT', eventId: 'adv-usd-subcent', offset: 10 },
      { reason: 'INVALID_AMOUNT', eventId: 'adv-jpy-fraction', offset: 11 },
      { reason: 'INVALID_AMOUNT', eventId: 'adv-usd-huge-over', offset: 12 },
      { reason: 'EVENT_ID_CONFLICT', eventId: 'adv-order', offset: 16 },
    ]);
    type Send = { notificationId: string; subject: string | null; text: string; html: string | null };
    const sends: Send[] = report.sends;
    // Each valid notification exactly once (the provider ledgers are the witness).
    expect(sends.map((s) => s.notificationId).sort()).toEqual(
      [
        'adv-surrogate-name#EMAIL',
        'adv-surrogate-reason#EMAIL',
        'adv-crlf-name#EMAIL',
        'adv-nul-name#EMAIL',
        'adv-bidi-name#EMAIL',
        'adv-separator-reason#EMAIL',
        'adv-usd-huge#EMAIL',
        'adv-usd-huge#PUSH',
        'adv-usd-huge#SMS',
        'adv-bhd#EMAIL',
        'adv-order#EMAIL',
        'adv-resend#EMAIL',
        'adv-resend#SMS',
        'adv-long-name#EMAIL',
        'adv-zalgo-name#EMAIL',
      ].sort(),
    );
    // Clean text everywhere: no control, separator, bidi or ill-formed character in any subject, text or HTML.
    for (const s of sends) {
      for (const t of [s.subject ?? '', s.html ?? '']) expect(isSafeDisplayText(t), t).toBe(true);
      expect(isSafeMultilineText(s.text), s.text).toBe(true);
    }
    const text = (id: string) => sends.find((s) => s.notificationId === id)?.text ?? '';
    expect(text('adv-crlf-name#EMAIL')).toContain('of $12.50 to x is complete');
    expect(text('adv-nul-name#EMAIL')).toContain('to Pat Lee is complete');
    expect(text('adv-bidi-name#EMAIL')).toContain('to gnp.exe Lee is complete');
    expect(text('adv-surrogate-name#EMAIL')).toContain('to Pat\uFFFD is complete');
    expect(text('adv-separator-reason#EMAIL')).toContain('could not be completed: daily limit.');
    // The exact amount, digit for digit, on every channel; the lowest offset's amount for the reused id.
    for (const id of ['adv-usd-huge#EMAIL', 'adv-usd-huge#PUSH', 'adv-usd-huge#SMS']) {
      expect(text(id)).toContain('$999,999,999,999,999.99');
    }
    expect(text('adv-bhd#EMAIL')).toContain('BHD\u00a01,234.567');
    expect(text('adv-order#EMAIL')).toContain('$100.00');
    expect(text('adv-resend#SMS')).toContain('$25.50');
    // 140 characters at most, cut with an ellipsis.
    expect(text('adv-long-name#EMAIL')).toContain(
      `to ${'Very Long Payee Name '.repeat(15).slice(0, 139)}… is complete`,
    );
  });

  it('examples/real-world.jsonl, delivered twice at once: every notice with one reading reaches its customer once, at the normalised address; refused channels are never sent; the corrected resend repairs once', async () => {
    const { stdout } = await cli(['--events', 'examples/real-world.jsonl', '--json', '--redeliver', '1']);
    const report = JSON.parse(stdout);
    expect(report.events).toEqual({
      delivered: 28,
      accepted: 13,
      // The second copy of every record, and the producer's corrected resend (one copy repairs, the other is a duplicate).
      duplicates: 15,
      conflicts: 0,
      quarantined: 0,
      requarantined: 0,
      failed: 0,
      withoutNotifications: 1,
      tooOld: 0,
      displayTextSanitised: 0,
      cardNumbersMasked: 0,
      withRefusedChannels: 3,
      spellingsNormalised: 6,
      localeFallbacks: 1,
      timeZoneFallbacks: 1,
      repairs: 1,
    });
    expect(report.reconciled).toBe(true);
    expect(report.notifications).toEqual({
      created: 18,
      sent: 19,
      failed: 0,
      unknown: 0,
      suppressed: 0,
      refused: 2,
      repaired: 1,
      held: 0,
      expired: 0,
      superseded: 0,
      throttled: 0,
    });
    type Send = { notificationId: string; to: string; text: string };
    const sends: Send[] = report.sends;
    const to = Object.fromEntries(sends.map((s) => [s.notificationId, s.to]));
    expect(sends).toHaveLength(19);
    expect(Object.keys(to)).toHaveLength(19);
    expect(to).not.toHaveProperty(['rw-unsendable-email#EMAIL']);
    expect(to).not.toHaveProperty(['rw-missing-phone#SMS']);
    expect(to).toMatchObject({
      'rw-java-jackson#SMS': '+14155550123',
      'rw-dotnet#EMAIL': 'hanako@xn--r8jz45g.jp',
      'rw-dotnet#SMS': '+819012345678',
      'rw-mainframe#SMS': '+14155550199',
      'rw-no-country-code#SMS': '+819012345678',
    });
    const text = (id: string) => sends.find((s) => s.notificationId === id)?.text ?? '';
    expect(text('rw-mainframe#EMAIL')).toContain('$12.50');
    expect(text('rw-leap-second#EMAIL')).toContain('December 31, 2016 at 11:59 PM UTC');
    // Java's OffsetDateTime without its zero seconds: 18:15 in Tokyo.
    expect(text('rw-java-time#EMAIL')).toContain('November 30, 2026 at 6:15 PM GMT+9');
    // A language the brand does not write: English; a zone the runtime does not know: the locale's own.
    expect(text('rw-french#EMAIL')).toContain('Your transfer of CA$250.00');
    expect(text('rw-unknown-zone#EMAIL')).toContain('18:15 JST');
    const outcome = (id: string) => report.outcomes.find((o: { notificationId: string }) => o.notificationId === id);
    expect(outcome('rw-unsendable-email#EMAIL')).toMatchObject({
      status: 'REFUSED',
      reason: expect.stringMatching(/^UNSENDABLE_ADDRESS: /),
    });
    expect(outcome('rw-missing-phone#SMS')).toMatchObject({
      status: 'REFUSED',
      reason: expect.stringMatching(/^MISSING_CONTACT: /),
    });
    expect(report.quarantine).toEqual([]);
  });

  it("the built-in sample: emails from the bank with the transfer's local date and time, a text alternative, a viewport, a lang and a footer; SMS and push signed with the bank's name", async () => {
    const started = Date.now();
    const { stdout } = await cli(['--json']);
    const ended = Date.now();
    const report = JSON.parse(stdout);
    type Send = {
      notificationId: string;
      channel: string;
      from: string | null;
      subject: string | null;
      text: string;
      html: string | null;
    };
    const sends: Send[] = report.sends;
    const byId = (id: string) => sends.find((s) => s.notificationId === id) as Send;
    const emails = sends.filter((s) => s.channel === 'EMAIL');
    expect(emails.length).toBeGreaterThanOrEqual(4);
    for (const e of emails) {
      const ja = e.from?.startsWith('=?UTF-8?B?') === true;
      // The sender's display name is the bank's, in the customer's language (RFC 2047 for Japanese).
      expect(e.from).toBe(
        ja
          ? `=?UTF-8?B?${Buffer.from('サンプル銀行').toString('base64')}?= <notifications@bank.example>`
          : '"Example Bank" <notifications@bank.example>',
      );
      expect(e.html).toMatch(ja ? /^<!doctype html><html lang="ja"/ : /^<!doctype html><html lang="en"/);
      expect(e.html).toContain('<meta name="viewport" content="width=device-width, initial-scale=1">');
      expect(e.text.length).toBeGreaterThan(300);
      expect(e.text).toContain(
        ja ? 'パスワードや暗証番号をお尋ねすることは決してありません' : 'We will never ask for your password or PIN.',
      );
      expect(e.html).toContain(
        ja ? 'パスワードや暗証番号をお尋ねすることは決してありません' : 'We will never ask for your password or PIN.',
      );
      expect(e.text).toContain(ja ? 'サンプル銀行株式会社' : 'Example Bank Ltd.');
    }
    // The sample's events happened a minute before the run: the date and time are shown in the customer's zone
    // (Alex: America/Los_Angeles; the Japanese customer: the locale's default, Asia/Tokyo).
    // (The run began between `started` and `ended`: either day, should midnight fall in between.)
    const day = (timeZone: string, locale: string) =>
      `(?:${[started, ended]
        .map((t) =>
          new Intl.DateTimeFormat(locale, { year: 'numeric', month: 'long', day: 'numeric', timeZone }).format(
            t - 60_000,
          ),
        )
        .join('|')})`;
    expect(byId('demo-en-1#EMAIL').text).toMatch(
      new RegExp(`Date and time: ${day('America/Los_Angeles', 'en-US')} at \\d{1,2}:\\d{2}\\s[AP]M P[SD]T`),
    );
    expect(byId('demo-ja-1#EMAIL').text).toMatch(new RegExp(`日時: ${day('Asia/Tokyo', 'ja-JP')} \\d{1,2}:\\d{2} JST`));
    for (const s of sends.filter((x) => x.channel === 'SMS'))
      expect(s.text).toMatch(/^(Example Bank: |【サンプル銀行】)/);
    for (const s of sends.filter((x) => x.channel === 'PUSH'))
      expect(s.subject).toMatch(/^(Example Bank · |サンプル銀行｜)/);
    expect(
      sends.filter((x) => x.channel === 'SMS').length + sends.filter((x) => x.channel === 'PUSH').length,
    ).toBeGreaterThanOrEqual(4);

    // The mailbox simulator's feedback, suppression of later sends, preferences newest-first.
    const outcome = (id: string) => report.outcomes.find((o: { notificationId: string }) => o.notificationId === id);
    expect(outcome('demo-sim-ok#EMAIL')).toEqual({
      notificationId: 'demo-sim-ok#EMAIL',
      status: 'SENT',
      deliveryStatus: 'DELIVERED',
      reason: null,
    });
    expect(outcome('demo-sim-bounce#EMAIL')).toMatchObject({ status: 'SENT', deliveryStatus: 'BOUNCED' });
    expect(outcome('demo-sim-complaint#EMAIL')).toMatchObject({ status: 'SENT', deliveryStatus: 'COMPLAINED' });
    expect(outcome('demo-sim-bounce-again#EMAIL')).toMatchObject({ status: 'SUPPRESSED', reason: 'BOUNCED' });
    expect(outcome('demo-sim-complaint-again#EMAIL')).toMatchObject({ status: 'SUPPRESSED', reason: 'COMPLAINED' });
    expect(outcome('demo-en-4#SMS')).toMatchObject({ status: 'SUPPRESSED', reason: 'OPTED_OUT' });
    expect(outcome('demo-en-4#EMAIL')).toMatchObject({ status: 'SENT' });
    // SNS's delivery status for SMS and push, through the real feedback function: delivered, or failed with the
    // carrier's or platform's words; a dead number or device is not sent to again, an unreachable one is.
    expect(outcome('demo-en-1#SMS')).toMatchObject({ status: 'SENT', deliveryStatus: 'DELIVERED' });
    expect(outcome('demo-en-1#PUSH')).toMatchObject({ status: 'SENT', deliveryStatus: 'DELIVERED' });
    expect(outcome('demo-ja-1#PUSH')).toMatchObject({ status: 'SENT', deliveryStatus: 'DELIVERED' });
    expect(outcome('demo-sms-stop#SMS')).toEqual({
      notificationId: 'demo-sms-stop#SMS',
      status: 'SENT',
      deliveryStatus: 'FAILED',
      reason: 'Phone number is opted out',
    });
    expect(outcome('demo-sms-invalid#SMS')).toMatchObject({ deliveryStatus: 'FAILED', reason: 'Invalid phone number' });
    expect(outcome('demo-push-gone#PUSH')).toMatchObject({ status: 'SENT', deliveryStatus: 'FAILED' });
    expect(outcome('demo-sms-stop-again#SMS')).toMatchObject({ status: 'SUPPRESSED', reason: 'CARRIER_OPT_OUT' });
    expect(outcome('demo-push-gone-again#PUSH')).toMatchObject({ status: 'SUPPRESSED', reason: 'UNDELIVERABLE' });
    expect(outcome('demo-sms-unreachable-again#SMS')).toMatchObject({ status: 'SENT', deliveryStatus: 'FAILED' });
    expect(report.feedback.snsDeliveryStatus).toBe(
      sends.filter((x) => x.channel === 'SMS' || x.channel === 'PUSH').length,
    );
    // Suppressed notifications were never sent.
    const sentIds = new Set(sends.map((s) => s.notificationId));
    for (const o of report.outcomes.filter((x: { status: string }) => x.status === 'SUPPRESSED'))
      expect(sentIds.has(o.notificationId)).toBe(false);
    expect(report.preferences).toEqual([
      { eventId: 'demo-prefs-2', occurredAt: expect.any(String), applied: true },
      { eventId: 'demo-prefs-1', occurredAt: expect.any(String), applied: false },
    ]);

    // The right moment, judged as in AWS: the code asked for now is sent; the one asked for ten minutes ago expired.
    expect(outcome('demo-otp-now#SMS')).toMatchObject({ status: 'SENT' });
    expect(byId('demo-otp-now#SMS').text).toContain(SAMPLE_CODES[2]);
    expect(outcome('demo-otp-late#SMS')).toMatchObject({
      status: 'EXPIRED',
      reason: expect.stringMatching(/^VALIDITY_ENDED: valid until /),
    });
    expect(sentIds.has('demo-otp-late#SMS')).toBe(false);
    // A statement for a customer at 3 a.m. local waits for 08:00 there: listed as waiting, the run converged anyway.
    const held = outcome('demo-statement-night#EMAIL');
    expect(held).toMatchObject({ status: 'HELD' });
    const [, until, zone] = /^QUIET_HOURS: waiting until (\S+) \((.+)\)$/.exec(held.reason) ?? [];
    const local = new Intl.DateTimeFormat('en-GB', {
      timeZone: zone,
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
    });
    expect(local.format(Date.parse(String(until)))).toBe('08:00');
    expect(Date.parse(String(until)) - started).toBeGreaterThan(4 * 3_600_000);
    // The older low balance of the account arrived last: superseded by the newer, never sent.
    expect(outcome('demo-lowbal-new#EMAIL')).toMatchObject({ status: 'SENT' });
    expect(outcome('demo-lowbal-old#EMAIL')).toMatchObject({
      status: 'SUPERSEDED',
      reason: expect.stringMatching(/^NEWER_NOTICE: demo-lowbal-new, occurred /),
    });
    // Four low balances for one customer within a minute: three an hour reach them, the fourth is throttled. (The
    // guard counts in fixed hours: a run across the hour's turn may count them in two windows, up to 3 in each.)
    const flood = ['1', '2', '3', '4'].map((i) => outcome(`demo-flood-${i}#EMAIL`));
    const oneHour = Math.floor(started / 3_600_000) === Math.floor(ended / 3_600_000);
    const throttled = flood.filter((o) => o.status === 'THROTTLED');
    expect(flood.filter((o) => o.status === 'SENT').length + throttled.length).toBe(4);
    expect(throttled.length).toBeLessThanOrEqual(1);
    if (oneHour) expect(throttled).toHaveLength(1);
    for (const o of throttled) expect(o.reason).toMatch(/^FLOOD_GUARD: 3 per 3600 s, /);
    expect(report.notifications).toMatchObject({ expired: 1, superseded: 1, throttled: throttled.length });
    expect(report.notifications.held).toBeGreaterThanOrEqual(1);
    // The codes are in no file the run leaves: its log, its evidence (the MAC and the message redacted), its manifest.
    const files = readdirSync(report.run, { recursive: true, withFileTypes: true }).filter((f) => f.isFile());
    expect(files.length).toBeGreaterThan(3);
    for (const f of files) {
      const text = readFileSync(join(f.parentPath, f.name), 'latin1');
      for (const code of SAMPLE_CODES) expect(text, join(f.parentPath, f.name)).not.toContain(code);
    }
  });

  it('exits non-zero with a clear message for a missing file', async () => {
    await expect(cli(['--events', '/nonexistent/events.jsonl'])).rejects.toMatchObject({
      code: 2,
      stderr: expect.stringContaining('cannot read --events file "/nonexistent/events.jsonl": no such file'),
    });
  });

  it('exits non-zero with a clear message when a port is in use', async () => {
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', () => r()));
    const port = (blocker.address() as { port: number }).port;
    try {
      await expect(cli(['--sns-port', String(port)])).rejects.toMatchObject({
        code: 2,
        stderr: expect.stringMatching(/--sns-port \d+ is already in use/),
      });
    } finally {
      blocker.close();
    }
  });
});

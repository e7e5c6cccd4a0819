/**
 * The outbox page of `npm start`, driven in a real headless browser (Debian's chromium, playwright-core): after a run
 * of examples/events.jsonl with --keep, every notification shows with its status, the email as the rendered HTML the
 * SES emulator received, the push as a card, the SMS as a bubble with its encoding and segment count. Ctrl-C then
 * stops the run, and its DynamoDB Local with it.
 */
import { type ChildProcess, execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startKeptRun } from '../support/kept-run.ts';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

let child: ChildProcess;
let exited: Promise<number | null>;
let report: { outbox: string; notifications: { sent: number } };
let dynamoPort: string;
let browser: Browser;

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium (.ci/run does it), or set CHROMIUM_PATH`);
  }
  const run = await startKeptRun<typeof report>(['--events', 'examples/events.jsonl']);
  ({ child, report, exited } = run);
  const stderr = run.stderr();
  dynamoPort = /DynamoDB Local http:\/\/127\.0\.0\.1:(\d+)/.exec(stderr)?.[1] ?? '';
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
}, 300_000);

afterAll(async () => {
  await browser?.close();
  if (child.exitCode === null) child.kill('SIGKILL');
});

describe('the outbox page', () => {
  it('shows every notification with its status, and each send as the customer sees it', async () => {
    expect(report.notifications.sent).toBe(13);
    const page = await browser.newPage();
    await page.goto(report.outbox);
    expect(await page.locator('section.notification').count()).toBe(13);
    expect(await page.locator('section.notification[data-status="SENT"] .status').allTextContents()).toEqual(
      Array(13).fill('SENT'),
    );
    expect(await page.locator('.summary').textContent()).toContain('13 notifications: SENT 13');

    // The email: the HTML SES received, rendered in a sandboxed frame, with its sender and subject.
    const email = page.locator('section[id="ex-ja-failed-email#EMAIL"]');
    expect(await email.locator('.subject').textContent()).toBe('お振込みを完了できませんでした');
    expect(await email.locator('.meta').textContent()).toContain('サンプル銀行');
    const frame = page.frameLocator('section[id="ex-en-email-only#EMAIL"] iframe');
    expect(await frame.locator('body').textContent()).toContain('$1,000,000.00');
    expect(await frame.locator('body').textContent()).toContain('Jordan Lee');

    // The push: a card with its title and body.
    const push = page.locator('section[id="ex-en-failed-email-push#PUSH"] .card');
    expect(await push.locator('.title').textContent()).toBe('Example Bank · Transfer failed');
    expect(await push.locator('.body').textContent()).toContain('insufficient funds');

    // The SMS: a bubble, its encoding and its segment count (Japanese goes as UCS-2, plain English as GSM-7).
    const ja = page.locator('section[id="ex-ja-completed-all#SMS"]');
    expect(await ja.locator('.bubble').textContent()).toContain('山田 太郎様へ￥10,000の振込が完了しました');
    expect(await ja.locator('.size').textContent()).toMatch(/^UCS-2 · \d+ UTF-16 units · \d+ segments?$/);
    const en = page.locator('section[id="ex-en-completed-all#SMS"]');
    expect(await en.locator('.bubble').textContent()).toContain('$1,250.00 to Jordan Lee');
    expect(await en.locator('.size').textContent()).toMatch(/^GSM-7 · \d+ septets · 1 segment$/);
    // One "ë" (not in the GSM-7 alphabet) sends the whole message as UCS-2: the page shows what it costs.
    const zoe = page.locator('section[id="ex-en-completed-sms#SMS"]');
    expect(await zoe.locator('.bubble').textContent()).toContain('€0.99 to Zoë Müller');
    expect(await zoe.locator('.size').textContent()).toMatch(/^UCS-2 · \d+ UTF-16 units · 2 segments$/);
    await page.close();
  });

  it('Ctrl-C ends the kept run with exit 0, and its DynamoDB Local with it', async () => {
    child.kill('SIGINT');
    expect(await exited).toBe(0);
    const java = execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' })
      .split('\n')
      .filter((l) => l.includes('DynamoDBLocal.jar') && l.includes(`-port ${dynamoPort}`));
    expect(java).toEqual([]);
  });
});

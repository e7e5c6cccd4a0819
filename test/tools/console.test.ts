/**
 * The support console of `npm start -- --keep`, driven in a real headless browser (Debian's chromium,
 * playwright-core) end to end, as support staff use it: after the built-in sample run, Sam (support) finds a
 * customer and reads why a text was not sent; finds another whose text never arrived, sees the number masked and
 * shows it in full with a reason; previews a second copy and proposes it with a reason (once withdrawn by herself,
 * then again). Sam cannot approve it; Noor
 * (approver) does, in her own browser. The text is then sent once more — once — and the customer's audit trail
 * names both people, their reasons and the outcome.
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startKeptRun } from '../support/kept-run.ts';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/** The sample's customer whose number replied STOP at its carrier, and one whose phone was unreachable. */
const STOPPED = 'u-30';
const UNREACHABLE = 'u-32';
const RESENT = 'demo-sms-unreachable#SMS';

let child: ChildProcess;
let exited: Promise<number | null>;
let report: { console: string };
let browser: Browser;

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium (.ci/run does it), or set CHROMIUM_PATH`);
  }
  ({ child, report, exited } = await startKeptRun<typeof report>([]));
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
}, 180_000);

afterAll(async () => {
  await browser?.close();
  // SIGTERM, and wait for the run to end: it stops its DynamoDB Local on the way out (SIGKILL would orphan it).
  if (child !== undefined && child.exitCode === null) {
    child.kill('SIGTERM');
    await exited;
  }
}, 60_000);

/** A browser of its own (its own session) for one of the local users, signed in. */
async function signedIn(name: string): Promise<Page> {
  const page = await (await browser.newContext()).newPage();
  await page.goto(report.console);
  await page.getByLabel('Sign in as').selectOption({ label: name });
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect.poll(() => page.locator('#who-name').textContent()).toContain(name.split(' (')[0]);
  return page;
}

async function lookUp(page: Page, userId: string): Promise<void> {
  await page.getByLabel('ID', { exact: true }).fill(userId);
  await page.getByRole('button', { name: 'Look up' }).click();
  await page.getByRole('heading', { name: `Customer ${userId}` }).waitFor();
}

const notice = (page: Page, id: string) => page.locator(`article[data-notice="${id}"]`);

describe('the support console', () => {
  it('finds a customer and says why a notice was not sent, with the number masked', async () => {
    const sam = await signedIn('Sam Rivera (Support)');
    await lookUp(sam, STOPPED);
    const stopped = notice(sam, 'demo-sms-stop-again#SMS');
    expect(await stopped.locator('.badge').textContent()).toBe('Not sent');
    expect(await stopped.locator('.detail').textContent()).toMatch(/STOP|opted out|stopped/i);
    expect(await stopped.locator('.contact').textContent()).toBe('+1 ••• 0180');
    expect(await stopped.locator('.reference').textContent()).toBe('Ref t-1001 · 12.50 USD');
    // Not "turned nothing off" above two texts the network blocks: the app's choices and the STOP, each said.
    await sam.getByText('No preference switched off in the app. The phone network blocks our texts').waitFor();
    expect(await sam.content()).not.toContain('4155550180');
    // The first text to that number was sent: what was sent is read from the evidence, as `ops evidence` reads it.
    const first = notice(sam, 'demo-sms-stop#SMS');
    await first.getByRole('button', { name: 'See what was sent' }).click();
    await first.locator('.sent:not([hidden])').waitFor();
    expect(await first.locator('section.message').count()).toBe(1);
    expect(await first.textContent()).not.toContain('Nothing was handed over');
    // STOPped at the carrier: no second copy is offered to a number that said STOP.
    expect(await first.getByRole('button', { name: /Propose/ }).count()).toBe(0);
    await sam.context().close();
  });

  it('says a transfer we could not read was received but not readable, and where engineers find it', async () => {
    const sam = await signedIn('Sam Rivera (Support)');
    await lookUp(sam, 'u-7');
    const unreadable = sam.locator('article[data-quarantined]');
    await expect.poll(() => unreadable.count()).toBeGreaterThan(0);
    expect(await unreadable.first().locator('.detail').textContent()).toMatch(
      /received it but could not read it \(the amount was not in the agreed format\).*Engineers have it under/,
    );
    expect(await sam.content()).not.toContain('no way to reach the customer');
    await sam.context().close();
  });

  it('proposes a second copy as one person, approves it as another, sends it once and audits both', async () => {
    const sam = await signedIn('Sam Rivera (Support)');
    await lookUp(sam, UNREACHABLE);
    const card = notice(sam, RESENT);
    expect(await card.locator('.contact').textContent()).toBe('+1 ••• 0182');

    // The number in full, only with a reason: recorded.
    await card.getByRole('button', { name: 'Show in full' }).click();
    await card
      .getByLabel('Why do you need the full contact details?')
      .fill('Customer on the phone confirms the number');
    await card.getByRole('button', { name: 'Show contact details' }).click();
    await expect.poll(() => card.locator('.contact').textContent()).toBe('+14155550182');

    // Preview, reason, confirm: a proposal, not a send.
    const propose = async (reason: string) => {
      await card.getByRole('button', { name: 'Propose a second copy' }).click();
      expect(await card.locator('.preview').textContent()).toContain('second copy');
      await card.getByLabel('Why should it be sent again?').fill(reason);
      await card.getByRole('button', { name: 'Propose', exact: true }).click();
      await expect.poll(() => card.textContent()).toContain('Another person has to approve it');
    };
    const mine = sam.locator('#proposals article.proposal');
    // Proposed on the wrong notice first, and withdrawn by Sam herself: recorded, and gone from the list.
    await propose('Customer asked on the phone, wrong one');
    await expect.poll(() => mine.count()).toBe(1);
    await mine.getByRole('button', { name: 'Withdraw' }).click();
    await mine.getByLabel('Why withdraw it?').fill('Proposed before checking the case notes');
    await mine.getByRole('button', { name: 'Withdraw' }).click();
    await expect.poll(() => sam.locator('#status').textContent()).toContain('Withdrawn');
    await expect.poll(() => mine.count()).toBe(0);
    await lookUp(sam, UNREACHABLE);
    await propose('Customer says the phone is back on');
    await expect.poll(() => mine.count()).toBe(1);
    expect(await mine.textContent()).toContain('Your proposal');
    expect(await mine.getByRole('button', { name: 'Approve' }).count()).toBe(0);
    await sam.context().close();

    const noor = await signedIn('Noor Haddad (Approver)');
    const waiting = noor.locator('#proposals article.proposal');
    await expect.poll(() => waiting.count()).toBe(1);
    expect(await waiting.textContent()).toContain('Sam Rivera');
    expect(await waiting.textContent()).toContain('Customer says the phone is back on');
    // What she approves: a second copy of what the provider accepted, to the masked number, and the notice now.
    expect(await waiting.locator('.shown').textContent()).toMatch(
      /^Second copy of a text message the provider accepted \(.+\), to \+1 ••• 0182$/,
    );
    expect(await waiting.locator('.now').textContent()).toContain('Sent, but not delivered');
    await waiting.getByRole('button', { name: 'Approve' }).click();
    await waiting.getByLabel('Why approve it?').fill('Checked the number with the customer record');
    await waiting.getByRole('button', { name: 'Approve' }).click();
    await expect.poll(() => noor.locator('#status').textContent()).toContain('Approved');

    // Sent once more, once: the notice now has two sends, and one resend on record.
    await lookUp(noor, UNREACHABLE);
    const resent = notice(noor, RESENT);
    expect(await resent.locator('ul.small li').allTextContents()).toEqual([
      expect.stringMatching(/^Queued again .* approved by Noor Haddad: “Checked the number with the customer record”$/),
    ]);
    await expect
      .poll(
        async () => {
          await lookUp(noor, UNREACHABLE);
          const again = notice(noor, RESENT);
          await again.getByRole('button', { name: 'See what was sent' }).click();
          await again.locator('.sent:not([hidden])').waitFor();
          return again.locator('section.message').count();
        },
        { timeout: 30_000 },
      )
      .toBe(2);

    // The customer's audit trail: who asked, who approved, who saw the number — each with their reason and result.
    const rows = await noor.locator('table.audit').last().locator('tbody tr').allTextContents();
    expect(rows).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          /Queued again — approved.*Noor Haddad.*Checked the number.*Done — queued again; the notice now: /,
        ),
        expect.stringMatching(/Queued again — proposed.*Sam Rivera.*phone is back on.*Done/),
        expect.stringMatching(/Contact details shown.*Sam Rivera.*confirms the number.*Done/),
        expect.stringMatching(/withdrawn by its proposer.*Sam Rivera.*before checking the case notes.*Done/),
      ]),
    );
    await noor.context().close();
  });
});

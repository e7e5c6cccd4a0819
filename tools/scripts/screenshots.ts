/**
 * `npm run screenshots`: the sample's emails as a customer sees them, in a real browser (Debian's chromium driven by
 * playwright-core), at a phone's and a desktop's width — the images in the README (docs/images/).
 *
 *   npm run screenshots -- [--settings FILE] [--out DIR]
 *
 * --settings previews the `brand` of a deploy's settings file instead of the example's. Needs `apt-get install -y
 * chromium fonts-noto-cjk` (no browser download works here); CHROMIUM_PATH overrides /usr/bin/chromium. The page
 * loads nothing from the network (every request is refused), as a privacy-minded mail client shows it.
 */
// The card number and IBAN rules the decoder masks with (ingest alone loads them on demand).
import '../../functions/domain/card-rules.ts';
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { chromium } from 'playwright-core';
import type { Brand } from '../../functions/domain/brand.ts';
import type { BankingEvent } from '../../functions/domain/event/contract.ts';
import { decodeRecordValue, isTransfer } from '../../functions/domain/event/decode.ts';
import { loadAllTemplates } from '../../functions/domain/template-sets.ts';
import { type EmailMessage, render } from '../../functions/domain/templates.ts';
import { parseCommandLine, runCommand } from '../local/cli.ts';
import { brandFromSettings } from '../local/example-brand.ts';
import { sampleScenario } from '../local/sample.ts';

/** The sample's events happened a minute before the run: a fixed run time keeps the images stable. */
const RUN_AT = Date.parse('2026-11-30T09:16:00Z');

const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

const VIEWPORTS = {
  phone: { width: 390, height: 844, deviceScaleFactor: 2 },
  desktop: { width: 1024, height: 768, deviceScaleFactor: 1 },
} as const;

/** The sample's events by id, as ingest admits them. */
function sampleEvents(): Map<string, BankingEvent> {
  const events = new Map<string, BankingEvent>();
  for (const value of sampleScenario(RUN_AT).values) {
    const decoded = decodeRecordValue(Buffer.from(value).toString('base64'), 65_536);
    if (isTransfer(decoded) && !events.has(decoded.event.eventId)) events.set(decoded.event.eventId, decoded.event);
  }
  return events;
}

function email(event: BankingEvent | undefined, brand: Brand): EmailMessage {
  if (event === undefined) throw new Error('the sample no longer has this event');
  const message = render(
    {
      template: event.type,
      locale: event.recipient.locale,
      channel: 'EMAIL',
      data: event.data,
      occurredAt: event.occurredAt,
      timeZone: event.recipient.timeZone,
    },
    brand,
  );
  if (message.channel !== 'EMAIL') throw new Error('not an email');
  return message;
}

const USAGE = `
Usage: npm run screenshots [-- --settings FILE] [--out DIR]

Renders the sample's emails in a real browser (Debian's chromium, driven by playwright-core) into DIR (default
docs/images): phone and desktop widths, English and Japanese. --settings previews the brand of your own settings file
instead of the example's. Japanese needs the fonts: apt-get install -y --no-install-recommends fonts-noto-cjk.
`;

async function main(): Promise<number> {
  await loadAllTemplates();
  const { values } = parseCommandLine(
    { usage: USAGE, options: { settings: { type: 'string' }, out: { type: 'string', default: 'docs/images' } } },
    process.argv.slice(2),
  );
  const brand = brandFromSettings(values.settings === undefined ? undefined : resolve(values.settings));
  const out = resolve(values.out ?? 'docs/images');
  mkdirSync(out, { recursive: true });
  const events = sampleEvents();
  const shots: { name: string; message: EmailMessage; viewport: keyof typeof VIEWPORTS }[] = [
    { name: 'email-en', message: email(events.get('demo-en-1'), brand), viewport: 'phone' },
    { name: 'email-ja', message: email(events.get('demo-ja-1'), brand), viewport: 'phone' },
    { name: 'email-en-failed', message: email(events.get('demo-en-2'), brand), viewport: 'phone' },
    { name: 'email-en-desktop', message: email(events.get('demo-en-1'), brand), viewport: 'desktop' },
    { name: 'email-ja-desktop', message: email(events.get('demo-ja-1'), brand), viewport: 'desktop' },
  ];
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: FLAGS,
  });
  try {
    for (const shot of shots) {
      const context = await browser.newContext({ viewport: VIEWPORTS[shot.viewport], ...VIEWPORTS[shot.viewport] });
      const page = await context.newPage();
      await page.route('**/*', (route) => route.abort());
      await page.setContent(shot.message.html, { waitUntil: 'load' });
      const path = join(out, `${shot.name}.png`);
      await page.screenshot({ path, fullPage: true });
      await context.close();
      process.stdout.write(`screenshots: ${path} — "${shot.message.subject}" from ${shot.message.fromName}\n`);
    }
  } finally {
    await browser.close();
  }
  return 0;
}

runCommand('screenshots', main);

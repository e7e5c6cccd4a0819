/**
 * Nobody silences a security or card alert with display text. The device that signed in names itself (an attacker's
 * own device), the card network names the merchant, the creditor names itself: written as nothing but invisible
 * characters, such a name cleans to nothing — and the notice is still sent, on every channel and in every language,
 * with neutral words where the name would be ("an unnamed device"). The template compiler sees to it: a required
 * display-text field is shown only inside a section of its own, beside words for its absence.
 */
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { escape as escapeHtml } from 'html-escaper';
import { describe, expect, it } from 'vitest';
import { admitRecord } from '../../functions/domain/admission.ts';
import { definitionOf } from '../../functions/domain/catalogue.ts';
import { LOCALES } from '../../functions/domain/locale.ts';
import { loadAllTemplates } from '../../functions/domain/template-sets.ts';
import { type Message, render } from '../../functions/domain/templates.ts';
import { EXAMPLE_BRAND as brand } from '../../tools/local/example-brand.ts';
import { b64 } from '../support/events.ts';

// Every notice type's templates (dispatch loads a type when it first renders one: template-sets.ts).
await loadAllTemplates();

const NOW = Date.parse('2026-11-30T09:20:00Z');
const examples = readFileSync(new URL('../../examples/catalogue.jsonl', import.meta.url), 'utf8')
  .split('\n')
  .filter((l) => l !== '')
  .map((l) => JSON.parse(l) as { eventId: string; type: string; data: Record<string, unknown> });
const example = (type: string, locale: string) =>
  structuredClone(examples.find((e) => e.type === type && e.eventId.startsWith(`cat-${locale}-`)) ?? expect.fail(type));

/** Names that show nothing: a right-to-left override, zero-width spaces, isolates, a byte-order mark, a soft hyphen. */
const INVISIBLE = [
  '\u202e',
  '\u200b\u200b\u200b',
  '\u2066\u2069',
  '\ufeff',
  '\u00ad',
  ' \u200b\u202e ',
  '\u061c\u200e',
];

/** The three notices whose required name a third party writes, and the words each language uses without it. */
const UNNAMED = [
  { type: 'LoginFromNewDevice', field: 'deviceName', en: /unnamed device/i, ja: /名称不明/ },
  { type: 'CardPayment', field: 'merchantName', en: /unnamed merchant/i, ja: /名称不明/ },
  { type: 'DirectDebitUpcoming', field: 'creditorName', en: /unnamed organization/i, ja: /名称不明/ },
] as const;

const texts = (m: Message) =>
  m.channel === 'EMAIL' ? [m.subject, m.text, m.html] : m.channel === 'PUSH' ? [m.title, m.body] : [m.text];
/** Where a message names the third party: an email's text and HTML (its subject need not), a push's body, the SMS. */
const bodies = (m: Message) => (m.channel === 'EMAIL' ? [m.text, m.html] : m.channel === 'PUSH' ? [m.body] : [m.text]);

describe('a third party’s required name written as nothing but invisible characters', () => {
  it.each(UNNAMED.map((u) => [u.type, u.field, u] as const))(
    '%s.%s: the notice is sent on every channel, in every language, with neutral words',
    (_type, _field, u) => {
      for (const locale of LOCALES) {
        for (const name of INVISIBLE) {
          const event = example(u.type, locale);
          const a = admitRecord(
            b64({ ...event, eventId: `unnamed-${u.type}`, data: { ...event.data, [u.field]: name } }),
            { maxEventBytes: 65_536, maxEventAgeSeconds: 0 },
            NOW,
          );
          if (!a.ok || !('event' in a)) throw new Error(JSON.stringify(a));
          // Ingest never refuses a third party's text: what cleans to nothing is left out, and the event accepted.
          expect(a.event.data[u.field], `${locale} ${JSON.stringify(name)}`).toBeUndefined();
          for (const channel of definitionOf(u.type)?.channels ?? []) {
            const what = `${u.type} ${locale} ${channel} ${JSON.stringify(name)}`;
            const m = render(
              { template: u.type, locale, channel, data: a.event.data, occurredAt: a.event.occurredAt },
              brand,
            );
            // The name's place says so, in every body.
            for (const body of bodies(m)) expect(body, what).toMatch(locale === 'ja' ? u.ja : u.en);
            for (const t of texts(m)) expect(t.trim(), what).not.toBe('');
            // No gap where the name was: no doubled space or space before punctuation, no empty span in the HTML.
            for (const t of m.channel === 'EMAIL' ? [m.subject, m.text] : texts(m))
              for (const line of t.split('\n')) expect(line, what).not.toMatch(/\S {2,}\S|\s[,:)]|\s\.(?!\.)|^\s|\s$/u);
            if (m.channel === 'EMAIL') expect(m.html, what).not.toMatch(/<span dir="auto">\s*<\/span>/);
          }
        }
      }
    },
  );

  it('with a name, every channel shows the name and not the neutral words', () => {
    for (const u of UNNAMED)
      for (const locale of LOCALES) {
        const event = example(u.type, locale);
        for (const channel of definitionOf(u.type)?.channels ?? []) {
          const m = render({ template: u.type, locale, channel, data: event.data as Record<string, string> }, brand);
          const name = String(event.data[u.field]);
          for (const body of bodies(m))
            expect(
              [name, escapeHtml(name)].some((n) => body.includes(n)),
              `${u.type} ${locale} ${channel}`,
            ).toBe(true);
          expect(texts(m).join('\n'), `${u.type} ${locale} ${channel}`).not.toMatch(locale === 'ja' ? u.ja : u.en);
        }
      }
  });
});

describe('the template compiler', () => {
  it('refuses a required display-text field shown outside a section of its own, naming the file and the words it needs', async () => {
    const { generateModule, TEMPLATES_DIR } = await import('../../tools/scripts/templates.ts');
    const bare: [string, string][] = [
      [
        'LoginFromNewDevice/sms.en.txt',
        '{{bank}}: new sign-in from {{deviceName}}. Not you? Call {{supportPhone}} now\n',
      ],
      ['CardPayment/push.ja.json', '{"title": "{{bank}}", "body": "{{merchantName}}で{{amount}}"}\n'],
      ['DirectDebitUpcoming/email.en.txt', '{{bank}}\n\nTo: {{creditorName}}\n\n{{> footer}}\n'],
    ];
    for (const [file, text] of bare) {
      const dir = mkdtempSync(join(tmpdir(), 'notifier-unnamed-'));
      cpSync(TEMPLATES_DIR, dir, { recursive: true });
      writeFileSync(join(dir, file), text);
      const field = /\{\{(deviceName|merchantName|creditorName)\}\}/.exec(text)?.[1] ?? '';
      await expect(generateModule(dir), file).rejects.toThrow(
        new RegExp(
          `templates/${file.replaceAll('.', '\\.')}[^:]*: \\{\\{${field}\\}\\} is required display text.*\\{\\{\\^${field}\\}\\}`,
        ),
      );
    }
  }, 60_000);
});

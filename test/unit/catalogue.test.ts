/**
 * The catalogue as data: a notice type is a folder of templates/ with a definition.json, and everything follows from
 * it — validation, the hash, routing, the JSON Schema, the compiler's checks, opt-outs, the maximum age, retention.
 * Every example of examples/catalogue.jsonl is accepted, valid by its type's generated schema, and renders on every
 * channel its type allows in its language.
 */
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { admitRecord } from '../../functions/domain/admission.ts';
import { suppressedReason } from '../../functions/domain/audience.ts';
import {
  allowedChannels,
  CATALOGUE,
  classOf,
  DefinitionError,
  dataNamesOf,
  definitionOf,
  EVENT_TYPES,
  readCatalogue,
} from '../../functions/domain/catalogue.ts';
import type { EventData, EventType } from '../../functions/domain/event/contract.ts';
import { LOCALES } from '../../functions/domain/locale.ts';
import { buildNotification } from '../../functions/domain/notification.ts';
import { loadAllTemplates } from '../../functions/domain/template-sets.ts';
import { RenderError, render } from '../../functions/domain/templates.ts';
import { EXAMPLE_BRAND as exampleBrand } from '../../tools/local/example-brand.ts';
import { TYPE_SCHEMA_DIR, typeSchemaTexts } from '../../tools/scripts/schema.ts';
import { b64, transferEvent } from '../support/events.ts';

// Every notice type's templates (dispatch loads a type when it first renders one: template-sets.ts).
await loadAllTemplates();

const NOW = Date.parse('2026-11-30T09:20:00Z');
const OCCURRED = '2026-11-30T09:15:00Z';
const admit = (event: object, maxEventAgeSeconds = 86_400, now = NOW) =>
  admitRecord(b64(event), { maxEventBytes: 65_536, maxEventAgeSeconds }, now);
const examples = readFileSync(new URL('../../examples/catalogue.jsonl', import.meta.url), 'utf8')
  .split('\n')
  .filter((l) => l !== '')
  .map((l) => JSON.parse(l) as { eventId: string; type: string; data: Record<string, unknown> });
const example = (type: string, locale = 'en') =>
  structuredClone(examples.find((e) => e.type === type && e.eventId.startsWith(`cat-${locale}-`)) ?? expect.fail(type));

/** Every example (the transfers from the test factory) in every language, on every channel its type allows. */
function* everyRendering() {
  const transfers = ['TransferCompleted', 'TransferFailed'].map((type) =>
    transferEvent({ type, data: { reason: 'insufficient funds' } }),
  );
  for (const event of [...examples, ...transfers] as { type: string; data: Record<string, unknown> }[]) {
    const type = event.type as EventType;
    for (const locale of LOCALES) {
      for (const channel of (definitionOf(type) ?? expect.fail(type)).channels) {
        const show = (data: Record<string, unknown>) =>
          render({ template: type, locale, channel, data: data as EventData, occurredAt: OCCURRED }, exampleBrand);
        yield { type, data: event.data, locale, channel, show };
      }
    }
  }
}

describe('the shipped catalogue', () => {
  it('has the transfers and the notices a bank starts with, with sensible classes and opt-out rules', () => {
    for (const type of [
      'TransferCompleted',
      'TransferFailed',
      'CardPayment',
      'LoginFromNewDevice',
      'PasswordChanged',
      'LowBalance',
      'PaymentDue',
      'StatementReady',
    ])
      expect(EVENT_TYPES).toContain(type);
    expect(classOf('LoginFromNewDevice')).toBe('critical');
    expect(classOf('PasswordChanged')).toBe('critical');
    expect(definitionOf('LoginFromNewDevice')?.optOutsApply).toBe(false);
    expect(definitionOf('PasswordChanged')?.optOutsApply).toBe(false);
    expect(classOf('StatementReady')).toBe('bulk');
    expect(allowedChannels('StatementReady')).toEqual(['EMAIL', 'PUSH']);
    expect(classOf('TransferCompleted')).toBe('normal');
    // An item whose type has left the catalogue is paced as normal, and may use no channel.
    expect(classOf('Gone')).toBe('normal');
    expect(allowedChannels('Gone')).toEqual([]);
  });

  it('every example is accepted, valid by its type’s generated JSON Schema, and renders every channel it routes to', () => {
    const ajv = new Ajv2020({ strict: true, strictRequired: false, validateFormats: false, allErrors: true });
    expect(examples.map((e) => e.type).sort()).toEqual(
      EVENT_TYPES.filter((t) => !t.startsWith('Transfer'))
        .flatMap((t) => [t, t])
        .sort(),
    );
    for (const event of examples) {
      const schema = JSON.parse(readFileSync(join(TYPE_SCHEMA_DIR, `${event.type}.schema.json`), 'utf8'));
      const valid = ajv.compile(schema);
      expect(valid(event), `${event.eventId} ${JSON.stringify(valid.errors)}`).toBe(true);
      const a = admit(event);
      if (!a.ok || !('event' in a)) throw new Error(`${event.eventId}: ${JSON.stringify(a)}`);
      expect(a.channels.length, event.eventId).toBeGreaterThan(0);
      expect(a.normalised, event.eventId).toEqual([]);
      for (const channel of a.channels) {
        const m = render(
          {
            template: a.event.type,
            locale: a.event.recipient.locale,
            channel,
            data: a.event.data,
            occurredAt: a.event.occurredAt,
          },
          exampleBrand,
        );
        const texts =
          m.channel === 'EMAIL' ? [m.subject, m.text, m.html] : m.channel === 'PUSH' ? [m.title, m.body] : [m.text];
        for (const t of texts) expect(t, `${event.eventId} ${channel}`).not.toMatch(/\{\{|\}\}|undefined|\[object/);
        if (m.channel === 'SMS') expect(m.segments, `${event.eventId} SMS`).toBeLessThanOrEqual(2);
      }
    }
  });

  it('a required field absent is never rendered: every type, language and channel refuses it, naming the field (display text: a blank, said without)', () => {
    for (const { type, data, locale, channel, show } of everyRendering()) {
      expect(() => show(data), `${type} ${locale} ${channel}`).not.toThrow();
      // An erased notification's data is emptied: nothing of it is ever shown.
      expect(() => show({}), `${type} ${channel} erased`).toThrow(RenderError);
      const def = definitionOf(type) ?? expect.fail(type);
      for (const name of def.data.filter((f) => f.required && f.kind !== 'text').flatMap(dataNamesOf)) {
        const { [name]: _, ...without } = data;
        expect(() => show(without), `${type} ${locale} ${channel} ${name}`).toThrow(
          new RegExp(`required field ${name} is missing`),
        );
      }
      // Required display text absent is a blank (ingest leaves out text that cleans to nothing): every template says it
      // without, in words of its own (the compiler refuses one that would show it bare) — never refused for it.
      for (const field of def.data.filter((f) => f.required && f.kind === 'text')) {
        const { [field.name]: _, ...without } = data;
        expect(() => show(without), `${type} ${locale} ${channel} ${field.name}`).not.toThrow();
      }
    }
  });

  it('a field present but empty, or blank once cleaned, never leaves a blank: the message says it without, or is refused naming it', () => {
    const MARK = 'Qx7Mark';
    const said: string[] = [];
    for (const { type, data, locale, channel, show } of everyRendering()) {
      const def = definitionOf(type) ?? expect.fail(type);
      for (const field of def.data.filter((f) => f.kind === 'text' || f.kind === 'identifier')) {
        const marked = JSON.stringify(show({ ...data, [field.name]: MARK }));
        const blanked = marked.replaceAll(MARK, '');
        for (const empty of ['', '   ', ' \u0007\u200b ']) {
          const what = `${type} ${locale} ${channel} ${field.name}=${JSON.stringify(empty)}`;
          let message: string;
          try {
            message = JSON.stringify(show({ ...data, [field.name]: empty }));
          } catch (error) {
            expect(error, what).toBeInstanceOf(RenderError);
            expect((error as Error).message, what).toContain(`${field.name} is empty and the ${channel} shows it`);
            continue;
          }
          // Sent: then, where the channel shows the field, not the message with a blank where the value was.
          if (marked.includes(MARK)) expect(message, what).not.toBe(blanked);
          if (field.required && empty === '' && marked.includes(MARK))
            said.push(`${type}.${field.name} ${locale} ${channel}`);
        }
      }
    }
    // Of the required fields, those a third party writes (display text) are said without, on every channel.
    expect(new Set(said.map((s) => s.split(' ')[0]))).toEqual(
      new Set([
        'CardPayment.merchantName',
        'DirectDebitUpcoming.creditorName',
        'LoginFromNewDevice.deviceName',
        'TransferFailed.reason',
      ]),
    );
  });

  it('required display text that cleans to nothing at ingest is blank, not missing: every channel says it without', () => {
    // Ingest keeps display text that cleans to nothing as absent (it is never refused): rendering must read that as
    // the blank it is, or every channel fails as if the item were erased — a third party's zero-width name silencing
    // the whole notice, the very thing cleaning instead of refusing is for.
    const failed = transferEvent({
      eventId: 'blank-reason',
      type: 'TransferFailed',
      data: { transferId: 't-b', amount: '10.00', currency: 'USD', reason: ' \u200b ' },
    });
    const a = admit(failed);
    if (!a.ok || !('event' in a)) throw new Error(JSON.stringify(a));
    expect(a.event.data.reason).toBeUndefined();
    for (const channel of a.channels) {
      const m = render(
        { template: 'TransferFailed', locale: 'en', channel, data: a.event.data, occurredAt: a.event.occurredAt },
        exampleBrand,
      );
      expect(JSON.stringify(m), channel).toMatch(/could not be completed|was not sent|failed/i);
    }
    // A card payment at a merchant whose name is nothing visible is still told, with neutral words for the merchant.
    const card = example('CardPayment');
    const blankMerchant = admit({ ...card, data: { ...card.data, merchantName: '\u200b\u200b' } });
    if (!blankMerchant.ok || !('event' in blankMerchant)) throw new Error(JSON.stringify(blankMerchant));
    for (const channel of blankMerchant.channels) {
      const m = render(
        { template: 'CardPayment', locale: 'en', channel, data: blankMerchant.event.data, occurredAt: OCCURRED },
        exampleBrand,
      );
      expect(JSON.stringify(m), channel).toMatch(/an unnamed merchant/i);
    }
  });

  it('formats each kind for the language: money digit for digit, a date as that day, an enum by its words', () => {
    const card = admit(example('CardPayment', 'ja'));
    if (!card.ok || !('event' in card)) throw new Error('card');
    const email = render(
      {
        template: 'CardPayment',
        locale: 'ja',
        channel: 'EMAIL',
        data: card.event.data,
        occurredAt: card.event.occurredAt,
      },
      exampleBrand,
    );
    if (email.channel !== 'EMAIL') throw new Error('email');
    expect(email.text).toContain('￥3,980');
    // The language's own support phone (brand.supportPhone per language), not the US toll-free number.
    expect(email.text).toContain('0120-555-010');
    expect(email.html).toContain('href="tel:0120555010"');
    expect(email.text).not.toContain('800-555');
    expect(email.text).toContain('オンライン');
    expect(email.text).not.toContain('店頭');
    const due = admit(example('PaymentDue'));
    if (!due.ok || !('event' in due)) throw new Error('due');
    const sms = render({ template: 'PaymentDue', locale: 'en', channel: 'SMS', data: due.event.data }, exampleBrand);
    // A due date is the day itself, not shifted into anyone's time zone.
    expect(sms.channel === 'SMS' && sms.text).toContain('December 15, 2026');
    const dueJa = admit(example('PaymentDue', 'ja'));
    if (!dueJa.ok || !('event' in dueJa)) throw new Error('due ja');
    const push = render(
      { template: 'PaymentDue', locale: 'ja', channel: 'PUSH', data: dueJa.event.data },
      exampleBrand,
    );
    expect(push.channel === 'PUSH' && push.body).toContain('2026年12月10日');
  });
});

describe('validation follows the definition', () => {
  it('a required field missing, an enum value it does not list, a date that does not exist: SCHEMA_VIOLATION naming the field', () => {
    const cases: [string, (e: { data: Record<string, unknown> }) => void, RegExp][] = [
      ['CardPayment', (e) => delete e.data.cardLast4, /data\.cardLast4/],
      ['CardPayment', (e) => delete e.data.merchantName, /CardPayment needs data\.merchantName/],
      ['CardPayment', (e) => (e.data.method = 'TELEPATHY'), /data\.method/],
      ['PaymentDue', (e) => (e.data.dueDate = '2026-02-29'), /not a calendar date.*data\.dueDate/],
      ['PaymentDue', (e) => (e.data.dueDate = '15/12/2026'), /data\.dueDate/],
    ];
    for (const [type, change, detail] of cases) {
      const event = example(type);
      change(event);
      const a = admit(event);
      expect(a.ok ? 'accepted' : `${a.rejection.reason} ${a.rejection.detail}`, `${type}`).toMatch(
        new RegExp(`^SCHEMA_VIOLATION .*${detail.source}`),
      );
    }
    const money = example('LowBalance');
    money.data.threshold = '10.001';
    expect(admit(money)).toMatchObject({ ok: false, rejection: { reason: 'INVALID_AMOUNT' } });
  });

  it('a spelling with one reading is normalised and hashes as the canonical event; a changed value is another meaning', () => {
    const base = admit(example('CardPayment'));
    const respelled = example('CardPayment');
    Object.assign(respelled.data, { method: ' in_store ', amount: '+0042.8', currency: 'usd' });
    const again = admit(respelled);
    if (!base.ok || !again.ok) throw new Error('accepted');
    expect(again.payloadHash).toBe(base.payloadHash);
    expect('normalised' in again && again.normalised).toEqual(['data.amount', 'data.currency', 'data.method']);
    const other = example('CardPayment');
    other.data.cardLast4 = '9999';
    const changed = admit(other);
    expect(changed.ok && changed.payloadHash).not.toBe(base.payloadHash);
  });

  it('null is absent for an optional field; a channel the type does not allow is UNKNOWN_CHANNEL', () => {
    const event = example('StatementReady');
    const withNull = { ...event, data: { ...event.data, closingBalance: null, currency: null } };
    const plain = admit({ ...event, data: { accountLast4: '0042', periodEnd: '2026-11-30' } });
    const a = admit(withNull);
    expect(a.ok && plain.ok && a.payloadHash === plain.payloadHash).toBe(true);
    expect(admit({ ...event, channels: ['SMS'] })).toMatchObject({
      ok: false,
      rejection: { reason: 'UNKNOWN_CHANNEL', detail: 'SMS is not allowed for StatementReady' },
    });
  });

  it('the maximum event age is the type’s: a sign-in alert two hours old is not sent, a transfer is', () => {
    const twoHoursLater = NOW + 2 * 3_600_000;
    expect(admit(example('LoginFromNewDevice'), 86_400, twoHoursLater)).toMatchObject({
      ok: true,
      skipped: 'TOO_OLD',
      channels: [],
    });
    const transfer = { ...example('LoginFromNewDevice'), type: 'TransferCompleted' };
    transfer.data = { transferId: 't-1', amount: '1.00', currency: 'USD' };
    const a = admit(transfer, 86_400, twoHoursLater);
    expect(a.ok && 'channels' in a && a.channels.length).toBeGreaterThan(0);
    // The stack's 0 turns the rule off for every type (replaying a file).
    expect(admit(example('LoginFromNewDevice'), 0, twoHoursLater)).not.toHaveProperty('skipped');
  });

  it('retention is the type’s when it has one: a security notice is kept longer than the stack’s default', () => {
    const a = admit(example('PasswordChanged'));
    if (!a.ok || !('event' in a)) throw new Error('accepted');
    const item = buildNotification(a.event, 'EMAIL', 'alex@example.com', NOW, { retentionDays: 30 });
    expect(item.expiresAt - Math.floor(NOW / 1000)).toBe(400 * 86_400);
    const transfer = admit({ ...example('CardPayment') });
    if (!transfer.ok || !('event' in transfer)) throw new Error('accepted');
    const card = buildNotification(transfer.event, 'EMAIL', 'alex@example.com', NOW, { retentionDays: 30 });
    expect(card.expiresAt - Math.floor(NOW / 1000)).toBe(30 * 86_400);
  });
});

describe('opt-outs and hard stops', () => {
  const optedOut = { optOut: ['EMAIL', 'PUSH', 'SMS'] as ('EMAIL' | 'PUSH' | 'SMS')[] };
  it('an opt-out never silences an exempt type; it silences the others', () => {
    expect(suppressedReason({ channel: 'SMS', template: 'LoginFromNewDevice' }, undefined, optedOut)).toBeUndefined();
    expect(suppressedReason({ channel: 'EMAIL', template: 'PasswordChanged' }, undefined, optedOut)).toBeUndefined();
    expect(suppressedReason({ channel: 'SMS', template: 'CardPayment' }, undefined, optedOut)).toBe('OPTED_OUT');
  });
  it('a hard stop silences every type: a bounce, a complaint, STOP, a dead endpoint', () => {
    for (const cause of ['BOUNCED', 'COMPLAINED', 'CARRIER_OPT_OUT', 'UNDELIVERABLE'] as const)
      expect(
        suppressedReason({ channel: 'SMS', template: 'LoginFromNewDevice' }, { state: 'ACTIVE', cause }, optedOut),
      ).toBe(cause);
  });
});

describe('definitions are validated', () => {
  const transfer = () => structuredClone(CATALOGUE.get('TransferCompleted') as object) as Record<string, unknown>;
  it('refuses a definition that could not be followed, naming what is wrong', () => {
    const cases: [(d: Record<string, unknown> & { data: Record<string, unknown>[] }) => void, RegExp][] = [
      [(d) => (d.class = 'urgent'), /class/],
      [(d) => (d.channels = ['FAX']), /channels/],
      [(d) => ((d.data[0] as Record<string, unknown>).kind = 'colour'), /data\.0\.kind/],
      [(d) => delete (d.data[1] as Record<string, unknown>).currencyField, /currencyField/],
      [(d) => ((d.data[0] as Record<string, unknown>).name = 'bank'), /bank is a name every template has/],
      [(d) => d.data.push({ name: 'transferId', kind: 'identifier' }), /transferId is named twice/],
      [(d) => d.data.push({ name: 'status', kind: 'enum' }), /lists its values/],
      [(d) => (d.surprise = true), /surprise/],
      [(d) => d.data.push({ name: 'constructor', kind: 'text' }), /constructor is a name every JavaScript object/],
      [(d) => d.data.push({ name: 'toString', kind: 'identifier' }), /toString is a name every JavaScript object/],
    ];
    for (const [change, problem] of cases) {
      const d = transfer() as Record<string, unknown> & { data: Record<string, unknown>[] };
      change(d);
      expect(() => readCatalogue({ Broken: d }), problem.source).toThrow(DefinitionError);
      expect(() => readCatalogue({ Broken: d }), problem.source).toThrow(problem);
    }
    expect(() => readCatalogue({ 'not-a-type': transfer() })).toThrow(/PascalCase/);
    expect(() => readCatalogue({ PreferencesUpdated: transfer() })).toThrow(/PascalCase/);
  });

  it('the compiler refuses a type without a template for a language, a template for a channel it does not allow, a placeholder it has no field for, an optional field outside its own section', async () => {
    const { generateModule, TEMPLATES_DIR } = await import('../../tools/scripts/templates.ts');
    const cases: [(dir: string) => void, RegExp][] = [
      [(dir) => rmSync(join(dir, 'LowBalance', 'sms.ja.txt')), /LowBalance\/sms\.ja\.txt: missing/],
      [
        (dir) => writeFileSync(join(dir, 'StatementReady', 'sms.en.txt'), '{{bank}}\n'),
        /SMS is not among the channels/,
      ],
      [
        (dir) => writeFileSync(join(dir, 'PasswordChanged', 'sms.en.txt'), '{{bank}}: {{amount}}\n'),
        /PasswordChanged\/sms\.en\.txt: unknown placeholder \{\{amount\}\}/,
      ],
      [(dir) => writeFileSync(join(dir, 'CardPayment', 'definition.json'), '{"class":"normal"}'), /definition\.json/],
      [(dir) => rmSync(join(dir, 'PaymentDue', 'definition.json')), /PaymentDue\/definition\.json: missing/],
      [
        (dir) => writeFileSync(join(dir, 'PaymentDue', 'sms.en.txt'), '{{bank}}: {{amount}} to {{payee}}\n'),
        /PaymentDue\/sms\.en\.txt: \{\{payee\}\} is optional: show it inside \{\{#payee\}\}/,
      ],
    ];
    for (const [change, error] of cases) {
      const dir = mkdtempSync(join(tmpdir(), 'notifier-catalogue-'));
      cpSync(TEMPLATES_DIR, dir, { recursive: true });
      change(dir);
      await expect(generateModule(dir), error.source).rejects.toThrow(error);
    }
  }, 60_000);

  it('a language is its files: the compiler takes a new one, names the file it lacks, and refuses what is not a language', async () => {
    const { generateModule } = await import('../../tools/scripts/templates.ts');
    const { templatesWithLanguage, unshippedLanguage } = await import('../support/add-language.ts');
    const { code } = unshippedLanguage();
    const languages = [...LOCALES, code].sort();
    const added = await generateModule(templatesWithLanguage(code));
    expect(added.catalogueSource).toContain(`export const LANGUAGES = ${JSON.stringify(languages)} as const;`);
    for (const type of EVENT_TYPES) expect(Object.keys(added.templates[type] ?? {})).toEqual(languages);
    const c = code; // fr, or de for a bank that ships French
    const cases: [() => string, RegExp][] = [
      [
        () => templatesWithLanguage(c, [`LowBalance/sms.${c}.txt`]),
        new RegExp(`templates/LowBalance/sms\\.${c}\\.txt: missing: LowBalance allows SMS and the brand writes ${c}`),
      ],
      [
        () => templatesWithLanguage(c, [`partials/footer.${c}.txt`]),
        new RegExp(`partials/footer\\.${c}\\.txt: missing`),
      ],
      [
        () => templatesWithLanguage(c.toUpperCase()),
        new RegExp(`"${c.toUpperCase()}" is not a BCP 47 language tag in lower case \\(${c}\\)`),
      ],
      [() => templatesWithLanguage('french'), /"french" is not a language the runtime's Intl knows/],
      [() => templatesWithLanguage('tlh'), /the runtime's Intl has no number or date formats for "tlh"/],
      [
        () => templatesWithLanguage(c, [`partials/footer.${c}.mjml`, `partials/footer.${c}.txt`]),
        new RegExp(
          `templates/\\w+/email\\.${c}\\.mjml: no language ${c}: partials/footer\\.${c}\\.mjml and \\.txt make one`,
        ),
      ],
      [
        () => {
          const dir = templatesWithLanguage(c);
          const file = join(dir, 'CardPayment', `email.${c}.mjml`);
          writeFileSync(file, readFileSync(file, 'utf8').replace(`lang="${c}"`, 'lang="en"'));
          return dir;
        },
        new RegExp(`CardPayment/email\\.${c}\\.mjml: <mjml> needs lang="${c}", not "en"`),
      ],
      [
        () => {
          const dir = templatesWithLanguage(c);
          rmSync(join(dir, 'partials', 'footer.en.mjml'));
          return dir;
        },
        /footer\.en\.mjml: missing: en is the default language/,
      ],
    ];
    for (const [make, error] of cases) await expect(generateModule(make()), error.source).rejects.toThrow(error);
  }, 120_000);

  it('the generated catalogue and the per-type schemas are what templates/ and the definitions give', async () => {
    const { generateModule, CATALOGUE_FILE } = await import('../../tools/scripts/templates.ts');
    const { catalogueSource } = await generateModule();
    expect(catalogueSource === readFileSync(CATALOGUE_FILE, 'utf8'), 'stale: npm run generate').toBe(true);
    const texts = typeSchemaTexts();
    expect(readdirSync(TYPE_SCHEMA_DIR).sort()).toEqual(Object.keys(texts).sort());
    for (const [name, text] of Object.entries(texts))
      expect(readFileSync(join(TYPE_SCHEMA_DIR, name), 'utf8') === text, `${name} stale: npm run generate`).toBe(true);
  }, 60_000);
});

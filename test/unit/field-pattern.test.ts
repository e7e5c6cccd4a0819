/**
 * A field's shape is data: an identifier's definition may give a `pattern` (an ECMAScript regular expression the whole
 * value must match), which ingest applies, the JSON Schema a producer validates with carries, and the compiler checks —
 * it refuses a pattern that is no regular expression, one on a field that is never refused (display text) or has its
 * own shape, and one a crafted value could make run for seconds (ReDoS): a producer's value is matched against it at
 * every event.
 */
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { CATALOGUE, DefinitionError, definitionOf, readCatalogue } from '../../functions/domain/catalogue.ts';
import { TYPE_SCHEMA_DIR } from '../../tools/scripts/schema.ts';

const card = () => structuredClone(CATALOGUE.get('CardPayment') as object) as { data: Record<string, unknown>[] };
const field = (d: { data: Record<string, unknown>[] }, name: string) =>
  d.data.find((f) => f.name === name) as Record<string, unknown>;

describe('a field’s pattern', () => {
  it('the last four digits of a card or an account are four digits, as data', () => {
    for (const [type, name] of [
      ['CardPayment', 'cardLast4'],
      ['LowBalance', 'accountLast4'],
      ['StatementReady', 'accountLast4'],
      ['DirectDebitUpcoming', 'accountLast4'],
    ] as const) {
      expect(definitionOf(type)?.data.find((f) => f.name === name)?.pattern, type).toBe('[0-9]{4}');
    }
  });

  it('is refused on a field that is not an identifier, and when it is no regular expression', () => {
    const cases: [(d: { data: Record<string, unknown>[] }) => void, RegExp][] = [
      [(d) => (field(d, 'merchantName').pattern = '[A-Z]+'), /only an identifier or a secret field has a pattern/],
      [(d) => (field(d, 'amount').pattern = '[0-9]+'), /only an identifier or a secret field has a pattern/],
      [(d) => (field(d, 'cardLast4').pattern = '([0-9]{4}'), /data\.3\.pattern.*not a regular expression/],
      [(d) => (field(d, 'cardLast4').pattern = '\\p{Nope}'), /not a regular expression/],
      [(d) => (field(d, 'cardLast4').pattern = ''), /data\.3\.pattern/],
      // Balanced only once wrapped in ^(?:…)$: it would close the anchoring group and match anything ('…)|(?:.*').
      [(d) => (field(d, 'cardLast4').pattern = '[0-9]{4})|(?:.*'), /not a regular expression/],
      [(d) => (field(d, 'cardLast4').pattern = 'x)|(.*'), /not a regular expression/],
    ];
    for (const [change, problem] of cases) {
      const d = card();
      change(d);
      expect(() => readCatalogue({ Broken: d }), problem.source).toThrow(DefinitionError);
      expect(() => readCatalogue({ Broken: d }), problem.source).toThrow(problem);
    }
  });

  it('the compiler refuses a pattern a crafted value could make backtrack for ever (ReDoS), naming the file', async () => {
    const { generateModule, TEMPLATES_DIR } = await import('../../tools/scripts/templates.ts');
    for (const [pattern, problem] of [
      ['([0-9]+)+', /exponential/],
      ['(?:[0-9]|\\d)*', /exponential/],
      ['[0-9]*[0-9]*x', /polynomial/],
    ] as const) {
      const dir = mkdtempSync(join(tmpdir(), 'notifier-pattern-'));
      cpSync(TEMPLATES_DIR, dir, { recursive: true });
      const file = join(dir, 'CardPayment', 'definition.json');
      const d = JSON.parse(readFileSync(file, 'utf8')) as { data: Record<string, unknown>[] };
      field(d, 'cardLast4').pattern = pattern;
      writeFileSync(file, JSON.stringify(d));
      const refused = generateModule(dir);
      await expect(refused, pattern).rejects.toThrow(/CardPayment\/definition\.json: data\.3\.pattern/);
      await expect(generateModule(dir), pattern).rejects.toThrow(problem);
    }
  }, 60_000);

  it('the type’s JSON Schema carries it: a producer’s validator refuses the whole card number too', () => {
    const schema = JSON.parse(readFileSync(join(TYPE_SCHEMA_DIR, 'CardPayment.schema.json'), 'utf8'));
    const validate = new Ajv2020({ strict: false }).compile(schema);
    const example = readFileSync(new URL('../../examples/catalogue.jsonl', import.meta.url), 'utf8')
      .split('\n')
      .map((l) => (l === '' ? undefined : (JSON.parse(l) as { type: string; data: Record<string, unknown> })))
      .find((e) => e?.type === 'CardPayment');
    if (example === undefined) throw new Error('no CardPayment example');
    expect(validate(example), JSON.stringify(validate.errors)).toBe(true);
    expect(validate({ ...example, data: { ...example.data, cardLast4: '4111111111111111' } })).toBe(false);
    expect(JSON.stringify(validate.errors)).toContain('cardLast4');
  });
});

/**
 * A catalogue changed the way templates/README.md "Changing a type that is already in use" allows, in a copy of
 * templates/: every type gets new optional fields of every kind at the front of its `data`, and its fields in reverse
 * order. Used to show that such a deploy leaves the payloadHash of every event recorded before it as it was.
 *
 * Also a command (`node --import tsx test/support/add-fields.ts <out-dir>`): compiles such a copy with the real compiler
 * and writes the two generated modules into <out-dir>, for a test that loads them in place of the shipped ones.
 */
import { cpSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateModule, TEMPLATES_DIR, writeModules } from '../../tools/scripts/templates.ts';

/** The optional fields added to every type, one of each kind, and their values in a test event. */
export const ADDED_FIELDS = [
  { name: 'addedRef', kind: 'identifier' },
  { name: 'addedNote', kind: 'text', maxGraphemes: 60 },
  { name: 'addedFee', kind: 'money', currencyField: 'addedFeeCurrency' },
  { name: 'addedDate', kind: 'date' },
  { name: 'addedAt', kind: 'instant' },
  { name: 'addedCount', kind: 'number' },
  { name: 'addedChoice', kind: 'enum', values: ['FIRST', 'SECOND'] },
] as const;

/** A money field added beside a type's own money field, sharing its currency (as LowBalance's threshold does). */
export const ADDED_SHARED_MONEY = 'addedLimit';

/** A copy of templates/ with ADDED_FIELDS (and ADDED_SHARED_MONEY where a type has money) in every definition. */
export function templatesWithAddedFields(): string {
  const dir = mkdtempSync(join(tmpdir(), 'notifier-added-fields-'));
  cpSync(TEMPLATES_DIR, dir, { recursive: true });
  for (const type of readdirSync(dir)) {
    const file = join(dir, type, 'definition.json');
    if (type === 'partials' || !statSync(join(dir, type)).isDirectory()) continue;
    const def = JSON.parse(readFileSync(file, 'utf8')) as { data: { kind: string; currencyField?: string }[] };
    const currency = def.data.find((f) => f.kind === 'money')?.currencyField;
    const shared = currency === undefined ? [] : [{ name: ADDED_SHARED_MONEY, kind: 'money', currencyField: currency }];
    def.data = [...ADDED_FIELDS, ...shared, ...[...def.data].reverse()];
    writeFileSync(file, JSON.stringify(def, null, 2));
  }
  return dir;
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [out = ''] = process.argv.slice(2);
  writeModules(out, await generateModule(templatesWithAddedFields()));
}

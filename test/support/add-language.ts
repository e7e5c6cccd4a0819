/**
 * A language added the way templates/README.md "Adding a language" says, in a copy of templates/: its footers and, for
 * every type, its templates (here the English ones with the language's `lang`, a bank's translator's stand-in). Used
 * to show a language is data: the compiler takes it, and the functions write it with no TypeScript change.
 *
 * Also a command (`node --import tsx test/support/add-language.ts <out-dir> [code|- ...]`): compiles such a copy and writes
 * the two generated modules into <out-dir>, for a test that loads them in place of the shipped ones.
 */
import { cpSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateModule, TEMPLATES_DIR, writeModules } from '../../tools/scripts/templates.ts';

/**
 * A language templates/ does not have, with what its notices must show — French, or German for a bank that already
 * writes French — so the tests that add one keep meaning it whatever languages a bank ships.
 */
export function unshippedLanguage(root: string = TEMPLATES_DIR) {
  const shipped = readdirSync(join(root, 'partials')).some((f) => f === 'footer.fr.mjml');
  return shipped
    ? {
        code: 'de',
        regional: 'de_DE.UTF-8',
        bank: 'Beispielbank',
        phone: '+49 30 1234567',
        legal: 'Beispielbank AG, eine erfundene Bank.',
        timeZone: 'Europe/Berlin',
        money: '1.240,50\u00a0€',
        date: '30. November 2026',
      }
    : {
        code: 'fr',
        regional: 'fr_FR.UTF-8',
        bank: 'Banque Exemple',
        phone: '+33 1 23 45 67 89',
        legal: 'Banque Exemple SA, banque fictive.',
        timeZone: 'Europe/Paris',
        money: '1\u202f240,50\u00a0€',
        date: '30 novembre 2026',
      };
}

/**
 * A copy of templates/ with `code` added from the English files; `skip` leaves out the named files (type/file); `into`
 * adds it to a copy made before (several languages at once).
 */
export function templatesWithLanguage(code: string, skip: readonly string[] = [], into?: string): string {
  const dir = into ?? mkdtempSync(join(tmpdir(), `notifier-language-${code}-`));
  if (into === undefined) cpSync(TEMPLATES_DIR, dir, { recursive: true });
  const copy = (from: string, to: string, edit: (s: string) => string = (s) => s) => {
    if (!skip.includes(to.slice(dir.length + 1))) writeFileSync(to, edit(readFileSync(from, 'utf8')));
  };
  copy(join(dir, 'partials', 'footer.en.mjml'), join(dir, 'partials', `footer.${code}.mjml`));
  copy(join(dir, 'partials', 'footer.en.txt'), join(dir, 'partials', `footer.${code}.txt`));
  for (const type of readdirSync(dir)) {
    if (type === 'partials' || !statSync(join(dir, type)).isDirectory()) continue;
    for (const file of readdirSync(join(dir, type))) {
      const match = /^(email|push|sms)\.en\.(mjml|txt|json)$/.exec(file);
      if (match === null) continue;
      copy(join(dir, type, file), join(dir, type, `${match[1]}.${code}.${match[2]}`), (s) =>
        s.replace('lang="en"', `lang="${code}"`).replace('footer.en.mjml', `footer.${code}.mjml`),
      );
    }
  }
  return dir;
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  // `-` (or no code) is a language templates/ does not have: unshippedLanguage().
  const [out = '', ...given] = process.argv.slice(2);
  const [first, ...more] = (given.length === 0 ? ['-'] : given).map((c) => (c === '-' ? unshippedLanguage().code : c));
  if (first === undefined) throw new Error('no language');
  const dir = templatesWithLanguage(first);
  for (const code of more) templatesWithLanguage(code, [], dir);
  writeModules(out, await generateModule(dir));
}

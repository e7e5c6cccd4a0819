/**
 * `npm run templates`: compiles templates/ into functions/domain/templates.generated.ts.
 *
 * Per type × locale: the email's MJML (responsive HTML for every mail client, compiled here so the Lambda bundle
 * carries only HTML strings, never MJML), its plain-text alternative, the push's title and body, the SMS. Every
 * template is checked before it is written:
 * - every placeholder is one the channel has (functions/domain/message-view.ts): a typo fails here, not in a customer's
 *   inbox;
 * - no unescaped placeholder ({{{x}}}, {{&x}}) and no delimiter change anywhere: HTML escaping cannot be switched off;
 * - MJML validates strictly, and no placeholder of the MJML goes missing in the compiled HTML;
 * - push and SMS templates are one line.
 *
 *   npm run templates            write the module
 *   npm run templates -- --check exit 1 when the module is not what templates/ compiles to
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import mjml2html from 'mjml';
import Mustache from 'mustache';
import { EVENT_TYPES, LOCALES, type Locale } from '../../functions/domain/event.ts';
import {
  type CompiledSet,
  HTML_FIELDS,
  SHORT_FIELDS,
  TEXT_FIELDS,
  type TextPartials,
} from '../../functions/domain/message-view.ts';
import { parseCommandLine, runCommand } from '../local/cli.ts';

export const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
export const TEMPLATES_DIR = join(ROOT, 'templates');
export const GENERATED_FILE = join(ROOT, 'functions', 'domain', 'templates.generated.ts');

/**
 * After the preheader: invisible spacing, so an inbox's preview shows the preheader alone instead of running on into
 * the email's first words ("Example Bank ✓ Completed …"). Entities only: the HTML stays ASCII-clean.
 */
const PREHEADER_FILLER = '&#847;&zwnj;&nbsp;'.repeat(40);
const PREVIEW_DIV = /(<div style="display:none;font-size:1px;[^"]*">)([\s\S]*?)(<\/div>)/;

/** MJML type-checks colour attributes, so the brand colour stands in as this colour until the HTML is compiled. */
const COLOR_SENTINEL = '#0a0b0c';
const COLOR_PLACEHOLDER = '{{brandColor}}';

export class TemplateError extends Error {
  override name = 'TemplateError';
}

type Token = [string, string, number, number, Token[]?];

/** The names a mustache template uses, and the partials it includes; refuses what must never appear. */
function namesOf(template: string, file: string): { names: Set<string>; partials: Set<string> } {
  let tokens: Token[];
  try {
    tokens = Mustache.parse(template) as unknown as Token[];
  } catch (error) {
    throw new TemplateError(`${file}: ${(error as Error).message}`);
  }
  const names = new Set<string>();
  const partials = new Set<string>();
  const walk = (list: Token[]) => {
    for (const [type, value, , , children] of list) {
      if (type === '&' || type === '{') {
        throw new TemplateError(`${file}: {{{${value}}}} / {{&${value}}} would skip escaping; use {{${value}}}`);
      }
      if (type === '=') throw new TemplateError(`${file}: changing the {{ }} delimiters is not allowed`);
      if (type === 'name' || type === '#' || type === '^') names.add(value);
      if (type === '>') partials.add(value);
      if (children !== undefined) walk(children);
    }
  };
  walk(tokens);
  return { names, partials };
}

function checkNames(template: string, file: string, allowed: readonly string[], partials: readonly string[] = []) {
  const used = namesOf(template, file);
  for (const name of used.names) {
    if (!allowed.includes(name)) {
      throw new TemplateError(`${file}: unknown placeholder {{${name}}}; this channel has: ${allowed.join(', ')}`);
    }
  }
  for (const partial of used.partials) {
    if (!partials.includes(partial)) {
      throw new TemplateError(`${file}: unknown partial {{> ${partial}}}; available: ${partials.join(', ') || 'none'}`);
    }
  }
  return used.names;
}

const read = (path: string) => readFileSync(path, 'utf8');
const oneLine = (value: string, file: string) => {
  const text = value.replace(/\n$/, '');
  if (/[\r\n]/.test(text)) throw new TemplateError(`${file}: must be one line`);
  return text;
};

const XML_ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };
const decodeXml = (s: string) =>
  s.replace(/&(amp|lt|gt|quot|apos|#\d+|#x[0-9a-f]+);/gi, (_, e: string) =>
    e.startsWith('#x') || e.startsWith('#X')
      ? String.fromCodePoint(Number.parseInt(e.slice(2), 16))
      : e.startsWith('#')
        ? String.fromCodePoint(Number(e.slice(1)))
        : (XML_ENTITIES[e.toLowerCase()] ?? e),
  );

/** The MJML source with its includes, for the placeholder checks (MJML itself resolves them when compiling). */
function withIncludes(source: string, dir: string, root: string, depth = 0): string {
  if (depth > 4) throw new TemplateError('mj-include nested too deeply');
  return source.replace(/<mj-include\s+path="([^"]+)"\s*\/>/g, (_, path: string) => {
    const file = resolve(dir, path);
    if (!file.startsWith(root)) throw new TemplateError(`mj-include outside templates/: ${path}`);
    return withIncludes(read(file), resolve(file, '..'), root, depth + 1);
  });
}

async function compileEmail(file: string, root: string): Promise<{ subject: string; html: string }> {
  const source = read(file);
  const full = withIncludes(source, resolve(file, '..'), root);
  if (full.includes(COLOR_SENTINEL))
    throw new TemplateError(`${file}: ${COLOR_SENTINEL} is reserved; use a near colour`);
  const names = checkNames(full, file, HTML_FIELDS);

  const title = /<mj-title>([\s\S]*?)<\/mj-title>/.exec(source)?.[1]?.trim();
  if (title === undefined || title === '') throw new TemplateError(`${file}: needs an <mj-title>: it is the subject`);
  const subject = oneLine(decodeXml(title), `${file} <mj-title>`);
  if (!/<mj-preview>[\s\S]*?\S[\s\S]*?<\/mj-preview>/.test(source)) {
    throw new TemplateError(`${file}: needs an <mj-preview>: it is the preheader the inbox shows after the subject`);
  }
  if (!/<mjml\s[^>]*lang="[a-z]{2}"/.test(source)) throw new TemplateError(`${file}: <mjml> needs a lang attribute`);

  const { html: compiled, errors } = await mjml2html(full.replaceAll(COLOR_PLACEHOLDER, COLOR_SENTINEL), {
    filePath: file,
    validationLevel: 'strict',
    minify: true,
    minifyOptions: { minifyCss: false },
    keepComments: false,
    fonts: {},
  }).catch((error: Error & { errors?: { formattedMessage: string }[] }) => {
    throw new TemplateError(`${file}: ${error.errors?.map((e) => e.formattedMessage).join('; ') ?? error.message}`);
  });
  if (errors.length > 0) throw new TemplateError(`${file}: ${errors.map((e) => e.formattedMessage).join('; ')}`);
  // One line: newlines in HTML are only whitespace, and a body without them is easy to check for injected ones.
  const html = compiled
    .replaceAll(COLOR_SENTINEL, COLOR_PLACEHOLDER)
    .replace(/\s*\n\s*/g, ' ')
    .trim();
  if (!PREVIEW_DIV.test(html)) throw new TemplateError(`${file}: the compiled preheader was not found`);
  const withFiller = html.replace(
    PREVIEW_DIV,
    (_, open: string, text: string, close: string) => `${open}${text}${PREHEADER_FILLER}${close}`,
  );
  const kept = checkNames(withFiller, `${file} (compiled)`, HTML_FIELDS);
  const lost = [...names].filter((n) => !kept.has(n));
  if (lost.length > 0) {
    throw new TemplateError(`${file}: MJML dropped {{${lost.join('}}, {{')}}}: put text inside <mj-text> or <mj-raw>`);
  }
  return { subject, html: withFiller };
}

function textPartials(root: string): TextPartials {
  const dir = join(root, 'partials');
  const partials = Object.fromEntries(LOCALES.map((l) => [l, {} as Record<string, string>])) as Record<
    Locale,
    Record<string, string>
  >;
  for (const name of readdirSync(dir).sort()) {
    const match = /^([a-z][a-z0-9-]*)\.([a-z]{2})\.txt$/.exec(name);
    if (match === null) continue;
    const [, partial = '', locale = ''] = match;
    if (!LOCALES.includes(locale as Locale)) throw new TemplateError(`partials/${name}: unknown locale ${locale}`);
    const text = read(join(dir, name));
    checkNames(text, `partials/${name}`, TEXT_FIELDS);
    partials[locale as Locale][partial] = text;
  }
  return partials;
}

async function compileSet(root: string, type: string, locale: Locale, partials: TextPartials): Promise<CompiledSet> {
  const dir = join(root, type);
  const at = (name: string) => join(dir, name);
  const rel = (name: string) => `templates/${type}/${name}`;
  const email = await compileEmail(at(`email.${locale}.mjml`), root);
  const text = read(at(`email.${locale}.txt`));
  checkNames(text, rel(`email.${locale}.txt`), TEXT_FIELDS, Object.keys(partials[locale]));
  let push: { title?: unknown; body?: unknown };
  try {
    push = JSON.parse(read(at(`push.${locale}.json`)));
  } catch (error) {
    throw new TemplateError(`${rel(`push.${locale}.json`)}: ${(error as Error).message}`);
  }
  if (typeof push.title !== 'string' || typeof push.body !== 'string') {
    throw new TemplateError(`${rel(`push.${locale}.json`)}: needs "title" and "body" strings`);
  }
  const sms = oneLine(read(at(`sms.${locale}.txt`)), rel(`sms.${locale}.txt`));
  for (const [value, name] of [
    [email.subject, `email.${locale}.mjml <mj-title>`],
    [push.title, `push.${locale}.json title`],
    [push.body, `push.${locale}.json body`],
    [sms, `sms.${locale}.txt`],
  ] as const) {
    checkNames(oneLine(value, rel(name)), rel(name), SHORT_FIELDS);
  }
  return { subject: email.subject, html: email.html, text, pushTitle: push.title, pushBody: push.body, sms };
}

/** The generated module's source text, and what it holds. */
export async function generateModule(root: string = TEMPLATES_DIR): Promise<{
  source: string;
  templates: Record<string, Record<string, CompiledSet>>;
}> {
  const partials = textPartials(root);
  const templates: Record<string, Record<string, CompiledSet>> = {};
  for (const type of EVENT_TYPES) {
    templates[type] = {};
    for (const locale of LOCALES) templates[type][locale] = await compileSet(root, type, locale, partials);
  }
  const source = [
    '// Generated by `npm run templates` from templates/ (MJML compiled to HTML). Do not edit: edit templates/ and run',
    '// `npm run templates`; a unit test fails while this file is not what templates/ compiles to.',
    "import type { CompiledTemplates, TextPartials } from './message-view.ts';",
    '',
    `export const TEMPLATES: CompiledTemplates = ${JSON.stringify(templates, null, 2)};`,
    '',
    `export const TEXT_PARTIALS: TextPartials = ${JSON.stringify(partials, null, 2)};`,
    '',
  ].join('\n');
  return { source, templates };
}

async function main(): Promise<number> {
  const check = process.argv.includes('--check');
  const { source, templates } = await generateModule();
  const current = (() => {
    try {
      return read(GENERATED_FILE);
    } catch {
      return '';
    }
  })();
  if (check) {
    if (source === current) return 0;
    process.stderr.write('templates: functions/domain/templates.generated.ts is stale: run npm run templates\n');
    return 1;
  }
  writeFileSync(GENERATED_FILE, source);
  const sizes = Object.entries(templates).flatMap(([type, locales]) =>
    Object.entries(locales).map(([locale, set]) => `${type}/${locale} ${Buffer.byteLength(set.html)} B`),
  );
  process.stdout.write(
    `templates: wrote ${GENERATED_FILE.slice(ROOT.length + 1)} (${Buffer.byteLength(source)} B); email HTML: ${sizes.join(', ')}\n`,
  );
  return 0;
}

const USAGE = `
Usage: npm run templates

Compiles templates/ (MJML emails, text, push and SMS per type × language) into functions/domain/templates.generated.ts,
checking every placeholder against the data each type carries. Run it after editing a template: a test fails while the
generated module is stale. Guide: templates/README.md.
`;

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  runCommand('templates', async () => {
    parseCommandLine({ usage: USAGE, options: {} }, process.argv.slice(2));
    return main();
  });
}

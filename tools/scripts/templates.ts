/**
 * `npm run templates`: compiles templates/ into functions/domain/templates.generated.ts and
 * functions/domain/catalogue.generated.ts.
 *
 * A type is a folder `templates/<Type>/` (the folder's name is the type's) with a `definition.json` (validated by
 * functions/domain/catalogue.ts definitionSchema) and, for every language and every channel the definition allows,
 * its templates; a missing one, or one for a channel the type does not allow, is refused naming the file.
 * Per type × locale: the email's MJML (responsive HTML for every mail client, compiled here so the Lambda bundle
 * carries only HTML strings, never MJML), its plain-text alternative, the push's title and body, the SMS. Every
 * template is checked before it is written:
 * - every placeholder is one the channel has (functions/domain/message-view.ts): a typo fails here, not in a customer's
 *   inbox;
 * - no unescaped placeholder ({{{x}}}, {{&x}}) and no delimiter change anywhere: HTML escaping cannot be switched off;
 * - MJML validates strictly, and no placeholder of the MJML goes missing in the compiled HTML;
 * - push and SMS templates are one line;
 * - an optional field is shown only inside a section of its own, so its absence leaves no blank; a required display-text
 *   field too, beside words for its absence, so a third party's blank name never silences the notice.
 *
 *   npm run templates            write the module
 *   npm run templates -- --check exit 1 when the module is not what templates/ compiles to
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import mjml2html from 'mjml';
import Mustache from 'mustache';
import { checkSync } from 'recheck';
import {
  type Definition,
  dataPlaceholders,
  definitionProblems,
  isTypeName,
  wholeValuePattern,
} from '../../functions/domain/catalogue.ts';
import type { Channel } from '../../functions/domain/channels.ts';
import { DEFAULT_LOCALE } from '../../functions/domain/locale.ts';
import {
  bareNames,
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
/** One module per notice type (its compiled templates in every language), loaded when a notice of it is rendered. */
export const TYPE_TEMPLATES_DIR = join(ROOT, 'functions', 'domain', 'templates');
export const typeTemplatesFile = (type: string) => `${type}.generated.ts`;
export const CATALOGUE_FILE = join(ROOT, 'functions', 'domain', 'catalogue.generated.ts');

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

/**
 * A field that may show nothing is shown only inside a section of its own ({{#field}}…{{/field}}), so a blank never
 * takes its place: an optional one (absent), and a required display-text one — a third party writes it (a device
 * names itself), and ingest leaves out what cleans to nothing rather than refuse the notice, so that one also needs
 * words for its absence ({{^field}}…{{/field}}), or a name of zero-width characters would silence a security alert.
 * (A required field of another kind shown outside one makes the notice refused when its value is empty: templates.ts.)
 */
function checkSections(template: string, file: string, def: Definition) {
  const bare = bareNames(template);
  for (const { name, required, kind } of def.data) {
    if (!bare.has(name)) continue;
    if (!required)
      throw new TemplateError(
        `${file}: {{${name}}} is optional: show it inside {{#${name}}}…{{/${name}}}, so its absence leaves no blank`,
      );
    if (kind === 'text')
      throw new TemplateError(
        `${file}: {{${name}}} is required display text, which a third party may write as nothing visible: show it inside {{#${name}}}…{{/${name}}} and say it without in {{^${name}}}…{{/${name}}} ("an unnamed device"), so a blank name never silences the notice`,
      );
  }
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

/** The placeholders of one type's templates, per kind of template. */
interface Placeholders {
  readonly short: readonly string[];
  readonly text: readonly string[];
  readonly html: readonly string[];
}
const placeholdersOf = (def: Definition): Placeholders => {
  const data = dataPlaceholders(def);
  return { short: [...SHORT_FIELDS, ...data], text: [...TEXT_FIELDS, ...data], html: [...HTML_FIELDS, ...data] };
};

async function compileEmail(
  file: string,
  root: string,
  allowed: readonly string[],
  language: string,
): Promise<{ subject: string; html: string }> {
  const source = read(file);
  const full = withIncludes(source, resolve(file, '..'), root);
  if (full.includes(COLOR_SENTINEL))
    throw new TemplateError(`${file}: ${COLOR_SENTINEL} is reserved; use a near colour`);
  const names = checkNames(full, file, allowed);

  const title = /<mj-title>([\s\S]*?)<\/mj-title>/.exec(source)?.[1]?.trim();
  if (title === undefined || title === '') throw new TemplateError(`${file}: needs an <mj-title>: it is the subject`);
  const subject = oneLine(decodeXml(title), `${file} <mj-title>`);
  if (!/<mj-preview>[\s\S]*?\S[\s\S]*?<\/mj-preview>/.test(source)) {
    throw new TemplateError(`${file}: needs an <mj-preview>: it is the preheader the inbox shows after the subject`);
  }
  // The email's lang is its file's language: screen readers and mail clients choose voices and fonts by it.
  const lang = /<mjml\s[^>]*lang="([^"]*)"/.exec(source)?.[1];
  if (lang?.toLowerCase() !== language)
    throw new TemplateError(`${file}: <mjml> needs lang="${language}"${lang === undefined ? '' : `, not "${lang}"`}`);

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
  const kept = checkNames(withFiller, `${file} (compiled)`, allowed);
  const lost = [...names].filter((n) => !kept.has(n));
  if (lost.length > 0) {
    throw new TemplateError(`${file}: MJML dropped {{${lost.join('}}, {{')}}}: put text inside <mj-text> or <mj-raw>`);
  }
  return { subject, html: withFiller };
}

/**
 * The languages the build writes: the codes of `partials/footer.<code>.mjml` (every email ends with its language's
 * footer, so a language without one cannot be written). A code is a BCP 47 language tag in lower case (`fr`, `pt-br`,
 * `zh-hant`): a producer's tag is negotiated to it (RFC 4647 lookup, functions/domain/locale.ts) and Intl formats
 * dates and money with it. The default language must be one of them: an event without a locale is written in it.
 */
export function readLanguages(root: string = TEMPLATES_DIR): string[] {
  const dir = join(root, 'partials');
  const languages = readdirSync(dir)
    .map((name) => /^footer\.(.+)\.mjml$/.exec(name)?.[1])
    .filter((code) => code !== undefined)
    .sort();
  for (const code of languages) {
    let canonical: string | undefined;
    try {
      canonical = Intl.getCanonicalLocales(code)[0];
    } catch {
      // not a language tag: refused below
    }
    if (canonical?.toLowerCase() !== code) {
      throw new TemplateError(
        `partials/footer.${code}.mjml: "${code}" is not a BCP 47 language tag in lower case${canonical === undefined ? '' : ` (${canonical.toLowerCase()})`}`,
      );
    }
    // A language Intl has data for: it formats the language's dates and money (`xx` or `french` would fall back).
    const named = new Intl.DisplayNames(['en'], { type: 'language', fallback: 'none' }).of(code);
    if (named === undefined)
      throw new TemplateError(`partials/footer.${code}.mjml: "${code}" is not a language the runtime's Intl knows`);
    // …and can format for: Intl falls back to its default locale for a language it has no data for (`tlh`).
    const formats = [
      new Intl.NumberFormat(code).resolvedOptions().locale,
      new Intl.DateTimeFormat(code).resolvedOptions().locale,
    ];
    if (formats.some((l) => new Intl.Locale(l).language !== new Intl.Locale(code).language))
      throw new TemplateError(
        `partials/footer.${code}.mjml: the runtime's Intl has no number or date formats for "${code}" (it would use ${formats.join(', ')})`,
      );
    if (!existsSync(join(dir, `footer.${code}.txt`)))
      throw new TemplateError(`partials/footer.${code}.txt: missing: every language has the text footer too`);
  }
  if (!languages.includes(DEFAULT_LOCALE)) {
    throw new TemplateError(
      `partials/footer.${DEFAULT_LOCALE}.mjml: missing: ${DEFAULT_LOCALE} is the default language (an event without a locale is written in it)`,
    );
  }
  return languages;
}

function textPartials(root: string, languages: readonly string[]): TextPartials {
  const dir = join(root, 'partials');
  const partials: Record<string, Record<string, string>> = Object.fromEntries(languages.map((l) => [l, {}]));
  for (const name of readdirSync(dir).sort()) {
    const match = /^([a-z][a-z0-9-]*)\.([^.]+)\.txt$/.exec(name);
    if (match === null) continue;
    const [, partial = '', locale = ''] = match;
    const own = partials[locale];
    if (own === undefined)
      throw new TemplateError(`partials/${name}: no language ${locale} (partials/footer.${locale}.mjml makes one)`);
    const text = read(join(dir, name));
    checkNames(text, `partials/${name}`, TEXT_FIELDS);
    own[partial] = text;
  }
  return partials as TextPartials;
}

/** The files of one type × locale, by channel: what the compiler asks for. */
const FILES_OF: Readonly<Record<Channel, (locale: string) => string[]>> = {
  EMAIL: (l) => [`email.${l}.mjml`, `email.${l}.txt`],
  PUSH: (l) => [`push.${l}.json`],
  SMS: (l) => [`sms.${l}.txt`],
};

async function compileSet(
  root: string,
  type: string,
  def: Definition,
  locale: string,
  partials: Readonly<Record<string, Readonly<Record<string, string>>>>,
): Promise<CompiledSet> {
  const dir = join(root, type);
  const at = (name: string) => join(dir, name);
  const rel = (name: string) => `templates/${type}/${name}`;
  const names = placeholdersOf(def);
  for (const [channel, files] of Object.entries(FILES_OF) as [Channel, (l: string) => string[]][]) {
    for (const file of files(locale)) {
      const wanted = def.channels.includes(channel);
      if (wanted && !existsSync(at(file)))
        throw new TemplateError(`${rel(file)}: missing: ${type} allows ${channel} and the brand writes ${locale}`);
      if (!wanted && existsSync(at(file)))
        throw new TemplateError(`${rel(file)}: ${channel} is not among the channels of ${type}'s definition.json`);
    }
  }
  const short: [string, string][] = [];
  let email = { subject: '', html: '' };
  let text = '';
  if (def.channels.includes('EMAIL')) {
    email = await compileEmail(at(`email.${locale}.mjml`), root, names.html, locale);
    text = read(at(`email.${locale}.txt`));
    checkNames(text, rel(`email.${locale}.txt`), names.text, Object.keys(partials[locale] ?? {}));
    short.push([email.subject, `email.${locale}.mjml <mj-title>`]);
  }
  let push: { title?: unknown; body?: unknown } = { title: '', body: '' };
  if (def.channels.includes('PUSH')) {
    try {
      push = JSON.parse(read(at(`push.${locale}.json`)));
    } catch (error) {
      throw new TemplateError(`${rel(`push.${locale}.json`)}: ${(error as Error).message}`);
    }
    if (typeof push.title !== 'string' || typeof push.body !== 'string') {
      throw new TemplateError(`${rel(`push.${locale}.json`)}: needs "title" and "body" strings`);
    }
    short.push([push.title, `push.${locale}.json title`], [push.body, `push.${locale}.json body`]);
  }
  let sms = '';
  if (def.channels.includes('SMS')) {
    sms = oneLine(read(at(`sms.${locale}.txt`)), rel(`sms.${locale}.txt`));
    short.push([sms, `sms.${locale}.txt`]);
  }
  for (const [value, name] of short) checkNames(oneLine(value, rel(name)), rel(name), names.short);
  const parts: [string, string][] = [...short, [email.html, `email.${locale}.mjml`], [text, `email.${locale}.txt`]];
  for (const [value, name] of parts) checkSections(value, rel(name), def);
  return {
    subject: email.subject,
    html: email.html,
    text,
    pushTitle: push.title as string,
    pushBody: push.body as string,
    sms,
  };
}

/** The types: every folder of templates/ but partials/, each with its definition.json validated. */
export function readDefinitions(root: string = TEMPLATES_DIR): Record<string, Definition> {
  const definitions: Record<string, Definition> = {};
  const folders = readdirSync(root)
    .filter((name) => name !== 'partials' && statSync(join(root, name)).isDirectory())
    .sort();
  for (const type of folders) {
    if (!isTypeName(type)) throw new TemplateError(`templates/${type}: a type's folder is named in PascalCase`);
    const file = join(root, type, 'definition.json');
    if (!existsSync(file)) throw new TemplateError(`templates/${type}/definition.json: missing`);
    let raw: unknown;
    try {
      raw = JSON.parse(read(file));
    } catch (error) {
      throw new TemplateError(`templates/${type}/definition.json: ${(error as Error).message}`);
    }
    const problems = definitionProblems(raw);
    // Optional in the catalogue the functions load (they never read it), required of the folder: the JSON Schemas say it.
    if (problems.length === 0 && (raw as Definition).description === undefined)
      problems.push('description: what the notice tells the customer, for the JSON Schema');
    if (problems.length === 0) problems.push(...patternProblems(raw as Definition));
    if (problems.length > 0) throw new TemplateError(`templates/${type}/definition.json: ${problems.join('; ')}`);
    definitions[type] = raw as Definition;
  }
  if (folders.length === 0) throw new TemplateError('templates/: no type');
  return definitions;
}

/** How long recheck may take to prove one pattern safe; what it cannot prove by then is refused. */
const RECHECK_TIMEOUT_MS = 5_000;

/**
 * A field's pattern is matched against every producer's value (functions/domain/event/schema.ts), by a backtracking engine:
 * one that a crafted value could make take exponential or polynomial time (ReDoS) would let one record stall ingest.
 * recheck (automata-theoretic, with fuzzing where that cannot decide) must find it safe; "vulnerable" and "unknown"
 * are refused, with the attack it found.
 */
function patternProblems(def: Definition): string[] {
  return def.data.flatMap((field, i) => {
    if (field.pattern === undefined) return [];
    const verdict = checkSync(wholeValuePattern(field.pattern), 'u', { timeout: RECHECK_TIMEOUT_MS });
    if (verdict.status === 'safe') return [];
    const how =
      verdict.status === 'vulnerable'
        ? `a value such as ${JSON.stringify(verdict.attack.string.slice(0, 40))}… makes it backtrack in ${verdict.complexity.type} time (ReDoS)`
        : 'recheck could not prove it runs in linear time';
    return [`data.${i}.pattern: ${how}; write it without nested or overlapping repetition`];
  });
}

const HEADER = [
  '// Generated by `npm run templates` from templates/. Do not edit: edit templates/ and run `npm run templates`; a unit',
  '// test fails while this file is not what templates/ compiles to.',
];

/** The generated modules' source texts, and what they hold. */
export async function generateModule(root: string = TEMPLATES_DIR): Promise<{
  source: string;
  /** Each type's module (functions/domain/templates/<Type>.generated.ts), by type. */
  typeSources: Record<string, string>;
  catalogueSource: string;
  templates: Record<string, Record<string, CompiledSet>>;
}> {
  const definitions = readDefinitions(root);
  const languages = readLanguages(root);
  const partials = textPartials(root, languages);
  const templates: Record<string, Record<string, CompiledSet>> = {};
  for (const [type, def] of Object.entries(definitions)) {
    // A template in a language without footers would be silently unused: the language is missing its partials.
    for (const file of readdirSync(join(root, type))) {
      const language = /^(?:email|push|sms)\.(.+)\.(?:mjml|txt|json)$/.exec(file)?.[1];
      if (language !== undefined && !languages.includes(language))
        throw new TemplateError(
          `templates/${type}/${file}: no language ${language}: partials/footer.${language}.mjml and .txt make one`,
        );
    }
    templates[type] = {};
    for (const locale of languages) templates[type][locale] = await compileSet(root, type, def, locale, partials);
  }
  const types = Object.keys(templates);
  const source = [
    ...HEADER,
    "import type { TemplateLoaders, TextPartials } from './message-view.ts';",
    '',
    "// Each type's compiled templates are a module of their own, loaded when a notice of the type is first rendered",
    '// (template-sets.ts): a function bundles them as chunks and reads only the types it sends.',
    'export const TEMPLATE_LOADERS: TemplateLoaders = {',
    ...types.map((t) => `  ${JSON.stringify(t)}: () => import('./templates/${typeTemplatesFile(t)}'),`),
    '};',
    '',
    `export const TEXT_PARTIALS: TextPartials = ${JSON.stringify(partials, null, 2)};`,
    '',
  ].join('\n');
  const typeSources = Object.fromEntries(
    types.map((t) => [
      t,
      [
        ...HEADER,
        "import type { TemplateSets } from '../message-view.ts';",
        '',
        `export const SETS: TemplateSets = ${JSON.stringify(templates[t], null, 2)};`,
        '',
      ].join('\n'),
    ]),
  );
  const catalogueSource = [
    ...HEADER,
    '',
    '// The languages: the codes of templates/partials/footer.<code>.mjml. Every type has its templates in each of them,',
    "// and the brand settings an entry for each (the synth and the functions' cold start refuse settings without one).",
    `export const LANGUAGES = ${JSON.stringify(languages)} as const;`,
    '',
    '// The definitions of templates/<Type>/definition.json without their descriptions: validated again when',
    '// catalogue.ts loads.',
    `export const DEFINITIONS: Readonly<Record<string, unknown>> = ${JSON.stringify(withoutDescriptions(definitions), null, 2)};`,
    '',
    "// What each type and field means (definition.json's descriptions), for the JSON Schemas: no function reads them,",
    "// so no function's bundle holds them.",
    `export const DESCRIPTIONS: Readonly<Record<string, Description>> = ${JSON.stringify(descriptionsOf(definitions), null, 2)};`,
    '',
    'interface Description {',
    '  readonly type: string;',
    '  readonly fields: Readonly<Record<string, string>>;',
    '}',
    '',
  ].join('\n');
  return { source, typeSources, catalogueSource, templates };
}

/** The definitions as the functions load them: what each type and field means left out (descriptionsOf keeps it). */
function withoutDescriptions(definitions: Record<string, Definition>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(definitions).map(([type, { description: _, data, ...rest }]) => [
      type,
      { ...rest, data: data.map(({ description: _field, ...field }) => field) },
    ]),
  );
}

/** Each type's description and its fields', by name (a field without one is left out). */
function descriptionsOf(definitions: Record<string, Definition>) {
  return Object.fromEntries(
    Object.entries(definitions).map(([type, def]) => [
      type,
      {
        type: def.description,
        fields: Object.fromEntries(
          def.data.flatMap((f) => (f.description === undefined ? [] : [[f.name, f.description] as const])),
        ),
      },
    ]),
  );
}

/** Writes the generated modules under `domainDir` (functions/domain, or a test's copy); a type gone loses its module. */
export function writeModules(domainDir: string, generated: Awaited<ReturnType<typeof generateModule>>): void {
  const dir = join(domainDir, 'templates');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(domainDir, 'templates.generated.ts'), generated.source);
  writeFileSync(join(domainDir, 'catalogue.generated.ts'), generated.catalogueSource);
  const wanted = new Set(Object.keys(generated.typeSources).map(typeTemplatesFile));
  for (const file of readdirSync(dir)) if (!wanted.has(file)) rmSync(join(dir, file));
  for (const [type, text] of Object.entries(generated.typeSources))
    writeFileSync(join(dir, typeTemplatesFile(type)), text);
}

/** Whether the generated modules in functions/domain are what templates/ compiles to. */
export function modulesCurrent(generated: Awaited<ReturnType<typeof generateModule>>): boolean {
  const current = (file: string) => (existsSync(file) ? read(file) : '');
  const files = existsSync(TYPE_TEMPLATES_DIR) ? readdirSync(TYPE_TEMPLATES_DIR).sort() : [];
  return (
    generated.source === current(GENERATED_FILE) &&
    generated.catalogueSource === current(CATALOGUE_FILE) &&
    JSON.stringify(files) === JSON.stringify(Object.keys(generated.typeSources).map(typeTemplatesFile).sort()) &&
    Object.entries(generated.typeSources).every(
      ([t, text]) => text === current(join(TYPE_TEMPLATES_DIR, typeTemplatesFile(t))),
    )
  );
}

async function main(check: boolean): Promise<number> {
  const generated = await generateModule();
  const { source, templates } = generated;
  if (check) {
    if (modulesCurrent(generated)) return 0;
    process.stderr.write('templates: functions/domain/*.generated.ts are stale: run npm run generate\n');
    return 1;
  }
  writeModules(join(ROOT, 'functions', 'domain'), generated);
  const sizes = Object.entries(templates).flatMap(([type, locales]) =>
    Object.entries(locales).map(([locale, set]) => `${type}/${locale} ${Buffer.byteLength(set.html)} B`),
  );
  process.stdout.write(
    `templates: wrote ${GENERATED_FILE.slice(ROOT.length + 1)} (${Buffer.byteLength(source)} B); email HTML: ${sizes.join(', ')}\n`,
  );
  return 0;
}

const USAGE = `
Usage: npm run templates [-- --check]

Validates every templates/<Type>/definition.json and compiles templates/ (MJML emails, text, push and SMS per type ×
language) into functions/domain/templates.generated.ts and functions/domain/catalogue.generated.ts, checking every
placeholder against the fields each type's definition gives it. Run it after editing a type: a test fails while a
generated module is stale. Guide: templates/README.md.

  --check   write nothing; exit 1 when a generated module is not what templates/ compiles to
`;

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  runCommand('templates', async () => {
    const { values } = parseCommandLine(
      { usage: USAGE, options: { check: { type: 'boolean', default: false } } },
      process.argv.slice(2),
    );
    return main(values.check === true);
  });
}

/**
 * `npm run schema:wire [-- SCHEMA.json …]`: the event contract in the producers' formats — one Avro schema (.avsc) and
 * one Protobuf definition (.proto) per event type, generated from the contract's JSON Schema (docs/event.schema.json,
 * which `npm run schema` writes from the zod schemas ingest validates with), into docs/wire/. Also writes
 * docs/wire/registry.json, the folder's index as a schema registry (`npm start` serves it as one), and
 * examples/events.avro.b64, the sample events as Confluent wire-format Avro records.
 *
 * Any JSON Schema of the contract's shape works: a root `oneOf` of `$ref`s (one type per definition) or one object
 * schema per file (its `title` names the type). Each type gets its own schema, not a branch of one union: a new type
 * is a new subject, so adding one is compatible under every registry mode (docs/event.md "Avro and Protobuf").
 *
 * Mapping, chosen so that the wire schema never refuses what the contract would read and never decides what it means:
 * - every string (with a pattern, a format, an enum or a const) → Avro `string` / proto `string`: the contract decides
 *   which names are known, so a new type or channel never needs a wire change old readers cannot read;
 * - integer → long / int64, number → double, boolean → boolean / bool; an object → a nested record / message;
 * - a field not required, or nullable → Avro `["null", T]` with default null / proto3 `optional` (explicit presence);
 * - an array → Avro array (`["null", array]` when optional) / proto `repeated`, wrapped in a `<Field>List` message
 *   when optional, because proto3 cannot tell an empty list from an absent one (`channels: []` sends nothing,
 *   an absent one sends everywhere).
 * Protobuf field numbers are kept from the previous .proto: a field keeps its number for ever, a new one takes the next,
 * a removed one is `reserved` (number and name), so regenerating never renumbers what producers already write.
 * test/unit/wire-format.test.ts fails when the files are not what this script writes.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import protobuf from 'protobufjs';
import { confluentRecord, encodeAvro, type WireFormat } from '../../functions/domain/event/wire-format.ts';
import { parseCommandLine, runCommand, UsageError } from '../local/cli.ts';
import { SCHEMA_FILE } from './schema.ts';

const REPO = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const WIRE_DIR = join(REPO, 'docs', 'wire');
export const EXAMPLE_EVENTS = join(REPO, 'examples', 'events.jsonl');
export const EXAMPLE_AVRO = join(REPO, 'examples', 'events.avro.b64');
const NAMESPACE = 'notifier.events';

type JsonSchema = {
  type?: string | string[];
  description?: string;
  title?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  $ref?: string;
  oneOf?: JsonSchema[];
  $defs?: Record<string, JsonSchema>;
  [keyword: string]: unknown;
};

/** The generator refuses a shape it has no faithful mapping for, naming where. */
export class WireSchemaError extends Error {
  override name = 'WireSchemaError';
}

const pascal = (s: string) =>
  s.replace(/(^|[^A-Za-z0-9])([a-z])/g, (_, __, c: string) => c.toUpperCase()).replace(/[^A-Za-z0-9]/g, '');

/** The contract's types: one per definition of the root oneOf, or the root itself. */
export function typesOf(schema: JsonSchema): { name: string; schema: JsonSchema; typeValues: string[] }[] {
  const resolve = (node: JsonSchema): JsonSchema => {
    if (node.$ref === undefined) return node;
    const match = /^#\/\$defs\/(.+)$/.exec(node.$ref);
    const target = match === null ? undefined : schema.$defs?.[match[1] as string];
    if (target === undefined) throw new WireSchemaError(`unresolvable $ref ${node.$ref}`);
    return target;
  };
  if (schema.oneOf !== undefined) {
    return schema.oneOf.map((branch) => {
      const name = branch.$ref?.split('/').pop();
      if (name === undefined) throw new WireSchemaError('a root oneOf branch must be a $ref to a definition');
      const resolved = resolve(branch);
      return { name: pascal(name), schema: resolved, typeValues: typeValuesOf(resolved) };
    });
  }
  if (schema.title === undefined) throw new WireSchemaError('a single-type schema needs a title to name its type');
  return [{ name: pascal(schema.title), schema, typeValues: typeValuesOf(schema) }];
}

/** The values of `type` a definition stands for (its const or enum): which schema a producer encodes an event with. */
function typeValuesOf(node: JsonSchema): string[] {
  const type = node.properties?.type;
  if (typeof type?.const === 'string') return [type.const];
  if (Array.isArray(type?.enum)) return type.enum.filter((v): v is string => typeof v === 'string');
  return [];
}

/** What a JSON Schema node is, for both wire formats. */
type Shape =
  | { kind: 'scalar'; avro: 'string' | 'long' | 'double' | 'boolean'; proto: 'string' | 'int64' | 'double' | 'bool' }
  | { kind: 'object'; node: JsonSchema }
  | { kind: 'array'; items: Shape };

function shapeOf(node: JsonSchema, at: string): { shape: Shape; nullable: boolean } {
  const types = node.type === undefined ? [] : Array.isArray(node.type) ? node.type : [node.type];
  const nullable = types.includes('null');
  const [type, ...more] = types.filter((t) => t !== 'null');
  if (type === undefined || more.length > 0) {
    throw new WireSchemaError(`${at}: needs exactly one JSON type besides null (has ${JSON.stringify(node.type)})`);
  }
  switch (type) {
    case 'string':
      return { shape: { kind: 'scalar', avro: 'string', proto: 'string' }, nullable };
    case 'integer':
      return { shape: { kind: 'scalar', avro: 'long', proto: 'int64' }, nullable };
    case 'number':
      return { shape: { kind: 'scalar', avro: 'double', proto: 'double' }, nullable };
    case 'boolean':
      return { shape: { kind: 'scalar', avro: 'boolean', proto: 'bool' }, nullable };
    case 'object':
      if (node.properties === undefined) throw new WireSchemaError(`${at}: an object needs its properties listed`);
      return { shape: { kind: 'object', node }, nullable };
    case 'array': {
      if (node.items === undefined) throw new WireSchemaError(`${at}: an array needs its items`);
      const items = shapeOf(node.items, `${at}[]`);
      if (items.nullable || items.shape.kind === 'array') {
        throw new WireSchemaError(`${at}: nullable or nested array items have no faithful Protobuf form`);
      }
      return { shape: { kind: 'array', items: items.shape }, nullable };
    }
    default:
      throw new WireSchemaError(`${at}: JSON type ${type} has no wire mapping`);
  }
}

const fieldsOf = (node: JsonSchema) =>
  Object.entries(node.properties ?? {}).map(([name, child]) => {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name))
      throw new WireSchemaError(`${name}: not a name Avro and Protobuf allow`);
    return { name, child, required: (node.required ?? []).includes(name) };
  });

// ── Avro ──

export function avroSchemaOf(typeName: string, node: JsonSchema): Record<string, unknown> {
  const record = (name: string, obj: JsonSchema, at: string): Record<string, unknown> => ({
    type: 'record',
    name,
    ...(name === typeName ? { namespace: NAMESPACE } : {}),
    ...(obj.description === undefined ? {} : { doc: obj.description }),
    fields: fieldsOf(obj).map(({ name: field, child, required }) => {
      const { shape, nullable } = shapeOf(child, `${at}.${field}`);
      const type = avroType(shape, `${name}${pascal(field)}`, `${at}.${field}`);
      const optional = nullable || !required;
      return {
        name: field,
        type: optional ? ['null', type] : type,
        ...(optional ? { default: null } : {}),
        ...(child.description === undefined ? {} : { doc: child.description }),
      };
    }),
  });
  const avroType = (shape: Shape, name: string, at: string): unknown =>
    shape.kind === 'scalar'
      ? shape.avro
      : shape.kind === 'object'
        ? record(name, shape.node, at)
        : { type: 'array', items: avroType(shape.items, `${name}Item`, `${at}[]`) };
  return record(typeName, node, typeName);
}

// ── Protobuf ──

/** Field numbers and reserved ones of a previous .proto, by message path (`Transfer.Recipient`). */
type Numbering = Map<string, { fields: Map<string, number>; reserved: { numbers: number[]; names: string[] } }>;

export function numberingOf(previous: string | undefined): Numbering {
  const numbering: Numbering = new Map();
  if (previous === undefined) return numbering;
  const visit = (type: protobuf.Type, path: string) => {
    const numbers: number[] = [];
    const names: string[] = [];
    for (const r of type.reserved ?? []) {
      if (typeof r === 'string') names.push(r);
      else for (let n = r[0] as number; n <= (r[1] as number); n++) numbers.push(n);
    }
    numbering.set(path, {
      fields: new Map(type.fieldsArray.map((f) => [f.name, f.id])),
      reserved: { numbers, names },
    });
    for (const nested of type.nestedArray) if (nested instanceof protobuf.Type) visit(nested, `${path}.${nested.name}`);
  };
  const root = protobuf.parse(previous, { keepCase: true }).root;
  root.nestedArray.forEach(function walk(ns: protobuf.ReflectionObject): void {
    if (ns instanceof protobuf.Type) visit(ns, ns.name);
    else if (ns instanceof protobuf.Namespace) ns.nestedArray.forEach(walk);
  });
  return numbering;
}

const comment = (text: string | undefined, indent: string) =>
  text === undefined ? '' : `${indent}// ${text.replace(/\s+/g, ' ')}\n`;

export function protoOf(typeName: string, node: JsonSchema, previous?: string): string {
  const numbering = numberingOf(previous);
  const message = (name: string, obj: JsonSchema, path: string, indent: string): string => {
    const before = numbering.get(path);
    const used = new Set<number>([...(before?.fields.values() ?? []), ...(before?.reserved.numbers ?? [])]);
    let next = Math.max(0, ...used) + 1;
    const nested: string[] = [];
    const lines: string[] = [];
    const present = new Set<string>();
    for (const { name: field, child, required } of fieldsOf(obj)) {
      present.add(field);
      const { shape, nullable } = shapeOf(child, `${path}.${field}`);
      const number = before?.fields.get(field) ?? next++;
      const optional = nullable || !required;
      let type: string;
      let label = '';
      const nestedName = pascal(field);
      const typeOf = (s: Shape, n: string): string => {
        if (s.kind === 'scalar') return s.proto;
        if (s.kind === 'object') {
          nested.push(message(n, s.node, `${path}.${n}`, `${indent}  `));
          return n;
        }
        throw new WireSchemaError(`${path}.${field}: nested arrays`);
      };
      if (shape.kind === 'array' && optional) {
        const list = `${nestedName}List`;
        const item = typeOf(shape.items, `${nestedName}Item`);
        nested.push(
          `${indent}  // Wraps an optional list: proto3 cannot tell an empty list from an absent one.\n${indent}  message ${list} {\n${indent}    repeated ${item} items = 1;\n${indent}  }\n`,
        );
        type = list;
      } else if (shape.kind === 'array') {
        type = typeOf(shape.items, `${nestedName}Item`);
        label = 'repeated ';
      } else {
        type = typeOf(shape, nestedName);
        // proto3 `optional` gives scalars explicit presence; a message field always has it.
        if (shape.kind === 'scalar') label = 'optional ';
      }
      lines.push(`${comment(child.description, `${indent}  `)}${indent}  ${label}${type} ${field} = ${number};\n`);
    }
    // A field that left the contract keeps its number and name reserved: never reused with another meaning.
    const gone = [...(before?.fields.entries() ?? [])].filter(([f]) => !present.has(f));
    const reservedNumbers = [...(before?.reserved.numbers ?? []), ...gone.map(([, n]) => n)].sort((a, b) => a - b);
    const reservedNames = [...(before?.reserved.names ?? []), ...gone.map(([f]) => f)].sort();
    const reserved =
      reservedNumbers.length === 0
        ? ''
        : `${indent}  reserved ${reservedNumbers.join(', ')};\n${indent}  reserved ${reservedNames.map((n) => `"${n}"`).join(', ')};\n`;
    return `${comment(obj.description, indent)}${indent}message ${name} {\n${nested.join('')}${reserved}${lines.join('')}${indent}}\n`;
  };
  return `// Generated from the event contract's JSON Schema by \`npm run schema:wire\`: do not edit.\nsyntax = "proto3";\n\npackage ${NAMESPACE};\n\n${message(typeName, node, typeName, '')}`;
}

// ── The folder as a registry ──

export interface RegistryEntry {
  /** The schema id a Confluent registry would give it (kept across regenerations). */
  readonly id: number;
  readonly subject: string;
  readonly schemaType: WireFormat;
  readonly file: string;
}

/**
 * The folder's index: one id per (type, format). Ids are kept from the previous index and new ones take the next,
 * as a registry never reuses an id. Subjects follow TopicRecordNameStrategy (one subject per record type).
 */
export function registryOf(names: string[], previous: RegistryEntry[] = []): RegistryEntry[] {
  let next = Math.max(0, ...previous.map((e) => e.id)) + 1;
  const entries: RegistryEntry[] = [];
  for (const schemaType of ['AVRO', 'PROTOBUF'] as const) {
    for (const name of names) {
      const file = `${name}.${schemaType === 'AVRO' ? 'avsc' : 'proto'}`;
      const id = previous.find((e) => e.file === file)?.id ?? next++;
      entries.push({ id, subject: `${NAMESPACE}.${name}`, schemaType, file });
    }
  }
  return entries.sort((a, b) => a.id - b.id);
}

export interface WireFiles {
  /** File name in docs/wire → contents. */
  readonly files: Map<string, string>;
  readonly registry: RegistryEntry[];
  /** An event's `type` → the name of the schema it is written with. */
  readonly schemaOfType: Map<string, string>;
}

export function wireFilesOf(schemas: JsonSchema[], dir = WIRE_DIR): WireFiles {
  const files = new Map<string, string>();
  const types = schemas.flatMap(typesOf);
  for (const { name, schema } of types) {
    files.set(`${name}.avsc`, `${JSON.stringify(avroSchemaOf(name, schema), null, 2)}\n`);
    const previousPath = join(dir, `${name}.proto`);
    files.set(
      `${name}.proto`,
      protoOf(name, schema, existsSync(previousPath) ? readFileSync(previousPath, 'utf8') : undefined),
    );
  }
  const registryPath = join(dir, 'registry.json');
  const previous = existsSync(registryPath)
    ? (JSON.parse(readFileSync(registryPath, 'utf8')) as { schemas: RegistryEntry[] }).schemas
    : [];
  const registry = registryOf(
    types.map((t) => t.name),
    previous,
  );
  files.set('registry.json', `${JSON.stringify({ schemas: registry }, null, 2)}\n`);
  const schemaOfType = new Map(types.flatMap((t) => t.typeValues.map((v) => [v, t.name] as const)));
  return { files, registry, schemaOfType };
}

/** The registry entry (id, file) an event of this `type` is written with in this format. */
export function entryFor(wire: WireFiles, type: string, schemaType: WireFormat): RegistryEntry {
  const name = wire.schemaOfType.get(type);
  const entry = wire.registry.find((e) => e.schemaType === schemaType && e.file.startsWith(`${name}.`));
  if (name === undefined || entry === undefined) throw new WireSchemaError(`no ${schemaType} schema for type ${type}`);
  return entry;
}

/** The sample events as Confluent wire-format Avro records, one base64 value per line. */
export function exampleAvroLines(wire: WireFiles, eventsJsonl = readFileSync(EXAMPLE_EVENTS, 'utf8')): string {
  return eventsJsonl
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      const event = JSON.parse(line) as { type: string };
      const entry = entryFor(wire, event.type, 'AVRO');
      const schema = wire.files.get(entry.file) as string;
      return `${confluentRecord(entry.id, 'AVRO', encodeAvro(schema, event)).toString('base64')}\n`;
    })
    .join('');
}

const USAGE = `
Usage: npm run schema:wire [-- SCHEMA.json …]

Writes the event contract in the producers' formats — docs/wire/<Type>.avsc and docs/wire/<Type>.proto, one per
type, and docs/wire/registry.json (the folder as a schema registry for npm start) — from the contract's JSON Schema
(default docs/event.schema.json; or the per-type schema files given), and examples/events.avro.b64 (the sample events
as Confluent wire-format Avro). Protobuf field numbers and registry ids are kept from the files already there. A test
fails while the files are stale.

Exit codes
  0  written          1  a schema has a shape with no wire mapping (named)          2  usage
`;

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  runCommand('schema:wire', async () => {
    const { positionals } = parseCommandLine(
      { usage: USAGE, options: {}, allowPositionals: true },
      process.argv.slice(2),
    );
    const schemas = (positionals.length === 0 ? [SCHEMA_FILE] : positionals).map((p) => {
      try {
        return JSON.parse(readFileSync(p, 'utf8')) as JsonSchema;
      } catch (error) {
        throw new UsageError(`cannot read JSON Schema ${p}: ${(error as Error).message}`);
      }
    });
    const wire = wireFilesOf(schemas);
    mkdirSync(WIRE_DIR, { recursive: true });
    for (const [name, text] of wire.files) writeFileSync(join(WIRE_DIR, name), text);
    writeFileSync(EXAMPLE_AVRO, exampleAvroLines(wire));
    process.stdout.write(
      `wrote ${[...wire.files.keys()].map((f) => `docs/wire/${f}`).join(', ')} and examples/events.avro.b64\n`,
    );
    return 0;
  });
}

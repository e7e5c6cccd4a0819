/**
 * Protobuf payloads read with the writer's .proto (docs/event.md "Avro and Protobuf"). Which message of the file a
 * payload is, each registry's serializers say their own way:
 *
 * - Confluent: the message indexes — a zig-zag varint count, then the path from the file's top-level messages through
 *   nested ones, in declaration order; the common [0] is the single byte 0x00. `@kafkajs/confluent-schema-registry`
 *   writes none: its payload is the message alone. Both readings are tried: the one that decodes with no field the
 *   writer's schema lacks is taken (a misread shifts every tag); when both or neither do, the record has two readings
 *   or none and is refused, with a detail that says the indexes may be missing and how the producer fixes it.
 * - Glue (AWS's serde, MessageIndexFinder): an unsigned varint, the message's position among all the file's messages
 *   — top-level, nested and the entries protoc makes for map fields — sorted by full name.
 *
 * Imports of Google's well-known types (google/protobuf/*.proto, as protobufjs ships them) are read; a well-known
 * type becomes what Protobuf's JSON mapping makes of it (a Timestamp an RFC 3339 instant, a wrapper its value).
 * Strings must be UTF-8 in every syntax (proto2 left it unchecked), as in JSON and Avro. The decoded message becomes a
 * WireValue (wire-json.ts): longs exact, bytes never text, fields under the names the .proto gives them.
 */
import protobuf from 'protobufjs';
import descriptor from 'protobufjs/ext/descriptor.js';
import protojson from 'protobufjs/ext/protojson.js';
import { WireJson, WireMembers, type WireValue } from './wire-json.ts';

export type ProtoRegistry = 'confluent' | 'glue';
export type ProtoRead = { ok: true; value: WireValue; normalised?: readonly string[] } | { ok: false; detail: string };

/** What notifier reads an import as: the well-known types protobufjs ships, by their import path. */
const WELL_KNOWN: Record<string, protobuf.INamespace> = {
  ...Object.fromEntries(
    Object.entries(protobuf.common as unknown as Record<string, protobuf.INamespace>).filter(([file]) =>
      file.startsWith('google/protobuf/'),
    ),
  ),
  'google/protobuf/descriptor.proto': {
    nested: {
      google: { nested: { protobuf: (descriptor as unknown as protobuf.Namespace).toJSON() as protobuf.INamespace } },
    },
  },
};

export interface ProtoSchema {
  /** The file's top-level messages in declaration order: what Confluent's message indexes start from. */
  readonly top: readonly protobuf.Type[];
  /** Every message of the file and each map field's entry, sorted by full name: what Glue's message index counts. */
  readonly glue: ReadonlyArray<protobuf.Type | string>;
}

const keyType = (field: protobuf.Field): string | undefined =>
  field instanceof protobuf.MapField ? field.keyType : undefined;

const messagesOf = (ns: protobuf.NamespaceBase): protobuf.Type[] =>
  ns.nestedArray.filter((t): t is protobuf.Type => t instanceof protobuf.Type);

/** protoc's name for a map field's entry message: `foo_bar` → `FooBarEntry`. */
const mapEntryName = (field: string): string =>
  `${field.replace(/(?:^|_)([a-z]?)/g, (_, c: string) => c.toUpperCase())}Entry`;

/** Glue's order: breadth-first over the file's messages (with map entries, as protoc declares them), by full name. */
function glueOrder(top: readonly protobuf.Type[]): Array<protobuf.Type | string> {
  const all: Array<[string, protobuf.Type | string]> = [];
  for (const queue = [...top]; queue.length > 0; ) {
    const type = queue.shift() as protobuf.Type;
    const name = type.fullName.slice(1);
    all.push([name, type]);
    for (const field of type.fieldsArray)
      if (field.map) all.push([`${name}.${mapEntryName(field.name)}`, `${name}.${mapEntryName(field.name)}`]);
    queue.push(...messagesOf(type));
  }
  // Java's String order (UTF-16 code units), as AWS's serde sorts: not the locale's.
  return all.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, type]) => type);
}

/** Parses a registry's .proto text with the well-known types it imports. Throws when it cannot be read. */
export function parseProtoSchema(definition: string): { root: protobuf.Root; schema: ProtoSchema } {
  const parsed = protobuf.parse(definition, { keepCase: true });
  const { root } = parsed;
  const file = parsed.package === undefined ? root : root.lookup(parsed.package);
  const top = file instanceof protobuf.Namespace ? messagesOf(file) : [];
  if (top.length === 0) throw new Error('the .proto declares no message');
  const glue = glueOrder(top);
  const unknown: string[] = [];
  for (const path of [...(parsed.imports ?? []), ...(parsed.weakImports ?? [])]) {
    const wellKnown = WELL_KNOWN[path];
    if (wellKnown === undefined) unknown.push(path);
    else if (!root.files.includes(path)) {
      root.files.push(path);
      root.addJSON(wellKnown.nested ?? {});
    }
  }
  // proto2 leaves strings unchecked; every format here refuses bytes that are not UTF-8.
  for (const type of glue) {
    if (typeof type === 'string') continue;
    for (const field of type.fieldsArray) {
      if (field.type === 'string' || keyType(field) === 'string') {
        field.setOption('features', { ...(field.options?.features as object), utf8_validation: 'VERIFY' });
      }
    }
  }
  try {
    root.resolveAll();
  } catch (error) {
    const imports = unknown.length === 0 ? '' : `; it imports ${unknown.join(', ')}, which notifier does not have`;
    throw new Error(
      `${(error as Error).message}${imports} (Google's well-known types google/protobuf/*.proto are read)`,
    );
  }
  return { root, schema: { top, glue } };
}

/** A message decoded, and whether every field in it is one the writer's schema has. */
type Decoded =
  | { ok: true; type: protobuf.Type; message: protobuf.Message; clean: boolean }
  | { ok: false; detail: string };

function decodeAs(type: protobuf.Type, bytes: Uint8Array): Decoded {
  try {
    const reader = protobuf.Reader.create(bytes);
    reader.discardUnknown = false;
    const message = type.decode(reader);
    return { ok: true, type, message, clean: !hasUnknowns(type, message) };
  } catch (error) {
    return { ok: false, detail: `does not decode as ${type.name}: ${(error as Error).message}` };
  }
}

/** protobufjs keeps fields the type does not know (or knows with another wire type) in `$unknowns`. */
function hasUnknowns(type: protobuf.Type, message: protobuf.Message): boolean {
  if (((message as { $unknowns?: unknown[] }).$unknowns?.length ?? 0) > 0) return true;
  for (const field of type.fieldsArray) {
    const nested = field.resolvedType;
    const value = (message as unknown as Record<string, unknown>)[field.name];
    if (!(nested instanceof protobuf.Type) || value === undefined || value === null) continue;
    const values = field.map ? Object.values(value) : field.repeated ? (value as unknown[]) : [value];
    if (values.some((v) => hasUnknowns(nested, v as protobuf.Message))) return true;
  }
  return false;
}

/** Reading A: Confluent's message indexes, then the message they name. */
function withIndexes(schema: ProtoSchema, payload: Buffer): Decoded {
  try {
    const reader = protobuf.Reader.create(payload);
    const count = reader.sint32();
    if (count < 0 || count > 16) return { ok: false, detail: `message-index count ${count} is not a path` };
    // [0] is written as the count 0 alone: the file's first message.
    const path = count === 0 ? [0] : Array.from({ length: count }, () => reader.sint32());
    let choices = schema.top;
    let type: protobuf.Type | undefined;
    for (const index of path) {
      type = choices[index];
      if (type === undefined) return { ok: false, detail: `message index ${index} names no message of the schema` };
      choices = messagesOf(type);
    }
    return decodeAs(type as protobuf.Type, payload.subarray(reader.pos));
  } catch (error) {
    return { ok: false, detail: `its message indexes do not decode: ${(error as Error).message}` };
  }
}

const MISSING_INDEXES =
  "its producer seems to write no Confluent message indexes (@kafkajs/confluent-schema-registry writes none): have it write them, as Confluent's serializers do (the byte 0x00 before the file's first message)";

function readConfluent(schema: ProtoSchema, payload: Buffer): ProtoRead {
  const a = withIndexes(schema, payload);
  // A message never starts with 0x00 (field number 0), so only a payload without it can be a message alone.
  if (payload[0] === 0) return a.ok ? { ok: true, value: toWire(a.type, a.message) } : { ok: false, detail: a.detail };
  const [first] = schema.top as [protobuf.Type];
  const b = decodeAs(first, payload);
  const readings = [a, b].filter((r): r is Extract<Decoded, { ok: true }> => r.ok);
  const best = readings.some((r) => r.clean) ? readings.filter((r) => r.clean) : readings;
  if (best.length === 2) {
    return {
      ok: false,
      detail: `the payload reads two ways, as message ${a.ok ? a.type.name : '?'} after message indexes and as ${first.name} without them: ${MISSING_INDEXES}`,
    };
  }
  const [one] = best;
  if (one === undefined) {
    return {
      ok: false,
      detail: `${a.ok ? '' : a.detail}; read as ${first.name} without message indexes it ${b.ok ? 'decodes' : b.detail}: ${MISSING_INDEXES}`,
    };
  }
  return one === a
    ? { ok: true, value: toWire(a.type, a.message) }
    : { ok: true, value: toWire(one.type, one.message), normalised: ['<confluent message indexes>'] };
}

function readGlue(schema: ProtoSchema, payload: Buffer): ProtoRead {
  let index: number;
  const reader = protobuf.Reader.create(payload);
  try {
    index = reader.uint32();
  } catch (error) {
    return { ok: false, detail: `its Glue message index does not decode: ${(error as Error).message}` };
  }
  const type = schema.glue[index];
  if (type === undefined)
    return {
      ok: false,
      detail: `Glue message index ${index} names no message of the schema (it has ${schema.glue.length})`,
    };
  if (typeof type === 'string')
    return { ok: false, detail: `Glue message index ${index} names the map entry ${type}, not a message` };
  const read = decodeAs(type, payload.subarray(reader.pos));
  return read.ok ? { ok: true, value: toWire(read.type, read.message) } : { ok: false, detail: read.detail };
}

/** Decodes a payload as the registry's serializers frame it. Never throws. */
export function readProtobuf(schema: ProtoSchema, registry: ProtoRegistry, payload: Buffer): ProtoRead {
  const read = registry === 'glue' ? readGlue(schema, payload) : readConfluent(schema, payload);
  return read.ok
    ? read
    : { ok: false, detail: `Protobuf payload does not decode with its writer's schema: ${read.detail}` };
}

// ── The decoded message as a WireValue ──

const LONGS = new Set(['int64', 'uint64', 'sint64', 'fixed64', 'sfixed64']);
const WRAPPERS = new Set(
  ['Double', 'Float', 'Int64', 'UInt64', 'Int32', 'UInt32', 'Bool', 'String', 'Bytes'].map(
    (t) => `.google.protobuf.${t}Value`,
  ),
);

/** A message the generator wraps an optional list in (proto3 cannot tell an empty list from an absent one). */
export const isListWrapper = (type: protobuf.Type): boolean =>
  type.name.endsWith('List') &&
  type.fieldsArray.length === 1 &&
  type.fieldsArray[0]?.name === 'items' &&
  type.fieldsArray[0].repeated;

function scalar(field: protobuf.Field, value: unknown): WireValue {
  const nested = field.resolvedType;
  if (nested instanceof protobuf.Type) return toWire(nested, value as protobuf.Message);
  if (nested instanceof protobuf.Enum) return nested.valuesById[value as number] ?? (value as number);
  if (LONGS.has(field.type)) return BigInt(String(value));
  return value as WireValue;
}

function toWire(type: protobuf.Type, message: protobuf.Message): WireValue {
  if (WRAPPERS.has(type.fullName)) {
    const field = type.fields.value as protobuf.Field;
    const value = (message as unknown as Record<string, unknown>).value;
    return value === undefined ? new WireJson(protojson.toJson(type, message)) : scalar(field, value);
  }
  if (type.fullName.startsWith('.google.protobuf.')) {
    try {
      return new WireJson(protojson.toJson(type, message));
    } catch (error) {
      // Out of range (a Timestamp past year 9999 …): no reading, refused by any field that reads it, ignored elsewhere.
      return { unreadable: `${type.fullName.slice(1)}: ${(error as Error).message}` };
    }
  }
  const out: Record<string, WireValue> = {};
  for (const field of type.fieldsArray) {
    if (!Object.hasOwn(message, field.name)) continue;
    const value = (message as unknown as Record<string, unknown>)[field.name];
    const nested = field.resolvedType;
    if (field.map) {
      const entries = Object.entries(value as Record<string, unknown>);
      out[field.name] = new WireMembers(entries.map(([key, v]) => [mapKey(field, key), scalar(field, v)] as const));
    } else if (field.repeated) {
      out[field.name] = (value as unknown[]).map((v) => scalar(field, v));
    } else if (nested instanceof protobuf.Type && isListWrapper(nested)) {
      const items = nested.fieldsArray[0] as protobuf.Field;
      out[field.name] = ((value as { items?: unknown[] }).items ?? []).map((v) => scalar(items, v));
    } else {
      out[field.name] = scalar(field, value);
    }
  }
  return out;
}

/** protobufjs keys a map with 64-bit keys by an 8-character hash of the long: its decimal digits instead. */
const mapKey = (field: protobuf.Field, key: string): string => {
  const type = keyType(field) ?? '';
  return LONGS.has(type)
    ? protobuf.util.LongBits.fromHash(key)
        .toLong(type === 'uint64' || type === 'fixed64')
        .toString()
    : key;
};

// ── The producer's side: encoding (tools, tests, the examples) ──

/** Encodes a contract JSON object as the .proto's first message (the payload, without message indexes). */
export function encodeProtobufMessage(definition: string, event: Record<string, unknown>): Buffer {
  const { schema } = parseProtoSchema(definition);
  const [type] = schema.top as [protobuf.Type];
  const wrap = (t: protobuf.Type, v: Record<string, unknown>): Record<string, unknown> =>
    Object.fromEntries(
      Object.entries(v).map(([name, value]) => {
        const nested = t.fields[name]?.resolve().resolvedType;
        if (!(nested instanceof protobuf.Type)) return [name, value];
        if (isListWrapper(nested)) return [name, { items: value }];
        if (Array.isArray(value)) return [name, value.map((item) => wrap(nested, item as Record<string, unknown>))];
        return [name, wrap(nested, value as Record<string, unknown>)];
      }),
    );
  const object = wrap(type, event);
  const problem = type.verify(object);
  if (problem !== null) throw new Error(`does not fit ${type.name}: ${problem}`);
  return Buffer.from(type.encode(type.fromObject(object)).finish());
}

/**
 * Avro payloads read with the writer's schema (docs/event.md "Avro and Protobuf"), as exactly as the JSON contract
 * reads JSON. avsc decodes, with four of its types replaced through its `typeHook` (avsc's way to swap a type):
 *
 * - a string is read from its bytes with a fatal UTF-8 decoder: avsc's own read turns bad bytes into U+FFFD, so a
 *   customer id `u-4\xff` became `u-4\uFFFD`, someone nobody is. Bytes that are not UTF-8 refuse the record, as they
 *   do in JSON and in Protobuf; a leading U+FEFF is kept, not eaten as a byte-order mark;
 * - a long keeps all 64 bits (a bigint), where avsc refuses the whole record ("potential precision loss") for a
 *   field notifier may not even read, such as a nanosecond timestamp a producer added;
 * - a map keeps its members as written (avsc keeps the last of a repeated key, and reads keys loosely), so the
 *   contract refuses a repeated key as it refuses one in a JSON object;
 * - an array or a map whose block claims more items than bytes are left is refused before it is read (avsc would
 *   allocate and loop for every item a 10-byte record claims: a record that stalls its partition);
 * - a union is the value of the branch its bytes name (their one reading): avsc wraps the value of a union whose
 *   branches JavaScript cannot tell apart — two records, a string and an enum — as `{"<branch name>": value}`, so a
 *   topic schema that is a union of the types' records (several types on one topic) lost every record's eventId.
 *
 * The replaced types override avsc's `_read(tap)`, the one method a type decodes with; they never encode.
 */
import avro from 'avsc';
import { WireMembers, type WireValue } from './wire-json.ts';

/** avsc's read cursor (utils.js Tap): the few members the readers below use. */
interface Tap {
  buf: Buffer;
  pos: number;
  readLong(): number;
  skipLong(): void;
  readBytes(): Buffer | undefined;
}
interface Readable {
  _read(tap: Tap): WireValue;
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

function readText(tap: Tap): string {
  const bytes = tap.readBytes();
  // A payload cut short: avsc notices the cursor past the end and refuses the record itself.
  if (bytes === undefined) return '';
  try {
    return strictUtf8.decode(bytes);
  } catch {
    throw new Error('an Avro string is not valid UTF-8');
  }
}

/** The item count of the next block (0 ends the list), bounded by the bytes left: each item takes at least one. */
function blockCount(tap: Tap): number {
  let n = tap.readLong();
  if (n < 0) {
    n = -n;
    tap.skipLong(); // the block's size in bytes, not needed to read it
  }
  if (n > tap.buf.length - tap.pos) throw new Error(`an Avro block claims ${n} items, more than the bytes left`);
  return n;
}

class StrictStringType extends avro.types.StringType {
  _read(tap: Tap): string {
    return readText(tap);
  }
}

class MembersMapType extends avro.types.MapType {
  _read(tap: Tap): WireMembers {
    const values = this.valuesType as Readable;
    const members: Array<readonly [string, WireValue]> = [];
    for (let n = blockCount(tap); n > 0; n = blockCount(tap)) {
      for (let i = 0; i < n; i++) members.push([readText(tap), values._read(tap)]);
    }
    return new WireMembers(members);
  }
}

class BoundedArrayType extends avro.types.ArrayType {
  _read(tap: Tap): WireValue[] {
    const items = this.itemsType as unknown as Readable;
    const out: WireValue[] = [];
    for (let n = blockCount(tap); n > 0; n = blockCount(tap)) {
      for (let i = 0; i < n; i++) out.push(items._read(tap));
    }
    return out;
  }
}

class BranchValueUnionType extends avro.types.WrappedUnionType {
  _read(tap: Tap): WireValue {
    const index = tap.readLong();
    const branch = (this as unknown as { types: readonly Readable[] }).types[index];
    if (branch === undefined) throw new Error(`an Avro union names branch ${index}, which its schema does not have`);
    return branch._read(tap);
  }
}

const LONG = avro.types.LongType.__with({
  fromBuffer: (buf: Buffer) => buf.readBigInt64LE(),
  toBuffer: (n: bigint) => {
    const buf = Buffer.alloc(8);
    buf.writeBigInt64LE(n);
    return buf;
  },
  fromJSON: (n: number | string) => BigInt(n),
  toJSON: (n: bigint) => Number(n),
  isValid: (n: unknown) => typeof n === 'bigint',
  compare: (a: bigint, b: bigint) => (a === b ? 0 : a < b ? -1 : 1),
});

const typeName = (schema: unknown): unknown =>
  typeof schema === 'string' ? schema : (schema as { type?: unknown } | null)?.type;

/** Compiles a writer's schema for decoding. Throws when the schema is not Avro. */
export function avroReader(schema: unknown): avro.Type {
  const typeHook = (s: avro.Schema, opts: avro.ForSchemaOptions): avro.Type | undefined => {
    if (Array.isArray(s)) return new BranchValueUnionType(s, opts);
    switch (typeName(s)) {
      case 'long':
        return LONG;
      case 'string':
        return new StrictStringType();
      case 'map':
        return new MembersMapType(s, opts);
      case 'array':
        return new BoundedArrayType(s, opts);
      default:
        return undefined;
    }
  };
  return avro.Type.forSchema(schema as avro.Schema, { typeHook });
}

/** The payload's value. Throws (avsc's message, or ours) when it does not decode with the writer's schema. */
export function readAvro(type: avro.Type, payload: Buffer): WireValue {
  // fromBuffer refuses a payload that ends early or has bytes after the record ("trailing data").
  return type.fromBuffer(payload) as WireValue;
}

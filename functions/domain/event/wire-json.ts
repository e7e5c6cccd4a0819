/**
 * A decoded Avro or Protobuf value written as the JSON text a JSON producer would have sent for it, so the one decoder
 * (decode.ts decodeRecordValue) judges it exactly as it judges JSON (docs/event.md "Avro and Protobuf"):
 *
 * - an integer keeps every digit (a 64-bit long as a bigint): the contract reads a field it reads exactly or refuses
 *   it, and a field it does not read is dropped whatever its value — never "potential precision loss" for the event;
 * - a map keeps every member as written, a key twice included, so a map that names a key twice is refused as a JSON
 *   object that does;
 * - a NaN or an infinity is the string Protobuf's JSON mapping gives it ("NaN", "Infinity", "-Infinity"), never
 *   `null`, which the contract would read as "absent";
 * - bytes are an object `{"bytes": "<base64>"}`: no text field reads them (they have no one reading as text).
 *
 * Pure and total for the values the codecs produce; iterative, so a deeply nested value cannot exhaust the stack.
 */

/** A map as written on the wire: its members in order, a repeated key kept (JSON refuses it as a duplicate). */
export class WireMembers {
  constructor(readonly members: ReadonlyArray<readonly [string, WireValue]>) {}
}

/** A value already in JSON's own terms (a Protobuf well-known type in its JSON mapping). */
export class WireJson {
  constructor(readonly value: unknown) {}
}

export type WireValue =
  | null
  | undefined
  | boolean
  | number
  | bigint
  | string
  | Uint8Array
  | WireMembers
  | WireJson
  | readonly WireValue[]
  | { readonly [key: string]: WireValue };

type Frame = {
  readonly close: string;
  readonly items: ReadonlyArray<readonly [string | undefined, WireValue]>;
  next: number;
};

/** The JSON text of a decoded value. An `undefined` member is left out (an absent field), as JSON.stringify does. */
export function wireJsonText(value: WireValue): string {
  let out = '';
  const stack: Frame[] = [];
  const write = (v: WireValue): void => {
    if (v === null || v === undefined) out += 'null';
    else if (typeof v === 'bigint') out += v.toString();
    else if (typeof v === 'number') out += Number.isFinite(v) ? JSON.stringify(v) : JSON.stringify(String(v));
    else if (typeof v === 'string' || typeof v === 'boolean') out += JSON.stringify(v);
    else if (v instanceof Uint8Array) out += `{"bytes":${JSON.stringify(Buffer.from(v).toString('base64'))}}`;
    else if (v instanceof WireJson) out += JSON.stringify(v.value) ?? 'null';
    else if (v instanceof WireMembers) open('{', '}', v.members);
    else if (Array.isArray(v))
      open(
        '[',
        ']',
        (v as readonly WireValue[]).map((item) => [undefined, item] as const),
      );
    else
      open(
        '{',
        '}',
        Object.entries(v as Record<string, WireValue>).filter(([, item]) => item !== undefined),
      );
  };
  const open = (start: string, close: string, items: Frame['items']): void => {
    out += start;
    stack.push({ close, items, next: 0 });
  };
  write(value);
  for (let frame = stack.at(-1); frame !== undefined; frame = stack.at(-1)) {
    const item = frame.items[frame.next];
    if (item === undefined) {
      out += frame.close;
      stack.pop();
      continue;
    }
    if (frame.next > 0) out += ',';
    frame.next++;
    if (item[0] !== undefined) out += `${JSON.stringify(item[0])}:`;
    write(item[1]);
  }
  return out;
}

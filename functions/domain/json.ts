/**
 * JSON text → value, refusing an object that names one key twice, at any depth.
 *
 * RFC 8259 §4: the names within an object SHOULD be unique, and when they are not "the behavior of software that
 * receives such an object is unpredictable". JSON.parse keeps the last value, other parsers the first or fail: a
 * record with `"amount":"1", …, "amount":"1000"` has two readings, so it is bad input (INVALID_JSON naming the key).
 *
 * Cheap on the path every record takes: after JSON.parse (which checked the syntax), one pass over the text counts the
 * name separators (a `:` outside a string precedes exactly one member in valid JSON) and one walk over the parsed value
 * counts the members it kept. Equal counts mean no duplicate. Only when they differ is the text tokenised again to
 * name the key. Pure, iterative (no recursion: a deeply nested record cannot exhaust the stack), never throws.
 */

export type JsonRead = { ok: true; value: unknown } | { ok: false; detail: string };

export function parseJson(text: string): JsonRead {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    // A RangeError here means nesting deep enough to exhaust the stack: still just malformed input.
    return { ok: false, detail: error instanceof RangeError ? 'JSON nested too deeply' : 'value is not valid JSON' };
  }
  if (typeof value === 'object' && value !== null && membersKept(value) !== nameSeparators(text)) {
    return { ok: false, detail: duplicateDetail(text) };
  }
  return { ok: true, value };
}

/** Members of every object in the value (own keys: JSON.parse defines "__proto__" as an own key too). */
function membersKept(root: object): number {
  let count = 0;
  const pending: object[] = [root];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    if (Array.isArray(next)) {
      for (const v of next) if (typeof v === 'object' && v !== null) pending.push(v);
      continue;
    }
    const keys = Object.keys(next);
    count += keys.length;
    for (const key of keys) {
      const v = (next as Record<string, unknown>)[key];
      if (typeof v === 'object' && v !== null) pending.push(v);
    }
  }
  return count;
}

/** The `:` outside strings of valid JSON text: one per member written. Each indexOf moves forward: linear. */
function nameSeparators(text: string): number {
  let count = 0;
  let colon = text.indexOf(':');
  let quote = text.indexOf('"');
  while (colon !== -1) {
    if (quote === -1 || colon < quote) {
      count++;
      colon = text.indexOf(':', colon + 1);
      continue;
    }
    const close = closingQuote(text, quote);
    if (colon < close) colon = text.indexOf(':', close + 1);
    quote = text.indexOf('"', close + 1);
  }
  return count;
}

/** The index of the quote that closes the string opened at `open` (one preceded by an even run of backslashes). */
function closingQuote(text: string, open: number): number {
  for (let from = open + 1; ; ) {
    const q = text.indexOf('"', from);
    if (q === -1) return text.length;
    let backslashes = 0;
    while (text.charCodeAt(q - 1 - backslashes) === 92) backslashes++;
    if (backslashes % 2 === 0) return q;
    from = q + 1;
  }
}

/** A name an operator may read: an identifier-like key. Anything else is described, never shown (it could be data). */
const SHOWN_NAME = /^[A-Za-z_$][A-Za-z0-9_$-]{0,63}$/;
const shown = (name: string) => (SHOWN_NAME.test(name) ? name : `<a key of ${name.length} characters>`);

interface Frame {
  readonly names: Set<string> | undefined;
  readonly path: string;
  expectName: boolean;
  last: string;
}

/** Names the first repeated key and where it is, e.g. `duplicate key "amount" (at data.amount)`. */
function duplicateDetail(text: string): string {
  const frames: Frame[] = [];
  const pathOf = (parent: Frame | undefined) =>
    parent === undefined ? '' : parent.names === undefined ? `${parent.path}[]` : joinPath(parent.path, parent.last);
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    const top = frames[frames.length - 1];
    if (c === '{' || c === '[') {
      frames.push({ names: c === '{' ? new Set() : undefined, path: pathOf(top), expectName: c === '{', last: '' });
    } else if (c === '}' || c === ']') {
      frames.pop();
    } else if (c === ',') {
      if (top !== undefined) top.expectName = top.names !== undefined;
    } else if (c === '"') {
      const close = closingQuote(text, i);
      if (top?.names !== undefined && top.expectName) {
        const name = JSON.parse(text.slice(i, close + 1)) as string;
        if (top.names.has(name)) return `duplicate key "${shown(name)}" (at ${joinPath(top.path, shown(name))})`;
        top.names.add(name);
        top.last = shown(name);
        top.expectName = false;
      }
      i = close;
    }
  }
  return 'duplicate key (at <root>)';
}

const joinPath = (path: string, name: string) => (path === '' ? name : `${path}.${name}`);

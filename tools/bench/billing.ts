/**
 * DynamoDB capacity as DynamoDB bills it, computed per request from what was sent and what came back — the same rules
 * for notifier and the baseline, on DynamoDB Local or the latency-injected emulator.
 *
 * The documented rules (Amazon DynamoDB Developer Guide, "DynamoDB read and write operations", "Item sizes", and
 * "Amazon DynamoDB Transactions: How it works" → "Capacity management for transactions"):
 * - a write takes 1 write request unit per KB of the item (rounded up, at least 1); a transactional write takes 2 (one
 *   to prepare, one to commit);
 * - a strongly consistent read takes 1 read request unit per 4 KB (rounded up); eventually consistent half that; an
 *   item that does not exist still costs 1 (strongly consistent) or 0.5;
 * - BatchGetItem bills every item as its own GetItem;
 * - a write whose condition fails still consumes write units for the item's size (at least 1);
 * - a write that adds, changes or removes an item's key in a global secondary index is billed on the index too: 1 unit
 *   per KB of the projected item for a put or a delete, 2 when the index key changes (delete + put).
 * Where the documentation is silent, assumed (the README says so):
 * - a cancelled TransactWriteItems costs what it would have cost committed (2 units per KB per item): an upper bound,
 *   charged to notifier's old duplicate path, never to its baseline;
 * - an UpdateItem is billed on the size it returns or, when it returns nothing, 1 unit (every item updated in these
 *   measurements is under 1 KB);
 * - index writes use the sweep index's projection, under 1 KB: 1 unit each.
 */
import { unmarshall } from '@aws-sdk/util-dynamodb';

export interface Units {
  rru: number;
  wru: number;
  /** Of wru: the part billed on the sweep index. */
  indexWru: number;
}
export const noUnits = (): Units => ({ rru: 0, wru: 0, indexWru: 0 });
export const addUnits = (a: Units, b: Units): Units => ({
  rru: a.rru + b.rru,
  wru: a.wru + b.wru,
  indexWru: a.indexWru + b.indexWru,
});

const AV_KEYS = new Set(['S', 'N', 'B', 'SS', 'NS', 'BS', 'M', 'L', 'NULL', 'BOOL']);
/** A wire-format item ({ attr: { S: "…" } }), as the raw client sends it, rather than a lib-dynamodb native one. */
function isWire(item: Record<string, unknown>): boolean {
  const values = Object.values(item);
  return (
    values.length > 0 &&
    values.every(
      (v) => typeof v === 'object' && v !== null && Object.keys(v).length === 1 && AV_KEYS.has(Object.keys(v)[0] ?? ''),
    )
  );
}
export const nativeItem = (item: Record<string, unknown>): Record<string, unknown> =>
  isWire(item) ? unmarshall(item as Parameters<typeof unmarshall>[0]) : item;

const utf8 = (s: string) => Buffer.byteLength(s, 'utf8');
/** DynamoDB's size of a number: 1 byte per two significant digits, plus 1. */
function numberBytes(n: number | bigint): number {
  const digits = String(n)
    .replace(/^-/, '')
    .replace(/e.*$/i, '')
    .replace('.', '')
    .replace(/^0+/, '')
    .replace(/0+$/, '');
  return Math.ceil(Math.max(1, digits.length) / 2) + 1;
}
function valueBytes(v: unknown): number {
  if (typeof v === 'string') return utf8(v);
  if (typeof v === 'number' || typeof v === 'bigint') return numberBytes(v);
  if (typeof v === 'boolean' || v === null || v === undefined) return 1;
  if (v instanceof Uint8Array) return v.byteLength;
  if (v instanceof Set) return [...v].reduce((n: number, x) => n + valueBytes(x), 0);
  if (Array.isArray(v)) return 3 + v.reduce((n: number, x) => n + 1 + valueBytes(x), 0);
  if (typeof v === 'object') {
    return 3 + Object.entries(v as object).reduce((n, [k, x]) => n + 1 + utf8(k) + valueBytes(x), 0);
  }
  return 0;
}
/** An item's size as DynamoDB counts it: attribute names plus values. */
export function itemBytes(item: Record<string, unknown>): number {
  return Object.entries(nativeItem(item)).reduce((n, [k, v]) => n + utf8(k) + valueBytes(v), 0);
}
export const writeUnits = (bytes: number) => Math.max(1, Math.ceil(bytes / 1024));
export const readUnits = (bytes: number, consistent: boolean) =>
  Math.max(1, Math.ceil(bytes / 4096)) * (consistent ? 1 : 0.5);

/** Index writes of putting a new item: 1 when it carries the sweep index's key. */
const indexPut = (item: Record<string, unknown>) => ('sweepKey' in nativeItem(item) ? 1 : 0);

type Input = Record<string, unknown>;
type Output = Record<string, unknown> | undefined;

/**
 * The units one request consumed. `output` is what came back (undefined when it failed), `error` the failure's name.
 * `inboxBytes`: the size of an inbox item, billed for a BatchGetItem hit (the look-up projects two attributes, but
 * DynamoDB bills the whole item).
 */
export function requestUnits(
  command: string,
  input: Input,
  output: Output,
  error: string | undefined,
  sizes: { readonly inboxBytes: number } = { inboxBytes: 1024 },
): Units {
  const u = noUnits();
  switch (command) {
    case 'TransactWriteItemsCommand': {
      const items = (input.TransactItems as { Put?: { Item: Input } }[]) ?? [];
      for (const t of items) {
        if (t.Put === undefined) continue;
        u.wru += 2 * writeUnits(itemBytes(t.Put.Item));
        if (error === undefined) u.indexWru += indexPut(t.Put.Item);
      }
      break;
    }
    case 'PutItemCommand': {
      const item = input.Item as Input;
      u.wru += writeUnits(itemBytes(item));
      if (error === undefined) u.indexWru += indexPut(item);
      break;
    }
    case 'UpdateItemCommand': {
      const attrs = output?.Attributes as Input | undefined;
      u.wru += attrs === undefined ? 1 : writeUnits(itemBytes(attrs));
      break;
    }
    case 'DeleteItemCommand':
      u.wru += 1;
      break;
    case 'GetItemCommand': {
      const item = output?.Item as Input | undefined;
      u.rru += readUnits(item === undefined ? 0 : itemBytes(item), input.ConsistentRead === true);
      break;
    }
    case 'BatchGetItemCommand': {
      if (output === undefined) break;
      const requested = input.RequestItems as Record<string, { Keys: unknown[]; ConsistentRead?: boolean }>;
      const found = output.Responses as Record<string, unknown[]> | undefined;
      const unprocessed = output.UnprocessedKeys as Record<string, { Keys: unknown[] }> | undefined;
      for (const [table, r] of Object.entries(requested)) {
        const hits = found?.[table]?.length ?? 0;
        const read = r.Keys.length - (unprocessed?.[table]?.Keys.length ?? 0);
        const consistent = r.ConsistentRead === true;
        u.rru += hits * readUnits(sizes.inboxBytes, consistent) + (read - hits) * readUnits(0, consistent);
      }
      break;
    }
  }
  u.wru += u.indexWru;
  return u;
}

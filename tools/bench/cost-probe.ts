/**
 * Loaded before `npm start`'s own modules (node --import) by the complete cost run (tools/bench/full-cost.ts): it
 * counts, in the run's process, every request the real handlers make — every DynamoDB request with the units DynamoDB
 * bills for it, on the table and on each of its indexes, and every evidence request with its bytes — and writes them
 * to the file COST_PROBE_OUT names when the process exits. Nothing the handlers see changes.
 *
 * DynamoDB units are computed from each item as it was before and after the request, read straight from DynamoDB Local
 * (a consistent GetItem outside the count) — not from what the request says — so an index write is billed where the
 * item really entered, left or changed in that index (billing.ts has the rules and their sources):
 * - a write: 1 WRU per KB of the larger of the item before and after (2 in a transaction); a refused write: the item
 *   as it was (at least 1);
 * - an index: a put when the item enters it, a delete when it leaves, both when its index key changes, a put when a
 *   projected attribute changes; 1 WRU per KB of the projected item;
 * - reads: per 4 KB of the items read (a Query's items summed before rounding), half when eventually consistent.
 * Requests of the probe's own reads are not counted. Items are read just before and just after the request, so a
 * concurrent writer in between can shift a unit from one request to another; the sum is what matters here.
 */
import { writeFileSync } from 'node:fs';
import { DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { Client } from '@smithy/core/client';
import { localEvidenceIndexTableName } from '../../functions/contracts/evidence-index-schema.ts';
import { TABLE_SCHEMA } from '../../functions/contracts/table-schema.ts';
import { indexItemKind } from '../../functions/domain/keys.ts';
import { FileEvidenceStore } from '../../functions/stores/evidence-store.ts';
import { itemBytes, nativeItem, readUnits, writeUnits } from './billing.ts';
import { callerOf } from './caller.ts';
import { type EmfTally, tallyStdout } from './emf-tally.ts';

type Item = Record<string, unknown>;
/** What the probe writes: per request kind, its count and units; per index, its write units; evidence requests. */
export interface ProbeCounts {
  dynamodb: Record<string, { requests: number; rru: number; wru: number }>;
  indexWru: Record<string, number>;
  /** The table's write units by the kind of item written (its `kind` after the write, or before it for a delete). */
  wruByKind: Record<string, number>;
  evidence: { puts: number; putBytes: number; written: number; gets: number; lists: number };
  /**
   * Every item the handlers left in the table, by kind: how many, their bytes as DynamoDB stores them (100 B of
   * overhead each), their indexes' bytes, and how long each is kept (its TTL from when it was first written; none:
   * kept until erased, counted apart).
   */
  stored: Record<string, { items: number; bytes: number; indexBytes: number; keptSeconds: number; withoutTtl: number }>;
  /**
   * The same units per operation: the request kind, the kind of item it wrote (or read), and the handler code that
   * sent it (its first frames under functions/, outermost last) — which write, which index write, which read a
   * notification pays for on its way.
   */
  byOperation: Record<string, OperationCounts>;
  /** The metric (EMF) documents, by the function that wrote them (emf-tally.ts); one plain document as written. */
  emf: Record<string, EmfTally>;
  emfSample?: string;
}
/** One operation's requests and units: the table's writes and reads, and each index's writes. */
export interface OperationCounts {
  requests: number;
  wru: number;
  rru: number;
  indexWru: Record<string, number>;
}
const counts: ProbeCounts = {
  byOperation: {},
  dynamodb: {},
  indexWru: {},
  wruByKind: {},
  evidence: { puts: 0, putBytes: 0, written: 0, gets: 0, lists: 0 },
  stored: {},
  emf: {},
};
const emfSamples: string[] = [];
tallyStdout(counts.emf, emfSamples);
/** The last state of every item written, with when it was first written (seconds). */
const finals = new Map<string, { table: string; item: Item | undefined; firstWritten: number }>();

/** An item's kind: its `kind`, or, in the evidence index's table (whose items say none), what its key makes it. */
const kindOf = (table: string, item: Item | undefined) =>
  String(
    item?.kind ??
      (table.endsWith(localEvidenceIndexTableName('')) ? indexItemKind(String(item?.pk)) : undefined) ??
      'without a kind',
  );

/** The table's indexes: their key attributes and what each projects (TABLE_SCHEMA: INCLUDE or KEYS_ONLY). */
const S = TABLE_SCHEMA;
const INDEXES = [
  {
    name: S.sweepIndex.indexName,
    keys: [S.sweepIndex.partitionKey, S.sweepIndex.sortKey],
    include: [...S.sweepIndex.nonKeyAttributes],
  },
  { name: S.messageIndex.indexName, keys: [S.messageIndex.partitionKey], include: [] as string[] },
  { name: S.userIndex.indexName, keys: [S.userIndex.partitionKey, S.userIndex.sortKey], include: [] as string[] },
];
const TABLE_KEYS = [S.partitionKey, S.sortKey];

function projected(item: Item, index: (typeof INDEXES)[number]): Item | undefined {
  if (!index.keys.every((k) => item[k] !== undefined)) return undefined;
  const names = [...TABLE_KEYS, ...index.keys, ...index.include];
  return Object.fromEntries(names.filter((n) => item[n] !== undefined).map((n) => [n, item[n]]));
}

/** Index write units of an item going from `before` to `after` (either undefined: absent). */
export function indexUnits(before: Item | undefined, after: Item | undefined): Record<string, number> {
  const units: Record<string, number> = {};
  for (const index of INDEXES) {
    const b = before === undefined ? undefined : projected(before, index);
    const a = after === undefined ? undefined : projected(after, index);
    const same = (x: Item, y: Item) => JSON.stringify(x) === JSON.stringify(y);
    const keyOf = (x: Item) => JSON.stringify(index.keys.map((k) => x[k]));
    let u = 0;
    if (b === undefined && a !== undefined) u = writeUnits(itemBytes(a));
    else if (b !== undefined && a === undefined) u = writeUnits(itemBytes(b));
    else if (b !== undefined && a !== undefined && keyOf(b) !== keyOf(a))
      u = writeUnits(itemBytes(b)) + writeUnits(itemBytes(a));
    else if (b !== undefined && a !== undefined && !same(b, a)) u = writeUnits(itemBytes(a));
    if (u > 0) units[index.name] = u;
  }
  return units;
}

/** A write's table units from the item before and after: the larger, per KB; unchanged (refused): as it was. */
export function tableWriteUnits(before: Item | undefined, after: Item | undefined, transactional: boolean): number {
  const size = Math.max(before === undefined ? 0 : itemBytes(before), after === undefined ? 0 : itemBytes(after));
  return writeUnits(size) * (transactional ? 2 : 1);
}

let raw: DynamoDBClient | undefined;
const probeClients = new WeakSet<object>();
function rawClient(): DynamoDBClient {
  if (raw === undefined) {
    raw = new DynamoDBClient({ endpoint: process.env.AWS_ENDPOINT_URL_DYNAMODB, region: process.env.AWS_REGION });
    probeClients.add(raw);
  }
  return raw;
}
const { marshall } = await import('@aws-sdk/util-dynamodb');
async function current(table: string, key: Item): Promise<Item | undefined> {
  const wireKey = nativeItem(key) === key ? marshall(key) : key;
  const r = await rawClient().send(
    new GetItemCommand({ TableName: table, Key: wireKey as never, ConsistentRead: true }),
  );
  return r.Item === undefined ? undefined : nativeItem(r.Item as Item);
}
const keyOf = (item: Item): Item => {
  const native = nativeItem(item);
  const wire = native !== item;
  return Object.fromEntries(
    TABLE_KEYS.filter((k) => item[k] !== undefined).map((k) => [k, wire ? item[k] : native[k]]),
  );
};

/** The items a write touches: its table and key, and whether it is part of a transaction. */
function writesOf(op: string, input: Item): { table: string; key: Item }[] {
  const one = (t: Item) => ({ table: String(t.TableName), key: (t.Key as Item) ?? keyOf(t.Item as Item) });
  switch (op) {
    case 'Put':
    case 'Update':
    case 'Delete':
      return [one(input)];
    case 'TransactWrite':
      return (input.TransactItems as Item[]).flatMap((t) => Object.values(t).map((x) => one(x as Item)));
    case 'BatchWrite':
      return Object.entries(input.RequestItems as Record<string, Item[]>).flatMap(([table, rs]) =>
        rs.map((r) => ({
          table,
          key: r.PutRequest ? keyOf((r.PutRequest as Item).Item as Item) : ((r.DeleteRequest as Item).Key as Item),
        })),
      );
    default:
      return [];
  }
}

function readUnitsOf(op: string, input: Item, output: Item | undefined): number {
  if (output === undefined) return 0;
  const consistent = input.ConsistentRead === true;
  const sized = (items: unknown) => ((items as Item[] | undefined) ?? []).map((i) => itemBytes(i));
  switch (op) {
    case 'Get':
      return readUnits(output.Item === undefined ? 0 : itemBytes(output.Item as Item), consistent);
    case 'Query':
    case 'Scan': {
      const sizes = sized(output.Items);
      const total = sizes.reduce((a, b) => a + b, 0);
      // Billed on what was read before the filter: the items dropped counted at the returned ones' average size.
      const scanned = Number(output.ScannedCount ?? sizes.length);
      const read = sizes.length === 0 ? scanned * 100 : (total * scanned) / sizes.length;
      return readUnits(read, consistent && input.IndexName === undefined);
    }
    case 'BatchGet': {
      let u = 0;
      for (const [table, r] of Object.entries(input.RequestItems as Record<string, Item>)) {
        const found = sized((output.Responses as Record<string, unknown> | undefined)?.[table]);
        const missing = (r.Keys as unknown[]).length - found.length;
        u += found.reduce((a, s) => a + readUnits(s, r.ConsistentRead === true), 0);
        u += missing * readUnits(0, r.ConsistentRead === true);
      }
      return u;
    }
    case 'TransactGet':
      return sized((output.Responses as Item[] | undefined)?.map((r) => r.Item).filter(Boolean)).reduce(
        (a, s) => a + 2 * readUnits(s, true),
        0,
      );
    default:
      return 0;
  }
}

/**
 * What only the local run's harness asks (its table, its progress and summary scans): never a handler's request —
 * the functions never scan (test/unit/architecture.test.ts) — so not counted.
 */
const HARNESS = new Set([
  'Scan',
  'ListTables',
  'CreateTable',
  'DescribeTable',
  'UpdateTimeToLive',
  'DescribeTimeToLive',
]);

// biome-ignore lint/suspicious/noExplicitAny: the SDK's send is overloaded; the probe passes its arguments through.
const send = Client.prototype.send as (this: unknown, ...args: any[]) => Promise<unknown>;
Client.prototype.send = async function probed(this: object, ...args: unknown[]) {
  const command = args[0] as { constructor: { name: string }; input: Item };
  const config = (this as unknown as { config?: { serviceId?: string } }).config;
  const op = command.constructor.name.replace(/Command$/, '').replace(/Items?$/, '');
  if (probeClients.has(this) || config?.serviceId !== 'DynamoDB' || HARNESS.has(op)) return send.apply(this, args);
  const touched = writesOf(op, command.input);
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 40;
  const caller = callerOf(new Error().stack);
  Error.stackTraceLimit = limit;
  const before = await Promise.all(touched.map((t) => current(t.table, t.key)));
  let output: Item | undefined;
  try {
    output = (await send.apply(this, args)) as Item | undefined;
    return output;
  } finally {
    const after = await Promise.all(touched.map((t) => current(t.table, t.key)));
    counts.dynamodb[op] ??= { requests: 0, rru: 0, wru: 0 };
    const c = counts.dynamodb[op];
    c.requests++;
    const rru = readUnitsOf(op, command.input, output);
    c.rru += rru;
    const kinds = new Set<string>();
    const units: OperationCounts = { requests: 1, wru: 0, rru, indexWru: {} };
    touched.forEach((t, i) => {
      const id = `${t.table} ${JSON.stringify(nativeItem(t.key))}`;
      finals.set(id, {
        table: t.table,
        item: after[i],
        firstWritten: finals.get(id)?.firstWritten ?? Date.now() / 1000,
      });
      const wru = tableWriteUnits(before[i], after[i], op === 'TransactWrite');
      c.wru += wru;
      const kind = kindOf(t.table, after[i] ?? before[i]);
      counts.wruByKind[kind] = (counts.wruByKind[kind] ?? 0) + wru;
      kinds.add(kind);
      units.wru += wru;
      for (const [name, u] of Object.entries(indexUnits(before[i], after[i]))) {
        counts.indexWru[name] = (counts.indexWru[name] ?? 0) + u;
        units.indexWru[name] = (units.indexWru[name] ?? 0) + u;
      }
    });
    const read = readKindOf(command.input, output);
    const name = `${op} ${[...kinds].sort().join('+') || read}: ${caller}`;
    addOperation(name, units);
  }
} as typeof Client.prototype.send;

/** A read's item kind: its key's prefix (EVENT#, PREFS#…), or the index it queried. */
function readKindOf(input: Item, output: Item | undefined): string {
  if (typeof input.IndexName === 'string') return `index ${input.IndexName}`;
  const item = (output?.Item ?? (output?.Items as Item[] | undefined)?.[0]) as Item | undefined;
  if (item !== undefined && typeof nativeItem(item).kind === 'string') return String(nativeItem(item).kind);
  const key = (input.Key as Item | undefined) ?? (input.ExpressionAttributeValues as Item | undefined);
  const pk = key === undefined ? undefined : Object.values(nativeItem(key)).find((v) => typeof v === 'string');
  // A label only (the key's leading capitals: EVENT, PREFS …), never a key parsed: keys.ts owns those.
  const prefix = typeof pk === 'string' ? /^[A-Z_]+/.exec(pk)?.[0] : undefined;
  return prefix === undefined ? 'without a kind' : `${prefix}#`;
}

function addOperation(name: string, u: OperationCounts) {
  counts.byOperation[name] ??= { requests: 0, wru: 0, rru: 0, indexWru: {} };
  const o = counts.byOperation[name];
  o.requests += u.requests;
  o.wru += u.wru;
  o.rru += u.rru;
  for (const [index, w] of Object.entries(u.indexWru)) o.indexWru[index] = (o.indexWru[index] ?? 0) + w;
}

// The evidence store of a local run stands in for the bucket: each put is a PUT, each read a GET, each listing a LIST.
const store = FileEvidenceStore.prototype;
const put = store.put;
store.put = async function (this: FileEvidenceStore, key, body, retainUntil) {
  counts.evidence.puts++;
  counts.evidence.putBytes += body.byteLength;
  const r = await put.call(this, key, body, retainUntil);
  if (r === 'written') counts.evidence.written++;
  return r;
};
const get = store.get;
store.get = async function (this: FileEvidenceStore, key, versionId) {
  counts.evidence.gets++;
  return get.call(this, key, versionId);
};
const list = store.list;
store.list = async function (this: FileEvidenceStore, prefix) {
  counts.evidence.lists++;
  return list.call(this, prefix);
};

/** What stays in the table: each item's last state, by its `kind`. */
function storedItems(): ProbeCounts['stored'] {
  const stored: ProbeCounts['stored'] = {};
  for (const { table, item, firstWritten } of finals.values()) {
    if (item === undefined) continue;
    const kind = kindOf(table, item);
    stored[kind] ??= { items: 0, bytes: 0, indexBytes: 0, keptSeconds: 0, withoutTtl: 0 };
    const s = stored[kind];
    s.items++;
    // DynamoDB bills 100 bytes of overhead per item, in the table and in each index it is in.
    s.bytes += itemBytes(item) + 100;
    for (const index of INDEXES) {
      const p = projected(item, index);
      if (p !== undefined) s.indexBytes += itemBytes(p) + 100;
    }
    const ttl = Number(item[S.timeToLiveAttribute]);
    if (Number.isFinite(ttl) && ttl > 0) s.keptSeconds += ttl - firstWritten;
    else s.withoutTtl++;
  }
  return stored;
}

const out = process.env.COST_PROBE_OUT;
if (out !== undefined)
  process.on('exit', () =>
    writeFileSync(out, JSON.stringify({ ...counts, stored: storedItems(), emfSample: emfSamples[0] })),
  );

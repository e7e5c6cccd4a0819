/**
 * The evidence index (docs/evidence-and-privacy.md "Finding a record"): where a send's record is, by customer and by
 * event, kept as long as the evidence it points to — so export and the operator's commands find a customer's or an
 * event's evidence with a Query or two, also years after every hot item expired, and never list the bucket.
 *
 * Items (docs/table.md "The evidence index"), in the compact layout — kept for seven years, every byte is paid for
 * 84 months, so an item holds nothing its key says, under one-letter names:
 * - pk `u#<userId>`, sk `<yyyy-mm-dd>#<batch, shortened>` (domain/evidence-batch.ts indexBatchPart), `s`: the
 *   customer's sends in one batch accepted that day, each `<digest> <notificationId>` (indexMark: the record's
 *   SHA-256's first 128 bits);
 * - pk `e#<eventId>`, sk `<yyyy-mm-dd>#<userId>`, nothing else: which customer-day holds the event's sends — the
 *   event's look-up is that item, then the customer's items of that day.
 * Every write is a small item of its own (a batch holds one invocation's sends), billed on that item alone, however
 * many sends a customer has: an item per customer-month that grew with every send reached DynamoDB's 400 KB at a few
 * thousand sends and cost its whole size on every write.
 *
 * The index has a table of its own (lib/evidence-index-table.ts: Standard-IA, point-in-time recovery, outside AWS
 * Backup): write once, read rarely, kept seven years. A batch's own sends are put item by item in BatchWriteItem
 * calls (`putBatch`: its object holds exactly these, so a put again writes the same); a spool slice is every writer's
 * of that minute, so each writer adds its sends to the slice's items (ADD), as a part of a batch indexed before is
 * (`add`: a send written again changes nothing, the sends already there stay). Still read until their TTL: the
 * layout before (pk `EVIDENCE_INDEX#<userId>`, sk `<day>#<batch>`, `sends` of `<sha256> <notificationId>`, and
 * `EVIDENCE_EVENT#<eventId>` items holding the event's sends), the month layout before that (sk `yyyy-mm`, `refs` of
 * `<batch> <notificationId>`), and items kept in the main table before the index had its own (`formerTable`).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { BatchWriteCommand, type DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import {
  batchOfIndexPart,
  type IndexEntry,
  indexBatchPart,
  indexMark,
  parseIndexRef,
  parseIndexSend,
} from '../domain/evidence-batch.ts';
import { parseSliceBatch } from '../domain/evidence-spool.ts';
import {
  customerIndexPk,
  eventIndexPk,
  eventIndexSk,
  evidenceEventPk,
  evidenceIndexPk,
  parseEventIndexSk,
  parseNotificationId,
} from '../domain/keys.ts';
import { type Item, type QueryInput, queryAll } from './paged-query.ts';

export type EvidenceIndexEntry = IndexEntry;

/** A send as an index names it: its batch, its notification and (since the digest is indexed) its record's digest. */
export interface IndexedRef {
  readonly batch: string;
  readonly notificationId: string;
  /** Hex: the record's whole SHA-256, or (the compact layout) its first 128 bits; checked by `digestMatches`. */
  readonly sha256?: string;
}

/** Days of acceptance (UTC `yyyy-mm-dd`), both ends included; either end open. */
export interface DayRange {
  readonly from?: string;
  readonly to?: string;
}

/** One customer's sends of a day in a batch, kept until `expiresAt` (epoch s). */
export interface DatedEntry {
  readonly entry: EvidenceIndexEntry;
  readonly expiresAt: number;
}

export interface EvidenceIndex {
  /**
   * Adds one customer's sends in one batch to its items, by customer and by event; kept until `expiresAt` (epoch s).
   * Safe to repeat, and to call with part of a batch indexed before: what is there stays.
   */
  add(entry: EvidenceIndexEntry, expiresAt: number): Promise<void>;
  /**
   * Puts a batch's items whole: `entries` are every send of the batch (its object holds exactly these), each item
   * replaced by the same — but a spool slice's customer items, which other writers of the minute share, are added to.
   * Resolves with the items still unprocessed after the retries (0: all written).
   */
  putBatch(entries: readonly DatedEntry[]): Promise<number>;
  /** Every send indexed for a customer (within `range`), oldest first. */
  sendsOf(userId: string, range?: DayRange): Promise<IndexedRef[]>;
  /** Every send indexed for an event. */
  sendsOfEvent(eventId: string): Promise<IndexedRef[]>;
}

const DAY_S = 86_400;

/** When a day's index items may go: the day's last send is kept `retentionDays`, and its items a day longer. */
export function indexExpiresAt(day: string, retentionDays: number): number {
  const [y, m, d] = day.split('-').map(Number) as [number, number, number];
  const dayEnd = Date.UTC(y, m - 1, d + 1) / 1000;
  return dayEnd + (retentionDays + 1) * DAY_S;
}

/** BatchWriteItem's most requests a call, and the retries of what it leaves unprocessed (backing off, with jitter). */
const BATCH_WRITE_MAX = 25;
export const UNPROCESSED_RETRIES = { attempts: 5, baseMs: 50, maxMs: 800 } as const;

type Key = { pk: string; sk: string };
/** An item of the compact layout: a customer's (with its sends, `s`) or an event's (its key alone). */
export type IndexItem = Key & { expiresAt: number; s?: Set<string> };

/** Whether a customer item is a spool slice's, which every writer of that minute adds its sends to. */
const isSliceItem = (item: IndexItem) =>
  item.s !== undefined && parseSliceBatch(batchOfIndexPart(item.sk.slice(0, 10), item.sk.slice(11))) !== undefined;

export class DynamoEvidenceIndex implements EvidenceIndex {
  /**
   * `tableName`: the index's table. `formerTable`: the main table, where a stage kept its index before the index had
   * a table of its own: read too, until its items expire. `wait`: the back-off between retries (a test's fake).
   */
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly options: { readonly formerTable?: string; readonly wait?: (ms: number) => Promise<unknown> } = {},
  ) {}

  async putBatch(entries: readonly DatedEntry[]): Promise<number> {
    const items = indexItemsOf(entries);
    // A slice's customer items are shared by the minute's writers: a put would replace another writer's sends.
    const shared = items.filter(isSliceItem);
    const own = items.filter((i) => !isSliceItem(i));
    let unprocessed = 0;
    for (let i = 0; i < own.length; i += BATCH_WRITE_MAX) {
      unprocessed += await this.writeAll(own.slice(i, i + BATCH_WRITE_MAX));
    }
    await this.addAll(shared);
    return unprocessed;
  }

  /** One BatchWriteItem of at most 25 puts, its UnprocessedItems sent again; how many stayed unprocessed. */
  private async writeAll(items: readonly IndexItem[]): Promise<number> {
    const wait = this.options.wait ?? sleep;
    let requests: { PutRequest: { Item: Record<string, unknown> } }[] = items.map((Item) => ({ PutRequest: { Item } }));
    for (let attempt = 1; requests.length > 0; attempt++) {
      const r = await this.client.send(new BatchWriteCommand({ RequestItems: { [this.tableName]: requests } }));
      requests = (r.UnprocessedItems?.[this.tableName] ?? []).flatMap((w) =>
        w.PutRequest?.Item === undefined ? [] : [{ PutRequest: { Item: w.PutRequest.Item } }],
      );
      if (requests.length === 0 || attempt >= UNPROCESSED_RETRIES.attempts) break;
      // DynamoDB's advice for unprocessed items: back off exponentially; full jitter spreads the retries.
      const ceiling = Math.min(UNPROCESSED_RETRIES.maxMs, UNPROCESSED_RETRIES.baseMs * 2 ** (attempt - 1));
      await wait(Math.round(Math.random() * ceiling));
    }
    return requests.length;
  }

  async add(entry: EvidenceIndexEntry, expiresAt: number): Promise<void> {
    await this.addAll(indexItemsOf([{ entry, expiresAt }]));
  }

  /** Each item added to (UpdateItem: ADD its sends, its TTL set), a few at a time. */
  private async addAll(items: readonly IndexItem[]): Promise<void> {
    for (let i = 0; i < items.length; i += ADD_AT_ONCE) {
      await Promise.all(
        items.slice(i, i + ADD_AT_ONCE).map(({ pk, sk, expiresAt, s }) =>
          this.client.send(
            new UpdateCommand({
              TableName: this.tableName,
              Key: { pk, sk },
              UpdateExpression: s === undefined ? 'SET expiresAt = :e' : 'ADD s :s SET expiresAt = :e',
              ExpressionAttributeValues: { ':e': expiresAt, ...(s === undefined ? {} : { ':s': s }) },
            }),
          ),
        ),
      );
    }
  }

  async sendsOf(userId: string, range: DayRange = {}): Promise<IndexedRef[]> {
    const [before, compact] = await Promise.all([
      this.formerSendsOf(userId, range),
      queryAll(this.client, {
        TableName: this.tableName,
        ...dayCondition(customerIndexPk(userId), range.from, range.to),
      }),
    ]);
    return distinct([...before, ...compact.flatMap(customerRefsOf)]);
  }

  /** A customer's sends in the layouts before the compact one (day items, month items; either table). */
  private async formerSendsOf(userId: string, range: DayRange): Promise<IndexedRef[]> {
    // A month item (the earlier layout, sk `yyyy-mm`) sorts before its month's days: the range starts at its month.
    const items = await this.queryBoth(dayCondition(evidenceIndexPk(userId), range.from?.slice(0, 7), range.to));
    const inRange = (sk: string) => sk.length === 7 || range.from === undefined || sk.slice(0, 10) >= range.from;
    return items.filter((i) => inRange(String(i.sk))).flatMap((i) => refsOf(i, String(i.sk).slice(11)));
  }

  async sendsOfEvent(eventId: string): Promise<IndexedRef[]> {
    const [before, pointers] = await Promise.all([
      this.queryBoth({
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': evidenceEventPk(eventId) },
      }),
      queryAll(this.client, {
        TableName: this.tableName,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': eventIndexPk(eventId) },
      }),
    ]);
    // Each customer-day the event's items name, once: its items of that day hold the event's sends among others.
    const days = [...new Set(pointers.map((p) => String(p.sk)))].flatMap((sk) => parseEventIndexSk(sk) ?? []);
    const found = await Promise.all(
      days.map(({ day, userId }) =>
        queryAll(this.client, { TableName: this.tableName, ...dayCondition(customerIndexPk(userId), day, day) }),
      ),
    );
    const ofEvent = found
      .flat()
      .flatMap(customerRefsOf)
      .filter((r) => parseNotificationId(r.notificationId)?.eventId === eventId);
    return distinct([...before.flatMap((i) => refsOf(i, String(i.sk))), ...ofEvent]);
  }

  /** A partition's items in the former table (older: written before the index had a table), then in the index's. */
  private async queryBoth(input: Pick<QueryInput, 'KeyConditionExpression' | 'ExpressionAttributeValues'>) {
    const former = this.options.formerTable;
    const tables = former === undefined || former === this.tableName ? [this.tableName] : [former, this.tableName];
    const found = await Promise.all(tables.map((TableName) => queryAll(this.client, { TableName, ...input })));
    return found.flat();
  }
}

/** UpdateItem calls in flight at once when a writer adds to a slice's items. */
const ADD_AT_ONCE = 8;

/** A partition's items of a range of days (`from`, `to`: the sort key's start; either open). */
function dayCondition(pk: string, from: string | undefined, to: string | undefined) {
  const end = to === undefined ? undefined : `${to}#~`;
  const condition =
    from !== undefined && end !== undefined
      ? 'pk = :pk AND sk BETWEEN :from AND :to'
      : from !== undefined
        ? 'pk = :pk AND sk >= :from'
        : end !== undefined
          ? 'pk = :pk AND sk <= :to'
          : 'pk = :pk';
  return {
    KeyConditionExpression: condition,
    ExpressionAttributeValues: {
      ':pk': pk,
      ...(from === undefined ? {} : { ':from': from }),
      ...(end === undefined ? {} : { ':to': end }),
    },
  };
}

/** A send named twice (in the former table and again in the index's, by a rebuild) once, where it was first named. */
function distinct(refs: IndexedRef[]): IndexedRef[] {
  const seen = new Set<string>();
  return refs.filter((r) => {
    const key = `${r.batch} ${r.notificationId}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/**
 * A batch's index items: one per customer and day, holding its sends, and one per event, customer and day, pointing
 * at the customer's items of that day — written once per batch (BatchWriteItem refuses a key twice in a call), kept
 * as long as the longest-kept send it leads to.
 */
export function indexItemsOf(entries: readonly DatedEntry[]): IndexItem[] {
  const items: IndexItem[] = [];
  const events = new Map<string, IndexItem>();
  for (const { entry, expiresAt } of entries) {
    if (entry.sends.length === 0) continue;
    items.push({
      pk: customerIndexPk(entry.userId),
      sk: `${entry.day}#${indexBatchPart(entry.day, entry.batch)}`,
      expiresAt,
      s: new Set(entry.sends.map((s) => indexMark(s.sha256, s.notificationId))),
    });
    for (const s of entry.sends) {
      const eventId = parseNotificationId(s.notificationId)?.eventId;
      if (eventId === undefined) continue;
      const key = { pk: eventIndexPk(eventId), sk: eventIndexSk(entry.day, entry.userId) };
      const item = events.get(JSON.stringify(key)) ?? { ...key, expiresAt };
      item.expiresAt = Math.max(item.expiresAt, expiresAt);
      events.set(JSON.stringify(key), item);
    }
  }
  return [...items, ...events.values()];
}

/** The sends a customer item of the compact layout names. */
function customerRefsOf(item: Item): IndexedRef[] {
  const sk = String(item.sk);
  const batch = batchOfIndexPart(sk.slice(0, 10), sk.slice(11));
  return [...((item.s as Set<string> | undefined) ?? [])].sort().flatMap((s) => {
    const parsed = parseIndexSend(s);
    return parsed === undefined ? [] : [{ batch, ...parsed }];
  });
}

/** The sends an index item of a layout before names: one batch's (`sends`), or a month's refs (`refs`). */
function refsOf(item: Item, batch: string): IndexedRef[] {
  const sends = [...((item.sends as Set<string> | undefined) ?? [])].sort();
  const refs = [...((item.refs as Set<string> | undefined) ?? [])].sort();
  return [
    ...sends.flatMap((s) => {
      const parsed = parseIndexSend(s);
      return parsed === undefined ? [] : [{ batch, ...parsed }];
    }),
    ...refs.flatMap((r) => {
      const parsed = parseIndexRef(r);
      return parsed === undefined ? [] : [parsed];
    }),
  ];
}

/**
 * The evidence index (docs/evidence-and-privacy.md "Finding a record"): where a send's record is, by customer and by
 * event, kept as long as the evidence it points to — so export and the operator's commands find a customer's or an
 * event's evidence with one Query, also years after every hot item expired, and never list the bucket.
 *
 * Items (docs/table.md), each one batch's sends, `<sha256> <notificationId>` (domain/evidence-batch.ts indexSend):
 * - pk `EVIDENCE_INDEX#<userId>`, sk `<yyyy-mm-dd>#<batch>`: a customer's sends in one batch accepted that day;
 * - pk `EVIDENCE_EVENT#<eventId>`, sk `<batch>`: an event's sends in one batch.
 * Every write is a small item of its own (a batch holds one invocation's sends), billed on that item alone, however
 * many sends a customer has: an item per customer-month that grew with every send reached DynamoDB's 400 KB at a few
 * thousand sends and cost its whole size on every write.
 *
 * The index has a table of its own (lib/evidence-index-table.ts: Standard-IA, point-in-time recovery, outside AWS
 * Backup): write once, read rarely, kept seven years. A batch's whole set of sends is put item by item in
 * BatchWriteItem calls (`putBatch`: its object holds exactly these sends, so a put again writes the same); a part of a
 * batch indexed before (the sweeper indexing what a rebuild could not) is added to its items (`add`, ADD: a send
 * written again changes nothing, the sends already there stay). Items kept in the main table before the index had its
 * own (`formerTable`), and items of the earlier month layout (sk `yyyy-mm`, `refs` of `<batch> <notificationId>`), are
 * still read until their TTL.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { BatchWriteCommand, type DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { type IndexEntry, indexSend, parseIndexRef, parseIndexSend } from '../domain/evidence-batch.ts';
import { evidenceEventPk, evidenceIndexPk, evidenceIndexSk, parseNotificationId } from '../domain/keys.ts';
import { type Item, type QueryInput, queryAll } from './paged-query.ts';

export type EvidenceIndexEntry = IndexEntry;

/** A send as an index names it: its batch, its notification and (since the digest is indexed) its record's SHA-256. */
export interface IndexedRef {
  readonly batch: string;
  readonly notificationId: string;
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
   * replaced by the same. Resolves with the items still unprocessed after the retries (0: all written).
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
type IndexItem = Key & { kind: string; userId?: string; expiresAt: number; sends: Set<string> };

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
    let unprocessed = 0;
    const items = indexItemsOf(entries);
    for (let i = 0; i < items.length; i += BATCH_WRITE_MAX) {
      unprocessed += await this.writeAll(items.slice(i, i + BATCH_WRITE_MAX));
    }
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
    await Promise.all(
      indexItemsOf([{ entry, expiresAt }]).map(({ pk, sk, sends, ...set }) =>
        this.client.send(
          new UpdateCommand({
            TableName: this.tableName,
            Key: { pk, sk },
            UpdateExpression: `ADD sends :sends SET ${Object.keys(set)
              .map((n) => `${n} = :${n}`)
              .join(', ')}`,
            ExpressionAttributeValues: {
              ':sends': sends,
              ...Object.fromEntries(Object.entries(set).map(([n, v]) => [`:${n}`, v])),
            },
          }),
        ),
      ),
    );
  }

  async sendsOf(userId: string, range: DayRange = {}): Promise<IndexedRef[]> {
    // A month item (the earlier layout, sk `yyyy-mm`) sorts before its month's days: the range starts at its month.
    const from = range.from?.slice(0, 7);
    const to = range.to === undefined ? undefined : `${range.to}#~`;
    const condition =
      from !== undefined && to !== undefined
        ? 'pk = :pk AND sk BETWEEN :from AND :to'
        : from !== undefined
          ? 'pk = :pk AND sk >= :from'
          : to !== undefined
            ? 'pk = :pk AND sk <= :to'
            : 'pk = :pk';
    const items = await this.queryBoth({
      KeyConditionExpression: condition,
      ExpressionAttributeValues: {
        ':pk': evidenceIndexPk(userId),
        ...(from === undefined ? {} : { ':from': from }),
        ...(to === undefined ? {} : { ':to': to }),
      },
    });
    const inRange = (sk: string) => sk.length === 7 || range.from === undefined || sk.slice(0, 10) >= range.from;
    return distinct(items.filter((i) => inRange(String(i.sk))).flatMap((i) => refsOf(i, String(i.sk).slice(11))));
  }

  async sendsOfEvent(eventId: string): Promise<IndexedRef[]> {
    const items = await this.queryBoth({
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': evidenceEventPk(eventId) },
    });
    return distinct(items.flatMap((i) => refsOf(i, String(i.sk))));
  }

  /** A partition's items in the former table (older: written before the index had a table), then in the index's. */
  private async queryBoth(input: Pick<QueryInput, 'KeyConditionExpression' | 'ExpressionAttributeValues'>) {
    const former = this.options.formerTable;
    const tables = former === undefined || former === this.tableName ? [this.tableName] : [former, this.tableName];
    const found = await Promise.all(tables.map((TableName) => queryAll(this.client, { TableName, ...input })));
    return found.flat();
  }
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
 * A batch's index items: one per customer and day, and one per event — an event's sends in the batch in one item
 * (its channels may fall on two days, or two customers' entries: BatchWriteItem refuses a key twice in a call), kept
 * as long as its longest-kept send.
 */
export function indexItemsOf(entries: readonly DatedEntry[]): IndexItem[] {
  const items: IndexItem[] = [];
  const events = new Map<string, IndexItem>();
  for (const { entry, expiresAt } of entries) {
    if (entry.sends.length === 0) continue;
    items.push({
      pk: evidenceIndexPk(entry.userId),
      sk: evidenceIndexSk(entry.day, entry.batch),
      kind: 'EVIDENCE_INDEX',
      userId: entry.userId,
      expiresAt,
      sends: new Set(entry.sends.map((s) => indexSend(s.sha256, s.notificationId))),
    });
    for (const s of entry.sends) {
      const eventId = parseNotificationId(s.notificationId)?.eventId;
      if (eventId === undefined) continue;
      const key = JSON.stringify([eventId, entry.batch]);
      const item = events.get(key) ?? {
        pk: evidenceEventPk(eventId),
        sk: entry.batch,
        kind: 'EVIDENCE_EVENT',
        expiresAt,
        sends: new Set<string>(),
      };
      item.sends.add(indexSend(s.sha256, s.notificationId));
      item.expiresAt = Math.max(item.expiresAt, expiresAt);
      events.set(key, item);
    }
  }
  return [...items, ...events.values()];
}

/** The sends an index item names: one batch's (`sends`), or a month's refs of the earlier layout (`refs`). */
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

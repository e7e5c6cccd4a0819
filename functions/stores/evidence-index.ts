/**
 * The evidence index (docs/evidence-and-privacy.md "Finding a record"): where a send's record is, by customer and by
 * event, kept as long as the evidence it points to — so export and the operator's commands find a customer's or an
 * event's evidence with a Query or two, also years after every hot item expired, and never list the bucket.
 *
 * Items (docs/table.md "The evidence index"), in the compact layout — kept for seven years, every byte is paid for
 * 84 months, so an item holds nothing its key says, under one-letter names:
 * - pk `u#<userId>`, sk `<yyyy-mm-dd>#<eventId>`, `s`: the customer's sends of one event accepted that day, each
 *   `<digest><attempt>.<batch> <channel…>` (domain/evidence-batch.ts indexMark: the record's SHA-256's first 128
 *   bits, its attempt, the batch and the channel short; marks without an attempt, or spaced, as before still read) —
 *   an event's channels share one item even when they are sent from two batches, and a writer adds all it holds of
 *   one item in one write;
 * - pk `e#<eventId>`, sk `~<day, 4 base-36 digits><userId>` (domain/keys.ts eventIndexSk; `<yyyy-mm-dd>#<userId>`
 *   before, still read), nothing else: which customer-day holds the event's sends — the event's look-up is that
 *   item, then the customer's item of that day and event.
 * Every write is a small item of its own (a batch holds one invocation's sends), billed on that item alone, however
 * many sends a customer has: an item per customer-month that grew with every send reached DynamoDB's 400 KB at a few
 * thousand sends and cost its whole size on every write.
 *
 * The index has a table of its own (lib/evidence-index-table.ts: Standard-IA, point-in-time recovery, outside AWS
 * Backup): write once, read rarely, kept seven years. A customer's item is added to (UpdateItem, ADD: an event's
 * other channels, from another invocation, are added beside; a send written again changes nothing); an event's item
 * is put (BatchWriteItem: the same key and TTL whoever writes it). Still read until their TTL: the layout before
 * (pk `EVIDENCE_INDEX#<userId>`, sk `<day>#<batch>`, `sends` of `<sha256> <notificationId>`, and
 * `EVIDENCE_EVENT#<eventId>` items holding the event's sends), the month layout before that (sk `yyyy-mm`, `refs` of
 * `<batch> <notificationId>`), and items kept in the main table before the index had its own (`formerTable`).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { BatchGetCommand, BatchWriteCommand, type DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import {
  INDEX_DIGEST_B64,
  INDEX_DIGEST_HEX,
  type IndexEntry,
  indexMark,
  parseIndexMark,
  parseIndexRef,
  parseIndexSend,
} from '../domain/evidence-batch.ts';
import {
  customerIndexPk,
  customerIndexSk,
  eventIndexPk,
  eventIndexSk,
  evidenceEventPk,
  evidenceIndexPk,
  parseEventIndexSk,
  parseNotificationId,
} from '../domain/keys.ts';
import { isConditionFailure } from './condition-failure.ts';
import { type Item, type QueryInput, queryAll } from './paged-query.ts';

export type EvidenceIndexEntry = IndexEntry;

/** A send as an index names it: its batch, its notification and (since the digest is indexed) its record's digest. */
export interface IndexedRef {
  readonly batch: string;
  readonly notificationId: string;
  /** Hex: the record's whole SHA-256, or (the compact layout) its first 128 bits; checked by `digestMatches`. */
  readonly sha256?: string;
  /**
   * The claim that sent it (its record's attempt), on a mark of the compact layout written since marks carry it; none
   * before: which attempt's send it is, a reader then tells by the batches resends name (recover-evidence.ts).
   */
  readonly attempt?: number;
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
/** BatchGetItem's most keys a call. */
const BATCH_GET_MAX = 100;
/** BatchGetItem calls of the roll-up's index check in flight at once. */
const GETS_AT_ONCE = 4;
export const UNPROCESSED_RETRIES = { attempts: 5, baseMs: 50, maxMs: 800 } as const;

type Key = { pk: string; sk: string };
/** An item of the compact layout: a customer's (with its sends, `s`) or an event's (its key alone). */
export type IndexItem = Key & { expiresAt: number; s?: Set<string> };

/**
 * The index as its writers (dispatch, feedback's evidence, the sweeper's fill) reach it: puts and adds only. A class
 * of its own so that dispatch's bundle leaves out the readers' code (a class's methods are bundled whole).
 */
export class DynamoEvidenceIndexWriter implements Pick<EvidenceIndex, 'add' | 'putBatch'> {
  /**
   * `tableName`: the index's table. `formerTable`: the main table, where a stage kept its index before the index had
   * a table of its own: read too, until its items expire. `wait`: the back-off between retries (a test's fake).
   */
  constructor(
    protected readonly client: DynamoDBDocumentClient,
    protected readonly tableName: string,
    protected readonly options: {
      readonly formerTable?: string;
      readonly wait?: (ms: number) => Promise<unknown>;
    } = {},
  ) {}

  async putBatch(entries: readonly DatedEntry[]): Promise<number> {
    const items = indexItemsOf(entries);
    // A customer's item of an event is shared by the writers of its channels: added to, never put over.
    const before = await this.addAll(items.filter((i) => i.s !== undefined));
    // Its event's item is put by the first writer of the event's sends only (the rest find another channel's send
    // there): once per event, not once per channel. The first writer that fails to put it leaves its batch
    // unindexed, and the sweeper's `add` puts it.
    const events = items.filter((i) => i.s === undefined && !anotherWriterFirst(i, before));
    let unprocessed = 0;
    for (let i = 0; i < events.length; i += BATCH_WRITE_MAX) {
      unprocessed += await this.writeAll(events.slice(i, i + BATCH_WRITE_MAX));
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
    await this.addAll(indexItemsOf([{ entry, expiresAt }]));
  }

  /**
   * Each item added to (UpdateItem: ADD its sends, its TTL set), a few at a time; each customer item's sends as they
   * were before (by its key: `itemId`), and the sends added to it.
   */
  private async addAll(items: readonly IndexItem[]): Promise<Map<string, Added>> {
    const before = new Map<string, Added>();
    for (let i = 0; i < items.length; i += ADD_AT_ONCE) {
      await Promise.all(
        items.slice(i, i + ADD_AT_ONCE).map(async (item) => {
          const had = await this.addOne(item);
          if (item.s !== undefined) before.set(itemId(item), { had, s: item.s });
        }),
      );
    }
    return before;
  }

  /**
   * One item added to: its sends ADDed, its TTL raised — never lowered: writers of one shared customer item (an
   * event's channels, a rebuild, a gap's fill) may keep their sends for different retentions (a deploy changed it),
   * and each send must stay as long as its own. A later TTL already there refuses the SET (the condition), and then
   * the sends alone are added. Resolves with a customer item's sends before the ADD.
   */
  private async addOne({ pk, sk, expiresAt, s }: IndexItem): Promise<Set<string> | undefined> {
    const update = (set: boolean) =>
      this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk, sk },
          UpdateExpression: [s === undefined ? '' : 'ADD s :s', set ? 'SET expiresAt = :e' : ''].join(' ').trim(),
          ExpressionAttributeValues: { ...(set ? { ':e': expiresAt } : {}), ...(s === undefined ? {} : { ':s': s }) },
          ...(set ? { ConditionExpression: 'attribute_not_exists(expiresAt) OR expiresAt <= :e' } : {}),
          ...(s === undefined ? {} : { ReturnValues: 'UPDATED_OLD' as const }),
        }),
      );
    try {
      return (await update(true)).Attributes?.s as Set<string> | undefined;
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      // The item is kept longer already: an event's item needs nothing more, a customer's gets its sends.
      return s === undefined ? undefined : ((await update(false)).Attributes?.s as Set<string> | undefined);
    }
  }
}

/** The whole index: the writers' puts and adds, and the readers' look-ups by customer and by event. */
export class DynamoEvidenceIndex extends DynamoEvidenceIndexWriter implements EvidenceIndex {
  /**
   * Of these entries' sends, those the index lacks — their customer's item, their mark on it, or their event's item —
   * each kept in an entry of its own kind: the roll-up's check of a slice whose writer may have died before its index
   * write (sweeper/roll-up-evidence.ts). BatchGetItem, eventually consistent (minutes after the writes), 100 keys a
   * call, the unprocessed asked again; still unprocessed after the retries, it throws (the slice is checked again).
   */
  async lacking(
    entries: readonly DatedEntry[],
    until?: { readonly now: () => number; readonly deadline: number },
  ): Promise<DatedEntry[]> {
    const keys = indexItemsOf(entries).map(({ pk, sk }) => ({ pk, sk }));
    const found = new Map<string, Item>();
    // A few calls at once (a busy minute's slice is hundreds of them), none started past the run's deadline.
    for (let i = 0; i < keys.length; i += BATCH_GET_MAX * GETS_AT_ONCE) {
      if (until !== undefined && until.now() >= until.deadline)
        throw Object.assign(new Error('the run ended before the index was checked'), { name: 'DeadlinePassed' });
      const calls = [];
      for (let j = i; j < Math.min(keys.length, i + BATCH_GET_MAX * GETS_AT_ONCE); j += BATCH_GET_MAX)
        calls.push(this.getAll(keys.slice(j, j + BATCH_GET_MAX), found));
      await Promise.all(calls);
    }
    // A send is its record, whatever form its mark took (an earlier version spaced it): each starts with its digest.
    const recordOf = (mark: string) => mark.slice(0, INDEX_DIGEST_B64);
    const has = (item: IndexItem) => {
      const stored = found.get(itemId(item));
      const records = new Set([...((stored?.s as Set<string> | undefined) ?? [])].map(recordOf));
      return stored !== undefined && [...(item.s ?? [])].every((m) => records.has(recordOf(m)));
    };
    return entries.flatMap(({ entry, expiresAt }) => {
      const sends = entry.sends.filter(
        (send) => !indexItemsOf([{ entry: { ...entry, sends: [send] }, expiresAt }]).every(has),
      );
      return sends.length === 0 ? [] : [{ entry: { ...entry, sends }, expiresAt }];
    });
  }

  /** One BatchGetItem of up to 100 keys into `found`, the unprocessed asked again; still unprocessed, it throws. */
  private async getAll(keys: Record<string, unknown>[], found: Map<string, Item>): Promise<void> {
    const wait = this.options.wait ?? sleep;
    let asked = keys;
    for (let attempt = 1; asked.length > 0; attempt++) {
      if (attempt > UNPROCESSED_RETRIES.attempts)
        throw Object.assign(new Error('index keys unprocessed'), { name: 'Unprocessed' });
      if (attempt > 1) await wait(Math.round(Math.random() * UNPROCESSED_RETRIES.baseMs * 2 ** (attempt - 1)));
      const r = await this.client.send(new BatchGetCommand({ RequestItems: { [this.tableName]: { Keys: asked } } }));
      for (const item of r.Responses?.[this.tableName] ?? []) found.set(itemId(item as Key), item);
      asked = (r.UnprocessedKeys?.[this.tableName]?.Keys ?? []) as Record<string, unknown>[];
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
    return distinct([...before, ...byBatch(compact.flatMap(customerRefsOf))]);
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
    // Each customer-day the event's items name: the customer's item of that day and event holds its sends.
    // Each customer-day once: a deploy's writers of both sort key forms may each have put one.
    const named = pointers.flatMap((p) => parseEventIndexSk(String(p.sk)) ?? []);
    const days = [...new Map(named.map((d) => [`${d.day} ${d.userId}`, d])).values()];
    const found = await Promise.all(
      days.map(({ day, userId }) =>
        queryAll(this.client, {
          TableName: this.tableName,
          KeyConditionExpression: 'pk = :pk AND sk = :sk',
          ExpressionAttributeValues: { ':pk': customerIndexPk(userId), ':sk': customerIndexSk(day, eventId) },
        }),
      ),
    );
    return distinct([
      ...before.flatMap((i) => refsOf(i, String(i.sk))),
      ...byBatch(found.flat().flatMap(customerRefsOf)),
    ]);
  }

  /** A partition's items in the former table (older: written before the index had a table), then in the index's. */
  private async queryBoth(input: Pick<QueryInput, 'KeyConditionExpression' | 'ExpressionAttributeValues'>) {
    const former = this.options.formerTable;
    const tables = former === undefined || former === this.tableName ? [this.tableName] : [former, this.tableName];
    const found = await Promise.all(tables.map((TableName) => queryAll(this.client, { TableName, ...input })));
    return found.flat();
  }
}

/** A customer item's sends before a writer's ADD (`had`), and the sends it added (`s`). */
type Added = { readonly had: ReadonlySet<string> | undefined; readonly s: ReadonlySet<string> };
const itemId = (key: Key) => JSON.stringify([key.pk, key.sk]);

/**
 * Whether another writer surely added a send to an event item's customer item before this one: then that writer puts
 * (or put) the event item. When the item held one of this writer's own sends already, an earlier attempt of its ADD
 * had landed (the SDK retried an unanswered call, or a rebuild writes again): the other sends there may have come
 * after it, their writers having seen its send and left the event item to it — so it cannot know who was first and
 * puts the event item (the same key and TTL whoever puts it).
 */
function anotherWriterFirst(event: IndexItem, before: ReadonlyMap<string, Added>): boolean {
  const at = parseEventIndexSk(event.sk);
  if (at === undefined) return false;
  const eventId = event.pk.slice(2);
  const added = before.get(itemId({ pk: customerIndexPk(at.userId), sk: customerIndexSk(at.day, eventId) }));
  const had = [...(added?.had ?? [])];
  // A send is its record, whatever form its mark took (a stage deployed before spaced it): every form starts with
  // the record's digest, and two sends' records differ (each names its notification).
  const recordOf = (mark: string) => mark.slice(0, INDEX_DIGEST_B64);
  const own = new Set([...(added?.s ?? [])].map(recordOf));
  if (had.some((mark) => own.has(recordOf(mark)))) return false;
  return had.length > 0;
}

/** UpdateItem calls in flight at once when a writer adds to customer items. */
const ADD_AT_ONCE = 16;

/**
 * A partition's items of a range of days (`from`, `to`: the sort key's start; either open). A day's sort keys are
 * `<day>#…`, whatever follows (an event id, a batch name): `<day>$` sorts after all of them ('$' follows '#').
 */
function dayCondition(pk: string, from: string | undefined, to: string | undefined) {
  const end = to === undefined ? undefined : `${to}$`;
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

/**
 * A send named twice (in the former table and again in the index's, by a rebuild) once, where it was first named: a
 * send is its record, told by its batch, its notification and its digest's first 128 bits (all the compact layout
 * keeps; the layout before kept the whole). So two attempts' sends of one notification in one batch (a spool slice's
 * minute: an operator's resend) stay two, whether or not their marks carry their attempts (written before they did):
 * a reader asking for the current attempt's finds it (recover-evidence.ts `namesThisAttempt`), and an erasure's
 * `spool-keys` names both items. The record's attempt, which its digest fixes, is kept from whichever names it.
 */
function distinct(refs: IndexedRef[]): IndexedRef[] {
  // A ref of the month layout has no digest: it is the same send as a ref with one of its batch and notification (a
  // rebuild's), where there is one.
  const sent = (r: IndexedRef) => JSON.stringify([r.batch, r.notificationId]);
  const digested = new Set(refs.filter((r) => r.sha256 !== undefined).map(sent));
  const found = new Map<string, IndexedRef>();
  for (const r of refs) {
    if (r.sha256 === undefined && digested.has(sent(r))) continue;
    const key = JSON.stringify([r.batch, r.notificationId, r.sha256?.slice(0, INDEX_DIGEST_HEX) ?? null]);
    const first = found.get(key);
    if (first === undefined) found.set(key, r);
    else if (first.attempt === undefined && r.attempt !== undefined) found.set(key, { ...first, attempt: r.attempt });
  }
  return [...found.values()];
}

/**
 * A batch's index items: one per customer, day and event, holding its sends, and one per event, day and customer,
 * pointing at it — each key once (BatchWriteItem refuses a key twice in a call), kept as long as the longest-kept
 * send it leads to. A send whose id names no event is on a customer item of its own id, with no event item.
 */
export function indexItemsOf(entries: readonly DatedEntry[]): IndexItem[] {
  const items = new Map<string, IndexItem>();
  const keep = (key: Key, expiresAt: number, mark?: string) => {
    const id = itemId(key);
    const item = items.get(id) ?? { ...key, expiresAt, ...(mark === undefined ? {} : { s: new Set<string>() }) };
    item.expiresAt = Math.max(item.expiresAt, expiresAt);
    if (mark !== undefined) item.s?.add(mark);
    items.set(id, item);
  };
  for (const { entry, expiresAt } of entries) {
    for (const send of entry.sends) {
      const eventId = parseNotificationId(send.notificationId)?.eventId;
      const own = eventId ?? send.notificationId;
      const mark = indexMark(send.sha256, entry.day, entry.batch, own, send.notificationId, send.attempt);
      keep({ pk: customerIndexPk(entry.userId), sk: customerIndexSk(entry.day, own) }, expiresAt, mark);
      if (eventId !== undefined)
        keep({ pk: eventIndexPk(eventId), sk: eventIndexSk(entry.day, entry.userId) }, expiresAt);
    }
  }
  return [...items.values()];
}

/** The sends a customer item of the compact layout names. */
function customerRefsOf(item: Item): IndexedRef[] {
  const sk = String(item.sk);
  const [day, eventId] = [sk.slice(0, 10), sk.slice(11)];
  return [...((item.s as Set<string> | undefined) ?? [])].sort().flatMap((s) => parseIndexMark(s, day, eventId) ?? []);
}

/** Sends in the order of their batches (a batch's name starts with its day and time), then of their ids. */
const byBatch = (refs: IndexedRef[]) =>
  refs.sort((a, b) => a.batch.localeCompare(b.batch) || a.notificationId.localeCompare(b.notificationId));

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

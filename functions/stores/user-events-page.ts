/**
 * One page of a customer's events, newest first, through the byUser index's two keys — accepted events
 * (`USER#<userId>`, by the producer's occurredAt) and quarantined records (`QUARANTINED#USER#<userId>`, by when they
 * reached us) — merged. One event may have many index entries: its inbox and every record of it ingest quarantined
 * (a retrying producer's copies, a record quarantined and then fed in again). It is listed once, at its newest entry,
 * which its own partition (read anyway to show it) tells: any other entry of it is passed over, on this page or a
 * later one. The cursor is where each key's reading stopped — the last index entry consumed, DynamoDB's
 * ExclusiveStartKey — so ties at one instant need no list of what was shown, and its size never grows.
 */
import { type DynamoDBDocumentClient, GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { TABLE_SCHEMA } from '../contracts/table-schema.ts';
import { eventIdOfPk, INBOX_SK, userKeyOf } from '../domain/keys.ts';
import { quarantinedUserKeyOf } from '../domain/quarantine-ref.ts';

type StoredItem = Record<string, unknown>;
/** What the page needs of an event's partition: the items that may sit on the byUser index. */
interface EventItems {
  readonly inbox: StoredItem | undefined;
  readonly quarantined?: StoredItem[];
}

/** The last entry a page consumed under one key: `END` when the key was read to its end, absent when not begun. */
export type ListPosition = 'END' | { readonly at: string; readonly pk: string; readonly sk: string };

/** Where the next older page starts: one position per byUser key read. */
export interface UserEventsCursor {
  readonly accepted?: ListPosition;
  readonly quarantined?: ListPosition;
}

export interface UserEventsPage<V extends EventItems = EventItems> {
  /** The page's events, newest first, each as its partition was read. */
  readonly events: V[];
  readonly older?: UserEventsCursor;
}

/** The cursor names no entry of this customer's lists (another customer's, edited, or the entry is gone since). */
export const OUT_OF_DATE = 'OUT_OF_DATE';

type ListName = keyof UserEventsCursor;
interface Entry {
  readonly list: ListName;
  readonly at: string;
  readonly pk: string;
  readonly sk: string;
}

/** A page reads at most this many index entries and event partitions per event it shows, then stops with a cursor. */
const ENTRIES_PER_EVENT = 20;
const READS_PER_EVENT = 3;

/** Newer in the page's order: later instant; at one instant an accepted event before a quarantined record; then sk. */
function newer(a: Entry, b: Entry): boolean {
  if (a.at !== b.at) return a.at > b.at;
  if (a.list !== b.list) return a.list === 'accepted';
  return a.sk > b.sk;
}

/** The event's entries under this customer's two keys, as its own partition holds them. */
function entriesOf(view: EventItems, keys: Record<ListName, string>): Entry[] {
  const { sortKey, partitionKey } = TABLE_SCHEMA.userIndex;
  const items = [view.inbox, ...(view.quarantined ?? [])].filter((i): i is StoredItem => i !== undefined);
  return items.flatMap((i) => {
    const list = (Object.keys(keys) as ListName[]).find((l) => keys[l] === i[partitionKey]);
    return list === undefined ? [] : [{ list, at: String(i[sortKey] ?? ''), pk: String(i.pk), sk: String(i.sk) }];
  });
}

/** Shown at this entry: no other entry of the same event is newer (then it is, or was, shown there). */
export const isNewestEntry = (entry: Entry, view: EventItems, keys: Record<ListName, string>): boolean =>
  !entriesOf(view, keys).some((o) => !(o.pk === entry.pk && o.sk === entry.sk) && newer(o, entry));

/** One key's entries, newest first, from a position on, fetched as they are wanted. */
class IndexList {
  private buffer: Entry[] = [];
  private start: Record<string, unknown> | undefined;
  private ended: boolean;

  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    readonly list: ListName,
    private readonly userKey: string,
    from: ListPosition | undefined,
    private readonly batch: number,
  ) {
    this.ended = from === 'END';
    if (from !== undefined && from !== 'END') this.start = startKey(userKey, from);
  }

  /** The next entry, fetching more when none is held; undefined at the end of the key. */
  async head(): Promise<Entry | undefined> {
    while (this.buffer.length === 0 && !this.ended) {
      const { userIndex } = TABLE_SCHEMA;
      const r = await this.client.send(
        new QueryCommand({
          TableName: this.tableName,
          IndexName: userIndex.indexName,
          KeyConditionExpression: '#u = :u',
          ExpressionAttributeNames: { '#u': userIndex.partitionKey },
          ExpressionAttributeValues: { ':u': this.userKey },
          ScanIndexForward: false,
          Limit: this.batch,
          ...(this.start === undefined ? {} : { ExclusiveStartKey: this.start }),
        }),
      );
      this.buffer = (r.Items ?? []).map((i) => ({
        list: this.list,
        at: String(i[userIndex.sortKey] ?? ''),
        pk: String(i.pk),
        sk: String(i.sk),
      }));
      this.start = r.LastEvaluatedKey;
      this.ended = r.LastEvaluatedKey === undefined;
    }
    return this.buffer[0];
  }

  take(): Entry | undefined {
    return this.buffer.shift();
  }

  /** Read to its end, nothing of it held back. */
  get done(): boolean {
    return this.ended && this.buffer.length === 0;
  }
}

const startKey = (userKey: string, p: { at: string; pk: string; sk: string }) => ({
  [TABLE_SCHEMA.userIndex.partitionKey]: userKey,
  [TABLE_SCHEMA.userIndex.sortKey]: p.at,
  pk: p.pk,
  sk: p.sk,
});

/**
 * Up to `limit` distinct events of the customer, newest first, after `older`; the cursor when more are older.
 * OUT_OF_DATE when a position of `older` is not an entry of this customer's lists.
 */
export async function userEventsPage<V extends EventItems>(
  client: DynamoDBDocumentClient,
  tableName: string,
  read: (eventId: string) => Promise<V>,
  userId: string,
  limit: number,
  older?: UserEventsCursor,
): Promise<UserEventsPage<V> | typeof OUT_OF_DATE> {
  const keys: Record<ListName, string> = { accepted: userKeyOf(userId), quarantined: quarantinedUserKeyOf(userId) };
  if (!(await positionsHold(client, tableName, keys, older))) return OUT_OF_DATE;
  const lists = LIST_NAMES.map((l) => new IndexList(client, tableName, l, keys[l], older?.[l], limit + 1));
  const position: Record<ListName, ListPosition | undefined> = { ...older } as Record<ListName, ListPosition>;
  const views = new Map<string, V>();
  const shown = new Map<string, V>();
  const page = (more: boolean): UserEventsPage<V> => ({
    events: [...shown.values()],
    ...(more && LIST_NAMES.some((l) => position[l] !== 'END') ? { older: cursorOf(position) } : {}),
  });
  let consumed = 0;
  while (consumed < limit * ENTRIES_PER_EVENT && views.size < limit * READS_PER_EVENT) {
    // The next entries in the page's order, their events' partitions read together.
    const want = Math.max(CHUNK, limit - shown.size + 1);
    const chunk = await nextEntries(lists, Math.min(want, limit * ENTRIES_PER_EVENT - consumed));
    if (chunk.length === 0) return page(false);
    const unread = [...new Set(chunk.map((e) => eventIdOfPk(e.pk)))].filter(
      (id): id is string => id !== undefined && !views.has(id),
    );
    for (const [i, view] of (await Promise.all(unread.map(read))).entries()) views.set(unread[i] as string, view);
    for (const entry of chunk) {
      const eventId = eventIdOfPk(entry.pk);
      const view = eventId === undefined ? undefined : views.get(eventId);
      if (eventId !== undefined && view !== undefined && !shown.has(eventId) && isNewestEntry(entry, view, keys)) {
        // One more than the page holds: it starts the next page, which the cursor reaches.
        if (shown.size === limit) return page(true);
        shown.set(eventId, view);
      }
      position[entry.list] = { at: entry.at, pk: entry.pk, sk: entry.sk };
      consumed++;
    }
    for (const l of lists) if (l.done) position[l.list] = 'END';
  }
  // Many entries of events shown on earlier pages: this page stops, bounded, and the next goes on from here.
  return page(true);
}

const LIST_NAMES = ['accepted', 'quarantined'] as const satisfies readonly ListName[];
/** Entries decided together (their partitions read at once) when the page is nearly full. */
const CHUNK = 10;

const cursorOf = (p: Record<ListName, ListPosition | undefined>): UserEventsCursor =>
  Object.fromEntries(LIST_NAMES.flatMap((l) => (p[l] === undefined ? [] : [[l, p[l]]])));

/** Up to `count` entries in the page's order (the newer head of the two keys first), taken from their lists. */
async function nextEntries(lists: IndexList[], count: number): Promise<Entry[]> {
  const taken: Entry[] = [];
  while (taken.length < count) {
    const heads = await Promise.all(lists.map((l) => l.head()));
    let pick = -1;
    heads.forEach((h, i) => {
      const best = pick < 0 ? undefined : heads[pick];
      if (h !== undefined && (best === undefined || newer(h, best))) pick = i;
    });
    const entry = pick < 0 ? undefined : lists[pick]?.take();
    if (entry === undefined) break;
    taken.push(entry);
  }
  return taken;
}

/** Each position of the cursor is an entry of this customer's list under its key, as the table holds it now. */
async function positionsHold(
  client: DynamoDBDocumentClient,
  tableName: string,
  keys: Record<ListName, string>,
  older: UserEventsCursor | undefined,
): Promise<boolean> {
  const { partitionKey, sortKey } = TABLE_SCHEMA.userIndex;
  const checks = (Object.keys(keys) as ListName[]).map(async (l) => {
    const p = older?.[l];
    if (p === undefined || p === 'END') return true;
    if ((l === 'accepted') !== (p.sk === INBOX_SK)) return false;
    const r = await client.send(new GetCommand({ TableName: tableName, Key: { pk: p.pk, sk: p.sk } }));
    return r.Item?.[partitionKey] === keys[l] && r.Item?.[sortKey] === p.at;
  });
  return (await Promise.all(checks)).every(Boolean);
}

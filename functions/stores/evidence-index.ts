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
 * thousand sends and cost its whole size on every write. ADD: written again (a retry, the sweeper's rebuild), a send
 * changes nothing. Items written before, one per customer-month (sk `yyyy-mm`, `refs` of `<batch> <notificationId>`),
 * are still read until their TTL.
 */
import { type DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { type IndexEntry, indexSend, parseIndexRef, parseIndexSend } from '../domain/evidence-batch.ts';
import { evidenceEventPk, evidenceIndexPk, evidenceIndexSk, parseNotificationId } from '../domain/keys.ts';
import { type Item, queryAll } from './paged-query.ts';

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

export interface EvidenceIndex {
  /** Indexes one customer's sends in one batch, by customer and by event; kept until `expiresAt` (epoch s). Safe to repeat. */
  add(entry: EvidenceIndexEntry, expiresAt: number): Promise<void>;
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

export class DynamoEvidenceIndex implements EvidenceIndex {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async add(entry: EvidenceIndexEntry, expiresAt: number): Promise<void> {
    if (entry.sends.length === 0) return;
    const byEvent = new Map<string, string[]>();
    for (const s of entry.sends) {
      const eventId = parseNotificationId(s.notificationId)?.eventId;
      if (eventId !== undefined)
        byEvent.set(eventId, [...(byEvent.get(eventId) ?? []), indexSend(s.sha256, s.notificationId)]);
    }
    await Promise.all([
      this.addTo(
        { pk: evidenceIndexPk(entry.userId), sk: evidenceIndexSk(entry.day, entry.batch) },
        entry.sends.map((s) => indexSend(s.sha256, s.notificationId)),
        { kind: 'EVIDENCE_INDEX', userId: entry.userId, expiresAt },
      ),
      ...[...byEvent].map(([eventId, sends]) =>
        this.addTo({ pk: evidenceEventPk(eventId), sk: entry.batch }, sends, { kind: 'EVIDENCE_EVENT', expiresAt }),
      ),
    ]);
  }

  private async addTo(key: { pk: string; sk: string }, sends: string[], set: Record<string, string | number>) {
    const names = Object.keys(set);
    await this.client.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: key,
        UpdateExpression: `ADD sends :sends SET ${names.map((n) => `${n} = :${n}`).join(', ')}`,
        ExpressionAttributeValues: {
          ':sends': new Set(sends),
          ...Object.fromEntries(names.map((n) => [`:${n}`, set[n]])),
        },
      }),
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
    const items = await queryAll(this.client, {
      TableName: this.tableName,
      KeyConditionExpression: condition,
      ExpressionAttributeValues: {
        ':pk': evidenceIndexPk(userId),
        ...(from === undefined ? {} : { ':from': from }),
        ...(to === undefined ? {} : { ':to': to }),
      },
    });
    const inRange = (sk: string) => sk.length === 7 || range.from === undefined || sk.slice(0, 10) >= range.from;
    return items.filter((i) => inRange(String(i.sk))).flatMap((i) => refsOf(i, String(i.sk).slice(11)));
  }

  async sendsOfEvent(eventId: string): Promise<IndexedRef[]> {
    const items = await queryAll(this.client, {
      TableName: this.tableName,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': evidenceEventPk(eventId) },
    });
    return items.flatMap((i) => refsOf(i, String(i.sk)));
  }
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

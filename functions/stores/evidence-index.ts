/**
 * The customer's evidence index (docs/evidence-and-privacy.md "Finding a record"): for each customer and month, a ref
 * to every send proven for them (`<batch> <notificationId>`, domain/evidence-batch.ts). Export and the operator's
 * commands find a customer's evidence with one Query, also years after every hot item expired, and never list the
 * bucket. Kept as long as the evidence it points to (TTL: the month's end plus the retention and a day).
 *
 * Item: pk `EVIDENCE_INDEX#<userId>`, sk `<yyyy-mm>`, `refs` (a string set), `expiresAt`. One write per customer per
 * batch (ADD: written again, a ref changes nothing), so an index write is never per send.
 */
import { type DynamoDBDocumentClient, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { parseIndexRef } from '../domain/evidence-batch.ts';
import { evidenceIndexPk } from '../domain/keys.ts';

export interface EvidenceIndexEntry {
  readonly userId: string;
  readonly month: string;
  readonly refs: readonly string[];
}

export interface EvidenceIndex {
  /** Adds refs to a customer's month; kept until `expiresAt` (epoch seconds). Safe to repeat. */
  add(entry: EvidenceIndexEntry, expiresAt: number): Promise<void>;
  /** Every send indexed for a customer, oldest month first: its batch and notification. */
  sendsOf(userId: string): Promise<{ batch: string; notificationId: string }[]>;
}

const DAY_S = 86_400;

/** When a month's index item may go: the month's last send is kept `retentionDays`, and the item a day longer. */
export function indexExpiresAt(month: string, retentionDays: number): number {
  const [y, m] = month.split('-').map(Number) as [number, number];
  const monthEnd = Date.UTC(y, m, 1) / 1000;
  return monthEnd + (retentionDays + 1) * DAY_S;
}

export class DynamoEvidenceIndex implements EvidenceIndex {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async add(entry: EvidenceIndexEntry, expiresAt: number): Promise<void> {
    if (entry.refs.length === 0) return;
    await this.client.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: { pk: evidenceIndexPk(entry.userId), sk: entry.month },
        UpdateExpression: 'ADD refs :refs SET kind = :kind, userId = :user, expiresAt = :exp',
        ExpressionAttributeValues: {
          ':refs': new Set(entry.refs),
          ':kind': 'EVIDENCE_INDEX',
          ':user': entry.userId,
          ':exp': expiresAt,
        },
      }),
    );
  }

  async sendsOf(userId: string): Promise<{ batch: string; notificationId: string }[]> {
    const sends: { batch: string; notificationId: string }[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const page = await this.client.send(
        new QueryCommand({
          TableName: this.tableName,
          KeyConditionExpression: 'pk = :pk',
          ExpressionAttributeValues: { ':pk': evidenceIndexPk(userId) },
          ExclusiveStartKey: start,
        }),
      );
      for (const item of page.Items ?? []) {
        for (const ref of [...((item.refs as Set<string> | undefined) ?? [])].sort()) {
          const parsed = parseIndexRef(ref);
          if (parsed !== undefined) sends.push(parsed);
        }
      }
      start = page.LastEvaluatedKey;
    } while (start !== undefined);
    return sends;
  }
}

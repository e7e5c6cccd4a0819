/**
 * Where the provider's reports on a send batch's sends are (docs/evidence-and-privacy.md "Finding a record"): a
 * feedback invocation writes its reports as one object of its own (`batches/<day>/<hhmmss>-feedback-<id>`), whatever
 * send batches they are on, and names it here once per send batch it holds reports on — so a reader of a send finds
 * its reports with one Query, never a listing of the bucket.
 *
 * Item (docs/table.md): pk `EVIDENCE_REPORTS#<send batch>`, sk `<feedback batch name>`, `reports` (how many on that
 * send batch), `expiresAt` (the reports' retention and a day). A put: written again (a retry), it changes nothing a
 * reader sees.
 */
import { type DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import { evidenceReportsPk } from '../domain/keys.ts';
import { queryAll } from './paged-query.ts';

export interface EvidenceReports {
  /** Names `reportsBatch` as holding `reports` reports on sends of `sendBatch`, until `expiresAt` (epoch s). */
  add(sendBatch: string, reportsBatch: string, reports: number, expiresAt: number): Promise<void>;
  /** The feedback batches that hold reports on sends of `sendBatch`, in name order. */
  of(sendBatch: string): Promise<string[]>;
}

export class DynamoEvidenceReports implements EvidenceReports {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async add(sendBatch: string, reportsBatch: string, reports: number, expiresAt: number): Promise<void> {
    await this.client.send(
      new PutCommand({
        TableName: this.tableName,
        Item: { pk: evidenceReportsPk(sendBatch), sk: reportsBatch, kind: 'EVIDENCE_REPORTS', reports, expiresAt },
      }),
    );
  }

  async of(sendBatch: string): Promise<string[]> {
    const items = await queryAll(this.client, {
      TableName: this.tableName,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': evidenceReportsPk(sendBatch) },
      ProjectionExpression: 'sk',
      // A report just written is found by the next read (a support agent looking right after the bounce).
      ConsistentRead: true,
    });
    return items.map((i) => String(i.sk)).sort();
  }
}

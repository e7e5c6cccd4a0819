/**
 * Recording a provider's report names the evidence batch of the send it is about, from the write's own answer or the
 * read it decided on — never a read of its own: the report's evidence goes under that batch, and a report costs its
 * notification one write, not a write and a strongly consistent read (docs/measurements.md "Per operation").
 */
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { DELIVERY_RANK, type Feedback } from '../../functions/domain/feedback.ts';
import { DynamoDeliveryStore } from '../../functions/feedback/delivery-store.ts';
import { countingClient } from '../support/counting-client.ts';
import { type LocalTable, newLocalTable } from '../support/local-table.ts';

let table: LocalTable;
let store: DynamoDeliveryStore;
let sent: string[] = [];

beforeAll(async () => {
  table = await newLocalTable(inject('dynamoEndpoint'));
  const counting = countingClient(table.endpoint);
  sent = counting.sent;
  store = new DynamoDeliveryStore(counting.doc, table.tableName);
});

const target = (eventId: string) => ({ notificationId: `${eventId}#SMS`, eventId, channel: 'SMS' as const });

async function sentNotification(
  eventId: string,
  evidence?: { batch: string; attempt?: number; acceptedAt?: string },
  item: { attempt?: number; createdAt?: string } = {},
) {
  await table.doc.send(
    new PutCommand({
      TableName: table.tableName,
      Item: {
        pk: `EVENT#${eventId}`,
        sk: 'NOTIFICATION#SMS',
        kind: 'NOTIFICATION',
        status: 'SENT',
        attempt: 1,
        providerMessageId: 'm-2',
        ...item,
        ...(evidence === undefined ? {} : { evidence: { sha256: 'a'.repeat(64), acceptedAt: 'x', ...evidence } }),
      },
    }),
  );
}

const report = (messageId: string, status: 'DELIVERED' | 'FAILED', atMs: number): Feedback => ({
  channel: 'SMS',
  messageId,
  status,
  rank: DELIVERY_RANK[status],
  at: new Date(atMs).toISOString(),
  atMs,
  sentAtMs: atMs - 1_000,
});

describe('a provider report names the batch of the send it is about, without a read of its own', () => {
  it('the common case: one conditional write, whose answer names the batch', async () => {
    await sentNotification('e-1', { batch: 'dispatch-batch-1' });
    sent.length = 0;
    expect(await store.recordDelivery(target('e-1'), report('m-2', 'DELIVERED', 2_000_000))).toEqual({
      kind: 'recorded',
      sendBatch: 'dispatch-batch-1',
    });
    expect(sent).toEqual(['UpdateCommand']);
  });

  it('a duplicate report: the read it decides on names the batch', async () => {
    await sentNotification('e-2', { batch: 'dispatch-batch-2' });
    await store.recordDelivery(target('e-2'), report('m-2', 'DELIVERED', 2_000_000));
    sent.length = 0;
    expect(await store.recordDelivery(target('e-2'), report('m-2', 'DELIVERED', 2_000_000))).toEqual({
      kind: 'unchanged',
      sendBatch: 'dispatch-batch-2',
    });
    expect(sent).toEqual(['UpdateCommand', 'GetCommand']);
  });

  it('a report on an earlier send, a send from before batches, an item gone: no batch', async () => {
    await sentNotification('e-3', { batch: 'dispatch-batch-3' });
    expect(await store.recordDelivery(target('e-3'), report('m-1', 'DELIVERED', 2_000_000))).toEqual({
      kind: 'otherSend',
    });
    await sentNotification('e-4');
    expect(await store.recordDelivery(target('e-4'), report('m-2', 'FAILED', 2_000_000))).toEqual({
      kind: 'recorded',
    });
    expect(await store.recordDelivery(target('e-5'), report('m-2', 'DELIVERED', 2_000_000))).toEqual({
      kind: 'noNotification',
    });
  });
  it("a send whose item carries an earlier attempt's reference (this attempt wrote none): no batch, on the write's answer and on the read alike", async () => {
    // Attempt 2's SENT named no record; the reference a resend left is attempt 1's, in another batch.
    await sentNotification('e-6', { batch: 'dispatch-batch-attempt-1', attempt: 1 }, { attempt: 2 });
    expect(await store.recordDelivery(target('e-6'), report('m-2', 'DELIVERED', 2_000_000))).toEqual({
      kind: 'recorded',
    });
    expect(await store.recordDelivery(target('e-6'), report('m-2', 'DELIVERED', 2_000_000))).toEqual({
      kind: 'unchanged',
    });
    // A reference from before references named their attempt: accepted before the resend moved createdAt, earlier.
    const resentAt = '2026-12-05T09:00:00.000Z';
    const before = '2026-12-05T08:00:00.000Z';
    await sentNotification(
      'e-7',
      { batch: 'dispatch-batch-old', acceptedAt: before },
      { attempt: 2, createdAt: resentAt },
    );
    await store.recordDelivery(target('e-7'), report('m-2', 'DELIVERED', 2_000_000));
    expect(await store.recordDelivery(target('e-7'), report('m-2', 'DELIVERED', 2_000_000))).toEqual({
      kind: 'unchanged',
    });
    // This attempt's own reference is named by the read as by the write.
    await sentNotification(
      'e-8',
      { batch: 'dispatch-batch-attempt-2', attempt: 2 },
      { attempt: 2, createdAt: resentAt },
    );
    expect(await store.recordDelivery(target('e-8'), report('m-2', 'DELIVERED', 2_000_000))).toEqual({
      kind: 'recorded',
      sendBatch: 'dispatch-batch-attempt-2',
    });
    expect(await store.recordDelivery(target('e-8'), report('m-2', 'DELIVERED', 2_000_000))).toEqual({
      kind: 'unchanged',
      sendBatch: 'dispatch-batch-attempt-2',
    });
  });
});

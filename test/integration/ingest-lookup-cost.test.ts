/**
 * Issue 15 on DynamoDB Local: a batch redelivered whole costs about one request (one BatchGetItem for up to 100
 * records), not one cancelled transaction per record — counted at the SDK client, as DynamoDB would see them.
 */
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { DynamoInboxStore } from '../../functions/ingest/inbox-store.ts';
import { ingestBatch } from '../../functions/ingest/ingest-batch.ts';
import { localClient } from '../../tools/local/dynamodb-local.ts';
import { mskEvent } from '../../tools/local/msk.ts';
import { ingestDeps } from '../support/deliver.ts';
import { transferEvent } from '../support/events.ts';
import { type LocalTable, newLocalTable } from '../support/local-table.ts';

let table: LocalTable;
beforeAll(async () => {
  table = await newLocalTable(inject('dynamoEndpoint'));
});

function countedStore() {
  const client = localClient(table.endpoint);
  const requests: string[] = [];
  client.middlewareStack.add(
    (next, context) => async (args) => {
      requests.push(String(context.commandName));
      return next(args);
    },
    { step: 'initialize', name: 'countRequests' },
  );
  return { store: new DynamoInboxStore(DynamoDBDocumentClient.from(client), table.tableName), requests };
}

const deliver = (store: DynamoInboxStore, values: object[], from: number) =>
  ingestBatch(
    mskEvent(values.map((value, i) => ({ topic: 'banking.transfers', partition: 3, offset: from + i, value }))),
    ingestDeps(store),
  );

describe('the look-up before the transactions, on DynamoDB Local', () => {
  it('a batch of 100 redelivered whole costs one request; new events one transaction each, plus the look-up', async () => {
    const values = Array.from({ length: 100 }, (_, i) => transferEvent({ eventId: `redelivered-whole-${i}` }));
    const first = countedStore();
    const r1 = await deliver(first.store, values, 0);
    expect(r1.figures).toMatchObject({ received: 100, accepted: 100 });
    expect(first.requests.filter((c) => c === 'TransactWriteItemsCommand')).toHaveLength(100);
    expect(first.requests.filter((c) => c === 'BatchGetItemCommand')).toHaveLength(1);

    const again = countedStore();
    const r2 = await deliver(again.store, values, 0);
    expect(r2.figures).toMatchObject({ received: 100, duplicates: 100, accepted: 0 });
    expect(again.requests).toEqual(['BatchGetItemCommand']);
    // Nothing changed: still one inbox and its notifications per event.
    const items = await table.eventItems('redelivered-whole-7');
    expect(items.filter((i) => i.kind === 'INBOX')).toHaveLength(1);
  });

  it('a reused eventId found by the look-up is a conflict: one quarantine put and its reference, no transaction', async () => {
    const first = countedStore();
    await deliver(first.store, [transferEvent({ eventId: 'lookup-conflict', data: { amount: '100' } })], 500);
    const again = countedStore();
    const r = await deliver(again.store, [transferEvent({ eventId: 'lookup-conflict', data: { amount: '999' } })], 501);
    expect(r.results.map((x) => x.kind)).toEqual(['conflict']);
    // The quarantine item, then its reference in the event's partition (support staff find it by the event id).
    expect(again.requests).toEqual(['BatchGetItemCommand', 'PutItemCommand', 'PutItemCommand']);
  });
});

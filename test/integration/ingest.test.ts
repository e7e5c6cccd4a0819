/**
 * Ingest on DynamoDB Local: real TransactWriteItems, real condition checks, the table built from the stack's definition.
 */
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import type { IngestResult } from '../../functions/ingest/ingest-record.ts';
import { mskEvent } from '../../tools/local/msk.ts';
import { type Deliverer, delivererOn } from '../support/deliver.ts';
import { transferEvent } from '../support/events.ts';
import { type LocalTable, newLocalTable } from '../support/local-table.ts';

let table: LocalTable;
let ingest: Deliverer;
const deliver: Deliverer['deliver'] = (values, partition) => ingest.deliver(values, partition);

beforeAll(async () => {
  table = await newLocalTable(inject('dynamoEndpoint'));
  ingest = delivererOn(table);
});

const kinds = (results: IngestResult[]) => results.map((r) => r.kind);
const sks = (items: Record<string, unknown>[]) => items.map((i) => i.sk).sort();

describe('ingest on DynamoDB Local', () => {
  it('regression (the article pitfall): EMAIL + PUSH + SMS of one event → 1 inbox + 3 notifications, no channel rejected', async () => {
    const r = await deliver([transferEvent({ eventId: 'fanout-1' })]);
    expect(kinds(r.results)).toEqual(['accepted']);
    const items = await table.eventItems('fanout-1');
    expect(sks(items)).toEqual(['INBOX', 'NOTIFICATION#EMAIL', 'NOTIFICATION#PUSH', 'NOTIFICATION#SMS']);
    expect(items.filter((i) => i.kind === 'NOTIFICATION').every((i) => i.status === 'PENDING')).toBe(true);
  });

  it('the same record delivered 5 times sequentially → still 1 + 3 items, 4 duplicates', async () => {
    const e = transferEvent({ eventId: 'redeliver-seq' });
    const results: IngestResult[] = [];
    for (let i = 0; i < 5; i++) results.push(...(await deliver([e])).results);
    expect(kinds(results)).toEqual(['accepted', 'duplicate', 'duplicate', 'duplicate', 'duplicate']);
    expect(await table.eventItems('redeliver-seq')).toHaveLength(4);
  });

  it('the same record delivered 5 times concurrently → still 1 + 3 items, exactly 1 accepted and 4 duplicates', async () => {
    const e = transferEvent({ eventId: 'redeliver-conc' });
    const batches = await Promise.all(Array.from({ length: 5 }, () => deliver([e])));
    const all = kinds(batches.flatMap((b) => b.results)).sort();
    expect(all).toEqual(['accepted', 'duplicate', 'duplicate', 'duplicate', 'duplicate']);
    expect(await table.eventItems('redeliver-conc')).toHaveLength(4);
  });

  it('a producer resend (same event, new offset, other partition, keys reordered) is a duplicate', async () => {
    const e = transferEvent({ eventId: 'resend-1' });
    await deliver([e]);
    const reordered = Object.fromEntries(Object.entries(e).reverse());
    const r = await deliver([reordered], 3);
    expect(kinds(r.results)).toEqual(['duplicate']);
    expect(await table.eventItems('resend-1')).toHaveLength(4);
  });

  it('same eventId with a different payload → EVENT_ID_CONFLICT quarantine, the original untouched', async () => {
    await deliver([transferEvent({ eventId: 'conflict-1' })]);
    const before = await table.eventItems('conflict-1');
    const r = await deliver([transferEvent({ eventId: 'conflict-1', data: { amount: '99999' } })]);
    expect(kinds(r.results)).toEqual(['conflict']);
    expect(await table.eventItems('conflict-1')).toEqual(before);
    const quarantined = (await table.allItems()).filter((i) => i.kind === 'QUARANTINE' && i.eventId === 'conflict-1');
    expect(quarantined).toHaveLength(1);
    expect(quarantined[0]).toMatchObject({ reason: 'EVENT_ID_CONFLICT', sk: 'RECORD' });
  });

  it('one batch of good, bad and duplicate records: good written, bad quarantined, the handler succeeds', async () => {
    await deliver([transferEvent({ eventId: 'mixed-dup' })]);
    const first = ingest.nextOffset();
    const r = await deliver([
      transferEvent({ eventId: 'mixed-good' }),
      '{"eventId": "mixed-bad", ',
      transferEvent({ eventId: 'mixed-dup' }),
      transferEvent({ eventId: 'mixed-unknown', type: 'Nope' }),
      transferEvent({ eventId: 'mixed-good-2', channels: ['EMAIL'] }),
    ]);
    expect(kinds(r.results).sort()).toEqual(['accepted', 'accepted', 'duplicate', 'quarantined', 'quarantined']);
    expect(sks(await table.eventItems('mixed-good'))).toHaveLength(4);
    expect(sks(await table.eventItems('mixed-good-2'))).toEqual(['INBOX', 'NOTIFICATION#EMAIL']);
    const quarantine = (await table.allItems()).filter((i) => i.kind === 'QUARANTINE');
    expect(quarantine.find((q) => q.pk === `QUARANTINE#banking.transfers#0#${first + 1}`)).toMatchObject({
      reason: 'INVALID_JSON',
    });
    expect(quarantine.find((q) => q.pk === `QUARANTINE#banking.transfers#0#${first + 3}`)).toMatchObject({
      reason: 'UNKNOWN_TYPE',
      eventId: 'mixed-unknown',
    });
  });

  it('an empty email stored under the earlier reading (its channel refused as given) still has its resends as duplicates', async () => {
    // The default event (its id used by no other test here), whose earlier hash test/unit/spellings.test.ts pins.
    const e = transferEvent({ recipient: { email: '' } });
    const id = e.eventId as string;
    expect((await deliver([e])).results.map((r) => r.kind === 'accepted' && r.channels)).toEqual([['PUSH', 'SMS']]);
    // What the inbox holds for this event when it was stored before "" read as absent (computed by main then).
    await table.doc.send(
      new UpdateCommand({
        TableName: table.tableName,
        Key: { pk: `EVENT#${id}`, sk: 'INBOX' },
        UpdateExpression: 'SET payloadHash = :h',
        ExpressionAttributeValues: { ':h': 'v2:7e257a24559c93bebd1eb26c4c9639feaa515b7b802adb9ff8f603f364e5a95c' },
      }),
    );
    const before = await table.eventItems(id);
    const r = { results: [...(await deliver([e], 2)).results, ...(await deliver([e], 3)).results] };
    expect(kinds(r.results)).toEqual(['duplicate', 'duplicate']);
    expect(await table.eventItems(id)).toEqual(before);
    const quarantined = (await table.allItems()).filter((i) => i.kind === 'QUARANTINE' && i.eventId === id);
    expect(quarantined).toEqual([]);
  });

  it('on the real adapter: lone surrogates, dirty names and over-precise money never fail the batch', async () => {
    const first = ingest.nextOffset();
    const r = await deliver([
      transferEvent({ eventId: 'dirty-name', data: { counterpartyName: 'Pat\uD800\r\n\u202E' } }),
      transferEvent({ eventId: 'dirty-user', recipient: { userId: 'u\uD800' } }),
      transferEvent({ eventId: 'dirty-money', data: { amount: '10000.5', currency: 'JPY' } }),
      transferEvent({ eventId: 'dirty-after' }),
    ]);
    expect(kinds(r.results)).toEqual(['accepted', 'quarantined', 'quarantined', 'accepted']);
    const name = (await table.eventItems('dirty-name')).find((i) => i.kind === 'NOTIFICATION')?.data;
    expect(name).toMatchObject({ counterpartyName: 'Pat\uFFFD' });
    const reasons = (await table.allItems())
      .filter(
        (i) => i.kind === 'QUARANTINE' && [first + 1, first + 2].includes((i.source as { offset: number }).offset),
      )
      .map((i) => i.reason)
      .sort();
    expect(reasons).toEqual(['INVALID_AMOUNT', 'SCHEMA_VIOLATION']);
  });

  it('an event with no contact point → inbox only', async () => {
    const e = transferEvent({
      eventId: 'no-contact',
      recipient: { email: undefined, pushEndpointArn: undefined, phoneNumber: undefined },
    });
    const r = await deliver([e]);
    expect(kinds(r.results)).toEqual(['accepted']);
    expect(sks(await table.eventItems('no-contact'))).toEqual(['INBOX']);
  });

  it('the real handler, configured from the environment, writes through AWS_ENDPOINT_URL_DYNAMODB', async () => {
    process.env.AWS_ENDPOINT_URL_DYNAMODB = table.endpoint;
    process.env.TABLE_NAME = table.tableName;
    const { handler } = await import('../../functions/ingest/index.ts');
    const event = mskEvent([
      { topic: 'banking.transfers', partition: 9, offset: 1, value: transferEvent({ eventId: 'via-handler' }) },
    ]);
    await handler(event, {} as never);
    await handler(event, {} as never);
    expect(await table.eventItems('via-handler')).toHaveLength(4);
  });
});

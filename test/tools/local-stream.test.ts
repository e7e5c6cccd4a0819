/**
 * The local stream emulator on DynamoDB Local hands dispatch each record as Lambda's event source mapping does: every
 * image in DynamoDB JSON with its type on every value — an empty map is {"M":{}} (an erased notification's `data`),
 * an empty list {"L":[]} — so the real handler reads locally what it reads in AWS.
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { StreamReader } from '../../tools/local/stream-reader.ts';
import { type LocalTable, newLocalTable } from '../support/local-table.ts';

let table: LocalTable;
let reader: StreamReader;

beforeAll(async () => {
  table = await newLocalTable(inject('dynamoEndpoint'));
  reader = new StreamReader(table.endpoint, table.tableName);
});
afterAll(() => reader.close());

describe('the local stream, as Lambda delivers it', () => {
  it('an empty map and an empty list keep their type, at the top and nested, in the new and the old image', async () => {
    const key = { pk: 'EVENT#ls-1', sk: 'NOTIFICATION#SMS' };
    const item = {
      ...key,
      kind: 'NOTIFICATION',
      status: 'SENT',
      data: {},
      nested: { inner: {}, list: [], deeper: { none: {} } },
      list: [{}, [], 'x'],
    };
    await table.doc.send(new PutCommand({ TableName: table.tableName, Item: item }));
    await table.doc.send(
      new UpdateCommand({
        TableName: table.tableName,
        Key: key,
        UpdateExpression: 'SET erasedAt = :at',
        ExpressionAttributeValues: { ':at': '2026-12-02T05:00:00.000Z' },
      }),
    );
    const stored = (
      await table.doc.send(new GetCommand({ TableName: table.tableName, Key: key, ConsistentRead: true }))
    ).Item;
    const [insert, modify] = await reader.poll();
    const image = (r: typeof insert, which: 'NewImage' | 'OldImage') =>
      r?.dynamodb?.[which] as Record<string, AttributeValue> | undefined;
    expect(image(insert, 'NewImage')?.data).toEqual({ M: {} });
    expect(image(insert, 'NewImage')?.nested).toEqual({
      M: { inner: { M: {} }, list: { L: [] }, deeper: { M: { none: { M: {} } } } },
    });
    expect(unmarshall(image(insert, 'NewImage') ?? {})).toEqual(item);
    expect(unmarshall(image(modify, 'OldImage') ?? {})).toEqual(item);
    expect(unmarshall(image(modify, 'NewImage') ?? {})).toEqual(stored);
  });
});

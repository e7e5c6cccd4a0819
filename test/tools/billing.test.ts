/** The bench's DynamoDB billing rules (tools/bench/billing.ts), on requests shaped as notifier and Powertools send them. */
import { marshall } from '@aws-sdk/util-dynamodb';
import { describe, expect, it } from 'vitest';
import { itemBytes, readUnits, requestUnits, writeUnits } from '../../tools/bench/billing.ts';

describe('billing', () => {
  it('sizes an item as names plus values, in native or wire format alike', () => {
    const item = { pk: 'EVENT#a', n: 12345, ok: true, m: { x: 'yz' } };
    // pk(2)+7, n(1)+ceil(5/2)+1=4, ok(2)+1, m(1)+3+(1+1+2)
    expect(itemBytes(item)).toBe(9 + 5 + 3 + 8);
    expect(itemBytes(marshall(item))).toBe(itemBytes(item));
  });

  it('rounds writes up per KB and reads per 4 KB; a missing item still costs a read', () => {
    expect(writeUnits(1)).toBe(1);
    expect(writeUnits(1025)).toBe(2);
    expect(readUnits(0, true)).toBe(1);
    expect(readUnits(5000, false)).toBe(1);
  });

  it('a transaction costs 2 units per KB per item, plus the index put of each notification; cancelled, no index', () => {
    const input = {
      TransactItems: [
        { Put: { Item: { pk: 'EVENT#a', sk: 'INBOX' } } },
        {
          Put: {
            Item: { pk: 'EVENT#a', sk: 'NOTIFICATION#EMAIL', sweepKey: 'PENDING#EMAIL#1', big: 'x'.repeat(1100) },
          },
        },
      ],
    };
    expect(requestUnits('TransactWriteItemsCommand', input, {}, undefined)).toEqual({
      rru: 0,
      wru: 2 + 4 + 1,
      indexWru: 1,
    });
    expect(requestUnits('TransactWriteItemsCommand', input, undefined, 'TransactionCanceledException')).toEqual({
      rru: 0,
      wru: 6,
      indexWru: 0,
    });
  });

  it('a strongly consistent BatchGetItem bills each key: a hit by the item size, a miss 1 unit; unprocessed keys nothing', () => {
    const input = { RequestItems: { t: { Keys: [{}, {}, {}, {}], ConsistentRead: true } } };
    const output = { Responses: { t: [{ pk: 'EVENT#a' }] }, UnprocessedKeys: { t: { Keys: [{}] } } };
    expect(requestUnits('BatchGetItemCommand', input, output, undefined, { inboxBytes: 5000 })).toEqual({
      rru: 2 + 2,
      wru: 0,
      indexWru: 0,
    });
  });

  it('a failed conditional put still costs its write units', () => {
    const input = { Item: marshall({ id: 'k', status: 'INPROGRESS', expiration: 1 }) };
    expect(requestUnits('PutItemCommand', input, undefined, 'ConditionalCheckFailedException').wru).toBe(1);
  });
});

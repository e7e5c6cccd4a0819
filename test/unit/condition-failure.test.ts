/**
 * What a refused write answers with (functions/stores/condition-failure.ts): the stored item, decoded from DynamoDB's
 * wire format — or nothing, so the caller falls back to reading the item, never deciding on values it cannot read.
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { refusedItem } from '../../functions/stores/condition-failure.ts';

const refusal = (Item?: unknown) =>
  Object.assign(new ConditionalCheckFailedException({ message: 'The conditional request failed', $metadata: {} }), {
    ...(Item === undefined ? {} : { Item }),
  });

describe('the item a refused write answers with', () => {
  it('is the stored item decoded from the wire format', () => {
    const item = { pk: { S: 'EVENT#e1' }, status: { S: 'SENDING' }, attempt: { N: '2' } };
    expect(refusedItem(refusal(item))).toEqual({ pk: 'EVENT#e1', status: 'SENDING', attempt: 2 });
  });

  it('is nothing when the answer holds no item, or one not in wire format: the caller reads the item instead', () => {
    expect(refusedItem(refusal())).toBeUndefined();
    expect(refusedItem(refusal({ status: 'SENT', attempt: 1 }))).toBeUndefined();
  });
});

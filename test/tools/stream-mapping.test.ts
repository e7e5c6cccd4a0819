/**
 * The local DynamoDB Streams event source mapping gives up what AWS gives up: when the retries are spent the whole
 * failing batch goes to the on-failure list (not one record of it), bisecting does not consume the retry quota, and a
 * record past MaximumRecordAgeInSeconds is discarded unprocessed
 * (https://docs.aws.amazon.com/lambda/latest/dg/services-dynamodb-errors.html). The chaos suite runs on this mapping,
 * so what it calls "never lost" holds against AWS's behaviour, not a kinder one.
 */
import type { DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { StreamMapping } from '../../tools/local/pipeline.ts';
import type { StreamReader } from '../../tools/local/stream-reader.ts';
import { streamRecord } from '../support/stream.ts';

const records = (n: number): DynamoDBRecord[] =>
  Array.from({ length: n }, (_, i) => {
    const r = streamRecord('INSERT', {
      pk: `EVENT#e${i}`,
      sk: 'NOTIFICATION#EMAIL',
      kind: 'NOTIFICATION',
      status: 'PENDING',
    });
    return { ...r, dynamodb: { ...r.dynamodb, SequenceNumber: String(i) } };
  });
const once = (batch: DynamoDBRecord[]) => {
  let given = false;
  return {
    poll: async () => {
      if (given) return [];
      given = true;
      return batch;
    },
  } as unknown as StreamReader;
};
const ids = (rs: DynamoDBRecord[]) => rs.map((r) => r.dynamodb?.SequenceNumber);

describe('the local stream mapping, as AWS runs it', () => {
  it('retries spent on a partial failure: the whole failing batch is discarded, from the checkpoint on', async () => {
    const invoked: string[][] = [];
    const handler = async (event: DynamoDBStreamEvent): Promise<DynamoDBBatchResponse> => {
      invoked.push(ids(event.Records) as string[]);
      // Record 2 never succeeds.
      return {
        batchItemFailures: event.Records.some((r) => r.dynamodb?.SequenceNumber === '2')
          ? [{ itemIdentifier: '2' }]
          : [],
      };
    };
    const mapping = new StreamMapping(once(records(5)), handler, { maxRetries: 2 });
    await mapping.pump();
    expect(ids(mapping.onFailure)).toEqual(['2', '3', '4']);
    // The first try and its two retries (MaximumRetryAttempts 2), each from the checkpoint.
    expect(invoked).toEqual([
      ['0', '1', '2', '3', '4'],
      ['2', '3', '4'],
      ['2', '3', '4'],
    ]);
  });

  it('a function error bisects without consuming retries; the one bad record is discarded alone at the end', async () => {
    let invocations = 0;
    const handler = async (event: DynamoDBStreamEvent): Promise<DynamoDBBatchResponse> => {
      invocations++;
      if (event.Records.some((r) => r.dynamodb?.SequenceNumber === '5')) throw new Error('poison');
      return { batchItemFailures: [] };
    };
    const mapping = new StreamMapping(once(records(8)), handler, { maxRetries: 2 });
    await mapping.pump();
    expect(ids(mapping.onFailure)).toEqual(['5']);
    expect(mapping.bisections).toBeGreaterThan(0);
    // 8 → 4+4 → 2+2 → 1+1: the single bad record then has its 1 + 2 tries.
    expect(invocations).toBeLessThanOrEqual(12);
  });

  it('a record older than MaximumRecordAgeInSeconds is discarded instead of retried', async () => {
    let now = 0;
    const handler = async (event: DynamoDBStreamEvent): Promise<DynamoDBBatchResponse> => {
      now += 40_000; // each try takes a while
      return { batchItemFailures: [{ itemIdentifier: String(event.Records[0]?.dynamodb?.SequenceNumber) }] };
    };
    const mapping = new StreamMapping(once(records(3)), handler, {
      maxRetries: 100,
      maxRecordAgeMs: 60_000,
      now: () => now,
    });
    await mapping.pump();
    expect(ids(mapping.onFailure)).toEqual(['0', '1', '2']);
    expect(now).toBeLessThanOrEqual(120_000);
  });
});

/**
 * The sweep-index shard mark: one item, (SWEEP#SHARDS, MARK), holding the highest shard count any deploy of the stack
 * has written keys with. The shard count follows the stack's peak setting and may change between deploys; items keep
 * the sweepKey they were written with, so after a shrink (64 → 8) some still sit in shards 8…63. Every function raises
 * the mark to its own count before it writes a key (ingest and dispatch once per execution environment, the sweeper
 * every run), and the sweeper visits max(mark, its own count) shards: no item is ever in a shard it does not visit.
 *
 * The mark never goes down by itself: a shard left empty costs the sweeper one empty Query per run.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { UnexpectedResponseError } from '../commons/errors.ts';
import { SWEEP_SHARD_MARK_KEY } from '../domain/keys.ts';
import { isConditionFailure } from './condition-failure.ts';

export interface SweepShardMark {
  /** Raises the mark to at least `shards`; resolves with the mark after the write (never below `shards`). */
  raise(shards: number, now: number): Promise<number>;
}

export class DynamoSweepShardMark implements SweepShardMark {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async raise(shards: number, now: number): Promise<number> {
    try {
      // The stream filter passes only kind NOTIFICATION: this item never reaches dispatch.
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: SWEEP_SHARD_MARK_KEY,
          UpdateExpression: 'SET kind = :kind, shards = :n, updatedAt = :now',
          ConditionExpression: 'attribute_not_exists(shards) OR shards < :n',
          ExpressionAttributeValues: { ':kind': 'SWEEP_SHARDS', ':n': shards, ':now': new Date(now).toISOString() },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return shards;
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      // The mark is already at least this high: it says how high.
      const old = (error as { Item?: Parameters<typeof unmarshall>[0] }).Item;
      const stored = old === undefined ? Number.NaN : Number(unmarshall(old).shards);
      if (!Number.isInteger(stored) || stored < shards) {
        throw new UnexpectedResponseError('the sweep shard mark failed its condition without a higher count', {
          cause: error,
        });
      }
      return stored;
    }
  }
}

/** Raises the mark once per execution environment, before the first write; a failure is retried on the next call. */
export function onceRaised(mark: SweepShardMark, shards: number, now: () => number): () => Promise<void> {
  let raised: Promise<unknown> | undefined;
  return async () => {
    raised ??= mark.raise(shards, now()).catch((error) => {
      raised = undefined;
      throw error;
    });
    await raised;
  };
}

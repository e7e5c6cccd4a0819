/**
 * DynamoDB adapter for a region's fence table (docs/regions.md "The fence"): `CONTROL` and its shards `FENCE#<n>`, in
 * a regional table nothing replicates into. Each region's functions read only their own; an operator's promotion or
 * demotion writes it, conditional on the state and epoch it replaces, so two operators cannot both move it.
 *
 * Reads: the claim takes the epoch from `CONTROL` cached for at most a second; a fenced cache is read again,
 * consistently (the region may just have been promoted). The send reads one shard, consistently, immediately before
 * the provider call. A promotion writes every shard, then `CONTROL`; a demotion `CONTROL`, then every shard: the
 * region is fenced when its last shard says so.
 */
import {
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  type PutCommandInput,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { UnexpectedResponseError } from '../commons/errors.ts';
import {
  claimEpochOf,
  FENCE_CONTROL_KEY,
  type FenceControl,
  type FenceShard,
  type FenceState,
  fenceShardKey,
  fenceShardOf,
  sendPermitted,
} from '../domain/fence.ts';
import { isConditionFailure } from './condition-failure.ts';

/** What the pipeline asks of its region's fence. */
export interface FenceGate {
  /** The epoch this region claims at now, or undefined while it is fenced. */
  claimEpoch(): Promise<number | undefined>;
  /** CONTROL as this region's functions see it (cached for at most a second while ACTIVE). */
  current(): Promise<FenceControl | undefined>;
  /** Whether a send of this notification, claimed at `claimEpoch`, may start now: one consistent shard read. */
  permitsSend(notificationId: string, claimEpoch: number | undefined): Promise<boolean>;
}

/** The fence moved under a writer: another operator, or a state the writer did not expect. */
export class FenceMovedError extends Error {
  override name = 'FenceMovedError';
}

/** How long the claim trusts a cached CONTROL. */
export const CONTROL_CACHE_MS = 1_000;

export class DynamoFenceStore implements FenceGate {
  private cached: { control: FenceControl | undefined; at: number } | undefined;

  constructor(
    private readonly client: DynamoDBDocumentClient,
    readonly tableName: string,
    readonly shards: number,
    // Read at each call, not captured: a clock set after construction (a test's, the drill's) is the one obeyed.
    private readonly now: () => number = () => Date.now(),
  ) {}

  async control(consistent = true): Promise<FenceControl | undefined> {
    const r = await this.client.send(
      new GetCommand({ TableName: this.tableName, Key: { pk: FENCE_CONTROL_KEY }, ConsistentRead: consistent }),
    );
    const control = r.Item === undefined ? undefined : controlOf(r.Item);
    this.cached = { control, at: this.now() };
    return control;
  }

  /** CONTROL as this region's functions see it: cached for at most a second while it says ACTIVE. */
  async current(): Promise<FenceControl | undefined> {
    const fresh = this.cached !== undefined && this.now() - this.cached.at <= CONTROL_CACHE_MS;
    if (fresh && claimEpochOf(this.cached?.control) !== undefined) return this.cached?.control;
    // Fenced, or not read lately: read again, consistently (the region may just have been promoted).
    return this.control(true);
  }

  async claimEpoch(): Promise<number | undefined> {
    return claimEpochOf(await this.current());
  }

  async shard(n: number): Promise<FenceShard | undefined> {
    const r = await this.client.send(
      new GetCommand({ TableName: this.tableName, Key: { pk: fenceShardKey(n) }, ConsistentRead: true }),
    );
    if (r.Item === undefined) return undefined;
    const { state, epoch } = r.Item;
    if ((state !== 'ACTIVE' && state !== 'FENCED') || typeof epoch !== 'number') {
      throw new UnexpectedResponseError(`fence shard ${n} is malformed`);
    }
    return { state, epoch };
  }

  async permitsSend(notificationId: string, claimEpoch: number | undefined): Promise<boolean> {
    return sendPermitted(await this.shard(fenceShardOf(notificationId, this.shards)), claimEpoch);
  }

  /** The stack's first state, written only if the table holds none (a redeploy never moves a live fence). */
  async initialise(control: FenceControl): Promise<'written' | 'present'> {
    try {
      await this.put({ pk: FENCE_CONTROL_KEY, ...control }, 'attribute_not_exists(pk)');
    } catch (error) {
      if (isConditionFailure(error)) return 'present';
      throw error;
    }
    await this.writeShards(control.state, control.epoch, undefined);
    return 'written';
  }

  /**
   * ACTIVE at `next.epoch`: every shard, then CONTROL, each conditional on what `expected` says the fence held (or on
   * the move being done already, so an interrupted promotion is run again). Throws FenceMovedError otherwise.
   */
  async activate(next: FenceControl, expected: FenceControl | undefined): Promise<void> {
    await this.writeShards('ACTIVE', next.epoch, expected);
    await this.putControl(next, expected);
  }

  /** FENCED: CONTROL first (the claim stops), then every shard (the send stops); returns when the last is written. */
  async fence(next: FenceControl, expected: FenceControl | undefined): Promise<number> {
    await this.putControl(next, expected);
    await this.writeShards('FENCED', next.epoch, expected);
    return this.now();
  }

  /** Records on CONTROL what a demotion established afterwards (quiescence), without moving the fence. */
  async note(
    fields: Pick<FenceControl, 'quiescentAt' | 'predecessor' | 'lookupUntil' | 'mappingsDisabledAt' | 'successorPass'>,
    epoch: number,
  ): Promise<void> {
    const names = Object.keys(fields).filter((k) => fields[k as keyof typeof fields] !== undefined);
    if (names.length === 0) return;
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk: FENCE_CONTROL_KEY },
          ConditionExpression: 'epoch = :epoch',
          UpdateExpression: `SET ${names.map((n) => `#${n} = :${n}`).join(', ')}`,
          ExpressionAttributeNames: Object.fromEntries(names.map((n) => [`#${n}`, n])),
          ExpressionAttributeValues: {
            ':epoch': epoch,
            ...Object.fromEntries(names.map((n) => [`:${n}`, fields[n as keyof typeof fields]])),
          },
        }),
      );
    } catch (error) {
      if (isConditionFailure(error)) throw new FenceMovedError(`the fence of ${this.tableName} moved past ${epoch}`);
      throw error;
    }
  }

  private async putControl(next: FenceControl, expected: FenceControl | undefined): Promise<void> {
    const [condition, values] = expectation(expected, next);
    try {
      await this.put({ pk: FENCE_CONTROL_KEY, ...next }, condition, values);
    } catch (error) {
      if (isConditionFailure(error)) throw new FenceMovedError(`the fence of ${this.tableName} moved meanwhile`);
      throw error;
    }
    this.cached = { control: next, at: this.now() };
  }

  private async writeShards(state: FenceState, epoch: number, expected: FenceControl | undefined): Promise<void> {
    const [condition, values] = expectation(expected, { state, epoch });
    for (let n = 0; n < this.shards; n++) {
      try {
        await this.put({ pk: fenceShardKey(n), state, epoch }, condition, values);
      } catch (error) {
        if (isConditionFailure(error)) throw new FenceMovedError(`fence shard ${n} of ${this.tableName} moved`);
        throw error;
      }
    }
  }

  private async put(item: Record<string, unknown>, condition: string, values?: Record<string, unknown>) {
    const input: PutCommandInput = { TableName: this.tableName, Item: item, ConditionExpression: condition };
    if (values !== undefined) input.ExpressionAttributeValues = values;
    // `state` is one of DynamoDB's reserved words.
    if (condition.includes('#s')) input.ExpressionAttributeNames = { '#s': 'state' };
    await this.client.send(new PutCommand(input));
  }
}

/** The condition of a fence write: the item holds what the writer read, or already what it writes (a re-run). */
function expectation(
  expected: Pick<FenceControl, 'state' | 'epoch'> | undefined,
  next: Pick<FenceControl, 'state' | 'epoch'>,
): [string, Record<string, unknown>] {
  const done = '(#s = :nextState AND epoch = :nextEpoch)';
  const names = { ':nextState': next.state, ':nextEpoch': next.epoch };
  if (expected === undefined) return [`attribute_not_exists(pk) OR ${done}`, names];
  return [
    `(#s = :state AND epoch = :epoch) OR ${done}`,
    { ...names, ':state': expected.state, ':epoch': expected.epoch },
  ];
}

/** CONTROL as read: its state and epoch checked, since every decision rests on them. */
function controlOf(item: Record<string, unknown>): FenceControl {
  const { pk: _pk, ...control } = item;
  if ((control.state !== 'ACTIVE' && control.state !== 'FENCED') || typeof control.epoch !== 'number') {
    throw new UnexpectedResponseError('the fence CONTROL item is malformed');
  }
  return control as unknown as FenceControl;
}

/**
 * DynamoDB adapters for what all dispatch invocations share about a channel, in the one table (the stream filter
 * passes only kind NOTIFICATION, so these items never reach dispatch):
 *
 * - the send-rate windows: item (RATE#<channel>[#<shard>], <window start ms>) counts the tokens taken in that window;
 *   one conditional ADD takes several at once. A window lives an hour (TTL). A channel whose rate is above
 *   RATE_KEY_TOKENS_TARGET is split into shards, each with its share of the rate, so no one partition key takes more
 *   than about 500 writes per second (DynamoDB's ceiling is 1,000 per key): see domain/send-rate.ts.
 * - the circuit breaker: item (BREAKER#<scope>, BREAKER) says until when the scope is held and why. A scope is a
 *   channel (BREAKER#EMAIL: the account's fault) or one push platform application (BREAKER#PUSH#<application ARN>).
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { Channel } from '../domain/channels.ts';
import { breakerKey, rateKey } from '../domain/keys.ts';
import { isConditionFailure } from '../stores/condition-failure.ts';

/** What a take got, and the count its last write saw the window hold (after its own tokens when granted). */
export interface Taken {
  readonly got: number;
  readonly used: number;
}

export interface TokenWindows {
  /**
   * Takes up to `want` of the window's `limit` tokens on one shard of the channel's bucket; resolves with how many it
   * got (0: that shard's window is full) — and, where the store can tell, the window's count as its last write saw it,
   * so the pacer does not write again for tokens the window is known not to have. `limit` is the shard's share of the
   * rate, or a class's ceiling in it. With `allOrNothing` a window with fewer than `want` left grants none (one write,
   * refused, saying the count); otherwise it grants what is left, with a second write.
   */
  take(
    channel: Channel,
    windowStart: number,
    want: number,
    limit: number,
    shard?: number,
    allOrNothing?: boolean,
  ): Promise<number | Taken>;
}

export interface BreakerState {
  readonly openUntil: number;
  readonly code: string;
}

export interface BreakerStore {
  /** `scope`: a channel, or a channel and what in it is held (functions/dispatch/channel-breaker.ts). */
  read(scope: string): Promise<BreakerState | undefined>;
  /** Opens (or extends) the breaker; never shortens one another invocation opened for longer. */
  open(scope: string, state: BreakerState, now: number): Promise<void>;
}

const WINDOW_TTL_SECONDS = 3_600;
const BREAKER_TTL_SECONDS = 86_400;

export class DynamoTokenWindows implements TokenWindows {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async take(
    channel: Channel,
    windowStart: number,
    want: number,
    limit: number,
    shard = 0,
    allOrNothing = false,
  ): Promise<Taken> {
    const pk = rateKey(channel, shard);
    const got = await this.add(pk, windowStart, want, limit);
    if (got.granted) return { got: want, used: got.used };
    if (allOrNothing) return { got: 0, used: got.used };
    // The window had fewer than `want` left: take exactly what is left, once (the failed write told us how many).
    const left = limit - got.used;
    if (left <= 0 || left >= want) return { got: 0, used: got.used };
    const retry = await this.add(pk, windowStart, left, limit);
    return { got: retry.granted ? left : 0, used: retry.used };
  }

  /**
   * One conditional ADD: granted with the window's count after it (UPDATED_NEW), or refused with the count the window
   * already had (the old item, returned on the failed condition). Neither return costs a read unit.
   */
  private async add(pk: string, windowStart: number, n: number, limit: number) {
    try {
      const out = await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk, sk: String(windowStart) },
          UpdateExpression:
            'ADD used :n SET kind = if_not_exists(kind, :kind), expiresAt = if_not_exists(expiresAt, :ttl)',
          ConditionExpression: 'attribute_not_exists(used) OR used <= :max',
          ExpressionAttributeValues: {
            ':n': n,
            ':max': limit - n,
            ':kind': 'RATE',
            ':ttl': Math.floor(windowStart / 1000) + WINDOW_TTL_SECONDS,
          },
          ReturnValues: 'UPDATED_NEW',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return { granted: true, used: Number(out.Attributes?.used ?? n) };
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      const old = (error as { Item?: Parameters<typeof unmarshall>[0] }).Item;
      const used = old === undefined ? limit : Number(unmarshall(old).used ?? limit);
      return { granted: false, used };
    }
  }
}

export class DynamoBreakerStore implements BreakerStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async read(scope: string): Promise<BreakerState | undefined> {
    // Eventually consistent on purpose: half the price, and a breaker seen a second late costs one more refused send.
    const r = await this.client.send(new GetCommand({ TableName: this.tableName, Key: breakerKey(scope) }));
    const item = r.Item;
    if (item === undefined || typeof item.openUntil !== 'number') return undefined;
    return { openUntil: item.openUntil, code: String(item.code ?? '') };
  }

  async open(scope: string, state: BreakerState, now: number): Promise<void> {
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: breakerKey(scope),
          UpdateExpression: 'SET kind = :kind, openUntil = :until, code = :code, updatedAt = :now, expiresAt = :ttl',
          ConditionExpression: 'attribute_not_exists(openUntil) OR openUntil < :until',
          ExpressionAttributeValues: {
            ':kind': 'BREAKER',
            ':until': state.openUntil,
            ':code': state.code,
            ':now': new Date(now).toISOString(),
            ':ttl': Math.floor(state.openUntil / 1000) + BREAKER_TTL_SECONDS,
          },
        }),
      );
    } catch (error) {
      // Another invocation already holds the channel for longer: that is the state we wanted.
      if (!isConditionFailure(error)) throw error;
    }
  }
}

/**
 * Pacing: every dispatch invocation, in every execution environment, takes a token before it sends, from one shared
 * token bucket per channel — a DynamoDB item per one-second window holding the count taken (send-quota-store.ts).
 * Together they never take more than the channel's rate in any window.
 *
 * Inside one execution environment the waiters of a channel queue up behind one another, and the one at the head
 * takes tokens for everyone waiting (up to MAX_CHUNK) with one conditional write: at full load a token costs a
 * fraction of a write, and an environment contends once per window, not once per waiter. A full window means waiting
 * for the next one — only while the caller's deadline allows; otherwise the caller defers the notification.
 *
 * A channel faster than RATE_KEY_TOKENS_TARGET (500/s) has its bucket split into shards, each with its share of the
 * rate (send-quota-store.ts): an environment takes from a shard chosen at random among those it has not yet found full
 * in this window, and waits for the next window only when it found them all full. The shares add up to the rate, so
 * the sum over shards is never above it in any window, and no one key takes more than ~500 writes per second.
 */
import { rateShardsFor, rateShareOf, type TokenWindows } from '../commons/send-quota-store.ts';
import type { Channel } from '../domain/channels.ts';

export interface Pacer {
  /**
   * Resolves true with a token to send now, false when none could be had by `waitUntil` (epoch ms) — also when one
   * is at hand but `waitUntil` has passed: the caller's time is up whatever path the token would come by.
   */
  acquire(channel: Channel, waitUntil: number): Promise<boolean>;
  /** A token taken and not used (the audience check stopped the send, or its time ran out): back for the next record. */
  giveBack?(channel: Channel): void;
}

/** No pacing at all: for tests and measurements that are not about the rate. */
export const unpaced: Pacer = { acquire: async () => true };

export interface PacerClock {
  readonly now: () => number;
  readonly sleep: (ms: number) => Promise<void>;
  readonly random?: () => number;
}

const WINDOW_MS = 1_000;
/** Tokens one write takes at most: enough to cut the writes per send tenfold, few enough to leave others a share. */
export const MAX_CHUNK = 10;

export class SharedTokenBucket implements Pacer {
  private readonly pools = new Map<Channel, { window: number; tokens: number }>();
  private readonly queues = new Map<Channel, Promise<unknown>>();
  private readonly waiting = new Map<Channel, number>();
  /** Shards this environment found full, per channel, in the current window. */
  private readonly full = new Map<Channel, { window: number; shards: Set<number> }>();

  constructor(
    private readonly windows: TokenWindows,
    private readonly rates: Readonly<Record<Channel, number>>,
    private readonly clock: PacerClock,
  ) {}

  acquire(channel: Channel, waitUntil: number): Promise<boolean> {
    this.waiting.set(channel, (this.waiting.get(channel) ?? 0) + 1);
    const turn = async () => {
      try {
        return await this.take(channel, waitUntil);
      } finally {
        this.waiting.set(channel, (this.waiting.get(channel) ?? 1) - 1);
      }
    };
    // One waiter at a time per channel, in arrival order.
    const result = (this.queues.get(channel) ?? Promise.resolve()).then(turn, turn);
    this.queues.set(
      channel,
      result.catch(() => undefined),
    );
    return result;
  }

  giveBack(channel: Channel): void {
    // Only into its own window: a token is never carried into the next one (the windows count what was taken).
    const pool = this.pools.get(channel);
    const window = Math.floor(this.clock.now() / WINDOW_MS) * WINDOW_MS;
    if (pool !== undefined && pool.window === window) pool.tokens++;
  }

  private async take(channel: Channel, waitUntil: number): Promise<boolean> {
    const limit = this.rates[channel];
    const shards = rateShardsFor(limit);
    for (;;) {
      const now = this.clock.now();
      // First: a waiter whose time is up gets nothing, not even a pooled token (it could not send in time).
      if (now > waitUntil) return false;
      const window = Math.floor(now / WINDOW_MS) * WINDOW_MS;
      const pool = this.pools.get(channel);
      if (pool !== undefined && pool.window === window && pool.tokens > 0) {
        pool.tokens--;
        return true;
      }
      const shard = this.pickShard(channel, window, shards);
      if (shard !== undefined) {
        const share = rateShareOf(limit, shards, shard);
        const want = Math.min(MAX_CHUNK, share, Math.max(1, this.waiting.get(channel) ?? 1));
        const got = await this.windows.take(channel, window, want, share, shard);
        if (got > 0) {
          // Tokens belong to their window: if it ended during the write, they are dropped (never carried over).
          this.pools.set(channel, { window, tokens: got });
        } else {
          this.markFull(channel, window, shard);
        }
        continue;
      }
      const next = window + WINDOW_MS;
      if (next > waitUntil) return false;
      // A little jitter so the environments waiting on one channel do not all write at the same instant.
      const jitter = Math.floor((this.clock.random ?? Math.random)() * 20);
      await this.clock.sleep(Math.max(0, next - this.clock.now()) + jitter);
    }
  }

  /** A shard not yet found full in this window, at random (so environments spread over the shards); none: all full. */
  private pickShard(channel: Channel, window: number, shards: number): number | undefined {
    const seen = this.full.get(channel);
    const full = seen?.window === window ? seen.shards : new Set<number>();
    const open = shards - full.size;
    if (open <= 0) return undefined;
    let skip = Math.floor((this.clock.random ?? Math.random)() * open);
    for (let shard = 0; shard < shards; shard++) {
      if (full.has(shard)) continue;
      if (skip-- === 0) return shard;
    }
    return undefined;
  }

  private markFull(channel: Channel, window: number, shard: number): void {
    const seen = this.full.get(channel);
    if (seen?.window === window) seen.shards.add(shard);
    else this.full.set(channel, { window, shards: new Set([shard]) });
  }
}

/**
 * Pacing: every dispatch invocation, in every execution environment, takes a token before it sends, from one shared
 * token bucket per channel — a DynamoDB item per one-second window holding the count taken (send-quota-store.ts).
 * Together they never take more than the channel's rate in any window.
 *
 * Inside one execution environment the waiters of a channel queue up behind one another, and the one at the head
 * takes tokens for everyone waiting (up to MAX_CHUNK) with one conditional write: at full load a token costs a
 * fraction of a write, and an environment contends once per window, not once per waiter. Every write tells the
 * environment the window's count (a granted one its new count, a refused one the old item), so it asks for no more
 * than is left and does not write again for a window it knows is full; its first write in a window takes its chunk or
 * nothing (`chunkOrNothing`), so the environments writing at a window's start do not all chase what is left. A full
 * window means waiting for the next one —
 * only while the caller's deadline allows; otherwise the caller defers the notification.
 *
 * A channel faster than RATE_KEY_TOKENS_TARGET (500/s) has its bucket split into shards, each with its share of the
 * rate (send-quota-store.ts): an environment takes from a shard chosen at random among those it does not know to be
 * full in this window, and waits for the next window only when it found them all full. The shares add up to the rate, so
 * the sum over shards is never above it in any window, and no one key takes more than ~500 writes per second.
 *
 * Critical first (docs/design-choices.md "Critical notices first"): each class has its own ceiling in a window — a
 * critical notice may take the window's whole rate, a normal one all but a reserve, a bulk one all but two reserves —
 * until RELEASE_AT_MS into the window, when what the reserve still holds is released to everyone. So a backlog of
 * normal or bulk notices that fills every window still leaves critical notices their reserve in each, and the rate is
 * not wasted when none comes. Inside an environment the waiters queue by class, then by arrival, and a waiter asleep
 * until the next window wakes as soon as a waiter of a higher class arrives or a token is given back.
 */

import { NOTICE_CLASSES, type NoticeClass } from '../domain/catalogue.ts';
import type { Channel } from '../domain/channels.ts';
import { rateShardsFor, rateShareOf } from '../domain/send-rate.ts';
import type { TokenWindows } from './send-quota-store.ts';

/**
 * A token to send now, with the window (epoch ms) whose count took it: it may be given back only to that window; and
 * the rank of the pool it came from (the class whose ceiling took it): given back, it may serve that class or a higher.
 */
export interface SendToken {
  readonly window: number;
  readonly rank: number;
}

export interface Pacer {
  /**
   * Resolves with a token to send now, false when none could be had by `waitUntil` (epoch ms) — also when one
   * is at hand but `waitUntil` has passed: the caller's time is up whatever path the token would come by.
   */
  acquire(channel: Channel, waitUntil: number, noticeClass?: NoticeClass): Promise<SendToken | false>;
  /**
   * A token taken and not used (the audience check stopped the send, or its time ran out): back for the next record,
   * if the window it was taken in is still the current one. Once per token: a second give-back is ignored.
   */
  giveBack?(channel: Channel, token: SendToken): void;
}

/** No pacing at all: for tests and measurements that are not about the rate. */
export const unpaced: Pacer = { acquire: async () => ({ window: 0, rank: 0 }) };

export interface PacerClock {
  readonly now: () => number;
  readonly sleep: (ms: number) => Promise<void>;
  readonly random?: () => number;
}

const WINDOW_MS = 1_000;
/** The share of each window held for critical notices (at least one token), and between normal and bulk. */
export const RESERVE_SHARE = 0.1;
/** How far into a window the reserve is held; after it, whatever the window has left is anyone's. */
export const RELEASE_AT_MS = 500;

/**
 * The most tokens a notice of `noticeClass` may see taken in a window of `share` tokens, `intoWindow` ms after it
 * started: critical the whole share; before the release, normal all but one reserve and bulk all but two.
 */
export function classCeiling(share: number, noticeClass: NoticeClass, intoWindow: number): number {
  if (noticeClass === 'critical' || intoWindow >= RELEASE_AT_MS) return share;
  const reserve = Math.max(1, Math.ceil(share * RESERVE_SHARE));
  return Math.max(0, share - reserve * (noticeClass === 'normal' ? 1 : 2));
}

const rankOf = (c: NoticeClass) => NOTICE_CLASSES.indexOf(c);

interface Waiter {
  readonly rank: number;
  readonly seq: number;
  readonly waitUntil: number;
  readonly resolve: (got: SendToken | false) => void;
  readonly reject: (error: unknown) => void;
}
/** Tokens one write takes at most: enough to cut the writes per send tenfold, few enough to leave others a share. */
export const MAX_CHUNK = 10;

export class SharedTokenBucket implements Pacer {
  /** Tokens at hand in this environment, and the rank of the class whose ceiling they were taken under. */
  private readonly pools = new Map<Channel, { window: number; tokens: number; rank: number }>();
  /** Waiters per channel, by class then arrival; the first is served, one at a time. */
  private readonly lines = new Map<Channel, Waiter[]>();
  private readonly serving = new Set<Channel>();
  /** The waiter being served per channel: out of its line while it takes, writes or sleeps. */
  private readonly current = new Map<Channel, Waiter>();
  /** Wakes the waiter asleep until the next window when a waiter of a higher class arrives or a token comes back. */
  private readonly wake = new Map<Channel, () => void>();
  private seq = 0;
  /** The tokens given back already: each counts once. */
  private readonly given = new WeakSet<SendToken>();
  /**
   * Per channel, in the current window: the count each shard is known to hold at least — what its last write saw
   * (a refused write's old item, a granted one's new count), or the ceiling it was found full at. Counts only grow
   * within a window, so a write for more than the ceiling less this is known to fail, and is not made.
   */
  private readonly seen = new Map<Channel, { window: number; at: Map<number, number> }>();

  constructor(
    private readonly windows: TokenWindows,
    private readonly rates: Readonly<Record<Channel, number>>,
    private readonly clock: PacerClock,
  ) {}

  acquire(channel: Channel, waitUntil: number, noticeClass: NoticeClass = 'normal'): Promise<SendToken | false> {
    return new Promise<SendToken | false>((resolve, reject) => {
      const waiter: Waiter = { rank: rankOf(noticeClass), seq: this.seq++, waitUntil, resolve, reject };
      const line = this.lines.get(channel) ?? [];
      this.lines.set(channel, line);
      const at = line.findIndex((w) => w.rank > waiter.rank);
      line.splice(at === -1 ? line.length : at, 0, waiter);
      // The one being served is out of the line: it is the one a higher class must wake, even when the line is empty.
      const served = this.current.get(channel);
      if (served !== undefined && waiter.rank < served.rank) this.wake.get(channel)?.();
      // Served after this turn of the event loop: the waiters arriving in it (sends that ended together, their answers
      // read in one poll) are all in line when the first write counts them — one write for all, not one each.
      setImmediate(() => void this.serve(channel));
    });
  }

  giveBack(channel: Channel, token: SendToken): void {
    // Once: a token given back twice (a caller's bug) would pool a send no window's count took.
    if (this.given.has(token)) return;
    this.given.add(token);
    const pool = this.pools.get(channel);
    const window = Math.floor(this.clock.now() / WINDOW_MS) * WINDOW_MS;
    // Only into the window it was taken in, while that window lasts: a token taken in one window and pooled in the
    // next would be a send the next window's count never counted. One dropped costs a send; one carried, the rate.
    // And only into a pool no class below the token's may spend: a critical token from the reserve spent by a normal
    // notice is a normal send above the normal ceiling (on a sharded channel the pool may be another shard's, normal).
    // An empty pool holds no token to keep from anyone: it takes the token's rank.
    if (pool?.window === window && token.window === window && (token.rank >= pool.rank || !pool.tokens)) {
      if (!pool.tokens++) pool.rank = token.rank;
      // The waiter asleep until the next window or the release may send with it now.
      this.wake.get(channel)?.();
    }
  }

  /** Serves the line's first waiter until the line is empty; a waiter overtaken while it slept goes back in line. */
  private async serve(channel: Channel): Promise<void> {
    if (this.serving.has(channel)) return;
    this.serving.add(channel);
    try {
      const line = this.lines.get(channel) ?? [];
      for (let waiter = line.shift(); waiter !== undefined; waiter = line.shift()) {
        this.current.set(channel, waiter);
        try {
          const got = await this.take(channel, waiter);
          if (got === 'overtaken') {
            const at = line.findIndex((w) => w.rank > waiter.rank || (w.rank === waiter.rank && w.seq > waiter.seq));
            line.splice(at === -1 ? line.length : at, 0, waiter);
          } else waiter.resolve(got);
        } catch (error) {
          waiter.reject(error);
        } finally {
          this.current.delete(channel);
        }
      }
    } finally {
      this.serving.delete(channel);
    }
  }

  /** Waiters in line of the head's class or a higher one: the tokens one write takes for. */
  private waitingAtOrAbove(channel: Channel, rank: number): number {
    return 1 + (this.lines.get(channel) ?? []).filter((w) => w.rank <= rank).length;
  }

  private async take(channel: Channel, waiter: Waiter): Promise<SendToken | false | 'overtaken'> {
    const { waitUntil, rank } = waiter;
    const noticeClass = NOTICE_CLASSES[rank] as NoticeClass;
    const limit = this.rates[channel];
    const shards = rateShardsFor(limit);
    for (;;) {
      const now = this.clock.now();
      // First: a waiter whose time is up gets nothing, not even a pooled token (it could not send in time).
      if (now > waitUntil) return false;
      const first = this.lines.get(channel)?.[0];
      if (first !== undefined && first.rank < rank) return 'overtaken';
      const window = Math.floor(now / WINDOW_MS) * WINDOW_MS;
      const pool = this.pools.get(channel);
      // A token taken under a lower class's ceiling serves any class; one taken under the critical ceiling only critical
      // — until the release, when what the reserve holds is anyone's (a critical token given back included).
      if (pool?.window === window && pool.tokens > 0 && (pool.rank >= rank || now - window >= RELEASE_AT_MS)) {
        pool.tokens--;
        return { window, rank: pool.rank };
      }
      const ceilingOf = (shard: number) => classCeiling(rateShareOf(limit, shards, shard), noticeClass, now - window);
      const shard = this.pickShard(channel, window, shards, ceilingOf);
      if (shard !== undefined) {
        const share = rateShareOf(limit, shards, shard);
        const ceiling = ceilingOf(shard);
        const left = ceiling - this.seenIn(channel, window).get(shard, 0);
        const want = Math.min(MAX_CHUNK, share, left, this.waitingAtOrAbove(channel, rank));
        const whole = this.chunkOrNothing(channel, window, shard, noticeClass, now);
        const taken = want <= 0 ? 0 : await this.windows.take(channel, window, want, ceiling, shard, whole);
        const got = typeof taken === 'number' ? taken : taken.got;
        if (typeof taken !== 'number') this.markSeen(channel, window, shard, taken.used);
        if (got > 0) {
          // Tokens belong to their window: if it ended during the write, they are dropped (never carried over).
          this.pools.set(channel, { window, tokens: got, rank });
        } else {
          this.markSeen(channel, window, shard, ceiling);
        }
        continue;
      }
      // Full under this class's ceiling: the release may open the reserve before the next window does.
      const held = now - window < RELEASE_AT_MS && noticeClass !== 'critical';
      const next = held ? window + RELEASE_AT_MS : window + WINDOW_MS;
      if (next > waitUntil) return false;
      // A little jitter so the environments waiting on one channel do not all write at the same instant.
      const jitter = Math.floor((this.clock.random ?? Math.random)() * 20);
      await Promise.race([
        this.clock.sleep(Math.max(0, next - this.clock.now()) + jitter),
        new Promise<void>((resolve) => this.wake.set(channel, resolve)),
      ]);
      this.wake.delete(channel);
    }
  }

  /**
   * Whether this write takes its whole chunk or nothing: an environment's first write in a window, for a normal or
   * bulk notice, before the reserve's release. At a window's start every environment with a backlog writes at once;
   * were each one refused to write again for what is left, all but one of those second writes would be refused too
   * (a refused write is billed). The rest stays with the environment whose chunk was granted (it knows the count and
   * asks for it when its line wants more) or goes at the release, which the refused ones wait for (half a window at
   * most). A critical notice never waits for it: it takes what is left at once.
   */
  private chunkOrNothing(channel: Channel, window: number, shard: number, noticeClass: NoticeClass, now: number) {
    return noticeClass !== 'critical' && now - window < RELEASE_AT_MS && !this.seenIn(channel, window).at.has(shard);
  }

  /** A shard not known to be full at this waiter's ceiling in this window, at random; none: all full. */
  private pickShard(
    channel: Channel,
    window: number,
    shards: number,
    ceilingOf: (shard: number) => number,
  ): number | undefined {
    const seen = this.seenIn(channel, window);
    // Full at a lower ceiling is not full at a higher one (a critical waiter after a normal one found it full).
    const open: number[] = [];
    for (let shard = 0; shard < shards; shard++) if (seen.get(shard, 0) < ceilingOf(shard)) open.push(shard);
    if (open.length === 0) return undefined;
    return open[Math.floor((this.clock.random ?? Math.random)() * open.length)];
  }

  /** The counts known for the channel's shards in this window (none yet: a new window). */
  private seenIn(channel: Channel, window: number) {
    const seen = this.seen.get(channel);
    const at = seen?.window === window ? seen.at : new Map<number, number>();
    return { get: (shard: number, otherwise: number) => at.get(shard) ?? otherwise, at };
  }

  private markSeen(channel: Channel, window: number, shard: number, count: number): void {
    const { at } = this.seenIn(channel, window);
    at.set(shard, Math.max(at.get(shard) ?? 0, count));
    this.seen.set(channel, { window, at });
  }
}

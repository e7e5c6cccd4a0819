/**
 * A send token taken and not used goes back to its environment's pool only while the window it was taken in lasts:
 * the windows' counts are what the shared bucket took, so a token carried into the next window would be a send that
 * window's count never counted — the rate exceeded by one per such give-back. It goes back once, however often a
 * caller gives it back; only to a pool no class below its own may spend (a critical token from the reserve is not a
 * normal notice's); and a waiter asleep for the next window or the reserve's release sends with it at once.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { classCeiling, RELEASE_AT_MS, type SendToken, SharedTokenBucket } from '../../functions/dispatch/pacer.ts';
import type { Taken, TokenWindows } from '../../functions/dispatch/send-quota-store.ts';
import { NOTICE_CLASSES, type NoticeClass } from '../../functions/domain/catalogue.ts';
import { rateShardsFor, rateShareOf } from '../../functions/domain/send-rate.ts';

/** A window's start: 1_800_000_000_000 ms is a whole second. */
const W = 1_800_000_000_000;
const RATES = { EMAIL: 3, PUSH: 100, SMS: 20 };
/** EMAIL above 500/s: two shards of 500, each with a reserve of 50 (a normal notice's ceiling 450 before the release). */
const SHARDED = { ...RATES, EMAIL: 1_000 };
const [CRITICAL, NORMAL] = [NOTICE_CLASSES.indexOf('critical'), NOTICE_CLASSES.indexOf('normal')];

/** A clock that moves only when the test moves it; a sleep is a timer fired when the clock passes its time. */
class ManualClock {
  private timers: { at: number; resolve: () => void }[] = [];
  constructor(public t: number) {}
  now = () => this.t;
  sleep = (ms: number) => new Promise<void>((resolve) => this.timers.push({ at: this.t + ms, resolve }));
  /** Picks the shard (among those open) and the jitter; the test may set it. */
  random = () => 0.5;
  /** Lets every pending promise and callback settle (the clock does not move meanwhile). */
  async settle(): Promise<void> {
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
  }
  /** Moves the clock to `to`, firing each timer due by then at its own time, in time order. */
  async advanceTo(to: number): Promise<void> {
    for (;;) {
      await this.settle();
      this.timers.sort((a, b) => a.at - b.at);
      const next = this.timers[0];
      if (next === undefined || next.at > to) break;
      this.timers.shift();
      this.t = Math.max(this.t, next.at);
      next.resolve();
    }
    this.t = Math.max(this.t, to);
    await this.settle();
  }
}

/**
 * The window items in memory, one per shard, one conditional ADD each, a write taking `latencyMs` on the clock before
 * it lands; every grant is kept with the ceiling it was asked under.
 */
class MemoryWindows implements TokenWindows {
  /** Tokens counted per window start, all shards together (one channel). */
  readonly used = new Map<number, number>();
  /** Tokens counted per window start and shard. */
  readonly shards = new Map<string, number>();
  readonly grants: { window: number; shard: number; limit: number; got: number }[] = [];
  writes = 0;
  constructor(
    private readonly clock: ManualClock,
    private readonly latencyMs = 0,
  ) {}
  async take(_c: string, window: number, want: number, limit: number, shard = 0, allOrNothing = false): Promise<Taken> {
    this.writes++;
    if (this.latencyMs > 0) await this.clock.sleep(this.latencyMs);
    const used = this.count(window, shard);
    const got = allOrNothing && used + want > limit ? 0 : Math.max(0, Math.min(want, limit - used));
    this.shards.set(`${window}#${shard}`, used + got);
    this.used.set(window, (this.used.get(window) ?? 0) + got);
    if (got > 0) this.grants.push({ window, shard, limit, got });
    return { got, used: used + got };
  }
  count(window: number, shard: number): number {
    return this.shards.get(`${window}#${shard}`) ?? 0;
  }
}

const windowOf = (t: number) => Math.floor(t / 1_000) * 1_000;

describe('a send token given back', () => {
  it('taken in one window and given back in the next, after the pool was refilled for it, is not spent there', async () => {
    const clock = new ManualClock(W + 900);
    const windows = new MemoryWindows(clock);
    const pacer = new SharedTokenBucket(windows, RATES, clock);
    const early = await pacer.acquire('EMAIL', clock.now() + 1_000);
    expect(early).toEqual({ window: W, rank: NORMAL });

    await clock.advanceTo(W + 1_600);
    // Two records at once (after the reserve's release): one write takes two of the window's three; the pool is empty.
    const both = await Promise.all([0, 1].map(() => pacer.acquire('EMAIL', clock.now() + 1_000)));
    expect(both).toEqual([
      { window: W + 1_000, rank: NORMAL },
      { window: W + 1_000, rank: NORMAL },
    ]);
    // The first window's record is stopped now (its audience check, say): its token is not the second window's.
    pacer.giveBack('EMAIL', early as SendToken);
    const writes = windows.writes;
    const third = await pacer.acquire('EMAIL', clock.now() + 1_000);
    expect(third).toEqual({ window: W + 1_000, rank: NORMAL });
    // It took a token of its own, which the window's count holds: three sends, three counted.
    expect(windows.writes).toBe(writes + 1);
    expect(windows.used.get(W + 1_000)).toBe(3);
  });

  it('in the window it was taken in, is reused by the next record without a write', async () => {
    const clock = new ManualClock(W + 100);
    const windows = new MemoryWindows(clock);
    const pacer = new SharedTokenBucket(windows, RATES, clock);
    const token = await pacer.acquire('EMAIL', clock.now() + 1_000);
    await clock.advanceTo(W + 800);
    pacer.giveBack('EMAIL', token as SendToken);
    expect(await pacer.acquire('EMAIL', clock.now() + 1_000)).toEqual({ window: W, rank: NORMAL });
    expect(windows.writes).toBe(1);
    expect(windows.used.get(W)).toBe(1);
  });

  it('from a write for one window that answered after it ended, is the next window’s: handed out and reused there', async () => {
    const clock = new ManualClock(W + 998);
    const windows = new MemoryWindows(clock, 5);
    const pacer = new SharedTokenBucket(windows, RATES, clock);
    const asked = pacer.acquire('EMAIL', clock.now() + 1_000);
    await clock.advanceTo(W + 1_020);
    // The first write landed at W + 1003: its token was the first window's and is dropped, not handed out.
    const token = await asked;
    expect(token).toEqual({ window: W + 1_000, rank: NORMAL });
    expect([windows.used.get(W), windows.used.get(W + 1_000)]).toEqual([1, 1]);
    pacer.giveBack('EMAIL', token as SendToken);
    expect(await pacer.acquire('EMAIL', clock.now() + 1_000)).toEqual({ window: W + 1_000, rank: NORMAL });
    expect(windows.writes).toBe(2);
  });

  it('twice by a caller, counts once: the second give-back would be a send no window counted', async () => {
    const clock = new ManualClock(W + 600);
    const windows = new MemoryWindows(clock);
    const pacer = new SharedTokenBucket(windows, RATES, clock);
    const token = (await pacer.acquire('EMAIL', clock.now() + 1_000)) as SendToken;
    pacer.giveBack('EMAIL', token);
    pacer.giveBack('EMAIL', token);
    // Two records: one takes the token given back, the other writes for its own.
    const both = await Promise.all([0, 1].map(() => pacer.acquire('EMAIL', clock.now() + 1_000)));
    expect(both).toEqual([token, token]);
    expect(windows.writes).toBe(2);
    expect(windows.used.get(W)).toBe(2);
  });

  it('taken from a normal pool by a critical notice, is still a normal token: given back, a normal notice spends it', async () => {
    const clock = new ManualClock(W + 100);
    const windows = new MemoryWindows(clock);
    const pacer = new SharedTokenBucket(windows, RATES, clock);
    pacer.giveBack('EMAIL', (await pacer.acquire('EMAIL', clock.now() + 1_000)) as SendToken);
    const critical = await pacer.acquire('EMAIL', clock.now() + 1_000, 'critical');
    expect(critical).toEqual({ window: W, rank: NORMAL });
    pacer.giveBack('EMAIL', critical as SendToken);
    expect(await pacer.acquire('EMAIL', clock.now() + 1_000)).toEqual({ window: W, rank: NORMAL });
    expect([windows.writes, windows.used.get(W)]).toEqual([1, 1]);
  });

  describe('on a sharded channel, by a critical notice that took it from the reserve', () => {
    /**
     * At W + 100 shard 0 holds 450 and shard 1 449 (the normal ceiling is 450): a critical notice takes shard 0's
     * 451st, then a normal one finds shard 0 closed to it and takes shard 1's 450th. The pool is the normal one's, and
     * both shards are full to a normal notice until the release.
     */
    async function criticalThenNormal() {
      const clock = new ManualClock(W + 100);
      clock.random = () => 0; // the first open shard
      const windows = new MemoryWindows(clock);
      windows.shards.set(`${W}#0`, 450);
      windows.shards.set(`${W}#1`, 449);
      const pacer = new SharedTokenBucket(windows, SHARDED, clock);
      const critical = await pacer.acquire('EMAIL', clock.now() + 1_000, 'critical');
      const normal = await pacer.acquire('EMAIL', clock.now() + 1_000, 'normal');
      expect([critical, normal]).toEqual([
        { window: W, rank: CRITICAL },
        { window: W, rank: NORMAL },
      ]);
      expect([windows.count(W, 0), windows.count(W, 1)]).toEqual([451, 450]);
      /** A normal notice asking now: what it got so far (undefined: still waiting). */
      const normalAsks = () => {
        const asked: { got?: SendToken | false } = {};
        void pacer.acquire('EMAIL', clock.now() + 1_000, 'normal').then((got) => (asked.got = got));
        return asked;
      };
      return { clock, windows, pacer, normalAsks, critical: critical as SendToken, normal: normal as SendToken };
    }

    it('is not a normal notice’s before the release: the normal one waits, the next critical one sends with it', async () => {
      const { clock, windows, pacer, normalAsks, critical } = await criticalThenNormal();
      pacer.giveBack('EMAIL', critical);
      const later = normalAsks();
      await clock.settle();
      expect(later.got).toBeUndefined(); // 451 + 450 would be a normal notice in shard 0's reserve
      expect(await pacer.acquire('EMAIL', clock.now() + 1_000, 'critical')).toEqual({ window: W, rank: CRITICAL });
      expect(windows.writes).toBe(2); // from the pool
      await clock.advanceTo(W + 600);
      expect(later.got).toEqual({ window: W, rank: NORMAL }); // after the release, a write of its own
      expect([windows.writes, windows.count(W, 0) + windows.count(W, 1)]).toEqual([3, 902]);
    });

    it('is dropped when the pool holds a normal token: a normal notice spends that one, and the next waits', async () => {
      const { clock, windows, pacer, normalAsks, critical, normal } = await criticalThenNormal();
      pacer.giveBack('EMAIL', normal);
      pacer.giveBack('EMAIL', critical);
      expect(await pacer.acquire('EMAIL', clock.now() + 1_000, 'normal')).toEqual({ window: W, rank: NORMAL });
      const next = normalAsks();
      await clock.settle();
      expect(next.got).toBeUndefined();
      expect(windows.writes).toBe(2);
    });
  });

  it('of a normal notice, into a pool holding the reserve’s critical token: the pool stays critical, normal sends stay within the normal ceiling', async () => {
    const clock = new ManualClock(W + 100);
    const windows = new MemoryWindows(clock);
    const pacer = new SharedTokenBucket(windows, RATES, clock);
    // Two normal notices take the normal ceiling (2 of 3), a critical one the reserve.
    const [, n2] = await Promise.all([0, 1].map(() => pacer.acquire('EMAIL', clock.now() + 1_000)));
    const reserve = await pacer.acquire('EMAIL', clock.now() + 1_000, 'critical');
    pacer.giveBack('EMAIL', reserve as SendToken); // the pool: critical, 1
    pacer.giveBack('EMAIL', n2 as SendToken); // joins: 2, still critical
    const got: (SendToken | false | undefined)[] = [undefined, undefined];
    for (const i of [0, 1]) void pacer.acquire('EMAIL', W + 400).then((g) => (got[i] = g));
    await clock.advanceTo(W + 450);
    // The first normal notice sent; the pool (critical, 2) is not a normal notice's before the release: both turned
    // away (their time ends before it), none sent above the normal ceiling of 2.
    expect(got).toEqual([false, false]);
    expect(windows.used.get(W)).toBe(3);
  });

  describe('while a waiter sleeps', () => {
    it('until the next window: the waiter wakes and sends with it now', async () => {
      const clock = new ManualClock(W + 600);
      const windows = new MemoryWindows(clock);
      const pacer = new SharedTokenBucket(windows, RATES, clock);
      const three = await Promise.all([0, 1, 2].map(() => pacer.acquire('EMAIL', clock.now() + 1_000)));
      let fourth: SendToken | false | undefined;
      void pacer.acquire('EMAIL', clock.now() + 1_000).then((got) => (fourth = got));
      await clock.advanceTo(W + 650);
      expect(fourth).toBeUndefined(); // the window is full: asleep until W + 1000
      pacer.giveBack('EMAIL', three[0] as SendToken);
      await clock.settle();
      expect(fourth).toEqual({ window: W, rank: NORMAL });
      expect([clock.now(), windows.writes]).toEqual([W + 650, 1]);
    });

    it('until the release, with no time to wait for the next window: the waiter sends instead of being deferred', async () => {
      const clock = new ManualClock(W + 100);
      const windows = new MemoryWindows(clock);
      const pacer = new SharedTokenBucket(windows, RATES, clock);
      // Two normal notices take the normal ceiling (2 of 3), a critical one the reserve: the pool is critical's, empty.
      const normal = await Promise.all([0, 1].map(() => pacer.acquire('EMAIL', clock.now() + 1_000)));
      await pacer.acquire('EMAIL', clock.now() + 1_000, 'critical');
      let late: SendToken | false | undefined;
      void pacer.acquire('EMAIL', W + 600).then((got) => (late = got));
      await clock.advanceTo(W + 200);
      expect(late).toBeUndefined(); // asleep until the release at W + 500; the window is full then too
      pacer.giveBack('EMAIL', normal[0] as SendToken);
      await clock.settle();
      expect(late).toEqual({ window: W, rank: NORMAL });
      expect(windows.used.get(W)).toBe(3);
    });

    it('until the release, beside a critical token given back: at the release it is anyone’s, the waiter sends', async () => {
      const clock = new ManualClock(W + 100);
      const windows = new MemoryWindows(clock);
      const pacer = new SharedTokenBucket(windows, RATES, clock);
      await Promise.all([0, 1].map(() => pacer.acquire('EMAIL', clock.now() + 1_000)));
      const reserve = await pacer.acquire('EMAIL', clock.now() + 1_000, 'critical');
      await clock.advanceTo(W + 200);
      pacer.giveBack('EMAIL', reserve as SendToken); // the critical notice's audience check stopped it
      let late: SendToken | false | undefined;
      void pacer.acquire('EMAIL', W + 900).then((got) => (late = got));
      await clock.advanceTo(W + 450);
      expect(late).toBeUndefined(); // the reserve's until the release
      await clock.advanceTo(W + 950);
      // Not deferred RATE_LIMITED beside a token the window counted: 3 counted, 3 sent.
      expect(late).toEqual({ window: W, rank: CRITICAL });
      expect([windows.used.get(W), windows.writes]).toEqual([3, 2]);
    });
  });

  /**
   * One step of a run: a record asks for a token, a held token goes back unused (or, a caller's bug, one given back
   * already goes back again), or time passes.
   */
  type Step =
    | { readonly kind: 'take'; readonly env: number; readonly noticeClass: NoticeClass; readonly patience: number }
    | { readonly kind: 'giveBack'; readonly pick: number }
    | { readonly kind: 'giveBackAgain'; readonly pick: number }
    | { readonly kind: 'advance'; readonly ms: number };
  // Biased towards what tests the rule: records asking often, the oldest token given back most, windows crossed often.
  const step: fc.Arbitrary<Step> = fc.oneof(
    {
      weight: 3,
      arbitrary: fc.record({
        kind: fc.constant('take' as const),
        env: fc.oneof({ weight: 3, arbitrary: fc.constant(0) }, fc.constant(1)),
        noticeClass: fc.oneof(
          { weight: 2, arbitrary: fc.constant<NoticeClass>('normal') },
          fc.constantFrom<NoticeClass>('critical', 'bulk'),
        ),
        patience: fc.integer({ min: 0, max: 1_500 }),
      }),
    },
    {
      weight: 2,
      arbitrary: fc.record({
        kind: fc.constant('giveBack' as const),
        pick: fc.oneof({ weight: 3, arbitrary: fc.constant(0) }, fc.nat()),
      }),
    },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('giveBackAgain' as const), pick: fc.nat() }) },
    {
      weight: 2,
      arbitrary: fc.record({
        kind: fc.constant('advance' as const),
        ms: fc.oneof(fc.integer({ min: 0, max: 60 }), fc.integer({ min: 300, max: 1_200 })),
      }),
    },
  );

  /** What a run checks, for a channel of `rate` per second: the rate, and each class's ceiling before the release. */
  function expectWithinCounts(rate: number, windows: MemoryWindows, held: { token: SendToken; at: number }[]) {
    const shards = rateShardsFor(rate);
    const sends = new Map<number, number>();
    for (const { token, at } of held) {
      // A token names the window it was handed out in.
      expect(token.window).toBe(windowOf(at));
      sends.set(windowOf(at), (sends.get(windowOf(at)) ?? 0) + 1);
    }
    for (const [window, n] of sends)
      expect(n, `window +${window - W}`).toBeLessThanOrEqual(windows.used.get(window) ?? 0);
    for (const [window, n] of windows.used) {
      for (let shard = 0; shard < shards; shard++)
        expect(windows.count(window, shard)).toBeLessThanOrEqual(rateShareOf(rate, shards, shard));
      expect(n).toBeLessThanOrEqual(rate);
    }
    // Before the release, the tokens handed out that a class below critical may spend (by their rank) are no more than
    // were taken under that class's ceiling or a lower one's: a critical notice's token from the reserve never becomes
    // a normal notice's, nor a normal one's a bulk one's.
    for (const noticeClass of ['normal', 'bulk'] as const) {
      const rank = NOTICE_CLASSES.indexOf(noticeClass);
      const ceiling = (shard: number) => classCeiling(rateShareOf(rate, shards, shard), noticeClass, 0);
      for (const window of sends.keys()) {
        const spent = held.filter(({ token, at }) => token.window === window && at - window < 500);
        const granted = windows.grants.filter((g) => g.window === window && g.limit <= ceiling(g.shard));
        expect(
          spent.filter(({ token }) => token.rank >= rank).length,
          `${noticeClass} before the release, window +${window - W}`,
        ).toBeLessThanOrEqual(granted.reduce((sum, g) => sum + g.got, 0));
      }
    }
  }

  it('over any sequence of takes, give-backs and time passing, in two environments, on one shard or three: no window sends more tokens than its count took, no class spends a higher one’s', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(step, { minLength: 1, maxLength: 16 }),
        fc.integer({ min: 0, max: 999 }),
        fc.constantFrom(0, 5),
        fc.constantFrom(3, 1_003),
        fc.array(fc.integer({ min: 0, max: 999 }), { minLength: 1, maxLength: 6 }),
        async (steps, into, latencyMs, rate, picks) => {
          const clock = new ManualClock(W + into);
          let drawn = 0;
          clock.random = () => (picks[drawn++ % picks.length] as number) / 1_000;
          const windows = new MemoryWindows(clock, latencyMs);
          const environments = [0, 1].map(() => new SharedTokenBucket(windows, { ...RATES, EMAIL: rate }, clock));
          /** Tokens handed out and not given back, with the time each was handed out: the sends. */
          const held: { env: number; token: SendToken; at: number }[] = [];
          const returned: typeof held = [];
          const asked: Promise<void>[] = [];
          for (const s of steps) {
            if (s.kind === 'take') {
              const pacer = environments[s.env] as SharedTokenBucket;
              const got = pacer.acquire('EMAIL', clock.now() + s.patience, s.noticeClass).then((token) => {
                if (token) {
                  // Before the release, the token's rank is the class it may serve, at least the one it was handed
                  // to; after it, what the reserve holds is anyone's.
                  if (clock.now() - windowOf(clock.now()) < RELEASE_AT_MS)
                    expect(token.rank).toBeGreaterThanOrEqual(NOTICE_CLASSES.indexOf(s.noticeClass));
                  held.push({ env: s.env, token, at: clock.now() });
                }
              });
              asked.push(got);
              await clock.settle();
            } else if (s.kind === 'giveBack') {
              const [back] = held.splice(s.pick % Math.max(1, held.length), 1);
              if (back === undefined) continue;
              (environments[back.env] as SharedTokenBucket).giveBack('EMAIL', back.token);
              returned.push(back);
            } else if (s.kind === 'giveBackAgain') {
              const again = returned[s.pick % Math.max(1, returned.length)];
              if (again !== undefined) (environments[again.env] as SharedTokenBucket).giveBack('EMAIL', again.token);
            } else await clock.advanceTo(clock.now() + s.ms);
          }
          // Every record still waiting gets its answer (each waits 1.5 s at most).
          await clock.advanceTo(clock.now() + 3_000);
          await Promise.all(asked);
          expectWithinCounts(rate, windows, held);
        },
      ),
      { numRuns: 1_000 },
    );
  }, 30_000);
});

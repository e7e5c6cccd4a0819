/**
 * A send token taken and not used goes back to its environment's pool only while the window it was taken in lasts:
 * the windows' counts are what the shared bucket took, so a token carried into the next window would be a send that
 * window's count never counted — the rate exceeded by one per such give-back.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type SendToken, SharedTokenBucket } from '../../functions/dispatch/pacer.ts';
import type { Taken, TokenWindows } from '../../functions/dispatch/send-quota-store.ts';
import type { NoticeClass } from '../../functions/domain/catalogue.ts';

/** A window's start: 1_800_000_000_000 ms is a whole second. */
const W = 1_800_000_000_000;
const RATES = { EMAIL: 3, PUSH: 100, SMS: 20 };

/** A clock that moves only when the test moves it; a sleep is a timer fired when the clock passes its time. */
class ManualClock {
  private timers: { at: number; resolve: () => void }[] = [];
  constructor(public t: number) {}
  now = () => this.t;
  sleep = (ms: number) => new Promise<void>((resolve) => this.timers.push({ at: this.t + ms, resolve }));
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

/** The window items in memory, one conditional ADD each, a write taking `latencyMs` on the clock before it lands. */
class MemoryWindows implements TokenWindows {
  /** Tokens counted per window start (one channel). */
  readonly used = new Map<number, number>();
  writes = 0;
  constructor(
    private readonly clock: ManualClock,
    private readonly latencyMs = 0,
  ) {}
  async take(_c: string, window: number, want: number, limit: number, _s = 0, allOrNothing = false): Promise<Taken> {
    this.writes++;
    if (this.latencyMs > 0) await this.clock.sleep(this.latencyMs);
    const used = this.used.get(window) ?? 0;
    const got = allOrNothing && used + want > limit ? 0 : Math.max(0, Math.min(want, limit - used));
    this.used.set(window, used + got);
    return { got, used: used + got };
  }
}

const windowOf = (t: number) => Math.floor(t / 1_000) * 1_000;

describe('a send token given back', () => {
  it('taken in one window and given back in the next, after the pool was refilled for it, is not spent there', async () => {
    const clock = new ManualClock(W + 900);
    const windows = new MemoryWindows(clock);
    const pacer = new SharedTokenBucket(windows, RATES, clock);
    const early = await pacer.acquire('EMAIL', clock.now() + 1_000);
    expect(early).toEqual({ window: W });

    await clock.advanceTo(W + 1_600);
    // Two records at once (after the reserve's release): one write takes two of the window's three; the pool is empty.
    const both = await Promise.all([0, 1].map(() => pacer.acquire('EMAIL', clock.now() + 1_000)));
    expect(both).toEqual([{ window: W + 1_000 }, { window: W + 1_000 }]);
    // The first window's record is stopped now (its audience check, say): its token is not the second window's.
    pacer.giveBack('EMAIL', early as SendToken);
    const writes = windows.writes;
    const third = await pacer.acquire('EMAIL', clock.now() + 1_000);
    expect(third).toEqual({ window: W + 1_000 });
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
    expect(await pacer.acquire('EMAIL', clock.now() + 1_000)).toEqual({ window: W });
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
    expect(token).toEqual({ window: W + 1_000 });
    expect([windows.used.get(W), windows.used.get(W + 1_000)]).toEqual([1, 1]);
    pacer.giveBack('EMAIL', token as SendToken);
    expect(await pacer.acquire('EMAIL', clock.now() + 1_000)).toEqual({ window: W + 1_000 });
    expect(windows.writes).toBe(2);
  });

  /** One step of a run: a record asks for a token, a held token goes back unused, or time passes. */
  type Step =
    | { readonly kind: 'take'; readonly env: number; readonly noticeClass: NoticeClass; readonly patience: number }
    | { readonly kind: 'giveBack'; readonly pick: number }
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
    {
      weight: 2,
      arbitrary: fc.record({
        kind: fc.constant('advance' as const),
        ms: fc.oneof(fc.integer({ min: 0, max: 60 }), fc.integer({ min: 300, max: 1_200 })),
      }),
    },
  );

  it('over any sequence of takes, give-backs and time passing, in two environments: no window sends more tokens than its count took', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(step, { minLength: 1, maxLength: 16 }),
        fc.integer({ min: 0, max: 999 }),
        fc.constantFrom(0, 5),
        async (steps, into, latencyMs) => {
          const clock = new ManualClock(W + into);
          const windows = new MemoryWindows(clock, latencyMs);
          const environments = [0, 1].map(() => new SharedTokenBucket(windows, RATES, clock));
          /** Tokens handed out and not given back, with the time each was handed out: the sends. */
          const held: { env: number; token: SendToken; at: number }[] = [];
          const asked: Promise<void>[] = [];
          for (const s of steps) {
            if (s.kind === 'take') {
              const pacer = environments[s.env] as SharedTokenBucket;
              const got = pacer.acquire('EMAIL', clock.now() + s.patience, s.noticeClass).then((token) => {
                if (token) held.push({ env: s.env, token, at: clock.now() });
              });
              asked.push(got);
              await clock.settle();
            } else if (s.kind === 'giveBack') {
              const [back] = held.splice(s.pick % Math.max(1, held.length), 1);
              if (back !== undefined) (environments[back.env] as SharedTokenBucket).giveBack('EMAIL', back.token);
            } else await clock.advanceTo(clock.now() + s.ms);
          }
          // Every record still waiting gets its answer (each waits 1.5 s at most).
          await clock.advanceTo(clock.now() + 3_000);
          await Promise.all(asked);
          const sends = new Map<number, number>();
          for (const { token, at } of held) {
            // A token names the window it was handed out in.
            expect(token.window).toBe(windowOf(at));
            sends.set(windowOf(at), (sends.get(windowOf(at)) ?? 0) + 1);
          }
          for (const [window, n] of sends)
            expect(n, `window +${window - W}`).toBeLessThanOrEqual(windows.used.get(window) ?? 0);
          for (const used of windows.used.values()) expect(used).toBeLessThanOrEqual(RATES.EMAIL);
        },
      ),
      { numRuns: 1_000 },
    );
  });
});

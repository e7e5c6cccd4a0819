/**
 * Pacing, the channel breaker and the invocation budget, through their ports: several execution environments
 * sharing one token bucket on a virtual clock, so a test of "never above the rate" runs in milliseconds.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  assertDispatchTiming,
  DISPATCH_TIMING,
  deriveDispatchTiming,
  timingViolations,
} from '../../functions/contracts/dispatch-timing.ts';
import { ChannelBreaker } from '../../functions/dispatch/channel-breaker.ts';
import { NotStartedError } from '../../functions/dispatch/dispatch-notification.ts';
import { InvocationBudget } from '../../functions/dispatch/invocation-budget.ts';
import {
  classCeiling,
  MAX_CHUNK,
  RELEASE_AT_MS,
  type SendToken,
  SharedTokenBucket,
} from '../../functions/dispatch/pacer.ts';
import type { BreakerState, BreakerStore, Taken, TokenWindows } from '../../functions/dispatch/send-quota-store.ts';
import { NOTICE_CLASSES, type NoticeClass } from '../../functions/domain/catalogue.ts';
import type { Channel } from '../../functions/domain/channels.ts';

/** The rank a normal notice's tokens carry: taken under the normal ceiling. */
const NORMAL = NOTICE_CLASSES.indexOf('normal');

/** A clock whose sleeps are timers the test fires in time order. */
class VirtualClock {
  t = 1_800_000_000_000;
  private timers: { at: number; resolve: () => void }[] = [];
  now = () => this.t;
  sleep = (ms: number) => new Promise<void>((resolve) => this.timers.push({ at: this.t + ms, resolve }));
  random = () => 0.5;
  /** Lets every pending promise settle, then fires the earliest timer; false when nothing is left to fire. */
  async step(): Promise<boolean> {
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
    this.timers.sort((a, b) => a.at - b.at);
    const next = this.timers.shift();
    if (next === undefined) return false;
    this.t = Math.max(this.t, next.at);
    next.resolve();
    return true;
  }
}

/** The DynamoDB item's semantics in memory: one conditional ADD per take, the rest as DynamoTokenWindows does. */
class MemoryWindows implements TokenWindows {
  readonly used = new Map<string, number>();
  writes = 0;
  async take(channel: Channel, window: number, want: number, limit: number): Promise<number> {
    this.writes++;
    const key = `${channel}#${window}`;
    const used = this.used.get(key) ?? 0;
    const n = used + want <= limit ? want : limit - used;
    if (n <= 0) return 0;
    if (n < want) this.writes++; // the second, exact write
    this.used.set(key, used + n);
    return n;
  }
}

/** The same, answering as DynamoTokenWindows does: the window's count its last write saw, with what it got. */
class CountingWindows implements TokenWindows {
  private readonly memory = new MemoryWindows();
  get writes() {
    return this.memory.writes;
  }
  async take(channel: Channel, window: number, want: number, limit: number): Promise<Taken> {
    const got = await this.memory.take(channel, window, want, limit);
    return { got, used: this.memory.used.get(`${channel}#${window}`) ?? 0 };
  }
}

/**
 * DynamoTokenWindows' writes in memory, each taking 5 ms on the clock (environments writing at once all find the
 * window as it was): one conditional ADD; refused, a second for exactly what is left unless the pacer asked for all or
 * nothing — or, `ignoringAllOrNothing`, always (as the pacer before it asked).
 */
class ExactWindows implements TokenWindows {
  readonly used = new Map<string, number>();
  writes = 0;
  constructor(
    private readonly clock: VirtualClock,
    private readonly ignoringAllOrNothing = false,
  ) {}
  async take(channel: Channel, window: number, want: number, limit: number, _shard = 0, allOrNothing = false) {
    const key = `${channel}#${window}`;
    const add = async (n: number) => {
      this.writes++;
      await this.clock.sleep(5);
      const used = this.used.get(key) ?? 0;
      if (used + n > limit) return false;
      this.used.set(key, used + n);
      return true;
    };
    if (await add(want)) return { got: want, used: this.used.get(key) ?? 0 };
    const left = limit - (this.used.get(key) ?? 0);
    if ((allOrNothing && !this.ignoringAllOrNothing) || left <= 0) return { got: 0, used: limit - left };
    return { got: (await add(left)) ? left : 0, used: this.used.get(key) ?? 0 };
  }
}

const RATES = { EMAIL: 14, PUSH: 100, SMS: 20 };

/** Four environments of ten senders asking for EMAIL tokens as often as they can for 10 s: the grants' times. */
async function fourEnvironmentsAtQuota(windows: TokenWindows, clock = new VirtualClock()): Promise<number[]> {
  const end = clock.t + 10_000;
  const grants: number[] = [];
  const environments = Array.from({ length: 4 }, () => new SharedTokenBucket(windows, RATES, clock));
  const senders = environments.flatMap((pacer) =>
    Array.from({ length: 10 }, async () => {
      while (clock.now() < end) {
        if (await pacer.acquire('EMAIL', clock.now() + 5_000)) grants.push(clock.now());
        await clock.sleep(10);
      }
    }),
  );
  const all = Promise.all(senders);
  while (await clock.step()) {
    // fire timers until every sender is done
  }
  await all;
  return grants;
}

describe('the shared token bucket', () => {
  it('a waiter whose time is up gets no token, not even a pooled one; an unused token goes back to its window', async () => {
    const clock = new VirtualClock();
    const windows = new MemoryWindows();
    const pacer = new SharedTokenBucket(windows, RATES, clock);
    // Two waiters at once: the head takes a chunk of two with one write, the second is served from the pool.
    const [a, b] = await Promise.all([
      pacer.acquire('EMAIL', clock.now() + 1_000),
      pacer.acquire('EMAIL', clock.now() + 1_000),
    ]);
    expect([a, b]).toEqual([
      { window: clock.t, rank: NORMAL },
      { window: clock.t, rank: NORMAL },
    ]);
    pacer.giveBack('EMAIL', b as SendToken);
    // One token is pooled now; a record whose send could no longer finish must not take it.
    expect(await pacer.acquire('EMAIL', clock.now() - 1)).toBe(false);
    const writes = windows.writes;
    expect(await pacer.acquire('EMAIL', clock.now() + 1_000)).toEqual({ window: clock.t, rank: NORMAL });
    expect(windows.writes).toBe(writes); // served from the pool: the token given back
  });

  it('several environments together never exceed the rate in any window, and run close to it', async () => {
    const windows = new MemoryWindows();
    // Each environment runs 10 senders that want a token as often as they can.
    const grants = await fourEnvironmentsAtQuota(windows);
    const perWindow = new Map<number, number>();
    for (const g of grants) perWindow.set(Math.floor(g / 1000), (perWindow.get(Math.floor(g / 1000)) ?? 0) + 1);
    expect(Math.max(...perWindow.values())).toBeLessThanOrEqual(14);
    // 10 s at 14/s: within a window of the quota.
    expect(grants.length).toBeGreaterThanOrEqual(14 * 9);
    // Tokens are taken in chunks: fewer writes than sends.
    expect(windows.writes).toBeLessThan(grants.length);
  });

  it('a window whose count a write showed asks for no more than is left, and no write goes to a window known full', async () => {
    const blind = new MemoryWindows();
    const counted = new CountingWindows();
    const blindGrants = await fourEnvironmentsAtQuota(blind);
    const countedGrants = await fourEnvironmentsAtQuota(counted);
    const most = (grants: number[]) => {
      const perWindow = new Map<number, number>();
      for (const g of grants) perWindow.set(Math.floor(g / 1000), (perWindow.get(Math.floor(g / 1000)) ?? 0) + 1);
      return Math.max(...perWindow.values());
    };
    expect(most(countedGrants)).toBeLessThanOrEqual(14);
    expect(countedGrants.length).toBeGreaterThanOrEqual(blindGrants.length - 14);
    expect(counted.writes / countedGrants.length).toBeLessThan(blind.writes / blindGrants.length);
  });

  it('at a quota an environment’s first write in a window takes its chunk or nothing: the rest goes to the one that knows the count, in fewer writes, at the same rate', async () => {
    const [first, second] = [new VirtualClock(), new VirtualClock()];
    const chasing = new ExactWindows(first, true);
    const chunked = new ExactWindows(second);
    const chasingGrants = await fourEnvironmentsAtQuota(chasing, first);
    const chunkedGrants = await fourEnvironmentsAtQuota(chunked, second);
    const most = new Map<number, number>();
    for (const g of chunkedGrants) most.set(Math.floor(g / 1000), (most.get(Math.floor(g / 1000)) ?? 0) + 1);
    expect(Math.max(...most.values())).toBeLessThanOrEqual(14);
    expect(chunkedGrants.length).toBeGreaterThanOrEqual(chasingGrants.length - 14);
    expect(chunked.writes / chunkedGrants.length).toBeLessThan(chasing.writes / chasingGrants.length);
  });

  it('waiters arriving in one turn of the event loop, each from its own callback, take their tokens with one write', async () => {
    const clock = new VirtualClock();
    const windows = new MemoryWindows();
    const pacer = new SharedTokenBucket(windows, RATES, clock);
    // Two sends ending together: their answers are read in one turn, each in a callback of its own. Two immediates
    // queued together run in one check phase, always; two zero timers need not (a millisecond boundary between them
    // splits them across turns — a loaded CI machine did).
    const got = await new Promise<(SendToken | false)[]>((resolve) => {
      const asked: Promise<SendToken | false>[] = [];
      setImmediate(() => asked.push(pacer.acquire('PUSH', clock.now() + 1_000)));
      setImmediate(() => {
        asked.push(pacer.acquire('PUSH', clock.now() + 1_000));
        void Promise.all(asked).then(resolve);
      });
    });
    expect(got.every(Boolean)).toBe(true);
    expect(windows.writes).toBe(1);
  });

  it('takes tokens for everyone waiting in one write, up to the chunk size', async () => {
    const clock = new VirtualClock();
    const windows = new MemoryWindows();
    const pacer = new SharedTokenBucket(windows, RATES, clock);
    const got = await Promise.all(Array.from({ length: MAX_CHUNK }, () => pacer.acquire('PUSH', clock.now())));
    expect(got.every(Boolean)).toBe(true);
    expect(windows.writes).toBe(1);
  });

  it('gives up when neither the reserve’s release nor the next window comes before the caller’s time is up', async () => {
    const clock = new VirtualClock();
    clock.t = 1_800_000_000_100;
    const windows = new MemoryWindows();
    windows.used.set(`SMS#${1_800_000_000_000}`, 20);
    const pacer = new SharedTokenBucket(windows, RATES, clock);
    expect(await pacer.acquire('SMS', clock.now() + RELEASE_AT_MS - 200)).toBe(false);
    expect(await pacer.acquire('SMS', clock.now() + 500, 'critical')).toBe(false);
    const later = pacer.acquire('SMS', clock.now() + 5_000);
    let settled = false;
    void later.then(() => (settled = true));
    while (!settled && (await clock.step()));
    expect(await later).toEqual({ window: 1_800_000_001_000, rank: NORMAL });
    expect(clock.now()).toBeGreaterThanOrEqual(1_800_000_001_000);
  });

  it('critical first: each class has its ceiling until the release, then the whole window is anyone’s', () => {
    expect([0, 499, 500].map((ms) => classCeiling(14, 'critical', ms))).toEqual([14, 14, 14]);
    expect([0, 499, 500].map((ms) => classCeiling(14, 'normal', ms))).toEqual([12, 12, 14]);
    expect([0, 499, 500].map((ms) => classCeiling(14, 'bulk', ms))).toEqual([10, 10, 14]);
    // At one token a second the reserve is the token: normal waits for the release, bulk too.
    expect([classCeiling(1, 'critical', 0), classCeiling(1, 'normal', 0), classCeiling(1, 'bulk', 0)]).toEqual([
      1, 0, 0,
    ]);
  });

  it('a backlog of normal sends in every environment still leaves each window’s reserve to a critical send', async () => {
    const clock = new VirtualClock();
    const windows = new MemoryWindows();
    const environments = Array.from({ length: 3 }, () => new SharedTokenBucket(windows, RATES, clock));
    const end = clock.now() + 10_000;
    const normal: number[] = [];
    const critical: number[] = [];
    const backlog = environments.map(async (pacer) => {
      const senders = Array.from({ length: 20 }, async () => {
        while (clock.now() < end) if (await pacer.acquire('EMAIL', clock.now() + 5_000)) normal.push(clock.now());
      });
      await Promise.all(senders);
    });
    // One critical notice every 700 ms, arriving at an environment busy with the backlog: its wait is its latency.
    const alerts = (async () => {
      for (let i = 0; clock.now() < end - 1_000; i++) {
        const asked = clock.now();
        const pacer = environments[i % environments.length] as SharedTokenBucket;
        if (await pacer.acquire('EMAIL', asked + 5_000, 'critical')) critical.push(clock.now() - asked);
        await clock.sleep(700);
      }
    })();
    let done = false;
    void Promise.all([...backlog, alerts]).then(() => (done = true));
    while (!done && (await clock.step()));
    const perWindow = new Map<number, number>();
    for (const t of normal) perWindow.set(Math.floor(t / 1000), (perWindow.get(Math.floor(t / 1000)) ?? 0) + 1);
    // Never above the rate, and the backlog still drains at (nearly) the full rate: the reserve is released.
    for (const [, n] of perWindow) expect(n).toBeLessThanOrEqual(14);
    expect(normal.length).toBeGreaterThanOrEqual(9 * 13);
    expect(critical.length).toBeGreaterThanOrEqual(10);
    // No critical send waited for the backlog: at most until the next window.
    expect(Math.max(...critical)).toBeLessThanOrEqual(1_020);
  });
});

/** One notice asking for a send token: its class, when it asks (ms into the run) and how long it may wait. */
interface Arrival {
  readonly noticeClass: NoticeClass;
  readonly at: number;
  readonly patience: number;
}
interface Answer extends Arrival {
  readonly asked: number;
  readonly waitUntil: number;
  readonly got: boolean;
  readonly answeredAt: number;
}

/** The arrivals, each at its time, against one environment's bucket on the virtual clock; every answer with its time. */
async function arrive(
  arrivals: readonly Arrival[],
  prefilled: number,
): Promise<{ answers: Answer[]; windows: MemoryWindows; start: number }> {
  const clock = new VirtualClock();
  const start = clock.t;
  const windows = new MemoryWindows();
  windows.used.set(`EMAIL#${start}`, prefilled);
  const pacer = new SharedTokenBucket(windows, RATES, clock);
  const answers: Answer[] = [];
  const all = Promise.all(
    arrivals.map(async (a) => {
      await clock.sleep(a.at);
      const asked = clock.now();
      const waitUntil = asked + a.patience;
      const got = (await pacer.acquire('EMAIL', waitUntil, a.noticeClass)) !== false;
      answers.push({ ...a, asked, waitUntil, got, answeredAt: clock.now() });
    }),
  );
  let done = false;
  void all.then(() => (done = true));
  while (!done && (await clock.step()));
  await all;
  return { answers, windows, start };
}

const RANK: Readonly<Record<NoticeClass, number>> = { critical: 0, normal: 1, bulk: 2 };

/**
 * A refused notice found every window it could use taken up to its class's ceiling at the last moment it could still
 * use it: a sleeper (itself, or one of its class ahead of it) wakes up to 20 ms after the release or the window's
 * start (its jitter).
 */
function expectRefusedOnlyWhenFull({ answers, windows, start }: Awaited<ReturnType<typeof arrive>>): void {
  for (const r of answers.filter((a) => !a.got)) {
    const latest = r.waitUntil - 20;
    for (let w = Math.floor(r.asked / 1_000) * 1_000; w <= latest; w += 1_000) {
      const ceiling = classCeiling(14, r.noticeClass, Math.min(w + 999, latest) - w);
      const what = `${r.noticeClass} asked at +${r.asked - start} until +${r.waitUntil - start}: window +${w - start}`;
      expect(windows.used.get(`EMAIL#${w}`) ?? 0, what).toBeGreaterThanOrEqual(ceiling);
    }
  }
}

/** Whenever a notice was served, every notice of a higher class already waiting (and still in time) was served first. */
function expectNoLowerClassFirst({ answers, start }: Awaited<ReturnType<typeof arrive>>): void {
  for (const g of answers.filter((a) => a.got)) {
    for (const h of answers) {
      if (RANK[h.noticeClass] >= RANK[g.noticeClass] || h.asked >= g.answeredAt || h.waitUntil < g.answeredAt) continue;
      const what = `${h.noticeClass} +${h.asked - start} behind ${g.noticeClass} served at +${g.answeredAt - start}`;
      expect(h.got && h.answeredAt <= g.answeredAt, what).toBe(true);
    }
  }
}

describe('a higher class never waits behind a lower one', () => {
  it('a critical notice arriving while a lone normal one sleeps until the release is served at once, from the reserve', async () => {
    // EMAIL at 14/s: normal may take 12 before the release. The window holds 12: the normal notice sleeps.
    const { answers } = await arrive(
      [
        { noticeClass: 'normal', at: 100, patience: 5_000 },
        // Its invocation can wait 200 ms: long before the release, let alone the next window.
        { noticeClass: 'critical', at: 200, patience: 200 },
      ],
      12,
    );
    const critical = answers.find((a) => a.noticeClass === 'critical');
    const normal = answers.find((a) => a.noticeClass === 'normal');
    expect(critical).toMatchObject({ got: true });
    expect(critical?.answeredAt).toBe(critical?.asked);
    // The normal one still gets the window's last token at the release.
    expect(normal).toMatchObject({ got: true });
    expect(normal?.answeredAt).toBeGreaterThanOrEqual((normal?.asked ?? 0) - 100 + RELEASE_AT_MS);
  });

  // Biased towards what tests the promise: windows nearly full, arrivals close together, short waits.
  const arrival = fc.record({
    noticeClass: fc.constantFrom<NoticeClass>('critical', 'normal', 'bulk'),
    at: fc.oneof(fc.integer({ min: 0, max: 600 }), fc.integer({ min: 0, max: 2_400 })),
    patience: fc.oneof(fc.integer({ min: 0, max: 400 }), fc.integer({ min: 0, max: 1_500 })),
  });
  const prefilled = fc.oneof(fc.integer({ min: 10, max: 14 }), fc.integer({ min: 0, max: 14 }));

  it('over any arrival order: a notice is refused only when every window it could use was taken up to its class’s ceiling, and no lower class is served while a higher one waits', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(arrival, { minLength: 1, maxLength: 12 }), prefilled, async (arrivals, filled) => {
        const run = await arrive(arrivals, filled);
        expect(run.answers).toHaveLength(arrivals.length);
        for (const [key, used] of run.windows.used) expect(used, key).toBeLessThanOrEqual(14);
        expectRefusedOnlyWhenFull(run);
        expectNoLowerClassFirst(run);
      }),
      { numRuns: 1000 },
    );
  });
});

describe('the channel breaker', () => {
  function store() {
    const state = new Map<Channel, BreakerState>();
    const s = {
      reads: 0,
      read: async (c: Channel) => {
        s.reads++;
        return state.get(c);
      },
      open: async (c: Channel, st: BreakerState) => void state.set(c, st),
    };
    return s as BreakerStore & { reads: number };
  }

  it('a hold is seen at once here, and by every other environment at its next refresh', async () => {
    const shared = store();
    const here = new ChannelBreaker(shared, { holdMs: 60_000, refreshMs: 5_000 });
    const there = new ChannelBreaker(shared, { holdMs: 60_000, refreshMs: 5_000 });
    const t = 1_000_000;
    expect(await there.heldUntil('EMAIL', t)).toBeUndefined();
    expect(await here.hold('EMAIL', 'AccountSendingPausedException', t)).toBe(t + 60_000);
    expect(await here.heldUntil('EMAIL', t + 1)).toBe(t + 60_000);
    expect(await there.heldUntil('EMAIL', t + 1_000)).toBeUndefined(); // cached: one read per refresh
    expect(await there.heldUntil('EMAIL', t + 5_000)).toBe(t + 60_000);
    expect(await there.heldUntil('EMAIL', t + 60_001 + 5_000)).toBeUndefined(); // the hold ended: the next send probes
    expect(await here.heldUntil('SMS', t)).toBeUndefined(); // per channel
  });

  it('many records asking at once cost one read', async () => {
    const shared = store();
    const breaker = new ChannelBreaker(shared, { holdMs: 60_000, refreshMs: 5_000 });
    await Promise.all(Array.from({ length: 10 }, () => breaker.heldUntil('PUSH', 0)));
    expect(shared.reads).toBe(1);
  });
});

describe('the invocation budget', () => {
  const options = { concurrency: 10, sendTimeoutMs: 5_000, maxWaitMs: 10_000, records: 100 };

  it('starts no record whose send could not finish before the deadline', () => {
    const budget = new InvocationBudget(100_000, options);
    expect(() => budget.start(95_001)).toThrow(NotStartedError);
    expect(budget.start(95_000).finishBy).toBe(100_000);
  });

  it('gives each record a fair share of the time left to wait in, growing as records finish', () => {
    const budget = new InvocationBudget(58_000, options);
    // 58 s × 10 in flight ÷ 100 records − 1 s of work = 4.8 s.
    expect(budget.start(0).maxWaitMs).toBe(4_800);
    for (let i = 0; i < 90; i++) budget.done();
    expect(budget.start(0).maxWaitMs).toBe(10_000); // capped
  });
});

describe('dispatch timing: derived in one place, checked at synth', () => {
  it("the stack's values satisfy every rule", () => {
    expect(timingViolations(DISPATCH_TIMING)).toEqual([]);
    expect(DISPATCH_TIMING.leaseSeconds).toBe(2 * DISPATCH_TIMING.dispatchTimeoutSeconds);
  });

  it.each([
    [{ batchSize: 200 }, 'BATCH_FITS_TIMEOUT'],
    [{ sendTimeoutMs: 59_000 }, 'SEND_FITS_TIMEOUT'],
    [{ leaseSeconds: 30 }, 'LEASE_OUTLIVES_INVOCATION'],
    [{ connectTimeoutMs: 6_000 }, 'CONNECT_BEFORE_SEND_TIMEOUT'],
    [{ sweeperTimeoutSeconds: 90 }, 'SWEEPER_FITS_INTERVAL'],
    [{ pendingThresholdSeconds: 30 }, 'PENDING_THRESHOLD_AFTER_INVOCATION'],
  ])('%o breaks %s, and the error names it', (overrides, rule) => {
    expect(() => assertDispatchTiming(deriveDispatchTiming(overrides))).toThrow(
      new RegExp(`dispatch timing: .*${rule}`),
    );
  });
});

/**
 * A channel faster than 500 sends per second splits its token bucket into shards, so no one RATE# key takes
 * more than ~500 writes per second, while all environments together still never exceed the rate in any window.
 */
import { describe, expect, it } from 'vitest';
import { SharedTokenBucket } from '../../functions/dispatch/pacer.ts';
import type { TokenWindows } from '../../functions/dispatch/send-quota-store.ts';
import type { Channel } from '../../functions/domain/channels.ts';
import { rateKey } from '../../functions/domain/keys.ts';
import { RATE_KEY_TOKENS_TARGET, rateShardsFor, rateShareOf } from '../../functions/domain/send-rate.ts';

class VirtualClock {
  t = 1_800_000_000_000;
  private timers: { at: number; resolve: () => void }[] = [];
  private seed = 42;
  now = () => this.t;
  sleep = (ms: number) => new Promise<void>((resolve) => this.timers.push({ at: this.t + ms, resolve }));
  random = () => {
    this.seed = (this.seed * 1_103_515_245 + 12_345) % 2 ** 31;
    return this.seed / 2 ** 31;
  };
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

/** DynamoTokenWindows' semantics in memory, per key: the writes each RATE# key takes, per window. */
class ShardedWindows implements TokenWindows {
  readonly used = new Map<string, number>();
  readonly writes = new Map<string, number>();
  async take(channel: Channel, window: number, want: number, limit: number, shard = 0): Promise<number> {
    const key = `${rateKey(channel, shard)}|${window}`;
    const write = () => this.writes.set(key, (this.writes.get(key) ?? 0) + 1);
    write();
    const used = this.used.get(key) ?? 0;
    const n = used + want <= limit ? want : limit - used;
    if (n <= 0) return 0;
    if (n < want) write();
    this.used.set(key, used + n);
    return n;
  }
}

describe('rate shards', () => {
  it('one key up to 500/s (the key it always had), then one more per 500/s; the shares add up to the rate', () => {
    expect(rateShardsFor(14)).toBe(1);
    expect(rateShardsFor(500)).toBe(1);
    expect(rateShardsFor(501)).toBe(2);
    expect(rateShardsFor(10_000)).toBe(20);
    expect(rateKey('EMAIL')).toBe('RATE#EMAIL');
    expect(rateKey('EMAIL', 3)).toBe('RATE#EMAIL#3');
    for (const rate of [501, 1_234, 10_000]) {
      const shards = rateShardsFor(rate);
      const shares = Array.from({ length: shards }, (_, i) => rateShareOf(rate, shards, i));
      expect(shares.reduce((a, b) => a + b, 0)).toBe(rate);
      expect(Math.max(...shares)).toBeLessThanOrEqual(RATE_KEY_TOKENS_TARGET);
    }
  });

  it('2,000/s over 4 shards: 20 environments never exceed the rate in any window, and no key takes much over 500 writes', async () => {
    const rate = 2_000;
    const clock = new VirtualClock();
    const windows = new ShardedWindows();
    const rates = { EMAIL: rate, PUSH: 100, SMS: 20 };
    const environments = Array.from({ length: 20 }, () => new SharedTokenBucket(windows, rates, clock));
    const start = clock.t;
    const end = start + 3_000;
    const grants: number[] = [];
    const senders = environments.flatMap((pacer) =>
      Array.from({ length: 10 }, async () => {
        while (clock.now() < end) {
          if (await pacer.acquire('EMAIL', clock.now() + 5_000)) grants.push(clock.now());
          await clock.sleep(50);
        }
      }),
    );
    const all = Promise.all(senders);
    while (await clock.step()) {
      // fire timers until every sender is done
    }
    await all;
    const perWindow = new Map<number, number>();
    for (const g of grants.filter((g) => g < end)) {
      perWindow.set(Math.floor(g / 1000), (perWindow.get(Math.floor(g / 1000)) ?? 0) + 1);
    }
    expect(Math.max(...perWindow.values())).toBeLessThanOrEqual(rate);
    // 200 senders at 50 ms each could send 4,000/s: the bucket holds them to the rate, and close to it.
    expect(grants.filter((g) => g < end).length).toBeGreaterThanOrEqual(rate * 2.7);
    const keys = new Set([...windows.writes.keys()].map((k) => k.split('|')[0]));
    expect(keys).toEqual(new Set(['RATE#EMAIL', 'RATE#EMAIL#1', 'RATE#EMAIL#2', 'RATE#EMAIL#3']));
    // Grants are at most 500 per key and window (chunks make them fewer writes); a refused write per environment and
    // window comes on top.
    for (const [key, writes] of windows.writes) {
      expect(writes, key).toBeLessThanOrEqual(RATE_KEY_TOKENS_TARGET + 2 * environments.length);
    }
  });
});

/**
 * The per-channel circuit breaker: an account-level failure (IAM, a paused or sandboxed SES account, a KMS key) is
 * not the message's fault and will refuse every other message too, so the channel is held for a while instead of
 * sending into the wall. Shared through one DynamoDB item per channel (send-quota-store.ts), read at most every few
 * seconds per execution environment: a held channel costs each environment one cheap read per refresh, not a refused
 * send per notification. When the hold ends, the next send is the probe: refused again, it holds the channel again.
 */
import type { BreakerState, BreakerStore } from '../commons/send-quota-store.ts';
import type { Channel } from '../domain/channels.ts';

export interface Breaker {
  /** When the channel is held: until when; otherwise undefined. */
  heldUntil(channel: Channel, now: number): Promise<number | undefined>;
  /** Holds the channel for the hold period after an account-level failure; resolves with the end of the hold. */
  hold(channel: Channel, code: string, now: number): Promise<number>;
}

/** Never held: for tests and measurements that are not about the breaker. */
export const neverHeld: Breaker = {
  heldUntil: async () => undefined,
  hold: async (_channel, _code, now) => now,
};

export class ChannelBreaker implements Breaker {
  private readonly seen = new Map<Channel, { readAt: number; state: Promise<BreakerState | undefined> }>();

  constructor(
    private readonly store: BreakerStore,
    private readonly options: { readonly holdMs: number; readonly refreshMs: number },
  ) {}

  async heldUntil(channel: Channel, now: number): Promise<number | undefined> {
    let cached = this.seen.get(channel);
    if (cached === undefined || now - cached.readAt >= this.options.refreshMs) {
      // One read in flight per channel, shared by every record that asks meanwhile.
      cached = { readAt: now, state: this.store.read(channel) };
      this.seen.set(channel, cached);
      cached.state.catch(() => this.seen.delete(channel));
    }
    const state = await cached.state;
    return state !== undefined && state.openUntil > now ? state.openUntil : undefined;
  }

  async hold(channel: Channel, code: string, now: number): Promise<number> {
    const state = { openUntil: now + this.options.holdMs, code };
    this.seen.set(channel, { readAt: now, state: Promise.resolve(state) });
    await this.store.open(channel, state, now);
    return state.openUntil;
  }
}

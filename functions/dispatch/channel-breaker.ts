/**
 * The circuit breaker: a failure that is not the message's fault will refuse every other message of the same scope
 * too, so that scope is held for a while instead of sending into the wall. Two scopes:
 * - a channel (EMAIL, PUSH, SMS): an account-level failure (IAM, a paused or sandboxed SES account, a KMS key);
 * - one push platform application (PUSH#<application ARN>): a disabled application (an expired APNs certificate)
 *   refuses its own endpoints and nothing else — an Android app next to it, or another iOS app, goes on sending.
 * A failure of one endpoint (disabled, another account's) holds nothing: that message alone is FAILED.
 *
 * Shared through one DynamoDB item per scope (send-quota-store.ts), read at most every few seconds per execution
 * environment: a held scope costs each environment one cheap read per refresh, not a refused send per notification.
 * When the hold ends, the next send is the probe: refused again, it holds the scope again.
 */

import type { Channel } from '../domain/channels.ts';
import { applicationBreakerScope } from '../domain/keys.ts';
import { parsePushEndpoint, SENT_TO_ENDPOINT } from '../domain/push-endpoint.ts';
import type { BreakerState, BreakerStore } from './send-quota-store.ts';

export interface Breaker {
  /** When the scope is held: until when; otherwise undefined. */
  heldUntil(scope: string, now: number): Promise<number | undefined>;
  /** Holds the scope for the hold period; resolves with the end of the hold. */
  hold(scope: string, code: string, now: number): Promise<number>;
}

/** The hold of a push endpoint's platform application, or undefined when the recipient is not an endpoint ARN. */
export function applicationScope(channel: Channel, recipient: string): string | undefined {
  if (!SENT_TO_ENDPOINT[channel]) return undefined;
  const endpoint = parsePushEndpoint(recipient);
  return endpoint === undefined ? undefined : applicationBreakerScope(endpoint.applicationArn);
}

/** Never held: for tests and measurements that are not about the breaker. */
export const neverHeld: Breaker = {
  heldUntil: async () => undefined,
  hold: async (_scope, _code, now) => now,
};

export class ChannelBreaker implements Breaker {
  private readonly seen = new Map<string, { readAt: number; state: Promise<BreakerState | undefined> }>();

  constructor(
    private readonly store: BreakerStore,
    private readonly options: { readonly holdMs: number; readonly refreshMs: number },
  ) {}

  async heldUntil(scope: string, now: number): Promise<number | undefined> {
    let cached = this.seen.get(scope);
    if (cached === undefined || now - cached.readAt >= this.options.refreshMs) {
      // One read in flight per scope, shared by every record that asks meanwhile.
      cached = { readAt: now, state: this.store.read(scope) };
      this.seen.set(scope, cached);
      cached.state.catch(() => this.seen.delete(scope));
    }
    const state = await cached.state;
    return state !== undefined && state.openUntil > now ? state.openUntil : undefined;
  }

  async hold(scope: string, code: string, now: number): Promise<number> {
    const state = { openUntil: now + this.options.holdMs, code };
    this.seen.set(scope, { readAt: now, state: Promise.resolve(state) });
    await this.store.open(scope, state, now);
    return state.openUntil;
  }
}

/**
 * How a channel's send rate is spread over keys of the table (docs/scaling.md): every token the shared bucket hands
 * out is a write to one rate key, and a key takes at most about 1,000 writes a second, so a rate above
 * RATE_KEY_TOKENS_TARGET is split into shards, each with its share. Pure: the pacer and the capacity model read it.
 */

/** Tokens per second one rate key may hand out: every grant is a write, so a key never takes more writes than this. */
export const RATE_KEY_TOKENS_TARGET = 500;
/** Shards of a channel's token bucket for its rate: 1 up to 500/s (the key is then RATE#<channel>). */
export const rateShardsFor = (ratePerSecond: number) => Math.max(1, Math.ceil(ratePerSecond / RATE_KEY_TOKENS_TARGET));
/** A shard's share of the rate; the shares add up to the rate exactly. */
export const rateShareOf = (ratePerSecond: number, shards: number, shard: number) =>
  Math.floor(ratePerSecond / shards) + (shard < ratePerSecond % shards ? 1 : 0);

/**
 * The channels a notification can go out on. A leaf module: the event contract and routing (routing.ts) both read it.
 */
export const CHANNELS = ['EMAIL', 'PUSH', 'SMS'] as const;
export type Channel = (typeof CHANNELS)[number];
/** The channels SNS sends (SES sends EMAIL). */
export type SnsChannel = Exclude<Channel, 'EMAIL'>;

/**
 * The default branch of every switch on a channel. Its parameter is `never` — the channel there `satisfies never`
 * while each channel has its case — so a new channel is a list of compile errors, one per switch that must decide
 * what it does, instead of a silent fall into another channel's branch. At run time a value that is no channel (an
 * item written by something else) is a typed error, never a guess.
 */
export function unknownChannel(value: never): never {
  // The channel itself, or the message or request whose `channel` the switch read.
  const given: unknown = value;
  const channel = typeof given === 'object' && given !== null && 'channel' in given ? given.channel : given;
  throw new UnknownChannelError(`not a channel: ${String(channel)}`);
}

export class UnknownChannelError extends TypeError {
  override name = 'UnknownChannelError';
}

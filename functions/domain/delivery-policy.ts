import { CHANNELS, type Channel } from './channels.ts';

/**
 * What happens when a send's outcome is unknown (the request left, the reply did not come back).
 * AT_MOST_ONCE: mark UNKNOWN and alarm; never risk a second copy. AT_LEAST_ONCE: send again.
 */
export const DELIVERY_POLICIES = ['AT_MOST_ONCE', 'AT_LEAST_ONCE'] as const;
export type DeliveryPolicy = (typeof DELIVERY_POLICIES)[number];
export type ChannelPolicies = Readonly<Record<Channel, DeliveryPolicy>>;
/** Every channel's default: never risk a second copy (a bank's safe choice). */
export const DEFAULT_CHANNEL_POLICIES: ChannelPolicies = {
  EMAIL: 'AT_MOST_ONCE',
  PUSH: 'AT_MOST_ONCE',
  SMS: 'AT_MOST_ONCE',
};

/** The CHANNEL_POLICIES environment value: "EMAIL=AT_MOST_ONCE,PUSH=AT_MOST_ONCE,SMS=AT_LEAST_ONCE". */
export const formatChannelPolicies = (policies: Partial<ChannelPolicies>): string =>
  Object.entries(policies)
    .map(([channel, policy]) => `${channel}=${policy}`)
    .join(',');

/** The inverse of formatChannelPolicies; channels not named keep the default. `malformed` names the first entry that is not <channel>=<policy>. */
export function parseChannelPolicies(text: string | undefined): ChannelPolicies | { malformed: string } {
  const policies: Record<Channel, DeliveryPolicy> = { ...DEFAULT_CHANNEL_POLICIES };
  for (const entry of (text ?? '').split(',').filter((e) => e.trim() !== '')) {
    const [channel, policy] = entry.split('=').map((s) => s.trim());
    if (!CHANNELS.includes(channel as Channel) || !DELIVERY_POLICIES.includes(policy as DeliveryPolicy)) {
      return { malformed: entry };
    }
    policies[channel as Channel] = policy as DeliveryPolicy;
  }
  return policies;
}

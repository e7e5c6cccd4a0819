/**
 * The channels a notification can go out on. A leaf module: the event contract and routing (routing.ts) both read it.
 */
export const CHANNELS = ['EMAIL', 'PUSH', 'SMS'] as const;
export type Channel = (typeof CHANNELS)[number];

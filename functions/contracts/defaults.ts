/**
 * The defaults the functions' environment and the stack's settings share, each written once: the stack passes its
 * settings to the functions as environment values, and a function run without one (the local pipeline, a test) must
 * come to the same value. The timing defaults live in dispatch-timing.ts, the sweep index's in domain/sweep-index.ts.
 */
import type { Channel } from '../domain/channels.ts';

/** Sends per second per channel, all dispatch invocations together: SES's sandbox rate, SNS's default quotas. */
export const DEFAULT_SEND_RATES: Readonly<Record<Channel, number>> = { EMAIL: 14, PUSH: 100, SMS: 20 };
/** Past this age since createdAt a notification ends FAILED: EXPIRED instead of being sent late. */
export const DEFAULT_NOTIFICATION_MAX_AGE_HOURS = 24;
/** How long the inbox, notifications and quarantine records are kept (their TTL). */
export const DEFAULT_INBOX_RETENTION_DAYS = 35;

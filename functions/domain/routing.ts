/**
 * Routing: which channels one event fans out to. The one place that says which channels each event type allows.
 *
 * channels(event) = allowed(type) ∩ channels the recipient has a contact point for ∩ event.channels (when given).
 * A channel the producer asked for explicitly but the recipient has no contact point for is bad input.
 */
import { CHANNELS, type Channel } from './channels.ts';
import type { BankingEvent, EventType, Recipient, Rejection } from './event.ts';

export const ALLOWED_CHANNELS: Readonly<Record<EventType, readonly Channel[]>> = {
  TransferCompleted: ['EMAIL', 'PUSH', 'SMS'],
  TransferFailed: ['EMAIL', 'PUSH', 'SMS'],
};

/** The one address a channel sends to, if the recipient has one. */
export function contactFor(recipient: Recipient, channel: Channel): string | undefined {
  switch (channel) {
    case 'EMAIL':
      return recipient.email;
    case 'PUSH':
      return recipient.pushEndpointArn;
    case 'SMS':
      return recipient.phoneNumber;
  }
}

export type Route = { ok: true; channels: Channel[] } | { ok: false; rejection: Rejection };

export function route(event: BankingEvent): Route {
  const allowed = ALLOWED_CHANNELS[event.type];
  if (event.channels !== undefined) {
    for (const channel of event.channels) {
      if (!allowed.includes(channel)) {
        return {
          ok: false,
          rejection: {
            reason: 'UNKNOWN_CHANNEL',
            detail: `${channel} is not allowed for ${event.type}`,
            eventId: event.eventId,
          },
        };
      }
      if (contactFor(event.recipient, channel) === undefined) {
        return {
          ok: false,
          rejection: {
            reason: 'MISSING_CONTACT',
            detail: `channel ${channel} requested without its contact point`,
            eventId: event.eventId,
          },
        };
      }
    }
  }
  const requested = event.channels ?? allowed;
  // Keep the canonical CHANNELS order so the transaction's items are always built the same way.
  const channels = CHANNELS.filter(
    (c) => allowed.includes(c) && requested.includes(c) && contactFor(event.recipient, c) !== undefined,
  );
  return { ok: true, channels };
}

/**
 * Routing: which channels one event fans out to, and which of them are refused. The channels each type allows are its
 * definition's (catalogue.ts).
 *
 * wanted(event) = allowed(type) ∩ event.channels (when given; otherwise every channel the recipient has a contact
 * point for, a refused one included). Each wanted channel is sent when its contact point has a sendable reading, and
 * refused otherwise — its own unit: the other channels are still sent (docs/event.md "A refused channel"). When every
 * wanted channel is refused nothing would reach the customer, so the event is rejected (quarantined, an operator
 * paged) with the first refusal's reason.
 */

import { allowedChannels } from './catalogue.ts';
import { CHANNELS, type Channel, unknownChannel } from './channels.ts';
import type { BankingEvent, ContactRefusal, Recipient, Rejection } from './event/contract.ts';

/** The one address a channel sends to, if the recipient has one. */
export function contactFor(recipient: Recipient, channel: Channel): string | undefined {
  switch (channel) {
    case 'EMAIL':
      return recipient.email;
    case 'PUSH':
      return recipient.pushEndpointArn;
    case 'SMS':
      return recipient.phoneNumber;
    default:
      return unknownChannel(channel);
  }
}

/** Why a wanted channel is not sent: its contact point has no reading, one its provider cannot take, or is missing. */
export type ChannelRefusalReason = ContactRefusal['reason'] | 'MISSING_CONTACT';

export interface ChannelRefusal {
  readonly channel: Channel;
  readonly reason: ChannelRefusalReason;
  /** The field and the rule, never the value. */
  readonly detail: string;
}

export type Route = { ok: true; channels: Channel[]; refused: ChannelRefusal[] } | { ok: false; rejection: Rejection };

export function route(event: BankingEvent, contactRefusals: readonly ContactRefusal[] = []): Route {
  const allowed = allowedChannels(event.type);
  for (const channel of event.channels ?? []) {
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
  }
  const channels: Channel[] = [];
  const refused: ChannelRefusal[] = [];
  // The canonical CHANNELS order, so the transaction's items are always built the same way.
  for (const channel of CHANNELS) {
    if (!allowed.includes(channel)) continue;
    const listed = event.channels?.includes(channel);
    if (listed === false) continue;
    const problem = contactRefusals.find((r) => r.channel === channel);
    if (problem !== undefined) refused.push({ channel, reason: problem.reason, detail: problem.detail });
    else if (contactFor(event.recipient, channel) !== undefined) channels.push(channel);
    else if (listed === true) {
      refused.push({
        channel,
        reason: 'MISSING_CONTACT',
        detail: `channel ${channel} requested without its contact point`,
      });
    }
  }
  const [first] = refused;
  if (channels.length === 0 && first !== undefined) {
    return {
      ok: false,
      rejection: {
        reason: first.reason,
        detail: `every channel refused: ${refused.map((r) => `${r.channel} ${r.reason} ${r.detail}`).join('; ')}`,
        eventId: event.eventId,
      },
    };
  }
  return { ok: true, channels, refused };
}

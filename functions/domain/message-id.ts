/**
 * Where a notification keeps the provider's message id of its send, and how it is read back.
 *
 * The providerMessage index (functions/contracts/table-schema.ts messageIndex) exists for SNS: its delivery status
 * logs name the message, never the notification, so a push's or an SMS's id is the index's key, `providerMessageId`.
 * An email's send carries the notificationId as an SES message tag, and every SES report of ours carries it back
 * (feedback.ts: a report without it is not ours), so an email's id never needs the index: it is kept in
 * `sesMessageId`, which no index has as a key — one index write fewer for every email sent.
 *
 * Items written before emails moved keep their email's id in `providerMessageId` (and its index entry, until the item
 * expires): every reader takes either attribute (messageIdOf), every conditional write names both.
 */
import type { Channel } from './channels.ts';

/** The channels whose sends carry the notificationId as a message tag: SES takes tags, SNS does not. */
export const TAGGED: Readonly<Record<Channel, boolean>> = { EMAIL: true, PUSH: false, SMS: false };

/** The attribute a channel's message id is written in: the index's key only where a report names nothing else. */
export const messageIdAttribute = (channel: Channel): 'providerMessageId' | 'sesMessageId' =>
  TAGGED[channel] ? 'sesMessageId' : 'providerMessageId';

/** Both attributes a message id may be in, for a condition or a REMOVE that must hold whichever an item has. */
export const MESSAGE_ID_ATTRIBUTES = ['providerMessageId', 'sesMessageId'] as const;

/** An item's (or an earlier send's) recorded message id, in whichever attribute it was written; undefined when none. */
export function messageIdOf(item: {
  readonly providerMessageId?: unknown;
  readonly sesMessageId?: unknown;
}): string | undefined {
  for (const id of [item.sesMessageId, item.providerMessageId]) {
    if (typeof id === 'string' && id !== '') return id;
  }
  return undefined;
}

/** A condition that the item records no message id, in either attribute. */
export const NO_MESSAGE_ID = MESSAGE_ID_ATTRIBUTES.map((a) => `attribute_not_exists(${a})`).join(' AND ');

/** A condition that the item records message id `value` (an expression value, e.g. `:mid`), in either attribute. */
export const messageIdIs = (value: string) => `(${MESSAGE_ID_ATTRIBUTES.map((a) => `${a} = ${value}`).join(' OR ')})`;

/**
 * What became of a notice, in the words support staff use with a customer on the phone: "Sent, and delivered",
 * "Not sent: the customer turned off text messages", "We don't know whether it arrived" — never a status code or a
 * provider's error name as the headline (the codes stay on the page, small, for the engineer a case is passed to).
 * Pure: the notification as stored, the customer's preferences and the address's suppression as read now.
 */
import type { Outcome } from '../contracts/console-views.ts';
import { type Channel, unknownChannel } from '../domain/channels.ts';
import type { RejectionReason } from '../domain/event/contract.ts';

interface ChannelWords {
  readonly one: string;
  readonly many: string;
  readonly service: string;
  /** What the bank's system sends to reach the customer on it. */
  readonly contact: string;
  /** Who reports on a delivery, and what "delivered" means on it. */
  readonly reporter: string;
  readonly delivered: string;
  /** A contact that can receive nothing more. */
  readonly undeliverable: string;
}

export const CHANNEL_WORDS: Readonly<Record<Channel, ChannelWords>> = {
  EMAIL: {
    one: 'Email',
    many: 'emails',
    service: 'the email service',
    contact: 'email',
    reporter: 'The email service',
    delivered: 'the customer’s email provider accepted it',
    undeliverable: 'This address cannot receive mail',
  },
  SMS: {
    one: 'Text message',
    many: 'text messages',
    service: 'the text message service',
    contact: 'text message',
    reporter: 'The phone network',
    delivered: 'the phone network delivered it',
    undeliverable: 'This number cannot receive text messages',
  },
  PUSH: {
    one: 'App notification',
    many: 'app notifications',
    service: 'the app notification service',
    contact: 'device',
    reporter: 'The phone maker’s service',
    delivered: 'the phone maker’s service delivered it',
    undeliverable: 'The app is no longer installed on this device',
  },
};

const words = (channel: Channel) => {
  switch (channel) {
    case 'EMAIL':
    case 'SMS':
    case 'PUSH':
      return CHANNEL_WORDS[channel];
    default:
      return unknownChannel(channel);
  }
};

/** `TransferCompleted` → "Transfer completed". */
export const noticeName = (type: string) =>
  type.replace(/([a-z0-9])([A-Z])/g, '$1 $2').replace(/ ([A-Z])(?=[a-z])/g, (_, c: string) => ` ${c.toLowerCase()}`);

type Item = Readonly<Record<string, unknown>>;
const str = (v: unknown) => (typeof v === 'string' ? v : '');

/** What became of one notification, and why. */
export function outcomeOf(n: Item, suppression: Item | undefined): Outcome {
  const channel = n.channel as Channel;
  const w = words(channel);
  switch (str(n.status)) {
    case 'SENT':
      return sentOutcome(n, channel);
    case 'SUPPRESSED':
      return {
        headline: 'Not sent',
        tone: 'bad',
        detail: suppressedDetail(str(n.suppressedReason), channel, suppression),
      };
    case 'REFUSED':
      return {
        headline: 'Not sent',
        tone: 'bad',
        detail:
          str(n.refusedReason) === 'MISSING_CONTACT'
            ? `The bank's system sent no ${w.contact} contact for this customer.`
            : `The contact details the bank's system sent could not be used (${str(n.refusedDetail) || 'not valid'}). The system that sent them has to correct them.`,
      };
    case 'FAILED':
      return { headline: 'Not sent', tone: 'bad', detail: failedDetail(str(n.lastError), w.service) };
    case 'UNKNOWN':
      return {
        headline: 'Not known whether it arrived',
        tone: 'unsure',
        detail: `We asked ${w.service} to send it and got no clear answer, so it may or may not have reached the customer. Ask the customer before sending it again.`,
      };
    case 'PENDING':
    case 'SENDING':
      return { headline: 'Being sent', tone: 'waiting', detail: 'It has not gone out yet; it will shortly.' };
    default:
      return { headline: str(n.status), tone: 'unsure', detail: '' };
  }
}

function sentOutcome(n: Item, channel: Channel): Outcome {
  const delivery = str(n.deliveryStatus);
  const response = str(n.deliveryResponse);
  switch (delivery) {
    case 'DELIVERED':
      return { headline: 'Delivered', tone: 'good', detail: `Sent, and ${deliveredTo(channel)}.` };
    case 'BOUNCED':
      return {
        headline: 'Sent, but bounced',
        tone: 'bad',
        detail: `The customer's email provider refused it${str(n.bounceType) === 'Permanent' ? ': the address does not accept mail' : ''}.`,
      };
    case 'COMPLAINED':
      return { headline: 'Delivered, marked as spam', tone: 'bad', detail: 'The customer marked it as spam.' };
    case 'DELAYED':
      return {
        headline: 'Sent, delivery delayed',
        tone: 'waiting',
        detail: "The customer's email provider has not taken it yet; the email service is still trying.",
      };
    case 'FAILED':
    case 'REJECTED':
      return {
        headline: 'Sent, but not delivered',
        tone: 'bad',
        detail: `${words(channel).reporter} could not deliver it${response ? `: “${response}”` : ''}.`,
      };
    case '':
      return { headline: 'Sent', tone: 'good', detail: 'Handed over for delivery; no report of its delivery yet.' };
    default:
      return { headline: 'Sent', tone: 'good', detail: `The delivery report says ${delivery.toLowerCase()}.` };
  }
}

const deliveredTo = (channel: Channel) => words(channel).delivered;

/**
 * Why a resend would be stopped again, and what has to change first, by the suppression's cause: a carrier STOP, the
 * customer's own choice, an address that bounced or complained — never a guess between them.
 */
export function suppressedRefusalWords(cause: string | undefined, channel: Channel): string {
  const fix: Readonly<Record<string, string>> = {
    CARRIER_OPT_OUT:
      'The phone network blocks our texts until the customer texts START to the bank’s number; an engineer then lifts the suppression.',
    OPTED_OUT: 'The customer turns these messages back on in their preferences first.',
    BOUNCED: 'The bank’s system has to send a working address first (an engineer lifts the suppression once it works).',
    COMPLAINED: 'Only the customer can undo a spam complaint: an engineer lifts it once the customer asks.',
    UNDELIVERABLE: 'The bank’s system has to send a working contact first.',
  };
  if (cause === undefined || fix[cause] === undefined) {
    return 'It would be stopped again: the customer turned these messages off, or the address or number is blocked. The customer’s choice, or the contact, has to change first.';
  }
  return `It would be stopped again. ${suppressedDetail(cause, channel, undefined)} ${fix[cause]}`;
}

function suppressedDetail(reason: string, channel: Channel, suppression: Item | undefined): string {
  const w = words(channel);
  const since = str(suppression?.since) ? ` (since ${str(suppression?.since).slice(0, 10)})` : '';
  switch (reason) {
    case 'OPTED_OUT':
      return `The customer has turned off ${w.many} for this kind of notice.`;
    case 'BOUNCED':
      return `An earlier email to this address bounced${since}, so we stopped sending to it.`;
    case 'COMPLAINED':
      return `The customer marked an earlier email as spam${since}, so we stopped emailing this address.`;
    case 'CARRIER_OPT_OUT':
      return `The customer replied STOP to an earlier text message${since}, so their phone network blocks ours.`;
    case 'UNDELIVERABLE':
      return `${w.undeliverable}${since}.`;
    default:
      return `We stopped sending to this contact (${reason}).`;
  }
}

function failedDetail(error: string, service: string): string {
  switch (error) {
    case 'EXPIRED':
      return 'It could not be sent in time, so it was dropped rather than sent late.';
    case 'ERASED':
      return "The customer's data was erased before it was sent.";
    case 'RENDER_ERROR':
      return 'The message could not be written: a detail it needs was missing.';
    case 'RETRIES_EXHAUSTED':
      return `${service[0]?.toUpperCase()}${service.slice(1)} failed every time we tried.`;
    default:
      return `${service[0]?.toUpperCase()}${service.slice(1)} refused it${error ? ` (${error})` : ''}.`;
  }
}

/** Why ingest could not read a record, as support staff say it to a customer (the code stays on the page, small). */
const UNREADABLE: Readonly<Record<RejectionReason, string>> = {
  NO_VALUE: 'it arrived empty',
  TOO_LARGE: 'it was larger than the agreed limit',
  INVALID_ENCODING: 'it was not in the agreed format',
  UNKNOWN_SCHEMA: 'it was written in a format we were not told about',
  INVALID_JSON: 'it was not in the agreed format',
  SCHEMA_VIOLATION: 'a detail it must carry was missing or not in the agreed form',
  INVALID_EVENT_ID: 'its id was not in the agreed format',
  UNKNOWN_TYPE: 'it was a kind of notice we were not told about',
  UNKNOWN_CHANNEL: 'it asked for a kind of message we do not send',
  INVALID_CONTACT: 'the contact details in it could not be used',
  UNSENDABLE_ADDRESS: 'its email address is one the email service cannot send to',
  INVALID_AMOUNT: 'the amount was not in the agreed format',
  MISSING_CONTACT: 'it carried no way to reach the customer',
  EVENT_ID_CONFLICT: 'another event with the same id but different content had already arrived',
  UNPROCESSABLE: 'our system failed while reading it',
  REPLICATED_NOT_TAKEN: 'it was a copy from our other region, which handles it there',
};

/** What became of a record ingest quarantined, in words; `where` is its place in Kafka. */
export function quarantinedWords(reason: string, where: string, replayedAt: string | undefined): string {
  const what = UNREADABLE[reason as RejectionReason] ?? `it could not be read (${reason})`;
  if (replayedAt !== undefined) {
    return `We received it but could not read it at first (${what}); it was fed in again on ${replayedAt.slice(0, 10)} (see its notices).`;
  }
  if (reason === 'REPLICATED_NOT_TAKEN') {
    return `We received a copy of it in the region that was not handling it (${what}), so nothing was sent from here. Engineers have it under ${where}; see the event's own record.`;
  }
  const fix =
    reason === 'UNPROCESSABLE'
      ? 'it can be sent once our engineers fix the fault'
      : 'it can be sent after the bank’s system that sent it is fixed';
  return `We received it but could not read it (${what}), so nothing was sent. Engineers have it under ${where}; ${fix}.`;
}

const A_NOTICE: Readonly<Record<Channel, string>> = {
  EMAIL: 'an email',
  SMS: 'a text message',
  PUSH: 'an app notification',
};

/** What a resend proposal sends, from what its proposer was shown (operator/resend.ts shown), to a masked contact. */
export function resendShown(channel: Channel, shown: Readonly<Record<string, unknown>>, to: string): string {
  const accepted = str(shown.despiteAccepted);
  const what =
    accepted !== ''
      ? `Second copy of ${A_NOTICE[channel]} the provider accepted (${accepted})`
      : `Another try of ${A_NOTICE[channel]} that ended ${str(shown.fromStatus) || 'unsent'}${str(shown.lastError) ? ` (${str(shown.lastError)})` : ''}`;
  return `${what}, to ${to}`;
}

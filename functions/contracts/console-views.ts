/**
 * What the console's API answers, as types: the console's function builds these (functions/console/views.ts) and
 * the page reads them (functions/console-page/page/), so the two cannot drift apart. Types only.
 */
import type { Channel } from '../domain/channels.ts';
import type { ConsoleCapability, ConsoleRole } from './console-routes.ts';

export type Tone = 'good' | 'bad' | 'unsure' | 'waiting';

/** What became of a notice, in plain words. */
export interface Outcome {
  /** Two or three words: the first thing read. */
  readonly headline: string;
  readonly tone: Tone;
  /** One or two sentences: why, and what it means for the customer. */
  readonly detail: string;
}

/** May this notice be sent again, and if not, why — in the words the page shows beside the button. */
export type ResendChoice =
  | { readonly offer: 'RESEND' | 'SECOND_COPY'; readonly note: string; readonly despiteAccepted?: string }
  | { readonly offer: 'NONE'; readonly note: string };

export interface NoticeCard {
  readonly notificationId: string;
  readonly eventId: string;
  readonly notice: string;
  readonly channel: Channel;
  readonly channelName: string;
  readonly occurredAt: string;
  /** What tells two notices of one kind apart: the transfer's reference and amount ("Ref t-3 · 12.50 USD"), or "". */
  readonly reference: string;
  /** The contact point, masked. */
  readonly to: string;
  readonly outcome: Outcome;
  /** The codes behind the words, for whoever the case goes to next. */
  readonly codes: { readonly status: string; readonly reason?: string; readonly delivery?: string };
  /** Each resend: `by` the approver's name as people read it, `byId` the verified principal. */
  readonly resends: readonly {
    readonly at: string;
    readonly by: string;
    readonly byId: string;
    readonly reason: string;
  }[];
  readonly resend: ResendChoice;
}

/** An event that made no notice at all, and why. */
export interface SilentEvent {
  readonly eventId: string;
  readonly notice: string;
  readonly occurredAt: string;
  readonly why: string;
}

/**
 * A record meant to be one of the customer's events that ingest received but could not read (quarantined): what went
 * wrong in plain words, and where engineers find it.
 */
export interface QuarantinedNotice {
  readonly eventId: string;
  readonly receivedAt: string;
  /** "We received it but could not read it (the amount was not in the agreed format). …" */
  readonly why: string;
  /** The record's place in Kafka, `<topic>#<partition>#<offset>`: what engineers replay. */
  readonly where: string;
  readonly reason: string;
  /** When it was fed in again after a fix, or null. */
  readonly replayedAt: string | null;
}

export interface AuditRow {
  readonly at: string;
  readonly action: string;
  /**
   * CONFIRM (done at once), PROPOSE, APPROVE or REJECT: which half of a four-eyes action the row is; WITHDRAW for a
   * REJECT by the proposal's own proposer.
   */
  readonly step: string;
  readonly by: string;
  readonly reason: string;
  readonly target: string;
  readonly outcome: string;
  /** A resend that was done queued the notice again: what became of the notice since, in words ("Delivered"). */
  readonly since?: string;
  readonly warnings?: readonly string[];
}

export interface CustomerAnswer {
  readonly userId: string;
  readonly notices: readonly NoticeCard[];
  readonly silent: readonly SilentEvent[];
  readonly quarantined: readonly QuarantinedNotice[];
  /** The kinds of message the customer turned off, in words; null when they never chose. */
  readonly optedOutOf: readonly string[] | null;
  readonly audit: readonly AuditRow[];
  /** The newest events come first, a page at a time: pass this back (`older`) for the next older page; null at the end. */
  readonly older: string | null;
}

export interface EventAnswer {
  readonly eventId: string;
  readonly userId: string | null;
  readonly notices: readonly NoticeCard[];
  readonly silent: readonly SilentEvent[];
  readonly quarantined: readonly QuarantinedNotice[];
}

export interface SentMessage {
  readonly acceptedAt: string;
  readonly to: string;
  readonly email?: { readonly from: string; readonly subject: string; readonly html: string; readonly text: string };
  readonly sms?: { readonly text: string; readonly encoding: string; readonly segments: number };
  readonly push?: { readonly title: string; readonly body: string };
  readonly reports: readonly { readonly at: string; readonly status: string; readonly words: string }[];
  /** SHA-256 of the stored record: what a dispute checks a copy against. */
  readonly sha256: string;
  readonly warnings: readonly string[];
}

/** A copy the records name as handed over for delivery that cannot be read now: never "nothing was sent". */
export interface UnreadableCopy {
  /**
   * pending: its batch is being rebuilt; gap: it waits in the table to be written; lost: neither; notInBatch: its batch
   * holds no record of it; damaged: the record does not match its fingerprint; unknown: the table was not asked.
   */
  readonly state: string;
  readonly batch: string;
  /** The engineers' words: where it is named and what the table says of its batch. */
  readonly says: string;
}

export interface NoticeAnswer {
  readonly card: NoticeCard | null;
  readonly sent: readonly SentMessage[];
  /** Copies named as sent that cannot be read now, with why. */
  readonly unfound: readonly UnreadableCopy[];
  /** Whether the provider accepted it, as the table says: UNKNOWN when the send's answer was lost (or the item expired). */
  readonly handedOver: 'YES' | 'NO' | 'UNKNOWN';
  readonly audit: readonly AuditRow[];
}

export interface MeAnswer {
  readonly name: string;
  readonly roles: readonly ConsoleRole[];
  readonly can: readonly ConsoleCapability[];
}

export interface RevealAnswer {
  readonly notificationId: string;
  readonly channel: Channel;
  readonly contact: string;
}

/** A proposal waiting for another person's approval, as the console lists it. */
export interface ProposalRow {
  readonly id: string;
  /** What it would do, in words: "Send again: Transfer completed · Text message". */
  readonly what: string;
  /** What exactly it sends, as it was shown to the proposer, contact masked: "Second copy of an email … to h•••@…". */
  readonly shown: string;
  /** The notice's state now, in words. */
  readonly now: string;
  /** The event of the notice, to open its card. */
  readonly eventId: string;
  readonly userId: string | null;
  readonly notificationId: string;
  readonly proposedBy: string;
  readonly proposedAt: string;
  readonly approveBy: string;
  readonly reason: string;
  /** PENDING until another person decides it; EXPIRED once its time to be approved is over. */
  readonly status: string;
  /** The caller proposed it: they may withdraw it, not approve it. */
  readonly mine: boolean;
  /**
   * Why the caller cannot approve another's proposal, and who can, in words (an engineer's, made in the operator tools
   * or under a shared role, which four eyes cannot tell apart from the caller); null when they may.
   */
  readonly cannotApprove: string | null;
}

export interface ProposalsAnswer {
  readonly proposals: readonly ProposalRow[];
}

/** What a resend would do — or why it would be refused, as the action itself would refuse it on approval. */
export type PreviewAnswer =
  | { readonly ok: true; readonly what: string; readonly fingerprint: string }
  | { readonly ok: false; readonly code: string; readonly message: string };

/**
 * How many of a customer's events one page shows: each costs a Query and a few reads (suppressions, preferences), so
 * a business customer with thousands of events in the retention window is read a page at a time, well inside API
 * Gateway's 29 seconds, never all at once.
 */
export const CUSTOMER_PAGE_EVENTS = 50;

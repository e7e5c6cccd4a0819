/**
 * The event contract as types (docs/event.md): what a producer's record becomes once read — a transfer
 * (`BankingEvent`) or a customer's channel preferences (`PreferencesEvent`) — and the reason codes of what is refused.
 * Types and constants only: the schema (schema.ts), the spellings (spellings.ts), the hash (hash.ts) and the one
 * decoder (decode.ts) build on them.
 */
import type { Channel } from '../channels.ts';
import type { ContactField, ContactProblem } from '../contact.ts';
import type { Locale } from '../locale.ts';

/** The customer's channel preferences: on the same topic, through the same inbox, never sent. */
export const PREFERENCES_UPDATED = 'PreferencesUpdated';
/** A notice type's name: one of EVENT_TYPES when admitted (an item may outlive its type's removal). */
export type EventType = string;

/** Reason codes on quarantine items. Stable strings: alarms and Logs Insights queries match on them. */
export const REJECTION_REASONS = [
  'NO_VALUE',
  'TOO_LARGE',
  'INVALID_ENCODING',
  /** A schema-registry record whose writer's schema cannot be had or read (docs/event.md "Avro and Protobuf"). */
  'UNKNOWN_SCHEMA',
  'INVALID_JSON',
  'SCHEMA_VIOLATION',
  'INVALID_EVENT_ID',
  'UNKNOWN_TYPE',
  'UNKNOWN_CHANNEL',
  'INVALID_CONTACT',
  /** A contact point with one reading that its provider cannot send to (a non-ASCII email local part: no SMTPUTF8). */
  'UNSENDABLE_ADDRESS',
  'INVALID_AMOUNT',
  'MISSING_CONTACT',
  'EVENT_ID_CONFLICT',
  /** Last resort: processing the record failed in a way no rule above foresaw (a bug), or DynamoDB refused its items. */
  'UNPROCESSABLE',
  /**
   * Not bad input: a record MSK Replicator copied from the other region's cluster, read while this region is not the
   * active successor of that region (domain/replicated-records.ts). Kept, so nothing is lost; replayable.
   */
  'REPLICATED_NOT_TAKEN',
] as const;
export type RejectionReason = (typeof REJECTION_REASONS)[number];

export interface Rejection {
  readonly reason: RejectionReason;
  /** Names the failing path and rule, never the offending value (it may be an address or a phone number). */
  readonly detail: string;
  /** The eventId when one could be read, so an operator can correlate. */
  readonly eventId?: string;
}

/** A display-text field (kind `text` in its type's definition): cleaned, never a reason to reject. */
export type DisplayField = string;

/** A validated, normalised event: what is stored, hashed and sent. */
export interface BankingEvent {
  readonly eventId: string;
  readonly type: EventType;
  /** The producer's timestamp: its local time and offset as given, spelled as RFC 3339 writes it. */
  readonly occurredAt: string;
  readonly recipient: Recipient;
  readonly data: EventData;
  /** The channels the producer listed, upper case, each once; `[]` records the event and sends nothing. */
  readonly channels?: Channel[];
}
export interface Recipient {
  readonly userId: string;
  /** The negotiated locale (docs/event.md "Language and time zone"). */
  readonly locale: Locale;
  /** Contact points that have a reading, normalised; a refused one is absent here (see DecodedTransfer). */
  readonly email?: string;
  readonly pushEndpointArn?: string;
  readonly phoneNumber?: string;
  /** IANA time zone the runtime knows, as given; absent (or unknown to the runtime): the locale's default. */
  readonly timeZone?: string;
}
/**
 * The event's `data`, as its type's definition reads it (catalogue.ts): every field normalised to a string — money as
 * its decimal and its currency code, an instant in its RFC 3339 spelling, a number as its decimal. A text field is
 * absent when the producer gave none or it cleaned to nothing.
 */
export type EventData = Readonly<Record<string, string>>;
/** A transfer's data (TransferCompleted, TransferFailed, their definition.json): what tools and tests build. */
export type TransferData = {
  readonly transferId: string;
  readonly amount: string;
  readonly currency: string;
  readonly counterpartyName?: string;
  readonly reason?: string;
};

/** A contact point without a reading its provider can send to: its channel is refused, the event is not. */
export interface ContactRefusal {
  readonly channel: Channel;
  readonly field: ContactField;
  readonly reason: ContactProblem;
  /** The field and the rule, never the value. */
  readonly detail: string;
}

/** A presentation hint that fell back to the default: the notice is sent, shown in the default language or zone. */
export type Fallback = 'recipient.locale' | 'recipient.timeZone';

/** A PreferencesUpdated event: the customer's whole opt-out set (docs/event.md "PreferencesUpdated"). */
export interface PreferencesEvent {
  readonly eventId: string;
  readonly type: typeof PREFERENCES_UPDATED;
  readonly occurredAt: string;
  readonly userId: string;
  /** Sorted, in CHANNELS order. */
  readonly optOut: Channel[];
}

/**
 * Admission: one Kafka record value → decode → validate → normalise → hash → route → time, as one pure, total function.
 *
 * Input: the record value (base64, as MSK delivers it, or anything else), the policy, the clock reading.
 * Output: an admitted event (what to write: the channels to send and the channels refused) or a rejection (what to
 * quarantine). Every branch returns; the caller still guards the call (ingest-record.ts), so a bug here quarantines
 * one record instead of blocking a partition.
 */
import { definitionOf } from './catalogue.ts';
import type { Channel } from './channels.ts';
import type { BankingEvent, DisplayField, Fallback, PreferencesEvent, Rejection } from './event/contract.ts';
import { decodeRecordValue } from './event/decode.ts';
import { type HashInput, repairHash } from './event/hash.ts';
import { type ChannelRefusal, route } from './routing.ts';

export interface AdmissionPolicy {
  /** Larger record values are rejected (TOO_LARGE) before they are parsed. */
  readonly maxEventBytes: number;
  /**
   * An event that occurred longer ago than this — or than its type's `maxEventAgeSeconds` — is recorded but not sent
   * (`skipped: 'TOO_OLD'`); 0 disables the rule for every type.
   */
  readonly maxEventAgeSeconds: number;
}

/**
 * Why an accepted event yields no notification although it routes to channels (TOO_OLD), or a preferences event was
 * recorded without changing the preferences in force (STALE: a newer one is already applied).
 */
export type SkipReason = 'TOO_OLD' | 'STALE';

export interface AdmittedTransfer {
  readonly ok: true;
  readonly event: BankingEvent;
  readonly payloadHash: string;
  /** The channels to create notifications for: empty when the event is skipped or has no contact point. */
  readonly channels: Channel[];
  /** The channels refused (each a REFUSED notification): empty when the event is skipped. */
  readonly refused: ChannelRefusal[];
  /** The hash that recognises the producer's corrected resend of this event (present when a channel is refused). */
  readonly repairHash?: string;
  readonly sanitised: DisplayField[];
  /** Fields in which a card number was masked: stored, hashed and shown masked. */
  readonly masked: DisplayField[];
  readonly normalised: string[];
  readonly fallbacks: Fallback[];
  readonly hashInput: HashInput;
  readonly skipped?: SkipReason;
}

export interface AdmittedPreferences {
  readonly ok: true;
  readonly preferences: PreferencesEvent;
  readonly payloadHash: string;
  readonly occurredAtMs: number;
  readonly normalised: string[];
}

export type Admission =
  | AdmittedTransfer
  /** A PreferencesUpdated event: recorded in the inbox, applied if newest; never subject to the max age. */
  | AdmittedPreferences
  | { ok: false; rejection: Rejection };

/** The eventId of any admission that has one. */
export const admittedEventId = (a: Admission): string | undefined =>
  a.ok ? ('preferences' in a ? a.preferences.eventId : a.event.eventId) : a.rejection.eventId;

/** How far in the future an event's occurredAt may be (clock skew, a local time written as UTC) before it is bad input. */
export const FUTURE_TOLERANCE_MS = 86_400_000;

/**
 * A transfer that "happened" tomorrow or in 2099 is a producer's clock or data bug: the customer would be shown that
 * date. A preferences update dated in the future would stay the newest until then, and every real update of that
 * customer before that date would be recorded as STALE and ignored. A day of tolerance absorbs clock skew, and even a
 * producer that writes local time as Z (±14 h).
 */
const inTheFuture = (occurredAtMs: number, now: number, eventId: string): Rejection | undefined =>
  occurredAtMs - now > FUTURE_TOLERANCE_MS
    ? { reason: 'SCHEMA_VIOLATION', detail: 'occurredAt is more than a day in the future (at occurredAt)', eventId }
    : undefined;

export function admitRecord(value: unknown, policy: AdmissionPolicy, now: number): Admission {
  const decoded = decodeRecordValue(value, policy.maxEventBytes);
  if (!decoded.ok) return decoded;
  if ('preferences' in decoded) {
    const future = inTheFuture(decoded.occurredAtMs, now, decoded.preferences.eventId);
    if (future !== undefined) return { ok: false, rejection: future };
    const { preferences, payloadHash, occurredAtMs, normalised } = decoded;
    return { ok: true, preferences, payloadHash, occurredAtMs, normalised };
  }
  const routed = route(decoded.event, decoded.contactRefusals);
  if (!routed.ok) return routed;
  const future = inTheFuture(decoded.occurredAtMs, now, decoded.event.eventId);
  if (future !== undefined) return { ok: false, rejection: future };
  // Not bad input (nothing to quarantine) and not news any more: recorded, idempotent as usual, never sent.
  // The type's own maximum age when its definition has one (a sign-in alert is stale within the hour, a statement
  // notice not for days), otherwise the stack's. The stack's 0 turns the rule off for every type (a replay of a file).
  const maxAgeSeconds = definitionOf(decoded.event.type)?.maxEventAgeSeconds ?? policy.maxEventAgeSeconds;
  const tooOld = policy.maxEventAgeSeconds > 0 && now - decoded.occurredAtMs > maxAgeSeconds * 1000;
  const admitted: AdmittedTransfer = {
    ok: true,
    event: decoded.event,
    payloadHash: decoded.payloadHash,
    channels: tooOld ? [] : routed.channels,
    refused: tooOld ? [] : routed.refused,
    sanitised: decoded.sanitised,
    masked: decoded.masked,
    normalised: decoded.normalised,
    fallbacks: decoded.fallbacks,
    hashInput: decoded.hashInput,
  };
  if (tooOld) return { ...admitted, skipped: 'TOO_OLD' };
  if (routed.refused.length === 0) return admitted;
  const refusedChannels = routed.refused.map((r) => r.channel);
  return { ...admitted, repairHash: repairHash(decoded.hashInput, refusedChannels) };
}

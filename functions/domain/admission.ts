/**
 * Admission: one Kafka record value → decode → validate → normalise → hash → route → age, as one pure, total function.
 *
 * Input: the record value (base64, as MSK delivers it, or anything else), the policy, the clock reading.
 * Output: an admitted event (what to write) or a rejection (what to quarantine). Every branch returns; the caller
 * still guards the call (ingest-record.ts), so a bug here quarantines one record instead of blocking a partition.
 */
import type { Channel } from './channels.ts';
import {
  type BankingEvent,
  type DisplayField,
  decodeRecordText,
  PREFERENCES_UPDATED,
  type Rejection,
  readEventJson,
  validateTransferEvent,
} from './event.ts';
import { type PreferencesEvent, validatePreferencesEvent } from './preferences.ts';
import { route } from './routing.ts';

export interface AdmissionPolicy {
  /** Larger record values are rejected (TOO_LARGE) before they are parsed. */
  readonly maxEventBytes: number;
  /** An event that occurred longer ago than this is recorded but not sent (`skipped: 'TOO_OLD'`); 0 disables. */
  readonly maxEventAgeSeconds: number;
}

/**
 * Why an accepted event yields no notification although it routes to channels (TOO_OLD), or a preferences event was
 * recorded without changing the preferences in force (STALE: a newer one is already applied).
 */
export type SkipReason = 'TOO_OLD' | 'STALE';

export type Admission =
  | {
      ok: true;
      event: BankingEvent;
      payloadHash: string;
      /** The channels to create notifications for: empty when the event is skipped or has no contact point. */
      channels: Channel[];
      sanitised: DisplayField[];
      skipped?: SkipReason;
    }
  /** A PreferencesUpdated event (issue 16): recorded in the inbox, applied if newest; never subject to the max age. */
  | { ok: true; preferences: PreferencesEvent; payloadHash: string; occurredAtMs: number }
  | { ok: false; rejection: Rejection };

/** The eventId of any admission that has one. */
export const admittedEventId = (a: Admission): string | undefined =>
  a.ok ? ('preferences' in a ? a.preferences.eventId : a.event.eventId) : a.rejection.eventId;

/** How far in the future an event's occurredAt may be (clock skew, a local time written as UTC) before it is bad input. */
export const FUTURE_TOLERANCE_MS = 86_400_000;

export function admitRecord(value: unknown, policy: AdmissionPolicy, now: number): Admission {
  const text = decodeRecordText(value, policy.maxEventBytes);
  if (typeof text !== 'string') return text;
  const json = readEventJson(text);
  if (!json.ok) return json;
  if (json.raw.type === PREFERENCES_UPDATED) return validatePreferencesEvent(json);
  const decoded = validateTransferEvent(json);
  if (!decoded.ok) return decoded;
  const routed = route(decoded.event);
  if (!routed.ok) return routed;
  if (decoded.occurredAtMs - now > FUTURE_TOLERANCE_MS) {
    // A transfer that "happened" tomorrow or in 2099 is a producer's clock or data bug: the customer would be shown
    // that date. A day of tolerance absorbs skew and even a producer that writes local time as Z (±14 h).
    return {
      ok: false,
      rejection: {
        reason: 'SCHEMA_VIOLATION',
        detail: 'occurredAt is more than a day in the future (at occurredAt)',
        eventId: decoded.event.eventId,
      },
    };
  }
  const admitted = {
    ok: true as const,
    event: decoded.event,
    payloadHash: decoded.payloadHash,
    sanitised: decoded.sanitised,
  };
  if (policy.maxEventAgeSeconds > 0 && now - decoded.occurredAtMs > policy.maxEventAgeSeconds * 1000) {
    // Not bad input (nothing to quarantine) and not news any more: recorded, idempotent as usual, never sent.
    return { ...admitted, channels: [], skipped: 'TOO_OLD' };
  }
  return { ...admitted, channels: routed.channels };
}

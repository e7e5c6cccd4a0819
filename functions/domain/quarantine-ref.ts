/**
 * Where a quarantined record is found from the event it was meant to be, and from its customer (docs/table.md "The
 * quarantine reference"): a small item in the event's own partition, `(EVENT#<eventId>, QUARANTINED#<topic>#<partition>
 * #<offset>)`, written beside the quarantine item when the record's eventId could be read. Support staff look an event
 * up by its id — the same Query that reads its inbox and notifications finds it — and a customer through the byUser
 * index, under a key of its own (`QUARANTINED#USER#<userId>`) so that every reader of a customer's events (export,
 * erasure, `ops customer`) keeps reading exactly what it read before. Pure.
 */
import type { RejectionReason } from './event/contract.ts';
import { eventPk, type KafkaSource, quarantineId } from './keys.ts';
import type { QuarantineItem } from './notification.ts';

const REF_PREFIX = 'QUARANTINED#';
export const quarantineRefSk = (s: KafkaSource) => `${REF_PREFIX}${quarantineId(s)}`;
/** The byUser index's key of a customer's quarantined records (never `USER#…`: those are their accepted events). */
export const quarantinedUserKeyOf = (userId: string) => `${REF_PREFIX}USER#${userId}`;

export interface QuarantineRefItem {
  pk: string;
  sk: string;
  kind: 'QUARANTINE_REF';
  eventId: string;
  source: KafkaSource;
  reason: RejectionReason;
  receivedAt: string;
  userId?: string;
  /** The byUser index: present only when the record named its customer. */
  userKey?: string;
  occurredAt?: string;
  expiresAt: number;
}

/** The reference of a quarantine item, or undefined when the record's eventId could not be read. */
export function buildQuarantineRef(item: QuarantineItem): QuarantineRefItem | undefined {
  if (item.eventId === undefined) return undefined;
  const ref: QuarantineRefItem = {
    pk: eventPk(item.eventId),
    sk: quarantineRefSk(item.source),
    kind: 'QUARANTINE_REF',
    eventId: item.eventId,
    source: item.source,
    reason: item.reason,
    receivedAt: item.receivedAt,
    expiresAt: item.expiresAt,
  };
  if (item.userId !== undefined) {
    ref.userId = item.userId;
    ref.userKey = quarantinedUserKeyOf(item.userId);
    // The index sorts by occurredAt: when it reached us is the one time a record we could not read surely has.
    ref.occurredAt = item.receivedAt;
  }
  return ref;
}

const CONTROL_OR_FORMAT = /[\p{Cc}\p{Cf}]/u;

/**
 * The customer a record names (`recipient.userId`), as far as its JSON could be read — best effort, for finding it
 * again: a value that is no JSON, or names no plausible user id, gives undefined. The record's value as MSK hands it
 * over (base64).
 */
export function recipientOfRecord(base64Value: unknown, maxBytes: number): string | undefined {
  if (typeof base64Value !== 'string' || base64Value.length > Math.ceil((maxBytes * 4) / 3) + 4) return undefined;
  try {
    const parsed = JSON.parse(Buffer.from(base64Value, 'base64').toString('utf8')) as {
      recipient?: { userId?: unknown };
    };
    const userId = parsed?.recipient?.userId;
    if (
      typeof userId !== 'string' ||
      userId === '' ||
      userId.length > 128 ||
      !userId.isWellFormed() ||
      CONTROL_OR_FORMAT.test(userId)
    ) {
      return undefined;
    }
    return userId;
  } catch {
    return undefined;
  }
}

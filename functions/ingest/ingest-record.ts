/**
 * Use case: ingest one Kafka record.
 *
 * Input: the record's source (topic, partition, offset) and its base64 value.
 * Output: what became of it — accepted, duplicate, conflict or quarantined. Never throws for bad input;
 * throws only when DynamoDB stays unavailable, so the event source mapping redelivers the batch (safe: the inbox
 * makes a redelivery a duplicate).
 * Steps: decode + validate → route → one transaction (inbox + one notification per channel) → classify the answer.
 */
import { TransientStoreError } from '../commons/errors.ts';
import { withRetry } from '../commons/retry.ts';
import type { Channel } from '../domain/channels.ts';
import { contactFor, route } from '../domain/channels.ts';
import { decodeRecordValue, type Rejection } from '../domain/event.ts';
import { buildInbox, buildNotification, buildQuarantine, type KafkaSource } from '../domain/notification.ts';
import type { InboxStore } from './inbox-store.ts';

export interface IngestInput {
  readonly source: KafkaSource;
  readonly value: string | null | undefined;
}

export type IngestResult =
  | { kind: 'accepted'; eventId: string; channels: Channel[] }
  | { kind: 'duplicate'; eventId: string }
  | { kind: 'conflict'; eventId: string; newlyQuarantined: boolean }
  | { kind: 'quarantined'; rejection: Rejection; newlyQuarantined: boolean };

export interface IngestDeps {
  readonly store: InboxStore;
  readonly now: () => number;
  readonly retentionDays: number;
  /** When the sweeper first looks at a new notification (its stuck threshold); default in the domain. */
  readonly stuckAfterMs?: number;
  readonly maxEventBytes: number;
  readonly transactionAttempts: number;
  readonly retryBaseMs?: number;
  readonly sleep?: (ms: number) => Promise<void>;
  readonly onRetry?: (eventId: string, error: unknown) => void;
}

export async function ingestRecord(input: IngestInput, deps: IngestDeps): Promise<IngestResult> {
  const decoded = decodeRecordValue(input.value, deps.maxEventBytes);
  if (!decoded.ok) return quarantine(decoded.rejection, input, deps);
  const { event, payloadHash } = decoded;

  const routed = route(event);
  if (!routed.ok) return quarantine(routed.rejection, input, deps);

  const now = deps.now();
  const retention = { retentionDays: deps.retentionDays, stuckAfterMs: deps.stuckAfterMs };
  const inbox = buildInbox(event, payloadHash, routed.channels, input.source, now, retention);
  const notifications = routed.channels.map((channel) =>
    // route() only returns channels the recipient has a contact point for.
    buildNotification(event, channel, contactFor(event.recipient, channel) as string, now, retention),
  );

  const outcome = await withRetry(() => deps.store.recordEvent(inbox, notifications), {
    attempts: deps.transactionAttempts,
    baseMs: deps.retryBaseMs ?? 50,
    isRetryable: (error) => error instanceof TransientStoreError,
    onRetry: (error) => deps.onRetry?.(event.eventId, error),
    ...(deps.sleep === undefined ? {} : { sleep: deps.sleep }),
  });

  switch (outcome.kind) {
    case 'created':
      return { kind: 'accepted', eventId: event.eventId, channels: routed.channels };
    case 'notificationExists':
      return { kind: 'duplicate', eventId: event.eventId };
    case 'inboxExists': {
      if (outcome.payloadHash === payloadHash) return { kind: 'duplicate', eventId: event.eventId };
      const rejection: Rejection = {
        reason: 'EVENT_ID_CONFLICT',
        detail: `eventId already recorded with payloadHash ${outcome.payloadHash?.slice(0, 12) ?? '?'}…, this record has ${payloadHash.slice(0, 12)}…`,
        eventId: event.eventId,
      };
      const newlyQuarantined = await deps.store.quarantine(
        buildQuarantine(rejection, input.value, input.source, now, retention),
      );
      return { kind: 'conflict', eventId: event.eventId, newlyQuarantined };
    }
  }
}

async function quarantine(rejection: Rejection, input: IngestInput, deps: IngestDeps): Promise<IngestResult> {
  const item = buildQuarantine(rejection, input.value, input.source, deps.now(), { retentionDays: deps.retentionDays });
  const newlyQuarantined = await deps.store.quarantine(item);
  return { kind: 'quarantined', rejection, newlyQuarantined };
}

/**
 * Use case: ingest one Kafka record.
 *
 * Input: the record's source (topic, partition, offset) and its base64 value.
 * Output: what became of it — accepted, duplicate, conflict or quarantined.
 * Steps: admit (decode → validate → normalise → hash → route → age: pure, admission.ts) → one transaction (inbox + one
 * notification per channel: PENDING to send, REFUSED for a channel whose contact point was refused) → classify the
 * answer. An eventId already recorded with another payload is a conflict — unless the record is the producer's
 * corrected resend of an event whose channels were refused, which repairs them (settleTransfer).
 *
 * Never throws for a record's bytes: every rejection, and even a bug in the pure path or items DynamoDB refuses, ends
 * as a quarantine item with a reason code. It throws only when DynamoDB stays unavailable, so the event source mapping
 * redelivers the batch (safe: the inbox makes a redelivery a duplicate).
 */
import { isRecordRefusal, TransientStoreError } from '../commons/errors.ts';
import { withRetry } from '../commons/retry.ts';
import {
  type Admission,
  type AdmissionPolicy,
  type AdmittedTransfer,
  admitRecord,
  admittedEventId,
  type SkipReason,
} from '../domain/admission.ts';
import type { Channel } from '../domain/channels.ts';
import type { DisplayField, Fallback, Rejection } from '../domain/event/contract.ts';
import { earlierPayloadHashes, PAYLOAD_HASH_VERSION, payloadHash, repairHash } from '../domain/event/hash.ts';
import type { KafkaSource } from '../domain/keys.ts';
import {
  buildInbox,
  buildNotification,
  buildQuarantine,
  buildRefusedNotification,
  buildSeriesEntry,
  type ProducerTrace,
  type Retention,
  type SecretSeal,
} from '../domain/notification.ts';
import { buildPreferences, buildPreferencesInbox } from '../domain/preferences.ts';
import { recipientOfRecord } from '../domain/quarantine-ref.ts';
import { type RecordOrigin, ReplicatedNotTaken } from '../domain/replicated-records.ts';
import { type ChannelRefusal, contactFor } from '../domain/routing.ts';
import { loadRules, RulesNotLoaded } from '../domain/rules-not-loaded.ts';
import { macDigest, secretMacMessage, secretsInRecordText, secretsOf } from '../domain/secrets.ts';
import { DEFAULT_SWEEP_PLACEMENT, type SweepPlacement } from '../domain/sweep-index.ts';
import type { SecretMac } from '../stores/secret-mac.ts';
import type { InboxStore, KnownInbox, PreferencesOutcome, StoredInbox } from './inbox-port.ts';

export interface IngestInput {
  readonly source: KafkaSource;
  /** The record value as MSK delivers it: base64, or null for a tombstone. Anything else is quarantined. */
  readonly value: unknown;
  /** Its key and headers, kept on its quarantine item when it has one (producer-trace.ts). */
  readonly producer?: ProducerTrace | undefined;
  /** A schema-registry record read as the contract's JSON (wire-records.ts): what admission reads instead of `value`. */
  readonly decoded?: {
    readonly value: string;
    readonly maxBytes: number;
    /** How the wire record was spelled, where it had one reading but not its format's own (counted as normalised). */
    readonly normalised?: readonly string[];
  };
  /** A schema-registry record that could not be read: quarantined with its original `value`. */
  readonly wireRejection?: Rejection;
  /** A record MSK Replicator copied from another cluster: its `__mskmr` header (producer-trace.ts replicatedFromOf). */
  readonly replicatedFrom?: string;
}

export type IngestResult =
  | {
      kind: 'accepted';
      eventId: string;
      channels: Channel[];
      /** Channels written REFUSED: their contact point had no reading its provider can send to. */
      refused: ChannelRefusal[];
      sanitised: DisplayField[];
      /** Fields in which a card number was masked (never the value). */
      masked: DisplayField[];
      /** Fields whose spelling had one reading and was normalised to it. */
      normalised: string[];
      /** Presentation hints (language, time zone) that fell back to the default. */
      fallbacks: Fallback[];
      skipped?: SkipReason;
      /** A PreferencesUpdated event: applied, or recorded as STALE (skipped) because a newer one is in force. */
      preferences?: boolean;
    }
  /**
   * `repaired`: the record was the corrected resend of an event with refused channels, and these are now PENDING.
   * `erased`: it was such a resend, but the refused notifications were erased: nothing repaired, nothing sent.
   */
  | { kind: 'duplicate'; eventId: string; repaired?: Channel[]; erased?: true }
  | { kind: 'conflict'; eventId: string; newlyQuarantined: boolean }
  | { kind: 'quarantined'; rejection: Rejection; newlyQuarantined: boolean };

export interface IngestDeps extends AdmissionPolicy {
  readonly store: InboxStore;
  readonly now: () => number;
  readonly retentionDays: number;
  /** Where new notifications go in the sweep index (the stack's); DEFAULT_SWEEP_PLACEMENT without one. */
  readonly placement?: SweepPlacement;
  readonly transactionAttempts: number;
  readonly retryBaseMs?: number;
  readonly sleep?: (ms: number) => Promise<void>;
  readonly onRetry?: (eventId: string, error: unknown) => void;
  /** The key an event's secrets are MACed with before they are hashed (stores/secret-mac.ts); required for such types. */
  readonly secretMac?: SecretMac;
}

/** A record with its admission, decided once, at one clock reading. */
export interface AdmittedRecord {
  readonly input: IngestInput;
  readonly admission: Admission;
  readonly now: number;
}

export async function ingestRecord(input: IngestInput, deps: IngestDeps): Promise<IngestResult> {
  return applyAdmission(await admitLoading(input, deps), deps);
}

/**
 * `admit`, with the rules a value needs loaded first (domain/phone-numbers.ts, card-number.ts), each kind once: never
 * waiting for rules it does not need, nor read without them (a failed load throws: the batch is redelivered).
 */
export async function admitLoading(input: IngestInput, deps: IngestDeps): Promise<AdmittedRecord> {
  for (let reads = 1; ; reads++) {
    try {
      return admit(input, deps);
    } catch (error) {
      if (!(error instanceof RulesNotLoaded) || reads > 2) throw error;
      await loadRules(error);
    }
  }
}

/** The pure step, guarded: a throw from it (a bug, never the bytes' fault) quarantines the record as UNPROCESSABLE. */
export function admit(input: IngestInput, deps: IngestDeps): AdmittedRecord {
  const now = deps.now();
  if (input.wireRejection !== undefined)
    return { input, now, admission: { ok: false, rejection: input.wireRejection } };
  try {
    const admission =
      input.decoded === undefined
        ? admitRecord(input.value, deps, now)
        : admitRecord(input.decoded.value, { ...deps, maxEventBytes: input.decoded.maxBytes }, now);
    const wire = input.decoded?.normalised;
    if (wire !== undefined && admission.ok)
      return { input, now, admission: { ...admission, normalised: [...wire, ...admission.normalised] } };
    return { input, now, admission };
  } catch (error) {
    // Rules not loaded yet are no fault of the record: admitLoading loads them and reads it again.
    if (error instanceof RulesNotLoaded) throw error;
    return { input, now, admission: { ok: false, rejection: unprocessable('while admitting the record', error) } };
  }
}

/**
 * `known`: what the batch's look-up found in the inbox for this eventId (its stored payloadHash). The record is then
 * settled exactly as its transaction's cancellation would settle it — duplicate or conflict — without sending one.
 */
export async function applyAdmission(
  record: AdmittedRecord,
  deps: IngestDeps,
  known?: KnownInbox,
): Promise<IngestResult> {
  const { input, now } = record;
  const notTaken = await replicatedNotTaken(record, deps);
  if (notTaken !== undefined) return quarantine(notTaken, record, deps);
  if (!record.admission.ok) return quarantine(record.admission.rejection, record, deps);
  if ('preferences' in record.admission) return applyPreferences(record, record.admission, deps, known);
  const sealed = await sealSecrets(record.admission, deps);
  if ('rejection' in sealed) return quarantine(sealed.rejection, record, deps);
  const { admission, seal } = sealed;
  const { event, channels } = admission;
  const retention = { retentionDays: deps.retentionDays };

  let items: ReturnType<typeof buildItems> | undefined;
  if (known === undefined) {
    try {
      items = buildItems(admission, input.source, now, retention, deps.placement ?? DEFAULT_SWEEP_PLACEMENT, seal);
    } catch (error) {
      return quarantine(unprocessable('while building its items', error, event.eventId), record, deps);
    }
  }

  const built = items;
  const written =
    built === undefined
      ? { outcome: { kind: 'inboxExists' as const, payloadHash: known?.payloadHash, stored: known } }
      : await write(record, deps, event.eventId, () =>
          deps.store.recordEvent(built.inbox, built.notifications, built.series, originOf(input)),
        );
  if ('refused' in written) return written.refused;
  const { outcome } = written;

  switch (outcome.kind) {
    case 'created':
      return {
        kind: 'accepted',
        eventId: event.eventId,
        channels,
        refused: admission.refused,
        sanitised: admission.sanitised,
        masked: admission.masked,
        normalised: admission.normalised,
        fallbacks: admission.fallbacks,
        ...(admission.skipped === undefined ? {} : { skipped: admission.skipped }),
      };
    case 'notificationExists':
      return { kind: 'duplicate', eventId: event.eventId };
    case 'inboxExists':
      if (isThisEvent(admission, outcome.payloadHash)) return { kind: 'duplicate', eventId: event.eventId };
      return settleTransfer(outcome.stored ?? { payloadHash: outcome.payloadHash }, admission, record, deps);
  }
}

/** A copy from the other region's cluster where it is not taken (domain/replicated-records.ts): quarantined first. */
async function replicatedNotTaken(record: AdmittedRecord, deps: IngestDeps): Promise<Rejection | undefined> {
  const from = record.input.replicatedFrom;
  if (from === undefined || deps.store.refusesReplicated === undefined) return undefined;
  const detail = await deps.store.refusesReplicated(from);
  if (detail === undefined) return undefined;
  const eventId = record.admission.ok ? admittedEventId(record.admission) : undefined;
  return { reason: 'REPLICATED_NOT_TAKEN', detail, ...(eventId === undefined ? {} : { eventId }) };
}

const originOf = (input: IngestInput): RecordOrigin | undefined =>
  input.replicatedFrom === undefined ? undefined : { replicatedFrom: input.replicatedFrom };

/** How often a repair re-reads the inbox after another writer changed it between the read and the write. */
const REPAIR_ROUNDS = 3;

/**
 * The inbox holds this eventId with another payloadHash. A duplicate if this record's hash is one a repair already
 * accepted; a repair if it is the event apart from the contact points of its REFUSED channels (the stored repairHash)
 * and makes some of them sendable: those move REFUSED → PENDING with the new address, in one transaction with the
 * inbox, conditional on what was read — never an erased one (erasure.ts): that resend is a duplicate, and nothing of
 * it is kept. Anything else is a conflict, as for any event.
 */
async function settleTransfer(
  known: KnownInbox,
  admission: AdmittedTransfer,
  record: AdmittedRecord,
  deps: IngestDeps,
): Promise<IngestResult> {
  const { event, payloadHash } = admission;
  const eventId = event.eventId;
  let storedHash = known.payloadHash;
  // What the look-up or the cancelled transaction read of the item serves the first round; a later one reads again.
  let given: StoredInbox | undefined =
    known.complete === true ? { ...known, channels: known.channels ?? [] } : undefined;
  for (let round = 1; deps.store.readInbox !== undefined && round <= REPAIR_ROUNDS; round++) {
    const stored = given ?? (await deps.store.readInbox(eventId));
    given = undefined;
    if (stored === undefined) break;
    storedHash = stored.payloadHash;
    if (isThisEvent(admission, stored.payloadHash, stored.repairedHashes)) {
      return { kind: 'duplicate', eventId };
    }
    const refused = stored.refusedChannels ?? [];
    if (refused.length === 0 || stored.repairHash !== repairHash(admission.hashInput, refused)) break;
    const repaired = admission.skipped === undefined ? refused.filter((c) => admission.channels.includes(c)) : [];
    // The same event, its refused contact points still without a reading (or too old to send): nothing to write.
    if (repaired.length === 0 || deps.store.repairChannels === undefined) return { kind: 'duplicate', eventId };
    const stillRefused = refused.filter((c) => !repaired.includes(c));
    const written = await write(record, deps, eventId, () =>
      (deps.store.repairChannels as NonNullable<InboxStore['repairChannels']>)({
        eventId,
        type: event.type,
        expected: stored,
        payloadHash,
        channels: [...stored.channels, ...repaired],
        refusedChannels: stillRefused,
        ...(stillRefused.length === 0 ? {} : { repairHash: repairHash(admission.hashInput, stillRefused) }),
        repairs: repaired.map((channel) => ({ channel, recipient: contactFor(event.recipient, channel) as string })),
        now: record.now,
        placement: deps.placement ?? DEFAULT_SWEEP_PLACEMENT,
      }),
    );
    if ('refused' in written) return written.refused;
    if (written.outcome === 'repaired') return { kind: 'duplicate', eventId, repaired };
    // Erasure is final: the event was processed, its customer erased since. Nothing of the record is kept.
    if (written.outcome === 'erased') return { kind: 'duplicate', eventId, erased: true };
    // 'changed': another record of this event moved the inbox first: read it again and decide anew.
  }
  if (isThisEvent(admission, storedHash)) return { kind: 'duplicate', eventId };
  return settleExisting(storedHash, payloadHash, eventId, record, deps);
}

/**
 * Whether the inbox's hash (or one a repair accepted) is this event's: its payloadHash, or the hash the same event had
 * under an earlier reading of its spellings (hash.ts earlierPayloadHashes), so a resend across that deploy is a duplicate.
 */
function isThisEvent(admission: AdmittedTransfer, stored: string | undefined, repaired?: ReadonlySet<string>): boolean {
  const hashes = [admission.payloadHash, ...earlierPayloadHashes(admission.hashInput)];
  return hashes.some((hash) => hash === stored || repaired?.has(hash) === true);
}

/**
 * One store write, with the retries a transient failure (conflict, throttling) deserves. Items DynamoDB will never
 * store make the record the cause: it is quarantined, not retried forever. Anything else is thrown for redelivery.
 */
async function write<T>(
  record: AdmittedRecord,
  deps: IngestDeps,
  eventId: string,
  attempt: () => Promise<T>,
): Promise<{ outcome: T } | { refused: IngestResult }> {
  try {
    return {
      outcome: await withRetry(attempt, {
        attempts: deps.transactionAttempts,
        baseMs: deps.retryBaseMs ?? 50,
        isRetryable: (error) => error instanceof TransientStoreError,
        onRetry: (error) => deps.onRetry?.(eventId, error),
        ...(deps.sleep === undefined ? {} : { sleep: deps.sleep }),
      }),
    };
  } catch (error) {
    if (error instanceof ReplicatedNotTaken) {
      return {
        refused: await quarantine({ reason: 'REPLICATED_NOT_TAKEN', detail: error.message, eventId }, record, deps),
      };
    }
    if (isRecordRefusal(error)) {
      return { refused: await quarantine(unprocessable('DynamoDB refused its items', error, eventId), record, deps) };
    }
    throw error;
  }
}

/** The inbox already holds this eventId: the same payloadHash is a duplicate, another one a conflict (quarantined). */
async function settleExisting(
  storedHash: string | undefined,
  payloadHash: string,
  eventId: string,
  record: AdmittedRecord,
  deps: IngestDeps,
): Promise<IngestResult> {
  if (storedHash === payloadHash) return { kind: 'duplicate', eventId };
  const stored = storedHash ?? '?';
  const otherVersion = !stored.startsWith(`${PAYLOAD_HASH_VERSION}:`);
  const rejection: Rejection = {
    reason: 'EVENT_ID_CONFLICT',
    detail: `eventId already recorded with payloadHash ${stored.slice(0, 15)}…, this record has ${payloadHash.slice(0, 15)}…${otherVersion ? ` (the stored hash is not a ${PAYLOAD_HASH_VERSION} hash)` : ''}`,
    eventId,
  };
  const newlyQuarantined = await deps.store.quarantine(await quarantineItem(rejection, record, deps));
  return { kind: 'conflict', eventId, newlyQuarantined };
}

function buildItems(
  admission: Extract<Admission, { ok: true; event: unknown }>,
  source: KafkaSource,
  now: number,
  retention: Retention,
  placement: SweepPlacement,
  seal: SecretSeal | undefined,
) {
  const { event, payloadHash, channels, refused, skipped, repairHash: repair } = admission;
  // route() only returns channels the recipient has a contact point for.
  const notifications = channels.map((channel) =>
    buildNotification(event, channel, contactFor(event.recipient, channel) as string, now, retention, placement, seal),
  );
  for (const refusal of refused) notifications.push(buildRefusedNotification(event, refusal, now, retention));
  const refusedChannels =
    repair === undefined ? undefined : { channels: refused.map((r) => r.channel), repairHash: repair };
  return {
    inbox: buildInbox(event, payloadHash, channels, source, now, retention, skipped, refusedChannels),
    notifications,
    // A notice too old to send is no newer notice of its series: it replaces nothing.
    series: skipped === undefined ? buildSeriesEntry(event, now, retention) : undefined,
  };
}

/**
 * An event with secret fields (a one-time code): each secret's keyed MAC (stores/secret-mac.ts) takes the secret's
 * place in the payloadHash and the repairHash — a plain hash of six digits is undone by trying a million codes — and
 * goes on the notifications for the evidence. Without a key such an event is quarantined: its hash would have to hold
 * the secret in the clear. A failing key (KMS) throws: the batch is redelivered.
 */
async function sealSecrets(
  admission: AdmittedTransfer,
  deps: IngestDeps,
): Promise<{ admission: AdmittedTransfer; seal?: SecretSeal } | { rejection: Rejection }> {
  const { event } = admission;
  const secrets = Object.entries(secretsOf(event.type, event.data));
  if (secrets.length === 0) return { admission };
  if (deps.secretMac === undefined) {
    return {
      rejection: {
        reason: 'UNPROCESSABLE',
        detail: 'its type has a secret field and this deployment has no key to MAC it with',
        eventId: event.eventId,
      },
    };
  }
  const macs = await deps.secretMac.macs(secrets.map(([name, value]) => secretMacMessage(event.eventId, name, value)));
  const digests = Object.fromEntries(secrets.map(([name], i) => [name, macDigest(macs[i] ?? new Uint8Array())]));
  const hashInput = { ...admission.hashInput, secretMacs: digests };
  const refused = admission.refused.map((r) => r.channel);
  return {
    admission: {
      ...admission,
      hashInput,
      payloadHash: payloadHash(hashInput),
      ...(admission.repairHash === undefined ? {} : { repairHash: repairHash(hashInput, refused) }),
    },
    seal: { keyId: deps.secretMac.keyId, digests },
  };
}

/** The secrets a record holds, as far as it can be read: masked in its quarantined copy (domain/secrets.ts). */
function recordSecrets(record: AdmittedRecord): string[] {
  const { admission, input } = record;
  if (admission.ok && 'event' in admission) return Object.values(secretsOf(admission.event.type, admission.event.data));
  const text =
    input.decoded?.value ?? (typeof input.value === 'string' ? Buffer.from(input.value, 'base64').toString() : '');
  return secretsInRecordText(text);
}

/** A PreferencesUpdated event: inbox + preferences item, newest occurredAt wins (inbox-store.ts). */
async function applyPreferences(
  record: AdmittedRecord,
  admission: Extract<Admission, { ok: true; preferences: unknown }>,
  deps: IngestDeps,
  known?: KnownInbox,
): Promise<IngestResult> {
  const { input, now } = record;
  const { preferences: p, payloadHash, occurredAtMs } = admission;
  const retention = { retentionDays: deps.retentionDays };
  const inbox = buildPreferencesInbox(p, payloadHash, input.source, now, retention);
  const stale = buildPreferencesInbox(p, payloadHash, input.source, now, retention, true);
  // Known to the batch's look-up: settled as the transaction's cancellation would settle it, without one.
  const written: { outcome: PreferencesOutcome } | { refused: IngestResult } =
    known !== undefined
      ? { outcome: { kind: 'inboxExists', payloadHash: known.payloadHash } }
      : await write(record, deps, p.eventId, () =>
          deps.store.recordPreferences(inbox, stale, buildPreferences(p, occurredAtMs, now)),
        );
  if ('refused' in written) return written.refused;
  const { outcome } = written;
  const accepted = {
    kind: 'accepted' as const,
    eventId: p.eventId,
    channels: [],
    refused: [],
    sanitised: [],
    masked: [],
    normalised: admission.normalised,
    fallbacks: [],
    preferences: true,
  };
  switch (outcome.kind) {
    case 'created':
      return accepted;
    case 'stale':
      return { ...accepted, skipped: 'STALE' };
    case 'inboxExists':
      return settleExisting(outcome.payloadHash, payloadHash, p.eventId, record, deps);
  }
}

function unprocessable(step: string, error: unknown, eventId?: string): Rejection {
  // The error's name only: its message could quote the record's content.
  const name = error instanceof Error ? error.name : typeof error;
  const detail = `${name} ${step}`;
  return eventId === undefined ? { reason: 'UNPROCESSABLE', detail } : { reason: 'UNPROCESSABLE', detail, eventId };
}

/**
 * The record's quarantine item, card numbers and IBANs masked: one holding a candidate before the card rules are loaded
 * loads them and is built again; a load that fails throws (the batch is redelivered), never an item kept unmasked.
 */
async function quarantineItem(rejection: Rejection, record: AdmittedRecord, deps: IngestDeps) {
  const { input, now } = record;
  const retention = { retentionDays: deps.retentionDays };
  const build = () =>
    buildQuarantine(rejection, input.value, input.source, now, retention, recordSecrets(record), input.producer);
  try {
    return build();
  } catch (error) {
    if (!(error instanceof RulesNotLoaded)) throw error;
    await loadRules(error);
    return build();
  }
}

async function quarantine(rejection: Rejection, record: AdmittedRecord, deps: IngestDeps): Promise<IngestResult> {
  const { input } = record;
  const item = await quarantineItem(rejection, record, deps);
  // Its customer, when the JSON named one: support staff find the record from the customer (domain/quarantine-ref.ts).
  const userId =
    item.eventId === undefined ? undefined : recipientOfRecord(input.decoded?.value ?? input.value, deps.maxEventBytes);
  if (userId !== undefined) item.userId = userId;
  const newlyQuarantined = await deps.store.quarantine(item);
  // Reported (and so logged) with the kept detail: card numbers masked, secrets redacted, bounded — a rejection's own
  // detail may quote the record (a duplicate key's name), and the log is not where a card number may land.
  return { kind: 'quarantined', rejection: { ...rejection, detail: item.detail }, newlyQuarantined };
}

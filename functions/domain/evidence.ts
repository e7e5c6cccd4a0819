/**
 * Evidence of a send (docs/evidence-and-privacy.md): what the provider received, byte for byte, the message id it
 * answered with and when, and — appended as separate records — what it reported afterwards. Pure: the adapters
 * (functions/stores/evidence-store.ts) store the bytes these functions produce and never re-encode them.
 *
 * Why a record per send and one per feedback, never an update of one object: an evidence object is written once and
 * locked (S3 Object Lock); a later "append" is a new object under the send's prefix, so nothing ever overwrites what
 * was proven first, and a retried write of the same record is refused by the store as already there (IfNoneMatch).
 */
import { createHash } from 'node:crypto';
import type { Channel } from './channels.ts';
import type { Feedback, FeedbackTarget } from './feedback.ts';
import { parseNotificationId } from './keys.ts';
import { REDACTED, redactSecrets, SECRET_MAC_LAYOUT } from './secrets.ts';
import { smsSize } from './sms.ts';

/** The request the provider received, exactly as the SDK serialised its fields (senders.ts builds it once). */
export type ProviderRequest =
  | {
      readonly channel: 'EMAIL';
      readonly api: 'ses:SendEmail';
      readonly source: string;
      readonly to: readonly string[];
      readonly subject: string;
      readonly text: string;
      readonly html: string;
      readonly charset: 'UTF-8';
      readonly configurationSet?: string;
      readonly tags: readonly { readonly Name: string; readonly Value: string }[];
    }
  | {
      readonly channel: 'SMS';
      readonly api: 'sns:Publish';
      readonly phoneNumber: string;
      readonly text: string;
      /** GSM-7 or UCS-2, and the segments the carrier bills (3GPP TS 23.038), as the text itself decides. */
      readonly encoding: 'GSM-7' | 'UCS-2';
      readonly segments: number;
      readonly smsType: 'Transactional';
    }
  | {
      readonly channel: 'PUSH';
      readonly api: 'sns:Publish';
      readonly targetArn: string;
      readonly messageStructure: 'json';
      /** The Message parameter: one JSON string with a payload per platform. */
      readonly payload: string;
      /** MessageAttributes, String-typed: the TTL of the endpoint's platform, APNs' collapse id (send-moment.ts). */
      readonly attributes?: Readonly<Record<string, string>>;
    };

export const EVIDENCE_VERSION = 1;

/** One send as proven: written once, after the provider accepted it. */
export interface SendEvidence {
  readonly evidenceVersion: typeof EVIDENCE_VERSION;
  readonly kind: 'SEND';
  readonly notificationId: string;
  readonly eventId: string;
  readonly channel: Channel;
  readonly userId: string;
  /** The notice type: what its retention is looked up by. */
  readonly noticeType: string;
  readonly locale: string;
  /** The claim that sent it (the notification's fencing token). */
  readonly attempt: number;
  readonly providerMessageId: string;
  /** When the provider's acceptance reached us (ISO 8601, UTC). */
  readonly acceptedAt: string;
  /** Until when the store must keep it (Object Lock's retain-until date). */
  readonly retainUntil: string;
  /** The request as sent, each secret it carried replaced by REDACTED (secrets.ts): never the secret itself. */
  readonly request: ProviderRequest;
  /**
   * Each secret field the message carried (a one-time code), by name: its keyed MAC, the key, and what the MAC covers
   * — so whoever may compute the MAC (the key's policy) can prove which code was sent, and nobody can read it here.
   */
  readonly secrets?: Readonly<Record<string, SecretProof>>;
}

/** What the evidence keeps of a secret: proof it was sent, never the secret. */
export interface SecretProof {
  readonly redactedAs: typeof REDACTED;
  /** secrets.ts macDigest: `HMAC_SHA_256:<base64>`; absent for a notification written without one. */
  readonly mac?: string;
  readonly keyId?: string;
  readonly covers: typeof SECRET_MAC_LAYOUT;
}

/** What the provider reported about a send after accepting it: appended, one record per report. */
export interface FeedbackEvidence {
  readonly evidenceVersion: typeof EVIDENCE_VERSION;
  readonly kind: 'FEEDBACK';
  readonly notificationId: string;
  readonly eventId: string;
  readonly channel: Channel;
  readonly providerMessageId: string;
  readonly status: string;
  readonly at: string;
  readonly bounceType?: string;
  readonly bounceSubType?: string;
  readonly providerResponse?: string;
  /** When the feedback function recorded it. */
  readonly recordedAt: string;
  readonly retainUntil: string;
}

export type EvidenceRecord = SendEvidence | FeedbackEvidence;

/**
 * How long a notice type's evidence is kept, in days. One lookup so a per-type retention (the notice catalogue) can
 * replace the single setting without touching a caller.
 */
export type RetentionPolicy = (noticeType: string) => number;
/**
 * S3 Object Lock modes of the evidence store: GOVERNANCE (the default: a retention can be shortened by a reviewed
 * change) or COMPLIANCE (WORM: nobody can, docs/evidence-and-privacy.md).
 */
export const EVIDENCE_LOCK_MODES = ['GOVERNANCE', 'COMPLIANCE'] as const;
export type EvidenceLockMode = (typeof EVIDENCE_LOCK_MODES)[number];
export const uniformRetention =
  (days: number): RetentionPolicy =>
  () =>
    days;

const DAY_MS = 86_400_000;
export const retainUntil = (fromMs: number, days: number) => new Date(fromMs + days * DAY_MS).toISOString();

/** The SMS as the SNS request carries it, with the encoding its characters force. */
export function smsRequest(phoneNumber: string, text: string): Extract<ProviderRequest, { channel: 'SMS' }> {
  const size = smsSize(text);
  return {
    channel: 'SMS',
    api: 'sns:Publish',
    phoneNumber,
    text,
    encoding: size.encoding,
    segments: size.segments,
    smsType: 'Transactional',
  };
}

export interface SendFacts {
  readonly notificationId: string;
  readonly eventId: string;
  readonly channel: Channel;
  readonly userId: string;
  readonly template: string;
  readonly locale: string;
  readonly attempt: number;
  /** The secrets the message carried, their MACs and the key (notification.ts): redacted, proven, never kept. */
  readonly secrets?: Readonly<Record<string, string>>;
  readonly secretDigests?: Readonly<Record<string, string>>;
  readonly secretKeyId?: string;
}

export function sendEvidence(
  n: SendFacts,
  request: ProviderRequest,
  providerMessageId: string,
  acceptedAtMs: number,
  retention: RetentionPolicy,
): SendEvidence {
  return {
    evidenceVersion: EVIDENCE_VERSION,
    kind: 'SEND',
    notificationId: n.notificationId,
    eventId: n.eventId,
    channel: n.channel,
    userId: n.userId,
    noticeType: n.template,
    locale: n.locale,
    attempt: n.attempt,
    providerMessageId,
    acceptedAt: new Date(acceptedAtMs).toISOString(),
    retainUntil: retainUntil(acceptedAtMs, retention(n.template)),
    ...withoutSecrets(n, request),
  };
}

/**
 * The record keeps the message with every secret redacted — at the record, so whatever stores it (the store, a gap in
 * the table, a batch) never holds one — and a proof of each secret instead (its keyed MAC).
 */
function withoutSecrets(n: SendFacts, request: ProviderRequest): Pick<SendEvidence, 'request' | 'secrets'> {
  const names = Object.keys(n.secrets ?? {});
  if (names.length === 0) return { request };
  const values = Object.values(n.secrets ?? {});
  const redacted = Object.fromEntries(
    Object.entries(request).map(([field, value]) => [
      field,
      typeof value === 'string' ? redactSecrets(value, values) : value,
    ]),
  ) as unknown as ProviderRequest;
  const proofs = Object.fromEntries(
    names.map((name): [string, SecretProof] => {
      const mac = n.secretDigests?.[name];
      return [
        name,
        {
          redactedAs: REDACTED,
          ...(mac === undefined ? {} : { mac }),
          ...(n.secretKeyId === undefined ? {} : { keyId: n.secretKeyId }),
          covers: SECRET_MAC_LAYOUT,
        },
      ];
    }),
  );
  return { request: redacted, secrets: proofs };
}

/**
 * Feedback is kept as long as the send it is about; the feedback function does not know the notice type once the
 * hot item is gone, so it keeps it for the longest retention (never shorter than its send).
 */
export function feedbackEvidence(
  target: FeedbackTarget,
  f: Feedback,
  recordedAtMs: number,
  retentionDays: number,
): FeedbackEvidence {
  return {
    evidenceVersion: EVIDENCE_VERSION,
    kind: 'FEEDBACK',
    notificationId: target.notificationId,
    eventId: target.eventId,
    channel: target.channel,
    providerMessageId: f.messageId,
    status: f.status,
    at: f.at,
    ...(f.bounceType === undefined ? {} : { bounceType: f.bounceType }),
    ...(f.bounceSubType === undefined ? {} : { bounceSubType: f.bounceSubType }),
    ...(f.providerResponse === undefined ? {} : { providerResponse: f.providerResponse }),
    recordedAt: new Date(recordedAtMs).toISOString(),
    retainUntil: retainUntil(Math.max(recordedAtMs, f.atMs), retentionDays),
  };
}

/**
 * Keys. Everything about one event sits under `sends/<eventId>/`, each send under its channel and provider message
 * id, each report on it under that send's `.feedback/` prefix — so `ops evidence <eventId>` is one List, and a resend
 * (another message id) never overwrites the first send's record. Ids are percent-encoded: an eventId may hold any
 * character, and a "/" in it must not make a prefix of another event's.
 */
const part = (s: string) => (s === '.' || s === '..' ? s.replaceAll('.', '%2E') : encodeURIComponent(s));
export const eventPrefix = (eventId: string) => `sends/${part(eventId)}/`;
export const channelPrefix = (eventId: string, channel: Channel) => `${eventPrefix(eventId)}${channel}/`;
export const sendKey = (r: { eventId: string; channel: Channel; providerMessageId: string }) =>
  `${channelPrefix(r.eventId, r.channel)}${part(r.providerMessageId)}.json`;
export const feedbackKey = (r: FeedbackEvidence) =>
  `${channelPrefix(r.eventId, r.channel)}${part(r.providerMessageId)}.feedback/${Date.parse(r.at) || 0}-${r.status}.json`;
/**
 * A customer's pointer to one send's evidence: `users/<userId>/<the send key after "sends/">`, its body the send
 * key. Export finds a customer's evidence by listing this prefix, also after every hot item is gone (the store is
 * keyed by event; the customer is the other way in).
 */
export function userPrefix(userId: string): string {
  // S3 keys end at 1,024 bytes: a userId whose encoding is long (128 characters of another script) is named by its hash.
  const encoded = part(userId);
  return `users/${encoded.length <= 400 ? encoded : `sha256-${createHash('sha256').update(userId).digest('hex')}`}/`;
}
export const userPointerKey = (userId: string, sendKeyOf: string) =>
  `${userPrefix(userId)}${sendKeyOf.slice('sends/'.length)}`;
export const evidenceKey = (r: EvidenceRecord) => (r.kind === 'SEND' ? sendKey(r) : feedbackKey(r));

/** The stored bytes: canonical JSON, UTF-8. What `ops evidence` prints is parsed from exactly these bytes. */
export const evidenceBody = (r: EvidenceRecord) => Buffer.from(`${JSON.stringify(r, null, 2)}\n`, 'utf8');

export class EvidenceFormatError extends Error {
  override name = 'EvidenceFormatError';
}

export function parseEvidence(bytes: Uint8Array): EvidenceRecord {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(bytes).toString('utf8'));
  } catch {
    throw new EvidenceFormatError('evidence object is not JSON');
  }
  const r = value as Partial<EvidenceRecord>;
  if (r?.evidenceVersion !== EVIDENCE_VERSION || (r.kind !== 'SEND' && r.kind !== 'FEEDBACK')) {
    throw new EvidenceFormatError(`evidence object of an unknown version or kind (${String(r?.evidenceVersion)})`);
  }
  return r as EvidenceRecord;
}

/**
 * A send record's attempt (the claim that sent it), read from its bytes — what the evidence index marks it with when
 * the writer holds only the bytes; undefined for a report, a record the parser refuses, or an attempt no claim gives.
 */
export function sendAttemptOf(bytes: Uint8Array): number | undefined {
  try {
    const record = parseEvidence(bytes);
    return record.kind === 'SEND' && Number.isSafeInteger(record.attempt) ? record.attempt : undefined;
  } catch {
    return undefined;
  }
}

/** An event id or a notification id (`<eventId>#<CHANNEL>`): the prefix to list. */
export function evidencePrefixOf(id: string): string {
  const ref = parseNotificationId(id);
  return ref === undefined ? eventPrefix(id) : channelPrefix(ref.eventId, ref.channel);
}

/**
 * What the support console shows, built from the operator's reads (functions/operator: the event as the table holds
 * it, the customer's events through the byUser index, the evidence store, the audit log) — the same reads the ops
 * command line makes — with every contact point masked (domain/contact-mask.ts) and every outcome in plain words
 * (words.ts). Ids travel with each card, so an action names exactly what was shown; the page hides them unless asked.
 */
import { createHash } from 'node:crypto';
import {
  type AuditRow,
  CUSTOMER_PAGE_EVENTS,
  type CustomerAnswer,
  type EventAnswer,
  type NoticeCard,
  type QuarantinedNotice,
  type ResendChoice,
  type SentMessage,
  type UnreadableCopy,
} from '../contracts/console-views.ts';
import type { SuppressedReason } from '../domain/audience.ts';
import type { AuditRecord } from '../domain/audit.ts';
import { type Channel, unknownChannel } from '../domain/channels.ts';
import { maskContact } from '../domain/contact-mask.ts';
import type { SendEvidence } from '../domain/evidence.ts';
import { recordedIdentityOf, sameIdentity } from '../domain/identity.ts';
import { type KafkaSource, notificationIdOf, parseNotificationId, quarantineId } from '../domain/keys.ts';
import { displayName } from '../domain/mailbox-name.ts';
import type { Refusal, RefusalCode } from '../domain/refusal.ts';
import { acceptedMessageId, blockedRefusal, resendRefusal } from '../domain/resend.ts';
import { suppressionOf } from '../operator/customer.ts';
import { evidenceFound, type SendProof } from '../operator/evidence.ts';
import type { OperatorPorts } from '../operator/ports.ts';
import { blockedAtSend } from '../operator/resend.ts';
import { type EventView, OUT_OF_DATE, type StoredItem, type UserEventsCursor } from '../stores/event-store.ts';
import type { ListPosition } from '../stores/user-events-page.ts';
import { CHANNEL_WORDS, noticeName, outcomeOf, quarantinedWords, suppressedRefusalWords } from './words.ts';

const str = (v: unknown) => (typeof v === 'string' ? v : '');
type Reads = Pick<OperatorPorts, 'events' | 'audience' | 'quarantine'>;
type Cards = Pick<CustomerAnswer, 'notices' | 'silent' | 'quarantined'>;

/** A cursor is this long at most: two index positions (an event's key, a quarantined record's Kafka source). */
export const CURSOR_MAX_CHARS = 2_000;

/** The customer a cursor was made for, without naming them in it. */
const customerMark = (userId: string) => createHash('sha256').update(userId).digest('base64url').slice(0, 16);

/** The cursor of the next older page, as the page hands it back: opaque to it (base64url JSON), for this customer. */
export const cursorText = (userId: string, c: UserEventsCursor): string =>
  Buffer.from(JSON.stringify({ for: customerMark(userId), ...c })).toString('base64url');

const text = (v: unknown, max: number): v is string => typeof v === 'string' && v.length > 0 && v.length <= max;
const isPosition = (p: unknown): p is ListPosition =>
  p === 'END' ||
  (typeof p === 'object' &&
    p !== null &&
    text((p as Record<string, unknown>).at, 64) &&
    text((p as Record<string, unknown>).pk, 300) &&
    text((p as Record<string, unknown>).sk, 600));

/** A cursor the page handed back for this customer, or undefined when it is none of ours, or another customer's. */
export function cursorOf(userId: string, cursor: string): UserEventsCursor | undefined {
  if (cursor.length > CURSOR_MAX_CHARS) return undefined;
  try {
    const c = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as Record<string, unknown>;
    if (typeof c !== 'object' || c === null || c.for !== customerMark(userId)) return undefined;
    const { accepted, quarantined } = c;
    if (![accepted, quarantined].every((p) => p === undefined || isPosition(p))) return undefined;
    return {
      ...(accepted === undefined ? {} : { accepted: accepted as ListPosition }),
      ...(quarantined === undefined ? {} : { quarantined: quarantined as ListPosition }),
    };
  } catch {
    return undefined;
  }
}

/**
 * The customer's newest events (CUSTOMER_PAGE_EVENTS), or the page older than `older`: their notices, and every
 * record of theirs we could not read — through the byUser index (a few bounded Queries, never a scan) — and the
 * cursor of the next older page when there is one.
 */
export async function customerPage(
  ports: Reads,
  userId: string,
  older?: UserEventsCursor,
): Promise<Omit<CustomerAnswer, 'audit'> | typeof OUT_OF_DATE> {
  ports = preferencesReadOnce(ports);
  const page = await ports.events.userEventsPage(userId, CUSTOMER_PAGE_EVENTS, older);
  if (page === OUT_OF_DATE) return OUT_OF_DATE;
  const views = page.events;
  const prefs = (await ports.audience.preferences(userId)) as StoredItem | undefined;
  const cards = await Promise.all(views.map((v) => cardsOf(ports, v)));
  return {
    userId,
    notices: cards.flatMap((c) => c.notices),
    silent: cards.flatMap((c) => c.silent),
    quarantined: cards.flatMap((c) => c.quarantined),
    optedOutOf: Array.isArray(prefs?.optOut)
      ? (prefs.optOut as Channel[]).map((c) => CHANNEL_WORDS[c]?.many ?? String(c))
      : null,
    older: page.older === undefined ? null : cursorText(userId, page.older),
  };
}

/** The notices of one event (looked up by its id), the records meant to be it we could not read, and whose they are. */
export async function eventPage(ports: Reads, eventId: string): Promise<EventAnswer> {
  const view = await ports.events.read(eventId);
  const userId = [...view.notifications, ...(view.quarantined ?? [])]
    .map((n) => n.userId)
    .find((u) => typeof u === 'string' && u !== 'ERASED');
  return { eventId, userId: typeof userId === 'string' ? userId : null, ...(await cardsOf(ports, view)) };
}

/** The ports with a customer's preferences read once for a page, not once per notice that could be sent again. */
function preferencesReadOnce(ports: Reads): Reads {
  const read = new Map<string, ReturnType<Reads['audience']['preferences']>>();
  const audience = new Proxy(ports.audience, {
    get(target, name) {
      if (name === 'preferences') {
        return (userId: string) => {
          if (!read.has(userId)) read.set(userId, target.preferences(userId));
          return read.get(userId);
        };
      }
      const value = Reflect.get(target, name, target) as unknown;
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { ...ports, audience };
}

/** Nothing at all: no inbox, no notice and no quarantined record under this event id — we never received it. */
export const isUnknown = (c: Cards) => c.notices.length === 0 && c.silent.length === 0 && c.quarantined.length === 0;

async function cardsOf(ports: Reads, view: EventView): Promise<Cards> {
  const inbox = view.inbox;
  const type = str(inbox?.type) || str(view.notifications[0]?.template);
  const occurredAt = str(inbox?.occurredAt) || str(view.notifications[0]?.occurredAt);
  const quarantined = await quarantinedOf(ports, view);
  if (view.notifications.length === 0) {
    // No inbox item: the event never got in (quarantined, or never received) — nothing here may claim why not sent.
    if (inbox === undefined) return { notices: [], silent: [], quarantined };
    const why =
      inbox.skipped === 'TOO_OLD'
        ? 'It reached us too late to be worth sending, so nothing was sent.'
        : inbox.erasedAt !== undefined
          ? "The customer's data was erased."
          : 'The bank’s system gave no way to reach the customer (no email, phone or device), so nothing was sent.';
    const silent = [{ eventId: view.eventId, notice: noticeName(type), occurredAt, why }];
    return { notices: [], silent, quarantined };
  }
  const notices = await Promise.all(
    view.notifications.map(async (n) => {
      const suppression = str(n.status) === 'SUPPRESSED' ? await suppressionOf(ports, n) : undefined;
      // Offered again only when the send would not be stopped: the check the resend itself makes.
      const offerable = resendChoice('', n).offer !== 'NONE';
      const blocked = offerable ? await blockedAtSend(ports, n) : undefined;
      return noticeCard(n, type, occurredAt, suppression as StoredItem | undefined, blocked);
    }),
  );
  return { notices, silent: [], quarantined };
}

/** The event's quarantined records, each read for whether a replay fed it in since (a few Gets: they are rare). */
async function quarantinedOf(ports: Reads, view: EventView): Promise<QuarantinedNotice[]> {
  return Promise.all(
    (view.quarantined ?? []).map(async (ref): Promise<QuarantinedNotice> => {
      const source = ref.source as KafkaSource;
      const where = quarantineId(source);
      const replayedAt = str((await ports.quarantine.get(source))?.replayedAt) || undefined;
      return {
        eventId: view.eventId,
        receivedAt: str(ref.receivedAt),
        why: quarantinedWords(str(ref.reason), where, replayedAt),
        where,
        reason: str(ref.reason),
        replayedAt: replayedAt ?? null,
      };
    }),
  );
}

export function noticeCard(
  n: StoredItem,
  type: string,
  occurredAt: string,
  suppression?: StoredItem,
  blocked?: SuppressedReason,
): NoticeCard {
  const channel = n.channel as Channel;
  const notificationId = str(n.notificationId) || notificationIdOf(str(n.eventId), channel);
  const reason = str(n.lastError) || str(n.suppressedReason) || str(n.refusedReason);
  const recipient = str(n.recipient);
  return {
    notificationId,
    eventId: str(n.eventId),
    notice: noticeName(type || str(n.template)),
    channel,
    channelName: CHANNEL_WORDS[channel]?.one ?? String(channel),
    occurredAt: occurredAt || str(n.occurredAt),
    reference: referenceOf(n.data),
    to: n.erasedAt !== undefined ? '(erased)' : recipient === '' ? '(none)' : maskContact(channel, recipient),
    outcome: outcomeOf(n, suppression),
    codes: {
      status: str(n.status),
      ...(reason === '' ? {} : { reason }),
      ...(str(n.deliveryStatus) === '' ? {} : { delivery: str(n.deliveryStatus) }),
    },
    resends: (Array.isArray(n.manualResends) ? (n.manualResends as StoredItem[]) : []).map((r) => ({
      at: str(r.at),
      by: str(r.byName) || whoOf(r.by),
      byId: whoOf(r.by),
      reason: str(r.reason),
    })),
    resend: resendChoice(notificationId, n, blocked),
  };
}

/** The reference and amount a notice's data carries, as the customer quotes them on the phone. */
function referenceOf(data: unknown): string {
  const d = (typeof data === 'object' && data !== null ? data : {}) as Record<string, unknown>;
  const ref = str(d.transferId) || str(d.reference) || str(d.paymentId);
  const amount = str(d.amount) && `${str(d.amount)}${str(d.currency) ? ` ${str(d.currency)}` : ''}`;
  return [ref && `Ref ${ref}`, amount].filter((p) => p !== '').join(' · ');
}

/** What a resend would do, decided by the rule the resend itself applies (domain/resend.ts), in plain words. */
export function resendChoice(id: string, n: StoredItem, blocked?: SuppressedReason): ResendChoice {
  const accepted = acceptedMessageId(n);
  const refusal = resendRefusal(id, n, accepted) ?? blockedRefusal(id, blocked);
  if (refusal === undefined) {
    if (accepted === undefined) return { offer: 'RESEND', note: 'It can be sent again, once another person approves.' };
    const delivery = str(n.deliveryStatus);
    if (delivery === 'DELAYED') {
      // SES DeliveryDelay: the customer's provider has not taken it yet, and the email service keeps trying.
      return {
        offer: 'NONE',
        note: 'It is still being tried by the email service: it has not reached the customer’s provider yet. Wait for its delivery report.',
      };
    }
    if (delivery === 'DELIVERED' || delivery === 'COMPLAINED') {
      return { offer: 'NONE', note: 'It reached the customer’s provider: there is nothing to send again.' };
    }
    return {
      offer: 'SECOND_COPY',
      note: 'It was handed over for delivery; sending it again gives the customer a second copy, once another person approves.',
      despiteAccepted: accepted,
    };
  }
  return { offer: 'NONE', note: refusalWords(refusal, n.channel as Channel) };
}

/**
 * A resend's refusal as support staff read it — the operator's message names command-line flags and commands that
 * mean nothing on this page; the code stays on the answer for whoever the case goes to.
 */
export function refusalWords(r: Refusal, channel?: Channel): string {
  const why: Partial<Record<RefusalCode, string>> = {
    ERASED: "The customer's data was erased: nothing of theirs is sent again.",
    SUPPRESSED: suppressedRefusalWords(r.cause, channel ?? 'EMAIL'),
    CONTACT_REFUSED: 'The contact details have to be corrected by the bank’s system that sent them.',
    IN_FLIGHT: 'It is still being sent.',
    ACCEPTED: 'The provider accepted it: look at its delivery first. A second copy is proposed from the notice’s card.',
    HELD: 'It is waiting for its send window and goes out by itself then.',
    PAST_VALIDITY: 'It is too late to be worth sending now.',
    SUPERSEDED: 'A newer notice replaced it: that one is what the customer gets.',
    THROTTLED: 'The customer had as many of these as they may get in that time.',
    SECRET_FORGOTTEN: 'It carried a one-time code that is no longer kept: the customer asks for a new code.',
    CHANGED: 'It changed since it was shown: look it up again.',
    NOT_FOUND: 'There is no such notice (any more).',
  };
  return why[r.code] ?? r.message.replace(/\s*\([^)]*--[a-z][^)]*\)|--[a-z-]+( \S+)?/g, '').trim();
}

/** A name to show for who did something: an audit's identity, or a name recorded before identities were verified. */
export function whoOf(by: unknown): string {
  if (typeof by === 'string') return by;
  if (typeof by === 'object' && by !== null) {
    const { display, principal } = by as { display?: unknown; principal?: unknown };
    return str(display) || str(principal);
  }
  return '';
}

/**
 * What the customer received for one notice, as the evidence store keeps it, byte for byte, masked where it names them;
 * and the copies named as sent that cannot be read now (pending, a gap, lost), with why: never read as "not sent".
 */
export async function sentMessages(
  ports: Pick<OperatorPorts, 'evidence' | 'evidenceLocator'>,
  notificationId: string,
  userId?: string,
): Promise<{ sent: SentMessage[]; unfound: UnreadableCopy[] }> {
  // As `ops evidence` reads it: through the batches the table and the customer's index name, and the objects of sends
  // recorded before batches.
  const found = await evidenceFound(ports.evidence, notificationId, ports.evidenceLocator, userId);
  const unfound = found.unfound.map((u): UnreadableCopy => ({ state: u.state, batch: u.batch, says: u.says }));
  return { sent: found.proofs.map(sentMessage), unfound };
}

/** Whether the provider accepted a notice, as its item says; UNKNOWN when the send's answer was lost or the item is gone. */
export function handedOver(item: StoredItem | undefined): 'YES' | 'NO' | 'UNKNOWN' {
  if (item === undefined || item.status === 'UNKNOWN') return 'UNKNOWN';
  return item.status === 'SENT' || acceptedMessageId(item) !== undefined ? 'YES' : 'NO';
}

function sentMessage(p: SendProof): SentMessage {
  return {
    acceptedAt: p.send.acceptedAt,
    to: maskContact(p.send.channel, recipientOf(p.send)),
    ...messageOf(p.send),
    reports: p.feedback.map((f) => ({
      at: f.at,
      status: f.status,
      words: `${f.status.charAt(0)}${f.status.slice(1).toLowerCase()}${f.providerResponse ? `: “${f.providerResponse}”` : ''}`,
    })),
    sha256: p.sha256,
    warnings: p.warnings ?? [],
  };
}

function recipientOf(s: SendEvidence): string {
  const r = s.request;
  switch (r.channel) {
    case 'EMAIL':
      return r.to[0] ?? '';
    case 'SMS':
      return r.phoneNumber;
    case 'PUSH':
      return r.targetArn;
    default:
      return unknownChannel(r);
  }
}

function messageOf(s: SendEvidence): Pick<SentMessage, 'email' | 'sms' | 'push'> {
  const r = s.request;
  switch (r.channel) {
    case 'EMAIL':
      return { email: { from: displayName(r.source), subject: r.subject, html: r.html, text: r.text } };
    case 'SMS':
      return { sms: { text: r.text, encoding: r.encoding, segments: r.segments } };
    case 'PUSH':
      return { push: pushShown(r.payload) };
    default:
      return unknownChannel(r);
  }
}

/** The title and body a phone shows, from the Message JSON (APNs first, then FCM, then the default text). */
export function pushShown(payload: string): { title: string; body: string } {
  try {
    const message = JSON.parse(payload) as Record<string, string>;
    for (const platform of ['APNS', 'GCM']) {
      if (message[platform] === undefined) continue;
      const p = JSON.parse(message[platform]) as {
        aps?: { alert?: { title?: string; body?: string } };
        notification?: { title?: string; body?: string };
      };
      const shown = p.aps?.alert ?? p.notification;
      if (shown !== undefined) return { title: shown.title ?? '', body: shown.body ?? '' };
    }
    return { title: '', body: message.default ?? '' };
  } catch {
    return { title: '', body: payload };
  }
}

/** A proposal closed by its own proposer (the console's withdraw, `ops reject` of one's own): a REJECT by them. */
const withdrawn = (r: AuditRecord) =>
  r.step === 'REJECT' && r.outcome?.result === 'DONE' && sameIdentity(r.by, recordedIdentityOf(r.details.proposedBy));

/**
 * The audit trail of what was done by hand about these targets (a customer, their events and notices), newest first:
 * through the audit's by-subject index (stores/audit-log.ts), never the whole log. `now` gives each resend the state
 * of its notice since: a resend queues the notice again, and what became of it is the notice's state now.
 */
export async function auditTrail(
  ports: Pick<OperatorPorts, 'audit'>,
  targets: ReadonlySet<string>,
  sinceIso: string,
  now: ReadonlyMap<string, string> = new Map(),
): Promise<AuditRow[]> {
  const eventOf = (t: string) => parseNotificationId(t)?.eventId ?? t;
  const subjects = [...new Set([...targets].map(eventOf))];
  return (await ports.audit.listAbout(subjects, sinceIso))
    .filter((r) => targets.has(r.target) || targets.has(eventOf(r.target)))
    .map((r) => ({
      at: r.at,
      action: r.action,
      step: withdrawn(r) ? 'WITHDRAW' : (r.step ?? 'CONFIRM'),
      by: whoOf(r.by),
      reason: r.reason,
      target: r.target,
      outcome: r.outcome?.result ?? 'NOT RECORDED',
      ...(r.action === 'RESEND' && r.outcome?.result === 'DONE' && now.has(r.target)
        ? { since: now.get(r.target) }
        : {}),
      ...(r.warnings === undefined ? {} : { warnings: r.warnings }),
    }));
}

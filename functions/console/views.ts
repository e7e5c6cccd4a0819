/**
 * What the support console shows, built from the operator's reads (functions/operator: the event as the table holds
 * it, the customer's events through the byUser index, the evidence store, the audit log) — the same reads the ops
 * command line makes — with every contact point masked (domain/contact-mask.ts) and every outcome in plain words
 * (words.ts). Ids travel with each card, so an action names exactly what was shown; the page hides them unless asked.
 */
import type {
  AuditRow,
  CustomerAnswer,
  EventAnswer,
  NoticeCard,
  ResendChoice,
  SentMessage,
  SilentEvent,
} from '../contracts/console-views.ts';
import { type Channel, unknownChannel } from '../domain/channels.ts';
import { maskContact } from '../domain/contact-mask.ts';
import type { SendEvidence } from '../domain/evidence.ts';
import { notificationIdOf, parseNotificationId } from '../domain/keys.ts';
import { displayName } from '../domain/mailbox-name.ts';
import { acceptedMessageId, resendRefusal } from '../domain/resend.ts';
import { suppressionOf } from '../operator/customer.ts';
import { evidenceOf } from '../operator/evidence.ts';
import { listAudit } from '../operator/lists.ts';
import type { OperatorPorts } from '../operator/ports.ts';
import type { EventView, StoredItem } from '../stores/event-store.ts';
import { CHANNEL_WORDS, noticeName, outcomeOf } from './words.ts';

const str = (v: unknown) => (typeof v === 'string' ? v : '');
type Reads = Pick<OperatorPorts, 'events' | 'audience'>;

/** Every notice of the customer, newest event first (the byUser index: one Query per page, never a scan). */
export async function customerPage(ports: Reads, userId: string): Promise<Omit<CustomerAnswer, 'audit'>> {
  const views = await Promise.all((await ports.events.eventIdsOfUser(userId)).map((id) => ports.events.read(id)));
  const prefs = (await ports.audience.preferences(userId)) as StoredItem | undefined;
  const cards = await Promise.all(views.map((v) => cardsOf(ports, v)));
  return {
    userId,
    notices: cards.flatMap((c) => c.notices),
    silent: cards.flatMap((c) => c.silent),
    optedOutOf: Array.isArray(prefs?.optOut)
      ? (prefs.optOut as Channel[]).map((c) => CHANNEL_WORDS[c]?.many ?? String(c))
      : null,
  };
}

/** The notices of one event (looked up by its id), and whose they are. */
export async function eventPage(ports: Reads, eventId: string): Promise<EventAnswer> {
  const view = await ports.events.read(eventId);
  const userId = view.notifications.map((n) => n.userId).find((u) => typeof u === 'string' && u !== 'ERASED');
  return { eventId, userId: typeof userId === 'string' ? userId : null, ...(await cardsOf(ports, view)) };
}

async function cardsOf(ports: Reads, view: EventView): Promise<{ notices: NoticeCard[]; silent: SilentEvent[] }> {
  const inbox = view.inbox;
  const type = str(inbox?.type) || str(view.notifications[0]?.template);
  const occurredAt = str(inbox?.occurredAt) || str(view.notifications[0]?.occurredAt);
  if (view.notifications.length === 0) {
    const why =
      inbox?.skipped === 'TOO_OLD'
        ? 'It reached us too late to be worth sending, so nothing was sent.'
        : inbox?.erasedAt !== undefined
          ? "The customer's data was erased."
          : 'The bank’s system gave no way to reach the customer (no email, phone or device), so nothing was sent.';
    return { notices: [], silent: [{ eventId: view.eventId, notice: noticeName(type), occurredAt, why }] };
  }
  const notices = await Promise.all(
    view.notifications.map(async (n) => {
      const suppression = str(n.status) === 'SUPPRESSED' ? await suppressionOf(ports, n) : undefined;
      return noticeCard(n, type, occurredAt, suppression as StoredItem | undefined);
    }),
  );
  return { notices, silent: [] };
}

export function noticeCard(n: StoredItem, type: string, occurredAt: string, suppression?: StoredItem): NoticeCard {
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
    to: n.erasedAt !== undefined ? '(erased)' : recipient === '' ? '(none)' : maskContact(channel, recipient),
    outcome: outcomeOf(n, suppression),
    codes: {
      status: str(n.status),
      ...(reason === '' ? {} : { reason }),
      ...(str(n.deliveryStatus) === '' ? {} : { delivery: str(n.deliveryStatus) }),
    },
    resends: (Array.isArray(n.manualResends) ? (n.manualResends as StoredItem[]) : []).map((r) => ({
      at: str(r.at),
      by: whoOf(r.by),
      reason: str(r.reason),
    })),
    resend: resendChoice(notificationId, n),
  };
}

/** What a resend would do, decided by the rule the resend itself applies (domain/resend.ts), in plain words. */
export function resendChoice(id: string, n: StoredItem): ResendChoice {
  const accepted = acceptedMessageId(n);
  const refusal = resendRefusal(id, n, accepted);
  if (refusal === undefined) {
    if (accepted === undefined) return { offer: 'RESEND', note: 'It can be sent again, once another person approves.' };
    const delivery = str(n.deliveryStatus);
    if (delivery === 'DELIVERED' || delivery === 'COMPLAINED' || delivery === 'DELAYED') {
      return { offer: 'NONE', note: 'It reached the customer’s provider: there is nothing to send again.' };
    }
    return {
      offer: 'SECOND_COPY',
      note: 'It was handed over for delivery; sending it again gives the customer a second copy, once another person approves.',
      despiteAccepted: accepted,
    };
  }
  const why: Record<string, string> = {
    ERASED: "The customer's data was erased: nothing of theirs is sent again.",
    SUPPRESSED: 'It would be stopped again: the customer’s choice, or the contact, has to change first.',
    CONTACT_REFUSED: 'The contact details have to be corrected by the bank’s system that sent them.',
    IN_FLIGHT: 'It is still being sent.',
  };
  return { offer: 'NONE', note: why[refusal.code] ?? refusal.message };
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

/** What the customer received for one notice, as the evidence store keeps it, byte for byte, masked where it names them. */
export async function sentMessages(
  ports: Pick<OperatorPorts, 'evidence' | 'evidenceLocator'>,
  notificationId: string,
  userId?: string,
): Promise<SentMessage[]> {
  // As `ops evidence` reads it: through the batches the table and the customer's index name, and the objects of sends
  // recorded before batches.
  const proofs = await evidenceOf(ports.evidence, notificationId, ports.evidenceLocator, userId);
  return proofs.map(
    (p): SentMessage => ({
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
    }),
  );
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

/** The audit trail of what was done by hand about these targets (a customer, their events and notices), newest first. */
export async function auditTrail(
  ports: Pick<OperatorPorts, 'audit'>,
  targets: ReadonlySet<string>,
  sinceIso: string,
): Promise<AuditRow[]> {
  return (await listAudit(ports, sinceIso))
    .filter((r) => targets.has(r.target) || targets.has(parseNotificationId(r.target)?.eventId ?? ''))
    .map((r) => ({
      at: r.at,
      action: r.action,
      step: r.step ?? 'CONFIRM',
      by: whoOf(r.by),
      reason: r.reason,
      target: r.target,
      outcome: r.outcome?.result ?? 'NOT RECORDED',
      ...(r.warnings === undefined ? {} : { warnings: r.warnings }),
    }));
}

/**
 * One customer's data as the operator reads it (docs/evidence-and-privacy.md "One customer's data"): each notice with
 * what was sent or exactly why not, found through the byUser index (never a scan); the preferences and the
 * suppressions of the customer's addresses; and the sends the evidence store proves whose hot items are gone.
 * Also what inspect says of each notification of one event.
 */
import { addressHash } from '../domain/audience.ts';
import type { Channel } from '../domain/channels.ts';
import { notificationIdOf } from '../domain/keys.ts';
import type { EventView, StoredItem } from '../stores/event-store.ts';
import { userEvidence } from './evidence.ts';
import type { OperatorPorts } from './ports.ts';
import { explainEvent, type NoticeView } from './why.ts';

export interface CustomerView {
  readonly userId: string;
  readonly notices: NoticeView[];
  readonly preferences: StoredItem | null;
  readonly suppressions: StoredItem[];
  /** Sends proven by the evidence store whose hot items are gone (expired or erased). */
  readonly evidenceOnly: { notificationId: string; acceptedAt: string; providerMessageId: string }[];
}

type Reads = Pick<OperatorPorts, 'events' | 'audience' | 'evidence'> & Partial<Pick<OperatorPorts, 'evidenceLocator'>>;

/** The suppression of a notification's address, if its address is still on the item. */
export async function suppressionOf(ports: Pick<OperatorPorts, 'audience'>, n: StoredItem) {
  const channel = n.channel as Channel;
  const recipient = typeof n.recipient === 'string' ? n.recipient : '';
  if (recipient === '') return undefined;
  return (await ports.audience.suppression(channel, addressHash(channel, recipient))) as StoredItem | undefined;
}

/** Every suppression of the addresses on these notifications, once each. */
export async function suppressionsOf(ports: Pick<OperatorPorts, 'audience'>, notifications: readonly StoredItem[]) {
  const found = new Map<string, StoredItem>();
  for (const n of notifications) {
    const s = await suppressionOf(ports, n);
    if (s !== undefined) found.set(`${s.pk}/${s.sk}`, s);
  }
  return [...found.values()];
}

export async function customerView(ports: Reads, userId: string): Promise<CustomerView> {
  const prefs = (await ports.audience.preferences(userId)) as StoredItem | undefined;
  const notices: NoticeView[] = [];
  const views: EventView[] = [];
  for (const eventId of await ports.events.eventIdsOfUser(userId)) {
    const view = await ports.events.read(eventId);
    views.push(view);
    notices.push(...(await explainEvent(view, prefs, (n) => suppressionOf(ports, n))));
  }
  const notifications = views.flatMap((v) => v.notifications);
  const hot = new Set(notifications.map((n) => String(n.notificationId)));
  const evidenceOnly = (await userEvidence(ports.evidence, userId, ports.evidenceLocator))
    .filter((proof) => !hot.has(proof.send.notificationId))
    .map(({ send }) => ({
      notificationId: send.notificationId,
      acceptedAt: send.acceptedAt,
      providerMessageId: send.providerMessageId,
    }));
  return {
    userId,
    notices,
    preferences: prefs ?? null,
    suppressions: await suppressionsOf(ports, notifications),
    evidenceOnly,
  };
}

/** Everything the table knows about one event, and each notification with what was sent or exactly why not. */
export async function inspectEvent(ports: Pick<OperatorPorts, 'events' | 'audience'>, eventId: string) {
  const view = await ports.events.read(eventId);
  const userId = view.notifications.find((n) => typeof n.userId === 'string')?.userId;
  const prefs = typeof userId === 'string' ? await ports.audience.preferences(userId) : undefined;
  const notices = await explainEvent(view, prefs as StoredItem | undefined, (n) => suppressionOf(ports, n));
  const reasons = new Map(
    notices.flatMap((n) => (n.channel === null ? [] : [[notificationIdOf(n.eventId, n.channel), n.why] as const])),
  );
  return { view, reasons };
}
